package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-mcp/caddy-mcp/fastpath"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Caddy's tracing handler builds its exporter with autoexport, which
// reads OTEL_TRACES_EXPORTER: the tests register an in-memory exporter
// under a name of their own and ask for it there. Caddy shuts the
// exporter down with its last traced config; the spans stay readable.
var (
	spans        = tracetest.NewInMemoryExporter()
	registerOnce sync.Once
)

type keptExporter struct{ *tracetest.InMemoryExporter }

func (keptExporter) Shutdown(context.Context) error { return nil }

// traceSpans makes the next Caddy config with `tracing` export into
// spans, in batches of 10ms, and empties spans.
func traceSpans(t *testing.T) {
	registerOnce.Do(func() {
		autoexport.RegisterSpanExporter("caddymcp-test", func(context.Context) (sdktrace.SpanExporter, error) {
			return keptExporter{spans}, nil
		})
	})
	t.Setenv("OTEL_TRACES_EXPORTER", "caddymcp-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	spans.Reset()
}

// waitSpan waits for an ended span that match accepts.
func waitSpan(t *testing.T, what string, match func(tracetest.SpanStub) bool) tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, s := range spans.GetSpans() {
			if match(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range spans.GetSpans() {
				names = append(names, fmt.Sprintf("%s (%s)", s.Name, s.SpanKind))
			}
			t.Fatalf("no span %s; spans: %v", what, names)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func named(name string, kind trace.SpanKind) func(tracetest.SpanStub) bool {
	return func(s tracetest.SpanStub) bool { return s.Name == name && s.SpanKind == kind }
}

func childOf(parent tracetest.SpanStub, name string, kind trace.SpanKind) func(tracetest.SpanStub) bool {
	return func(s tracetest.SpanStub) bool {
		return named(name, kind)(s) && s.Parent.SpanID() == parent.SpanContext.SpanID() &&
			s.SpanContext.TraceID() == parent.SpanContext.TraceID()
	}
}

// traceparentOf is the W3C traceparent of a span.
func traceparentOf(s tracetest.SpanStub) string {
	return fmt.Sprintf("00-%s-%s-01", s.SpanContext.TraceID(), s.SpanContext.SpanID())
}

// wantNoSecret fails if any attribute of any span holds one of secrets.
func wantNoSecret(t *testing.T, secrets ...string) {
	t.Helper()
	for _, s := range spans.GetSpans() {
		texts := map[string]string{"status": s.Status.Description}
		for _, kv := range s.Attributes {
			texts["attribute "+string(kv.Key)] = kv.Value.Emit()
		}
		for i, e := range s.Events {
			texts[fmt.Sprintf("event %d", i)] = e.Name
			for _, kv := range e.Attributes {
				texts[fmt.Sprintf("event %d %s", i, kv.Key)] = kv.Value.Emit()
			}
		}
		for where, text := range texts {
			for _, secret := range secrets {
				if strings.Contains(text, secret) {
					t.Errorf("span %q: %s holds a secret: %s", s.Name, where, text)
				}
			}
		}
	}
}

// headersTools is a handler whose tool answers the headers go-httpbin
// received, with an upstream key in a header and in the query.
const headersTools = `
			upstream %s
			header Authorization "Bearer upstream-header-secret"
			tool headers {
				description "The headers the upstream received."
				get /headers
				query api_key upstream-query-secret
			}`

// upstreamTraceparent is the traceparent go-httpbin received, from the
// answer of the headers tool.
func upstreamTraceparent(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var got struct {
		Headers map[string][]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(wantOK(t, res)), &got); err != nil {
		t.Fatalf("not httpbin's answer: %v\n%s", err, mcptest.ResultText(res))
	}
	return strings.Join(got.Headers["Traceparent"], ",")
}

func TestLiveTracingToolCall(t *testing.T) {
	traceSpans(t)
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	handle /traced {
		tracing
		mcp {
			%s
		}
	}
	handle /routed {
		tracing
		mcp {
			tool headers {
				description "The headers the upstream received."
				get /headers
			}
		}
		reverse_proxy %s
	}
	mcp /plain {
		%s
	}
}`, fmt.Sprintf(headersTools, bin), strings.TrimPrefix(bin, "http://"), fmt.Sprintf(headersTools, bin)))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			spans.Reset()
			c := connect(t, "/traced", era, map[string]string{"Authorization": "Bearer client-secret"})
			got := upstreamTraceparent(t, callTool(t, c, "headers", nil))

			call := waitSpan(t, "tools/call headers", named("tools/call headers", trace.SpanKindServer))
			for key, want := range map[string]string{
				"mcp.method.name":       "tools/call",
				"gen_ai.tool.name":      "headers",
				"gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version":  era,
				"network.transport":     "tcp",
			} {
				if v := attr(call, key); v != want {
					t.Errorf("%s = %q, want %q", key, v, want)
				}
			}
			if attr(call, "jsonrpc.request.id") == "" {
				t.Error("no jsonrpc.request.id")
			}
			if attr(call, "error.type") != "" {
				t.Errorf("a successful call has error.type %q", attr(call, "error.type"))
			}
			// The MCP span is a child of Caddy's HTTP server span.
			waitSpan(t, "the HTTP span of the call", func(s tracetest.SpanStub) bool {
				return s.SpanKind == trace.SpanKindServer && s.SpanContext.SpanID() == call.Parent.SpanID()
			})
			req := waitSpan(t, "the upstream request", childOf(call, "GET", trace.SpanKindClient))
			if attr(req, "http.response.status_code") != "200" || attr(req, "server.address") != "127.0.0.1" {
				t.Errorf("upstream span attributes %v", req.Attributes)
			}
			if want := traceparentOf(req); got != want {
				t.Errorf("the upstream received traceparent %q, want %q", got, want)
			}
			first := "initialize"
			if era == "2026-07-28" {
				first = "server/discover"
			}
			waitSpan(t, first, named(first, trace.SpanKindServer))
			wantNoSecret(t, "upstream-header-secret", "upstream-query-secret", "client-secret")
		})
	}

	t.Run("_meta traceparent is the parent when the HTTP request has none", func(t *testing.T) {
		spans.Reset()
		const metaTrace, metaSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
		body := `{"jsonrpc":"2.0","id":"m-1","method":"tools/call","params":{"name":"headers","arguments":{},` +
			`"_meta":{"traceparent":"00-` + metaTrace + `-` + metaSpan + `-01"}}}`
		resp, out := rawPost(t, "/traced", []byte(body), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		call := waitSpan(t, "the call in the _meta's trace", func(s tracetest.SpanStub) bool {
			return named("tools/call headers", trace.SpanKindServer)(s) && s.SpanContext.TraceID().String() == metaTrace
		})
		if call.Parent.SpanID().String() != metaSpan || !call.Parent.IsRemote() {
			t.Errorf("parent %s, want the remote %s", call.Parent.SpanID(), metaSpan)
		}
		if attr(call, "jsonrpc.request.id") != "m-1" {
			t.Errorf("jsonrpc.request.id %q", attr(call, "jsonrpc.request.id"))
		}
		if len(call.Links) != 1 || call.Links[0].SpanContext.TraceID().String() == metaTrace {
			t.Errorf("want one link to the HTTP span, got %+v", call.Links)
		}
		req := waitSpan(t, "the upstream request", childOf(call, "GET", trace.SpanKindClient))
		if !strings.Contains(string(out), traceparentOf(req)) {
			t.Errorf("the upstream did not receive %s: %s", traceparentOf(req), out)
		}
	})

	t.Run("the HTTP request's traceparent wins over _meta", func(t *testing.T) {
		spans.Reset()
		const httpTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"headers","arguments":{},` +
			`"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`
		resp, out := rawPost(t, "/traced", []byte(body), map[string]string{"Traceparent": "00-" + httpTrace + "-00f067aa0ba902b7-01"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		call := waitSpan(t, "tools/call headers", named("tools/call headers", trace.SpanKindServer))
		if call.SpanContext.TraceID().String() != httpTrace || len(call.Links) != 0 {
			t.Errorf("trace %s, links %v: want the HTTP request's trace %s, no link", call.SpanContext.TraceID(), call.Links, httpTrace)
		}
	})

	t.Run("an invalid call marks the span", func(t *testing.T) {
		spans.Reset()
		body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"headers","arguments":{"x":1}}}`
		if resp, out := rawPost(t, "/traced", []byte(body), nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, out)
		}
		call := waitSpan(t, "tools/call headers", named("tools/call headers", trace.SpanKindServer))
		if attr(call, "error.type") != "tool_error" || call.Status.Code.String() != "Error" {
			t.Errorf("error.type %q, status %v: want tool_error, Error", attr(call, "error.type"), call.Status)
		}
	})

	t.Run("a JSON-RPC error is the span's error.type", func(t *testing.T) {
		spans.Reset()
		body := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}`
		resp, out := rawPost(t, "/traced", []byte(body), nil)
		var answer struct {
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal(out, &answer); err != nil || answer.Error.Code == 0 {
			t.Fatalf("status %d: want a JSON-RPC error, got %s", resp.StatusCode, out)
		}
		call := waitSpan(t, "tools/call nope", named("tools/call nope", trace.SpanKindServer))
		if want := strconv.Itoa(answer.Error.Code); attr(call, "error.type") != want || attr(call, "rpc.response.status_code") != want {
			t.Errorf("error.type %q, rpc.response.status_code %q, want %s", attr(call, "error.type"), attr(call, "rpc.response.status_code"), want)
		}
	})

	t.Run("route mode", func(t *testing.T) {
		spans.Reset()
		c := connect(t, "/routed", "", nil)
		got := upstreamTraceparent(t, callTool(t, c, "headers", nil))
		call := waitSpan(t, "tools/call headers", named("tools/call headers", trace.SpanKindServer))
		req := waitSpan(t, "the routed request", childOf(call, "GET", trace.SpanKindClient))
		// reverse_proxy sends the traceparent the tool request carried.
		if want := traceparentOf(req); got != want {
			t.Errorf("the upstream received traceparent %q, want %q", got, want)
		}
	})

	t.Run("without tracing nothing is traced or sent", func(t *testing.T) {
		spans.Reset()
		c := connect(t, "/plain", "", nil)
		if got := upstreamTraceparent(t, callTool(t, c, "headers", nil)); got != "" {
			t.Errorf("the upstream received traceparent %q", got)
		}
		time.Sleep(100 * time.Millisecond) // more than the batch delay
		if n := len(spans.GetSpans()); n != 0 {
			t.Errorf("%d spans without tracing", n)
		}
	})
}

// recordingBackend is an MCP server whose tool "echo" answers "ok", and
// which keeps the traceparent of each tools/call: the HTTP header's and
// the _meta's.
type recordingBackend struct {
	mu    sync.Mutex
	calls []recordedCall
}

type recordedCall struct{ header, meta string }

func (b *recordingBackend) start(t *testing.T) string {
	srv := server.NewMCPServer("rec", "1")
	srv.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(`"ok"`), nil
	})
	inner := server.NewStreamableHTTPServer(srv, server.WithStateLess(true), server.WithDisableLocalhostProtection(true))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Meta struct {
					Traceparent string `json:"traceparent"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			b.mu.Lock()
			b.calls = append(b.calls, recordedCall{header: r.Header.Get("Traceparent"), meta: msg.Params.Meta.Traceparent})
			b.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestLiveTracingCodeMode(t *testing.T) {
	traceSpans(t)
	rec := &recordingBackend{}
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	handle /code {
		tracing
		codemode {
			backend rec %s/mcp
		}
	}
}`, rec.start(t)))

	c := connect(t, "/code", "", nil)
	res := callTool(t, c, "execute", map[string]any{"code": `return [await rec.echo({}), await rec.echo({})]`})
	if text := wantOK(t, res); !strings.Contains(text, `"ok"`) {
		t.Fatalf("result %s", text)
	}

	call := waitSpan(t, "tools/call execute", named("tools/call execute", trace.SpanKindServer))
	exec := waitSpan(t, "the execution", childOf(call, "codemode.execute", trace.SpanKindInternal))
	if attr(exec, "codemode.tool_calls") != "2" {
		t.Errorf("codemode.tool_calls %q", attr(exec, "codemode.tool_calls"))
	}
	var bindings []tracetest.SpanStub
	deadline := time.Now().Add(10 * time.Second)
	for len(bindings) < 2 && time.Now().Before(deadline) {
		bindings = bindings[:0]
		for _, s := range spans.GetSpans() {
			if childOf(exec, "tools/call echo", trace.SpanKindClient)(s) {
				bindings = append(bindings, s)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(bindings) != 2 {
		t.Fatalf("%d binding spans, want 2", len(bindings))
	}
	if attr(bindings[0], "codemode.backend") != "rec" || attr(bindings[0], "gen_ai.tool.name") != "echo" {
		t.Errorf("binding span attributes %v", bindings[0].Attributes)
	}

	rec.mu.Lock()
	calls := append([]recordedCall(nil), rec.calls...)
	rec.mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("the backend saw %d calls", len(calls))
	}
	want := map[string]bool{traceparentOf(bindings[0]): true, traceparentOf(bindings[1]): true}
	for _, got := range calls {
		if !want[got.header] || got.meta != got.header {
			t.Errorf("the backend received traceparent %q and _meta.traceparent %q, want one of %v", got.header, got.meta, want)
		}
	}

	t.Run("a failed execution marks its spans", func(t *testing.T) {
		spans.Reset()
		res := callTool(t, c, "execute", map[string]any{"code": `throw new Error("boom")`})
		wantToolError(t, res, "boom")
		call := waitSpan(t, "tools/call execute", named("tools/call execute", trace.SpanKindServer))
		exec := waitSpan(t, "the execution", childOf(call, "codemode.execute", trace.SpanKindInternal))
		if attr(call, "error.type") != "tool_error" || attr(exec, "error.type") == "" {
			t.Errorf("error.type %q and %q", attr(call, "error.type"), attr(exec, "error.type"))
		}
		wantNoSecret(t, "boom")
	})

	t.Run("invalid arguments mark the call", func(t *testing.T) {
		spans.Reset()
		wantToolError(t, callTool(t, c, "execute", map[string]any{"script": "1"}), `"code" argument is required`)
		call := waitSpan(t, "tools/call execute", named("tools/call execute", trace.SpanKindServer))
		if attr(call, "error.type") != "tool_error" || attr(call, "caddy.mcp.outcome") != outcomeInvalidArgs {
			t.Errorf("attributes %v", call.Attributes)
		}
	})
}

// BenchmarkTraceHooks measures what the tracing hooks of one tools/call
// cost: the MCP span and the upstream request's, without `tracing` (no
// span in the context: the cost every untraced request pays) and under a
// recording span whose spans go nowhere.
func BenchmarkTraceHooks(b *testing.B) {
	info := &fastpath.Message{JSONRPC: "2.0", RawID: json.RawMessage(`7`), Method: "tools/call",
		RawParams: json.RawMessage(`{"name":"get_order","arguments":{"id":42}}`)}
	provider := sdktrace.NewTracerProvider()
	defer provider.Shutdown(context.Background())
	traced, httpSpan := provider.Tracer("bench").Start(context.Background(), "handler", trace.WithSpanKind(trace.SpanKindServer))
	defer httpSpan.End()
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"untraced", context.Background()}, {"traced", traced}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil).WithContext(c.ctx)
			// Made once: the call makes it anyway. Its span is then the
			// HTTP span's child, not the MCP span's; the cost is the same.
			req, _ := http.NewRequestWithContext(c.ctx, http.MethodGet, "http://127.0.0.1:8080/orders/42", nil)
			res := &mcp.CallToolResult{}
			b.ReportAllocs()
			for b.Loop() {
				_, r, span := startRequestSpan(nil, r, info)
				sent, up := upstream.StartRequestSpan(req)
				up.End(200, nil)
				traceToolResult(r.Context(), res, outcomeOK)
				span.end()
				_ = sent
			}
		})
	}
}

