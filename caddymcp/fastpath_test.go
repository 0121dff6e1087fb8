package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
)

// TestFastPathAnswersAsMCPGoDoes sends each request twice, once with the
// fast path and once through mcp-go alone, and requires the same answer,
// byte for byte.
func TestFastPathAnswersAsMCPGoDoes(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, "bad")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"`+strings.TrimPrefix(r.URL.Path, "/o/")+`","n":9007199254740993}`)
		}
	}))
	defer api.Close()
	load := func(fast bool) *Handler {
		h := &Handler{Upstream: api.URL, Tools: []*Tool{
			{Name: "get_order", Description: "d", Method: "GET", Path: "/o/{id}", Args: []*Arg{{Name: "id", Required: true}}},
			{Name: "fail", Description: "d", Method: "GET", Path: "/fail"},
			{Name: "structured", Description: "d", Method: "GET", Path: "/o/s", OutputSchema: json.RawMessage(`{"type":"object"}`)},
		}}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		t.Cleanup(cancel)
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		h.logger, h.Endpoint.logger = zap.NewNop(), zap.NewNop()
		if !fast {
			h.fast = nil
		}
		return h
	}
	fast, slow := load(true), load(false)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	legacy := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	modern := func(name string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	tests := []struct {
		name     string
		body     string
		header   map[string]string
		wantFast bool
	}{
		{"legacy call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"a b"}}}`, legacy, true},
		{"legacy call without a version header", `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, nil, true},
		{"older version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, true},
		{"tool error", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail"}}`, legacy, true},
		{"schema violation", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_order","arguments":{"id":5}}}`, legacy, true},
		{"structured content", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"structured","arguments":{}}}`, legacy, true},
		{"modern call", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, modern("get_order"), true},
		{"modern tool error", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fail",` + meta + `}}`, modern("fail"), true},
		{"unknown tool", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, legacy, false},
		{"modern unknown tool", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{},` + meta + `}}`, modern("nope"), false},
		{"modern call with the name in Base64", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, modern("=?base64?Z2V0X29yZGVy?="), true},
		{"modern call with a bad Base64 name", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, modern("=?base64?!!?="), false},
		{"modern call without Mcp-Method", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Name": "get_order"}, false},
		{"an id mcp-go writes otherwise", `{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, legacy, true},
		{"an id no float64 holds", `{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, legacy, false},
		{"a member mcp-go reads twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},"Arguments":{"id":"2"}}}`, legacy, false},
		{"an id that JSON escapes", `{"jsonrpc":"2.0","id":"<a&b>\u2028 é","method":"tools/call","params":{"name":"get_order","arguments":{"id":"<1>"}}}`, legacy, true},
		{"modern header mismatch", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, modern("other"), false},
		{"modern without the version header", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get_order"}, false},
		{"modern without capabilities", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modern("get_order"), false},
		{"unsupported version header", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, false},
		{"arguments not an object", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"get_order","arguments":"x"}}`, legacy, false},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":11,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, legacy, false},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, legacy, false},
		{"progress asked", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},"_meta":{"progressToken":"p"}}}`, legacy, false},
		{"trace context in _meta", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"k=v"}}}`, legacy, true},
		{"modern trace context in _meta", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta[:len(meta)-1] + `,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`, modern("get_order"), true},
	}
	send := func(h *Handler, body string, header map[string]string) *httptest.ResponseRecorder {
		return servePost(t, h, body, header)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fast.fast.Answered()
			a, b := send(fast, tt.body, tt.header), send(slow, tt.body, tt.header)
			if answered := fast.fast.Answered() > before; answered != tt.wantFast {
				t.Errorf("answered by the fast path: %v, want %v", answered, tt.wantFast)
			}
			if a.Code != b.Code || a.Header().Get("Content-Type") != b.Header().Get("Content-Type") {
				t.Errorf("fast: %d %s; mcp-go: %d %s", a.Code, a.Header().Get("Content-Type"), b.Code, b.Header().Get("Content-Type"))
			}
			if withoutProgress(a.Body.String()) != withoutProgress(b.Body.String()) {
				t.Errorf("answers differ:\nfast:   %s\nmcp-go: %s", a.Body, b.Body)
			}
		})
	}
}

// TestLiveFastPathRefusesWhatMCPGoRefuses sends tools/calls that mcp-go
// refuses through Caddy: each gets mcp-go's answer, and none reaches the
// upstream. A plain call, last, does.
func TestLiveFastPathRefusesWhatMCPGoRefuses(t *testing.T) {
	api, calls := countingUpstream(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool get {
			description "Get the items."
			get /items
		}
	}
}`, api.URL))

	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get","arguments":{}}}`
	tests := []struct {
		name        string
		contentType string // "-": none
		body        string
		wantStatus  int
		wantBody    string
		wantCalls   int64
	}{
		{"no content type", "-", call, http.StatusBadRequest, "Invalid content type: must be 'application/json'\n", 0},
		{"text/plain", "text/plain", call, http.StatusBadRequest, "Invalid content type: must be 'application/json'\n", 0},
		{"a form", "application/x-www-form-urlencoded", call, http.StatusBadRequest, "Invalid content type: must be 'application/json'\n", 0},
		{"a multipart form", "multipart/form-data; boundary=x", call, http.StatusBadRequest, "Invalid content type: must be 'application/json'\n", 0},
		{"an id no float64 holds", "application/json",
			`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"get","arguments":{}}}`,
			http.StatusOK, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Failed to parse message"}}` + "\n", 0},
		{"a method with a result", "application/json",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get","arguments":{}},"result":{}}`,
			http.StatusAccepted, "", 0},
		{"a plain call", "application/json; charset=utf-8", call, http.StatusOK, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			req, err := http.NewRequest(http.MethodPost, "http://"+liveAddr+"/mcp", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if tt.contentType != "-" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, body := do(t, req)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("answer %q, want %q", body, tt.wantBody)
			}
			if n := calls.Load(); n != tt.wantCalls {
				t.Errorf("the upstream was called %d times, want %d", n, tt.wantCalls)
			}
		})
	}
}

