package caddymcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// An operator's text past what clients show is sent as written, and a
// warning at load names it; text within the bound warns of nothing.
func TestWarnLongTexts(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	long := strings.Repeat("a", maxClientText+1)
	warnLongTexts(zap.New(core), long, map[string]string{
		"fits": strings.Repeat("b", maxClientText), "too_long": long, "also_long": long + "b",
	})
	var got []string
	for _, e := range logs.All() {
		f := e.ContextMap()
		got = append(got, fmt.Sprint(f["tool"], " ", f["bytes"], " ", f["shown"]))
	}
	want := []string{"<nil> 2049 2048", "also_long 2050 2048", "too_long 2049 2048"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// search_tools sends its answer once: as JSON text by default, or with
// structured_text summary as structuredContent, which its outputSchema
// declares, beside a line of text. Both say how many tools match of how
// many.
func TestSearchToolsAnswerOnce(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"full", "summary"} {
		h, err := loadMCPCaddyfile(t, `mcp {
	upstream http://127.0.0.1:9
	discovery search
	structured_text `+mode+`
	tool list_orders {
		description "List the orders of the shop."
		get /orders
	}
	tool get_order {
		description "Read one order by its id."
		arg id string required
		get /orders/{id}
	}
	tool send_mail {
		description "Send an email."
		post /mail
	}
}`)
		if err != nil {
			t.Fatal(err)
		}
		w := serveOnce(t, h, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		declared := strings.Contains(w.Body.String(), `"outputSchema"`)
		w = serveOnce(t, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"order","limit":1}}}`,
			map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		var answer struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent *foundTools `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || len(answer.Result.Content) != 1 {
			t.Fatalf("%s: %v %s", mode, err, w.Body)
		}
		text := answer.Result.Content[0].Text
		found := answer.Result.StructuredContent
		if mode == "full" {
			if found != nil || declared {
				t.Errorf("full: structuredContent %v, outputSchema %v: the answer is sent twice", found != nil, declared)
			}
			found = new(foundTools)
			if err := json.Unmarshal([]byte(text), found); err != nil {
				t.Fatalf("full: the text is not the answer: %s", text)
			}
		} else if found == nil || !declared || strings.Contains(text, "get_order") || !strings.Contains(text, "structuredContent") {
			t.Fatalf("summary: text %q, structuredContent %v, outputSchema %v", text, found != nil, declared)
		}
		if len(found.Tools) != 1 || found.Matched != 2 || found.Of != 3 || !strings.HasPrefix(found.Note, "2 of 3 tools match") {
			t.Errorf("%s: %d tools, %d of %d match, note %q", mode, len(found.Tools), found.Matched, found.Of, found.Note)
		}
	}
}
