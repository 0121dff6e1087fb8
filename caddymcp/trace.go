package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/fastpath"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Spans of MCP requests, after the OpenTelemetry semantic conventions for
// MCP. They exist only under Caddy's `tracing` handler, whose HTTP server
// span is in the request's context: its tracer provider makes them, so a
// route without `tracing` pays one context lookup per request and traces
// nothing.

// maxSpanText bounds the client-chosen text (a tool name, a request id)
// that names a span or fills an attribute.
const maxSpanText = 128

// tracedParams is what a span reads of a request's params.
type tracedParams struct {
	Name            string `json:"name"`            // tools/call, prompts/get
	ProtocolVersion string `json:"protocolVersion"` // initialize
	Meta            struct {
		Traceparent     string `json:"traceparent"`
		Tracestate      string `json:"tracestate"`
		ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
	} `json:"_meta"`
}

// startRequestSpan starts the SERVER span of one MCP request, and returns
// w and r for the rest of the request: r with the span in its context, w
// watching the answer for an error; and the span (nil when untraced). Its
// parent is the HTTP request's span, unless the HTTP request carried no
// trace context and the message's _meta does: then the _meta's, and the
// span links to the HTTP span.
func startRequestSpan(w http.ResponseWriter, r *http.Request, info *fastpath.Message) (http.ResponseWriter, *http.Request, *requestSpan) {
	httpSpan := trace.SpanFromContext(r.Context())
	if !httpSpan.SpanContext().IsValid() {
		return w, r, nil
	}
	var params tracedParams
	_ = json.Unmarshal(info.RawParams, &params)

	method := cut(info.Method)
	name := method
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", method),
		attribute.String("network.transport", "tcp"),
		attribute.String("network.protocol.name", "http"),
		attribute.String("network.protocol.version", strconv.Itoa(r.ProtoMajor)+"."+strconv.Itoa(r.ProtoMinor)),
	}
	switch info.Method {
	case string(mcp.MethodToolsCall):
		tool := cut(params.Name)
		name += " " + tool
		attrs = append(attrs, attribute.String("gen_ai.tool.name", tool), attribute.String("gen_ai.operation.name", "execute_tool"))
	case string(mcp.MethodPromptsGet):
		name += " " + cut(params.Name)
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", cut(params.Name)))
	}
	if id := requestID(info.RawID); id != "" {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", id))
	}
	if info.JSONRPC != "" && info.JSONRPC != mcp.JSONRPC_VERSION {
		attrs = append(attrs, attribute.String("jsonrpc.protocol.version", cut(info.JSONRPC)))
	}
	version := params.Meta.ProtocolVersion
	if version == "" {
		version = r.Header.Get(mcp.HeaderProtocolVersion)
	}
	if version == "" {
		version = params.ProtocolVersion
	}
	if version != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", cut(version)))
	}
	if session := r.Header.Get("Mcp-Session-Id"); session != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", cut(session)))
	}

	ctx := r.Context()
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...)}
	if params.Meta.Traceparent != "" && !carriesTrace(httpSpan) {
		carrier := propagation.MapCarrier{"traceparent": params.Meta.Traceparent}
		if params.Meta.Tracestate != "" {
			carrier["tracestate"] = params.Meta.Tracestate
		}
		if meta := (propagation.TraceContext{}).Extract(context.Background(), carrier); trace.SpanContextFromContext(meta).IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, trace.SpanContextFromContext(meta))
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: httpSpan.SpanContext()}))
		}
	}
	ctx, span := httpSpan.TracerProvider().Tracer(upstream.TracerName).Start(ctx, name, opts...)
	s := &requestSpan{span: span, answer: answerWatch{ResponseWriter: w}}
	return &s.answer, r.WithContext(ctx), s
}

// carriesTrace reports whether the HTTP request of httpSpan came with
// trace context: the span has a parent. A span that records nothing says
// nothing of its parent; it is taken as having one, so that a _meta does
// not override a sampling decision made upstream.
func carriesTrace(httpSpan trace.Span) bool {
	ro, ok := httpSpan.(sdktrace.ReadOnlySpan)
	return !ok || ro.Parent().IsValid()
}

// requestID is a JSON-RPC id as the span shows it: a string unquoted, a
// number as written.
func requestID(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return cut(s)
	}
	return cut(string(raw))
}

// cut bounds a client-chosen text for a span.
func cut(s string) string { return cutText(s, maxSpanText) }

