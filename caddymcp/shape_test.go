package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// shapedTools front go-httpbin with tools whose results are reshaped (jq)
// and sized (max_result_size): /json is a slideshow, /anything echoes a
// request, /html is 3.7 KB of text.
const shapedTools = `
		upstream %s
		max_result_size 2KiB
		tool slides {
			description "The slideshow's title and slide titles."
			get /json
			jq "{title: .slideshow.title, slides: [.slideshow.slides[].title]}"
			output_schema ` + "`" + `{"type":"object","properties":{"title":{"type":"string"},"slides":{"type":"array"}},"required":["title","slides"],"additionalProperties":false}` + "`" + `
		}
		tool slide_titles {
			description "Slide titles, one output each."
			get /json
			jq ".slideshow.slides[].title"
		}
		tool broken_filter {
			description "A filter that fails on this answer."
			get /json
			jq ".slideshow.title | tonumber"
		}
		tool looping_filter {
			description "A filter that never ends."
			get /json
			jq "def f: f; f"
			timeout 1s
		}
		tool echo {
			description "Echoes a text, twice over (data and json)."
			post /anything
			arg text string required
			body arg text
		}
		tool echo_large {
			description "Echoes a text with a larger limit."
			post /anything
			arg text string required
			body arg text
			max_result_size 64KiB
		}
		tool page {
			description "A page of text."
			get /html
		}
`

// TestLiveShaping: through a real Caddy and go-httpbin, both protocol
// eras, a jq tool reshapes the answer, a failing or endless filter is an
// error result naming the tool, and results past max_result_size are cut
// with a note and marked in _meta.
func TestLiveShaping(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		%s
	}
}`, fmt.Sprintf(shapedTools, bin)))

	long := strings.Repeat("abcdefghij", 500) // 5000 bytes, echoed twice
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)

			res := callTool(t, c, "slides", nil)
			text := wantOK(t, res)
			want := `{"slides":["Wake up to WonderWidgets!","Overview"],"title":"Sample Slide Show"}`
			if text != want {
				t.Errorf("slides: %s, want %s", text, want)
			}
			if sc, _ := json.Marshal(res.StructuredContent); string(sc) != want {
				t.Errorf("slides structuredContent: %s", sc)
			}

			if text := wantOK(t, callTool(t, c, "slide_titles", nil)); text != `["Wake up to WonderWidgets!","Overview"]` {
				t.Errorf("slide_titles: %s", text)
			}
			wantToolError(t, callTool(t, c, "broken_filter", nil), "tool broken_filter: jq filter: tonumber cannot be applied to")
			// The error says the tool's timeout ended the filter; the
			// client's own timeout (mcptest.Timeout) ends a call that hangs.
			start := time.Now()
			wantToolError(t, callTool(t, c, "looping_filter", nil), "tool looping_filter: jq filter: the tool's timeout ended before the filter did")
			t.Logf("the endless filter ended after %s with a timeout of 1s", time.Since(start).Round(time.Millisecond))

			res = callTool(t, c, "echo", map[string]any{"text": long})
			text = wantOK(t, res)
			body, note, ok := strings.Cut(text, "\n\n[cut to max_result_size, 2048 bytes: the JSON is ")
			if !ok || len(text) > 2048 || !json.Valid([]byte(body)) {
				t.Fatalf("echo: %d bytes, want cut JSON and a note within 2048:\n%s", len(text), text)
			}
			cut := cutMeta(t, res)
			if cut.Kept != len(body) || !strings.Contains(note, fmt.Sprintf("%d are shown", len(body))) || len(cut.Strings) < 2 {
				t.Errorf("echo: _meta %+v, note %q, %d bytes kept", cut, note, len(body))
			}

			if text := wantOK(t, callTool(t, c, "echo_large", map[string]any{"text": long})); strings.Contains(text, "[cut to") || !strings.Contains(text, long) {
				t.Errorf("echo_large was cut under its own limit: %.200s", text)
			}

			res = callTool(t, c, "page", nil)
			text = wantOK(t, res)
			if len(text) > 2048 || !strings.Contains(text, "\n\n[cut to max_result_size, 2048 bytes: the text is ") || !cutMeta(t, res).Text {
				t.Errorf("page: %d bytes: %.300s", len(text), text[max(0, len(text)-300):])
			}
		})
	}
}

// cutMeta is the cut a result's _meta describes, as a client reads it.
func cutMeta(t *testing.T, res *mcp.CallToolResult) upstream.Cut {
	t.Helper()
	if res.Meta == nil || res.Meta.AdditionalFields[upstream.CutMetaKey] == nil {
		t.Fatalf("no %s in _meta", upstream.CutMetaKey)
	}
	raw, _ := json.Marshal(res.Meta.AdditionalFields[upstream.CutMetaKey])
	var cut upstream.Cut
	if err := json.Unmarshal(raw, &cut); err != nil {
		t.Fatal(err)
	}
	return cut
}

// TestShapingSameOnBothPaths: the fast path and mcp-go answer calls of
// shaped tools byte for byte alike, cut or not, summary text or full.
func TestShapingSameOnBothPaths(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	load := func(fast bool, structuredText string) *Handler {
		return provisionMCP(t, "mcp {\n"+fmt.Sprintf(shapedTools, bin)+"\nstructured_text "+structuredText+"\ntimeout 5s\n}", fast)
	}
	send := func(h *Handler, body string) string {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, req, nil); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %s\n%s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	long := strings.Repeat("é", 3000)
	for _, mode := range []string{"full", "summary"} {
		fast, slow := load(true, mode), load(false, mode)
		for _, call := range []string{
			`{"name":"slides"}`,
			`{"name":"slide_titles"}`,
			`{"name":"broken_filter"}`,
			`{"name":"echo","arguments":{"text":"` + long + `"}}`,
			`{"name":"page"}`,
		} {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + call + `}`
			a, b := send(fast, body), send(slow, body)
			if a != b {
				t.Errorf("%s, %s: answers differ:\nfast:   %.1500s\nmcp-go: %.1500s", mode, call, a, b)
			}
			if mode == "summary" && strings.Contains(call, "slides") && !strings.Contains(a, "GET /json answered 200 OK: an object of 2 keys (slides has 2 items)") {
				t.Errorf("summary text: %.600s", a)
			}
		}
	}
}

// listedMeta is what a tools/list answer says of each tool's _meta.
type listedMeta struct {
	Result struct {
		Tools []struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"tools"`
	} `json:"result"`
}

