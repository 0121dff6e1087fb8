package mcpbackend

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// A backend's requests carry the trace of the call they serve, in their
// headers and in a tools/call's _meta, when the caller's context holds a
// span; the backend client makes no spans of its own.

// traceContext is the W3C Trace Context format, the one backends are sent.
var traceContext propagation.TraceContext

// TraceMeta is the _meta of an MCP request made under the span in ctx:
// its traceparent (and tracestate), as the MCP semantic conventions carry
// trace context inside a message; nil without a span.
func TraceMeta(ctx context.Context) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	meta := make(map[string]any, len(carrier))
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}

// tracedTransport sends the traceparent of the span in a request's
// context with the request: an MCP backend's HTTP requests carry the
// trace of the call they serve.
type tracedTransport struct{ base http.RoundTripper }

func (t tracedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(req.Context()).IsValid() {
		return t.base.RoundTrip(req)
	}
	// A RoundTripper must not change the request it is given.
	req = req.Clone(req.Context())
	traceContext.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	return t.base.RoundTrip(req)
}

// CloseIdleConnections reaches the base transport, as http.Client does.
func (t tracedTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// callMeta is the _meta of a backend tools/call made under ctx.
func callMeta(ctx context.Context) *mcp.Meta {
	fields := TraceMeta(ctx)
	if fields == nil {
		return nil
	}
	return &mcp.Meta{AdditionalFields: fields}
}