// FuzzFastPathMatchesMCPGo sends each request to two mcp handlers of one
// configuration in front of one upstream, one with the fast path and one
// with mcp-go alone, and requires the same status, the same answer headers
// and bytes, and the same upstream requests (method, URI, headers, body),
// in upstream and in route mode. Nothing is normalised: the endpoint is
// stateless (no session id) and the upstream's answers do not depend on
// time. mode picks route mode (1), a Last-Event-ID (2), a form
// Content-Type (4), and handlers with an authorization block where
// get_order needs a scope (8), called with a token holding it, or not (16);
// flags and the strings set the MCP headers (fuzzHeaders).
func FuzzFastPathMatchesMCPGo(f *testing.F) {
	const (
		legacy = "2025-11-25"
		modern = "2026-07-28"
		meta   = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"}}`
	)
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	modernCall := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + `}}`
	}
	type seed struct {
		body                        string
		mode, flags                 byte
		version, mcpMethod, mcpName string
	}
	seeds := []seed{
		// Plain calls, which the fast path answers.
		{body: call("1", "get_order", `{"id":42,"expand":["items"],"request_id":"r-1"}`), version: legacy},
		{body: call(`"s"`, "read_file", `{"path":"a b","flag":true}`)},
		{body: call("2", "create_issue", `{"owner":"o","repo":"r","title":"<t>&\u2028","labels":["a"]}`), version: legacy},
		{body: call("3", "structured", `{}`), version: legacy},
		{body: call("4", "bad_structured", `null`), version: legacy},
		{body: call("5", "fail", `{}`), version: legacy, mode: 1},
		{body: call("6", "image", `{}`), version: legacy},
		{body: call("7", "big", `{}`), version: legacy},
		{body: call("8", "put_tags", `{"id":1,"tags":["a",1]}`), version: legacy},
		{body: call("9", "submit_form", `{"a":"1 2","b":["x"],"n":-0.0}`), version: "2025-03-26"},
		{body: modernCall("get_order", `{"id":1}`), version: modern, mcpMethod: "tools/call", mcpName: "get_order"},
		{body: modernCall("get_order", `{"id":1}`), version: modern, mcpMethod: "tools/call", mcpName: "=?base64?Z2V0X29yZGVy?="},
		{body: modernCall("fail", `{}`), version: modern, mcpMethod: "tools/call", mcpName: "fail", mode: 1},
		// What mcp-go refuses or reads otherwise.
		{body: call("1", "get_order", `{"id":1}`), version: legacy, flags: 8 + 4}, // no Content-Type
		{body: call("1", "get_order", `{"id":1}`), version: legacy, flags: 8},     // text/plain
		{body: call("1", "get_order", `{"id":1}`), version: legacy, mode: 4},      // a form
		{body: call("1e400", "get_order", `{"id":1}`), version: legacy},
		{body: call("1e-400", "get_order", `{"id":1}`), version: legacy},
		{body: call("1.0", "get_order", `{"id":1}`), version: legacy},
		{body: call("-0", "get_order", `{"id":1}`), version: legacy},
		{body: call("12345678901234567890", "get_order", `{"id":1}`), version: legacy},
		{body: call(`"\u0041\/"`, "get_order", `{"id":1}`), version: legacy},
		{body: call("null", "get_order", `{"id":1}`), version: legacy},
		{body: call("true", "get_order", `{"id":1}`), version: legacy},
		{body: call("1", "get_order", `{"id":1,"limit":1e400}`), version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}},"result":{}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}},"result":null}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}},"error":{}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"id":1e400,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","ID":2,"id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"get_order","arguments":{"id":1}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"arguments":[]}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"task":{}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"_meta":{"progressToken":"p"}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":5}}}}`,
			version: modern, mcpMethod: "tools/call", mcpName: "get_order"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}}`,
			version: modern, mcpMethod: "tools/call", mcpName: "get_order"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"_meta":{"io.modelcontextprotocol/ProtocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			version: modern, mcpMethod: "tools/call", mcpName: "get_order"},
		{body: modernCall("get_order", `{"id":1}`), version: modern, mcpMethod: "tools/call", mcpName: "get_order", mode: 2},
		{body: modernCall("get_order", `{"id":1}`), version: modern, mcpMethod: "tools/call", mcpName: "other"},
		{body: modernCall("get_order", `{"id":1}`), mcpMethod: "tools/call", mcpName: "get_order"},
		{body: modernCall("get_order", `{"id":1}`), version: legacy, mcpMethod: "tools/call", mcpName: "get_order"},
		// A mirrored argument (mode 64: Mcp-Param-Region eu, 128: us, both:
		// eu in Base64): the header that matches, one that does not, none.
		{body: modernCall("header_bound", `{"region":"eu"}`), version: modern, mcpMethod: "tools/call", mcpName: "header_bound"},
		{body: modernCall("header_bound", `{"region":"eu"}`), version: modern, mcpMethod: "tools/call", mcpName: "header_bound", mode: 64},
		{body: modernCall("header_bound", `{"region":"eu"}`), version: modern, mcpMethod: "tools/call", mcpName: "header_bound", mode: 64 + 128},
		{body: modernCall("header_bound", `{"region":"eu"}`), version: modern, mcpMethod: "tools/call", mcpName: "header_bound", mode: 128},
		{body: modernCall("header_bound", `{}`), version: modern, mcpMethod: "tools/call", mcpName: "header_bound", mode: 128},
		{body: modernCall("header_bound", `{"region":"eu"}`), version: modern, mcpMethod: "tools/call", mcpName: "other", mode: 128},
		{body: call("1", "header_bound", `{"region":"eu"}`), version: legacy},
		{body: call("1", "header_bound", `{"region":"eu"}`), version: legacy, mode: 64},
		{body: call("1", "header_bound", `{"region":"eu"}`), version: legacy, mode: 128},
		{body: call("1", "header_bound", `{}`), version: legacy, mode: 64},
		{body: call("1", "header_bound", `{"region":"eu"}`), version: legacy, mode: 128 + 8},
		{body: call("1", "get_order", `{"id":1}`), version: modern},
		{body: call("1", "get_order", `{"id":1}`), version: "1999-01-01"},
		{body: call("1", "get_order", `{"id":1}`), version: legacy, flags: 16}, // Mcp-Session-Id
		{body: call("1", "get_order", `"x"`), version: legacy},
		{body: call("1", "nope", `{}`), version: legacy},
		{body: `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order"}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, version: legacy},
		// With authorization: allowed, refused for scope, another tool.
		{body: call("1", "get_order", `{"id":1}`), version: legacy, mode: 8},
		{body: call("1", "get_order", `{"id":1}`), version: legacy, mode: 8 + 16},
		{body: call("1", "read_file", `{"path":"a"}`), version: legacy, mode: 8 + 16 + 1},
		{body: modernCall("get_order", `{"id":1}`), version: modern, mcpMethod: "tools/call", mcpName: "get_order", mode: 8 + 16},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, version: legacy, mode: 8 + 16},
		// With discovery search: the two tools, a tool not listed, call_tool's
		// own errors, and with authorization a scoped tool through call_tool.
		{body: call("1", "call_tool", `{"name":"get_order","arguments":{"id":42,"expand":["items"]}}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":"get_order","arguments":{"id":9007199254740993}}`), version: legacy, mode: 32 + 1},
		{body: call("1", "call_tool", `{"name":"create_issue","arguments":{"owner":"o","repo":"r","title":"t"}}`), version: legacy, mode: 32 + 1},
		{body: call("1", "call_tool", `{"name":"image"}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":"structured","arguments":null}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":"nope"}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":7}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":"get_order","arguments":"x"}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":"get_order","NAME":"read_file"}`), version: legacy, mode: 32},
		{body: call("1", "call_tool", `"x"`), version: legacy, mode: 32},
		{body: call("1", "search_tools", `{"query":"order"}`), version: legacy, mode: 32},
		{body: call("1", "search_tools", `{"query":"read a file","limit":1}`), version: legacy, mode: 32 + 1},
		{body: call("1", "search_tools", `{"query":"x","limit":1e400}`), version: legacy, mode: 32},
		{body: call("1", "search_tools", `{"query":"x","limit":2.0}`), version: legacy, mode: 32},
		{body: call("1", "search_tools", `{}`), version: legacy, mode: 32},
		{body: call("1", "get_order", `{"id":1}`), version: legacy, mode: 32},
		{body: modernCall("call_tool", `{"name":"get_order","arguments":{"id":1}}`), version: modern, mcpMethod: "tools/call", mcpName: "call_tool", mode: 32},
		{body: modernCall("call_tool", `{"name":"header_bound","arguments":{"region":"eu"}}`), version: modern, mcpMethod: "tools/call", mcpName: "call_tool", mode: 32},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"get_order","arguments":{"id":1}},"_meta":{"progressToken":"p"}}}`, version: legacy, mode: 32},
		{body: call("1", "call_tool", `{"name":"get_order","arguments":{"id":1}}`), version: legacy, mode: 32 + 8},
		{body: call("1", "call_tool", `{"name":"get_order","arguments":{"id":1}}`), version: legacy, mode: 32 + 8 + 16},
		{body: call("1", "search_tools", `{"query":"get an order"}`), version: legacy, mode: 32 + 8 + 16},
		{body: call("1", "search_tools", `{"query":"get an order"}`), version: legacy, mode: 32 + 8},
		{body: call("1", "get_order", `{"id":1}`), version: legacy, mode: 32 + 8 + 16},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.mode, s.flags, s.version, s.mcpMethod, s.mcpName)
	}

	os.Setenv("FUZZ_MCP_SECRET", "mcp-secret")
	os.Setenv("FUZZ_MCP_TENANT", "acme")
	var tools []*Tool
	for _, tool := range fuzzMCPTools() {
		if tool.Name != "slow" { // a timeout races the upstream's recording
			tools = append(tools, tool)
		}
	}
	tools = append(tools, &Tool{Name: "header_bound", Description: "Has a parameter in a header.", Method: "GET", Path: "/h",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)})
	up := &upstreamLog{}
	api := httptest.NewServer(up.record(fuzzUpstream(&fuzzRecorded{})))
	f.Cleanup(api.Close)
	// With an authorization block, get_order needs a scope.
	as := authtest.New(f)
	const resource = "https://mcp.example.com/mcp"
	authorization := &AuthorizationConfig{Issuers: []string{as.Issuer}, Resource: resource, RequireScopes: []string{"mcp"}}
	scopedTools := slices.Clone(tools)
	for i, tool := range scopedTools {
		if tool.Name == "get_order" {
			scoped := *tool
			scoped.Scopes = []string{"orders:read"}
			scopedTools[i] = &scoped
		}
	}
	tokens := []string{as.Token(f, resource, "mcp orders:read", nil), as.Token(f, resource, "mcp", nil)}
	load := func(base string, fast bool, auth *AuthorizationConfig, discovery string) *Handler {
		h := &Handler{Upstream: base, Headers: http.Header{"Authorization": {"Bearer {env.FUZZ_MCP_SECRET}"}},
			Timeout: caddy.Duration(2 * time.Second), MaxResponseSize: 64 << 10, Endpoint: Endpoint{MaxRequestSize: 64 << 10}, Tools: tools,
			Discovery: discovery}
		if auth != nil {
			h.Authorization, h.Tools = auth, scopedTools
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
	var modes []pair // by mode bits 1 (route mode), 8 (authorization), 32 (discovery search); 2, 4, 64 and 128 set headers
	for _, discovery := range []string{"", discoverySearch} {
		modes = append(modes,
			pair{load(api.URL+"/v2", true, nil, discovery), load(api.URL+"/v2", false, nil, discovery)},
			pair{load("", true, nil, discovery), load("", false, nil, discovery)},
			pair{load(api.URL+"/v2", true, authorization, discovery), load(api.URL+"/v2", false, authorization, discovery)},
			pair{load("", true, authorization, discovery), load("", false, authorization, discovery)})
	}
	client := api.Client()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		// Route mode: the handlers after mcp reach the same upstream.
		req, err := http.NewRequestWithContext(r.Context(), r.Method, api.URL+"/v2"+r.URL.RequestURI(), r.Body)
		if err != nil {
			return err
		}
		req.Header = r.Header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, err = io.Copy(w, resp.Body)
		return err
	})

	f.Fuzz(func(t *testing.T, body []byte, mode, flags byte, version, mcpMethod, mcpName string) {
		header := fuzzHeaders(flags, version, mcpMethod, mcpName, "")
		if mode&2 != 0 {
			header.Set("Last-Event-ID", "1")
		}
		if mode&4 != 0 {
			header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if region := map[byte]string{64: "eu", 128: "us", 64 + 128: "=?base64?ZXU=?="}[mode&(64+128)]; region != "" {
			header.Set("Mcp-Param-Region", region)
		}
		i := int(mode & 1)
		if mode&8 != 0 {
			i += 2
			header.Set("Authorization", "Bearer "+tokens[mode>>4&1])
		}
		if mode&32 != 0 {
			i += 4
		}
		handlers := modes[i]
		answer := func(h *Handler) (string, []string) {
			up.take()
			status, w, _ := fuzzServe(t, func(w http.ResponseWriter, r *http.Request) error { return h.ServeHTTP(w, r, next) },
				fuzzRequest{method: http.MethodPost, body: body, header: header.Clone()})
			var lines []string
			for k, vs := range w.Header() {
				lines = append(lines, k+": "+strings.Join(vs, ", "))
			}
			slices.Sort(lines)
			return fmt.Sprintf("%d\n%s\n\n%s", status, strings.Join(lines, "\n"), w.Body.Bytes()), up.take()
		}
		before := handlers.fast.fast.Answered()
		fastAnswer, fastCalls := answer(handlers.fast)
		mcpgoAnswer, mcpgoCalls := answer(handlers.mcpgo)
		if withoutProgress(fastAnswer) != withoutProgress(mcpgoAnswer) {
			t.Errorf("answers differ (fast path took it: %v):\nfast path:\n%.2000s\nmcp-go:\n%.2000s", handlers.fast.fast.Answered() > before, fastAnswer, mcpgoAnswer)
		}
		if !slices.Equal(fastCalls, mcpgoCalls) {
			t.Errorf("upstream requests differ:\nfast path: %.2000q\nmcp-go:    %.2000q", fastCalls, mcpgoCalls)
		}
	})
}

// withoutProgress leaves the progress notifications out of an answer's
// SSE events. mcp-go loses one now and then, on a call the fast path hands
// it as on one it serves alone: its forwarder can take the notification
// off the session's channel just as the answer is ready, and drops it once
// the answer is written (handlePost in mcp-go's server/streamable_http.go).
// Which of two equal requests keeps it is chance; the fast path itself
// never answers a call that asked for progress.
func withoutProgress(answer string) string {
	events := strings.Split(answer, "\n\n")
	kept := events[:0]
	for _, e := range events {
		if !strings.Contains(e, `"method":"notifications/progress"`) {
			kept = append(kept, e)
		}
	}
	return strings.Join(kept, "\n\n")
}

// upstreamLog records every request an upstream gets, whole.
type upstreamLog struct {
	mu       sync.Mutex
	requests []string
}

func (l *upstreamLog) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var lines []string
		for k, vs := range r.Header {
			lines = append(lines, k+": "+strings.Join(vs, ", "))
		}
		slices.Sort(lines)
		l.mu.Lock()
		l.requests = append(l.requests, r.Method+" "+r.RequestURI+"\n"+strings.Join(lines, "\n")+"\n\n"+string(body))
		l.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func (l *upstreamLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.requests
	l.requests = nil
	return out
}

// TestMCPGoVersion fails when go.mod moves mcp-go to another version.
func TestMCPGoVersion(t *testing.T) {
	t.Parallel()
	// The fast path takes a tools/call only when every check mcp-go's
	// streamable HTTP server makes of it is sure to pass, and writes the
	// bytes mcp-go writes; both were read off this version of mcp-go. When
	// go.mod changes it: re-check the fast path's preconditions
	// (fastPath.accept, messageShape) against mcp-go's (server/
	// streamable_http.go handlePost, streamable_http_modern.go,
	// request_handler.go HandleMessage, server.go handleToolCall), run
	// .ci/fuzz FastPath for a while (FuzzFastPathMatchesMCPGo), then
	// update this.
	const checked = "v1.2.1"
	out, err := exec.Command("go", "list", "-m", "-f", "{{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}", "github.com/mark3labs/mcp-go").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/mark3labs/mcp-go: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != checked {
		t.Errorf("go.mod has mcp-go %s; the fast path was checked against %s: re-check its preconditions against mcp-go's and run FuzzFastPathMatchesMCPGo, then update this constant", got, checked)
	}
}

// countingUpstream is a REST upstream that answers {"ok":true} and counts
// the requests it gets.
func countingUpstream(t *testing.T) (*httptest.Server, *atomic.Int64) {
	calls := new(atomic.Int64)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(api.Close)
	return api, calls
}