// cutText is s cut at n bytes, on a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// requestSpan is the span of one MCP request and the watch on its answer.
type requestSpan struct {
	span   trace.Span
	answer answerWatch
}

// end ends the span of an MCP request, if there is one, with the error
// its answer carried: a JSON-RPC error's code, or else an HTTP status of
// 400 or more, as error.type.
func (s *requestSpan) end() {
	if s == nil {
		return
	}
	if code, ok := rpcErrorCode(s.answer.head); ok {
		s.span.SetAttributes(attribute.String("error.type", code), attribute.String("rpc.response.status_code", code))
		s.span.SetStatus(codes.Error, "")
	} else if s.answer.status >= 400 {
		s.span.SetAttributes(attribute.String("error.type", strconv.Itoa(s.answer.status)))
		s.span.SetStatus(codes.Error, "")
	}
	s.span.End()
}

// answerHead is how much of an answer the span looks at: a JSON-RPC
// error's code comes right after the id.
const answerHead = 512

// answerWatch passes an answer on and keeps its status and first bytes.
type answerWatch struct {
	http.ResponseWriter
	status int
	head   []byte
}

func (a *answerWatch) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *answerWatch) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	if n := answerHead - len(a.head); n > 0 {
		a.head = append(a.head, p[:min(n, len(p))]...)
	}
	return a.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController flush the answer (SSE).
func (a *answerWatch) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// rpcErrorCode is the code of the JSON-RPC error that head, the start of
// an answer (JSON, or an SSE event of it), is, if it is one. A result
// that holds an "error" member is no error: the answer's own member,
// error or result, comes first; inside a string the quotes are escaped.
func rpcErrorCode(head []byte) (string, bool) {
	const marker = `"error":{"code":`
	i := bytes.Index(head, []byte(marker))
	if i < 0 {
		return "", false
	}
	if r := bytes.Index(head, []byte(`"result":`)); r >= 0 && r < i {
		return "", false
	}
	rest := head[i+len(marker):]
	n := 0
	for n < len(rest) && (rest[n] == '-' || rest[n] >= '0' && rest[n] <= '9') {
		n++
	}
	if n == 0 || n == len(rest) {
		return "", false // no code, or cut short
	}
	return string(rest[:n]), true
}

// traceToolResult marks the span of the call in ctx as failed when the
// tool answered with isError, as the conventions say: error.type
// tool_error. outcome is the plugin's word for what happened (the same as
// the metrics').
func traceToolResult(ctx context.Context, res *mcp.CallToolResult, outcome string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("caddy.mcp.outcome", outcome))
	if res != nil && res.IsError {
		span.SetAttributes(attribute.String("error.type", "tool_error"))
		span.SetStatus(codes.Error, outcome)
	}
}

// startExecutionSpan starts the span of one code-mode execution, under
// the span of its tools/call.
func startExecutionSpan(ctx context.Context) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nil
	}
	return parent.TracerProvider().Tracer(upstream.TracerName).Start(ctx, "codemode.execute", trace.WithSpanKind(trace.SpanKindInternal))
}

// endExecutionSpan ends the span of an execution with what it gave.
func endExecutionSpan(span trace.Span, res *codemode.Result) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.Int("codemode.tool_calls", res.ToolCalls))
	if res.Err != nil {
		// The kind only: the message may quote the code or a backend.
		span.SetAttributes(attribute.String("error.type", cut(res.Err.Kind)))
		span.SetStatus(codes.Error, cut(res.Err.Kind))
	}
	span.End()
}

// startBindingSpan starts the CLIENT span of one backend tool call made
// by the code, an MCP tools/call to the backend; the backend's HTTP
// requests and the call's _meta carry its trace context.
func startBindingSpan(ctx context.Context, backend, tool string) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nil
	}
	tool = cut(tool)
	return parent.TracerProvider().Tracer(upstream.TracerName).Start(ctx, "tools/call "+tool,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("mcp.method.name", string(mcp.MethodToolsCall)),
			attribute.String("gen_ai.tool.name", tool),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("codemode.backend", backend),
		))
}

// endBindingSpan ends the span of a backend call; outcome is the
// metrics' word for it.
func endBindingSpan(span trace.Span, outcome string, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.String("caddy.mcp.outcome", outcome))
	if err != nil {
		kind := outcome
		if outcome == outcomeStatus {
			kind = "tool_error" // the backend tool answered isError
		}
		span.SetAttributes(attribute.String("error.type", kind))
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}
