package caddymcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// BenchmarkToolCall measures one tools/call through the handler to an
// in-process upstream, in both protocol eras. mcp-go's own cost per call
// is the floor (see README); everything above it is this plugin's.
func BenchmarkToolCall(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":42,"status":"open","total":99.5}`)
	}))
	defer api.Close()

	h := &Handler{
		Upstream: api.URL,
		Headers:  http.Header{"Authorization": {"Bearer {env.BENCH_KEY}"}},
		Tools: []*Tool{{
			Name: "get_order", Description: "Get an order.", Method: "GET", Path: "/orders/{id}",
			Args: []*Arg{{Name: "id", Type: "integer", Required: true}, {Name: "expand", Type: "boolean"}},
		}},
	}
	defer provisionBench(b, h)()

	bodies := map[string]struct {
		body   string
		header map[string]string
	}{
		"2025-11-25": {
			body:   `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":42,"expand":true}}}`,
			header: map[string]string{"Mcp-Protocol-Version": "2025-11-25"},
		},
		"2026-07-28": {
			body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":42,"expand":true},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
				`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`,
			header: map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_order"},
		},
	}
	fast := h.fast
	for _, era := range eras {
		for _, path := range []string{"endpoint", "mcp-go"} {
			b.Run(era+"/"+path, func(b *testing.B) {
				// "mcp-go" turns the endpoint's own answer off, to show
				// what it saves: the figures before and after it.
				h.fast = fast
				if path == "mcp-go" {
					h.fast = nil
				}
				defer func() { h.fast = fast }()
				benchToolCall(b, h, bodies[era].body, bodies[era].header)
			})
		}
	}
}

// BenchmarkHugeArguments measures one tools/call through the handler
// whose arguments are 450,000 integers, a 900 KB body: given for
// `arg tags string[]` (invalid: the validator words the first violations
// and counts the others) and for `arg tags integer[]` (valid: the call
// reaches an in-process upstream, whose reading of the request counts
// too). B/op is what one such request allocates; a small multiple of the
// body is the aim.
func BenchmarkHugeArguments(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer api.Close()
	h := &Handler{
		Upstream: api.URL,
		Tools: []*Tool{
			{Name: "tag", Description: "Tag things.", Method: "POST", Path: "/tags", Args: []*Arg{{Name: "tags", Type: "string[]", Required: true}}},
			{Name: "count", Description: "Count things.", Method: "POST", Path: "/count", Args: []*Arg{{Name: "tags", Type: "integer[]", Required: true}}},
		},
	}
	defer provisionBench(b, h)()

	for _, c := range []struct{ tool, want string }{
		{"tag", `and 449,980 more`},
		{"count", `{\"ok\":true}`},
	} {
		b.Run(c.tool, func(b *testing.B) {
			body := hugeCall(c.tool, 450_000)
			b.SetBytes(int64(len(body)))
			serveCall(b, h, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, c.want)
		})
	}
}

// hugeCall is a tools/call of tool with n integers as its tags.
func hugeCall(tool string, n int) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"tags":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('1')
	}
	b.WriteString(`]}}}`)
	return b.String()
}

// provisionBench provisions h for a benchmark, with quiet logs, and
// returns its cleanup.
func provisionBench(b *testing.B, h *Handler) func() {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := h.Provision(ctx); err != nil {
		cancel()
		b.Fatal(err)
	}
	// Tests have no Caddy logging config, so the context's logger is a
	// development logger at debug level; production logs are quieter.
	h.logger, h.Endpoint.logger = zap.NewNop(), zap.NewNop()
	return func() {
		_ = h.Cleanup()
		cancel()
	}
}

func benchToolCall(b *testing.B, h *Handler, body string, header map[string]string) {
	serveCall(b, h, body, header, `\"status\":\"open\"`)
}

// serveCall measures h answering body, after checking that the answer
// holds want.
func serveCall(b *testing.B, h *Handler, body string, header map[string]string, want string) {
	serve := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		repl := caddy.NewReplacer()
		req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, repl))
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, req, nil); err != nil {
			b.Fatal(err)
		}
		return w
	}
	w := serve()
	if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(want)) {
		b.Fatalf("unexpected answer %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serve()
	}
}
