package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// TestFastPathAnswersAsMCPGoDoes sends each request twice, once with the
// fast path and once through mcp-go alone, and requires the same answer.
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
			h.Endpoint.fast = nil
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
		{"an id that JSON escapes", `{"jsonrpc":"2.0","id":"<a&b>\u2028 é","method":"tools/call","params":{"name":"get_order","arguments":{"id":"<1>"}}}`, legacy, true},
		{"modern header mismatch", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, modern("other"), false},
		{"modern without the version header", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},` + meta + `}}`, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "get_order"}, false},
		{"modern without capabilities", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modern("get_order"), false},
		{"unsupported version header", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, false},
		{"arguments not an object", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"get_order","arguments":"x"}}`, legacy, false},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":11,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, legacy, false},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"}}}`, legacy, false},
		{"progress asked", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1"},"_meta":{"progressToken":"p"}}}`, legacy, false},
	}
	send := func(h *Handler, body string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, req, nil); err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := atomic.LoadInt64(&fast.Endpoint.fastAnswers)
			a, b := send(fast, tt.body, tt.header), send(slow, tt.body, tt.header)
			if answered := atomic.LoadInt64(&fast.Endpoint.fastAnswers) > before; answered != tt.wantFast {
				t.Errorf("answered by the fast path: %v, want %v", answered, tt.wantFast)
			}
			if a.Code != b.Code || a.Header().Get("Content-Type") != b.Header().Get("Content-Type") {
				t.Errorf("fast: %d %s; mcp-go: %d %s", a.Code, a.Header().Get("Content-Type"), b.Code, b.Header().Get("Content-Type"))
			}
			var x, y any
			same := a.Body.String() == b.Body.String()
			if json.Unmarshal(a.Body.Bytes(), &x) == nil && json.Unmarshal(b.Body.Bytes(), &y) == nil {
				same = reflect.DeepEqual(x, y) // the same JSON, keys in any order
			}
			if !same {
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

// TestFastPathRunsAToolOnce gives the fast path a result that cannot be
// encoded: it answers as mcp-go does with such a result (200, no body)
// without handing the request on, so the upstream is called once.
func TestFastPathRunsAToolOnce(t *testing.T) {
	api, calls := countingUpstream(t)
	h := &Handler{Upstream: api.URL, Tools: []*Tool{{Name: "get", Description: "d", Method: "GET", Path: "/items"}}}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	h.logger, h.Endpoint.logger = zap.NewNop(), zap.NewNop()
	run := h.Endpoint.fast
	h.Endpoint.fast = func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool) {
		res, ok := run(ctx, name, args)
		if ok {
			res.StructuredContent = math.NaN() // json.Marshal refuses it
		}
		return res, ok
	}
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get"}}`))
	req.Header.Set("Content-Type", "application/json")
	req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, req, nil); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the upstream was called %d times, want 1", n)
	}
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("answer %d %q %q, want mcp-go's: 200, application/json, no body", w.Code, w.Header().Get("Content-Type"), w.Body)
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