// provisionMCP loads the mcp handler of a Caddyfile block as Caddy does, with its
// fast path or, without fast, answering everything through mcp-go.
func provisionMCP(t *testing.T, config string, fast bool) *Handler {
	t.Helper()
	h, err := loadMCPCaddyfile(t, config)
	if err != nil {
		t.Fatal(err)
	}
	if !fast {
		h.fast = nil
	}
	return h
}

// TestShapingConfig: bad shaping values in JSON config are refused at
// load, with the value.
func TestShapingConfig(t *testing.T) {
	tool := `{"name":"t","description":"d","method":"GET","path":"/x"%s}`
	for _, tt := range []struct {
		config, want string
	}{
		{`{"upstream":"http://127.0.0.1:1","max_result_size":100,"tools":[` + fmt.Sprintf(tool, "") + `]}`, "max_result_size 100: want at least 1024 bytes"},
		{`{"upstream":"http://127.0.0.1:1","max_result_size":-1,"tools":[` + fmt.Sprintf(tool, "") + `]}`, "max_result_size -1"},
		{`{"upstream":"http://127.0.0.1:1","structured_text":"brief","tools":[` + fmt.Sprintf(tool, "") + `]}`, `structured_text "brief": want full or summary`},
		{`{"upstream":"http://127.0.0.1:1","tools":[` + fmt.Sprintf(tool, `,"max_result_size":10`) + `]}`, `tool "t": max_result_size 10`},
		{`{"upstream":"http://127.0.0.1:1","tools":[` + fmt.Sprintf(tool, `,"jq":".a |"`) + `]}`, `tool "t": jq: unexpected EOF`},
	} {
		if _, err := loadMCP(t, tt.config); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.config, err, tt.want)
		}
	}
}

// TestSizeHintThroughTheHandler: a tool whose max_result_size lets a
// result pass Claude Code's warning says how large its results may be
// (anthropic/maxResultSizeChars) in tools/list, and so does each large
// result, on both paths; a tool with a small bound says nothing. With
// discovery search, call_tool says the most any tool behind it may give.
func TestSizeHintThroughTheHandler(t *testing.T) {
	big := `[` + strings.Repeat(`{"name":"an item with a name long enough","n":12345},`, 1500) + `{}]` // 78 KB
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, big)
	}))
	defer api.Close()
	config := "mcp {\nupstream " + api.URL + "\n" +
		"tool large {\n description d\n get /x\n max_result_size 128KiB\n}\n" +
		"tool small {\n description d\n get /x\n max_result_size 8KiB\n}\n}"
	load := func(fast bool, extra string) *Handler {
		return provisionMCP(t, strings.TrimSuffix(config, "}")+extra+"}", fast)
	}
	header := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	want := 2*128<<10 + upstream.MaxCutMeta
	var callTool listedMeta
	searching := load(true, "discovery search\n")
	if err := json.Unmarshal(servePost(t, searching, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header).Body.Bytes(), &callTool); err != nil {
		t.Fatal(err)
	}
	for _, tool := range callTool.Result.Tools {
		if got := tool.Meta["anthropic/maxResultSizeChars"]; tool.Name == "call_tool" && got != float64(want) || tool.Name != "call_tool" && got != nil {
			t.Errorf("discovery search: %s lists _meta %v", tool.Name, tool.Meta)
		}
	}
	for _, fast := range []bool{true, false} {
		h := load(fast, "")
		var list listedMeta
		if err := json.Unmarshal(servePost(t, h, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header).Body.Bytes(), &list); err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Result.Tools {
			got := tool.Meta["anthropic/maxResultSizeChars"]
			if tool.Name == "large" && got != float64(want) || tool.Name == "small" && got != nil {
				t.Errorf("fast %v: %s lists _meta %v", fast, tool.Name, tool.Meta)
			}
		}
		for name, hinted := range map[string]bool{"large": true, "small": false} {
			var call struct {
				Result struct {
					Meta map[string]any `json:"_meta"`
				} `json:"result"`
			}
			body := servePost(t, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+name+`"}}`, header).Body.Bytes()
			if err := json.Unmarshal(body, &call); err != nil {
				t.Fatalf("%v: %.300s", err, body)
			}
			if got := call.Result.Meta["anthropic/maxResultSizeChars"]; (got == float64(want)) != hinted || !hinted && got != nil {
				t.Errorf("fast %v: a call of %s (%d bytes) has _meta %v", fast, name, len(body), call.Result.Meta)
			}
		}
	}
}
