package caddymcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
)

// fastListTools are tools whose list entries test the encoding: text that
// encoding/json escapes, an output schema, annotations, and names a
// cursor falls between.
func fastListTools() []*Tool {
	return []*Tool{
		{Name: "a.first", Description: "Escapes <b>&amp;</b> \u2028 \"quoted\" é", Method: "GET", Path: "/a",
			Args: []*Arg{{Name: "q", Description: "<script>"}}},
		{Name: "b-second", Title: "Second", Description: "Has an output schema.", Method: "POST", Path: "/b",
			OutputSchema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
			Annotations:  &Annotations{ReadOnly: new(bool), Idempotent: func() *bool { b := true; return &b }()}},
		{Name: "c_third", Description: "Third.", Method: "DELETE", Path: "/c/{id}", Args: []*Arg{{Name: "id", Type: "integer", Required: true}}},
	}
}

// FuzzFastListMatchesMCPGo holds the prepared tools/list answers to
// mcp-go's: for any request, a handler answering from them and one
// leaving every tools/list to mcp-go answer alike (status, headers,
// body), in both eras, with cursors, with an authorization block without
// tool scopes (prepared) and with one (mcp-go filters per caller).
func FuzzFastListMatchesMCPGo(f *testing.F) {
	const (
		legacy = "2025-11-25"
		modern = "2026-07-28"
		meta   = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"}}`
	)
	list := func(id, params string) string {
		if params == "" {
			return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`
		}
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`
	}
	cursor := func(name string) string { return base64.StdEncoding.EncodeToString([]byte(name)) }
	type seed struct {
		body               string
		mode, flags        byte
		version, mcpMethod string
	}
	seeds := []seed{
		{body: list("1", ""), version: legacy},
		{body: list(`"s"`, "")},
		{body: list("2", `{}`), version: "2025-03-26"},
		{body: list("3", `{"cursor":"`+cursor("a.first")+`"}`), version: legacy},
		{body: list("4", `{"cursor":"`+cursor("b")+`"}`), version: legacy},
		{body: list("5", `{"cursor":"`+cursor("zzz")+`"}`), version: legacy},
		{body: list("6", `{"cursor":"not base64!"}`), version: legacy},
		{body: list("7", `{"cursor":7}`), version: legacy},
		{body: list("8", `{"cursor":""}`), version: legacy},
		{body: list("9", `{`+meta+`}`), version: modern, mcpMethod: "tools/list"},
		{body: list("10", `{"cursor":"`+cursor("b-second")+`",`+meta+`}`), version: modern, mcpMethod: "tools/list"},
		{body: list("11", `{`+meta+`}`), version: modern, mcpMethod: "tools/call"},
		{body: list("12", `{`+meta+`}`), version: modern},
		{body: list("13", `{`+meta+`}`), mcpMethod: "tools/list"},
		{body: list("14", `{`+meta+`}`), version: legacy},
		{body: list("15", `{`+meta+`}`), version: modern, mcpMethod: "tools/list", mode: 2},
		{body: list("16", ""), version: modern, mcpMethod: "tools/list"},
		{body: list("17", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}`), version: modern, mcpMethod: "tools/list"},
		{body: list("1.0", ""), version: legacy},
		{body: list("1e400", ""), version: legacy},
		{body: list(`"\u0041"`, ""), version: legacy},
		{body: list("null", ""), version: legacy},
		{body: list("1", `null`), version: legacy},
		{body: list("1", `[]`), version: legacy},
		{body: list("1", `{"cursor":"`+cursor("a")+`","Cursor":"x"}`), version: legacy},
		{body: list("1", `{"_meta":{"progressToken":"p"}}`), version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","result":{}}`, version: legacy},
		{body: `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, version: legacy},
		{body: `{"id":1,"method":"tools/list"}`, version: legacy},
		{body: list("1", ""), version: "1999-01-01"},
		{body: list("1", ""), version: legacy, flags: 8},  // text/plain
		{body: list("1", ""), version: legacy, flags: 16}, // Mcp-Session-Id
		{body: list("1", ""), version: legacy, mode: 4},   // authorization, no tool scopes
		{body: list("1", ""), version: legacy, mode: 8},   // authorization with tool scopes, allowed
		{body: list("1", ""), version: legacy, mode: 8 + 16},
		{body: list("1", ""), version: legacy, mode: 32}, // discovery search, tool scopes
		{body: list("1", ""), version: legacy, mode: 32 + 16},
		{body: list("2", `{"cursor":"`+cursor("call_tool")+`"}`), version: legacy, mode: 32},
		{body: list("9", `{`+meta+`}`), version: modern, mcpMethod: "tools/list", mode: 32},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.mode, s.flags, s.version, s.mcpMethod)
	}

	as := authtest.New(f)
	const resource = "https://mcp.example.com/mcp"
	tokens := []string{as.Token(f, resource, "mcp orders:read", nil), as.Token(f, resource, "mcp", nil)}
	scoped := fastListTools()
	scoped[1].Scopes = []string{"orders:read"}
	load := func(fast bool, tools []*Tool, auth bool, discovery string) *Handler {
		h := &Handler{Upstream: "http://127.0.0.1:9", Tools: tools, Discovery: discovery}
		if auth {
			h.Authorization = &AuthorizationConfig{Issuers: []string{as.Issuer}, Resource: resource, RequireScopes: []string{"mcp"}}
		}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		f.Cleanup(cancel)
		if err := h.Provision(ctx); err != nil {
			f.Fatal(err)
		}
		h.logger = zap.NewNop()
		fuzzQuiet(&h.Endpoint)
		if !fast {
			h.fast = nil
		}
		return h
	}
	type pair struct{ fast, mcpgo *Handler }
	modes := []pair{
		{load(true, fastListTools(), false, ""), load(false, fastListTools(), false, "")},
		{load(true, fastListTools(), true, ""), load(false, fastListTools(), true, "")},
		{load(true, scoped, true, ""), load(false, scoped, true, "")},
		{load(true, scoped, true, discoverySearch), load(false, scoped, true, discoverySearch)},
	}
	if !modes[0].fast.fast.AnswersLists() || !modes[1].fast.fast.AnswersLists() || modes[2].fast.fast.AnswersLists() || !modes[3].fast.fast.AnswersLists() {
		f.Fatal("the prepared lists are not where they should be: without tool scopes or with discovery search, and not with tool scopes otherwise")
	}

	f.Fuzz(func(t *testing.T, body []byte, mode, flags byte, version, mcpMethod string) {
		header := fuzzHeaders(flags, version, mcpMethod, "", "")
		if mode&2 != 0 {
			header.Set("Last-Event-ID", "1")
		}
		handlers := modes[0]
		switch {
		case mode&32 != 0:
			handlers = modes[3]
			header.Set("Authorization", "Bearer "+tokens[mode>>4&1])
		case mode&8 != 0:
			handlers = modes[2]
			header.Set("Authorization", "Bearer "+tokens[mode>>4&1])
		case mode&4 != 0:
			handlers = modes[1]
			header.Set("Authorization", "Bearer "+tokens[mode>>4&1])
		}
		answer := func(h *Handler) string {
			status, w, _ := fuzzServe(t, func(w http.ResponseWriter, r *http.Request) error { return h.ServeHTTP(w, r, nil) },
				fuzzRequest{method: http.MethodPost, body: body, header: header.Clone()})
			var lines []string
			for k, vs := range w.Header() {
				lines = append(lines, k+": "+strings.Join(vs, ", "))
			}
			slices.Sort(lines)
			return fmt.Sprintf("%d\n%s\n\n%s", status, strings.Join(lines, "\n"), w.Body.Bytes())
		}
		if fast, mcpgo := answer(handlers.fast), answer(handlers.mcpgo); fast != mcpgo {
			t.Errorf("answers differ:\nprepared:\n%.3000s\nmcp-go:\n%.3000s", fast, mcpgo)
		}
	})
}

// TestFastListAnswersFromBytes checks that the prepared answers are the
// ones served: a plain list of each era does not reach mcp-go.
func TestFastListAnswersFromBytes(t *testing.T) {
	h := &Handler{Upstream: "http://127.0.0.1:9", Tools: fastListTools()}
	defer provisionBench(t, h)()
	if !h.fast.AnswersLists() {
		t.Fatal("no prepared list")
	}
	requests := map[string]struct {
		body   string
		header map[string]string
	}{
		"":           {`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil},
		"2025-03-26": {`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}},
		"2025-11-25": toolsListBodies["2025-11-25"],
		"2026-07-28": toolsListBodies["2026-07-28"],
	}
	for version, in := range requests {
		before := h.fast.Listed()
		if w := serveOnce(t, h, in.body, in.header); w.Code != 200 || !strings.Contains(w.Body.String(), `"name":"c_third"`) {
			t.Fatalf("version %q: answer %d %s", version, w.Code, w.Body)
		}
		if h.fast.Listed() != before+1 {
			t.Errorf("version %q: the tools/list was not answered from the prepared bytes", version)
		}
	}
}

// TestFastListConcurrentFirstRequests sends the first tools/lists of a
// handler at once, in both eras: the answers are prepared once and each
// request gets the whole list (run with -race).
func TestFastListConcurrentFirstRequests(t *testing.T) {
	h := &Handler{Upstream: "http://127.0.0.1:9", Tools: fastListTools()}
	defer provisionBench(t, h)()
	want := make(map[string]string)
	fast := h.fast
	h.fast = nil
	for _, era := range eras {
		want[era] = serveOnce(t, h, toolsListBodies[era].body, toolsListBodies[era].header).Body.String()
	}
	h.fast = fast
	var wg sync.WaitGroup
	answers := make([]string, 16)
	for i := range answers {
		wg.Go(func() {
			in := toolsListBodies[eras[i%2]]
			w := httptest.NewRecorder()
			if err := h.ServeHTTP(w, listRequest(in.body, in.header), nil); err != nil {
				answers[i] = err.Error()
				return
			}
			answers[i] = w.Body.String()
		})
	}
	wg.Wait()
	for i, got := range answers {
		if got != want[eras[i%2]] {
			t.Errorf("answer %d differs from mcp-go's:\n%.500s\nwant\n%.500s", i, got, want[eras[i%2]])
		}
	}
	if n := h.fast.Listed(); n != int64(len(answers)) {
		t.Errorf("%d of %d answered from the prepared bytes", n, len(answers))
	}
}