// A client names tools and ids: a span takes at most maxSpanText bytes
// of them, cut between characters.
func TestSpanTextIsCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxSpanText) // 2 bytes each
	for _, c := range []struct{ in, want string }{
		{"get_order", "get_order"},
		{strings.Repeat("a", maxSpanText+1), strings.Repeat("a", maxSpanText)},
		{"a" + long, "a" + strings.Repeat("é", (maxSpanText-1)/2)},
	} {
		if got := cut(c.in); got != c.want {
			t.Errorf("cut(%d bytes) = %d bytes, want %d", len(c.in), len(got), len(c.want))
		}
	}
	for raw, want := range map[string]string{`7`: "7", `"a-1"`: "a-1", `null`: "", ``: "", `"` + long + `"`: cut(long)} {
		if got := requestID(json.RawMessage(raw)); got != want {
			t.Errorf("requestID(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestRPCErrorCode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		head string
		want string // "" for no error
	}{
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`, "-32602"},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32601,\"message\":\"x\"}}\n\n", "-32601"},
		{`{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"error":{"code":5}}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"error\":{\"code\":5}}"}]}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-326`, ""}, // cut short
		{`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`, ""},
		{``, ""},
	} {
		got, ok := rpcErrorCode([]byte(c.head))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("rpcErrorCode(%s) = %q, %v; want %q", c.head, got, ok, c.want)
		}
	}
}
