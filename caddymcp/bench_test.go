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
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		b.Fatal(err)
	}
	defer h.Cleanup()
	// Tests have no Caddy logging config, so the context's logger is a
	// development logger at debug level; production logs are quieter.
	h.logger, h.Endpoint.logger = zap.NewNop(), zap.NewNop()

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
	fast := h.Endpoint.fast
	for _, era := range eras {
		for _, path := range []string{"endpoint", "mcp-go"} {
			b.Run(era+"/"+path, func(b *testing.B) {
				// "mcp-go" turns the endpoint's own answer off, to show
				// what it saves: the figures before and after it.
				h.Endpoint.fast = fast
				if path == "mcp-go" {
					h.Endpoint.fast = nil
				}
				defer func() { h.Endpoint.fast = fast }()
				benchToolCall(b, h, bodies[era].body, bodies[era].header)
			})
		}
	}
}

func benchToolCall(b *testing.B, h *Handler, body string, header map[string]string) {
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
	if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(`\"status\":\"open\"`)) {
		b.Fatalf("unexpected answer %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serve()
	}
}
