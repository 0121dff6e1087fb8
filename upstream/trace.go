package upstream

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing follows the span the caller's context already carries: its
// tracer provider makes the spans here, so nothing is traced unless the
// caller traces (in Caddy, the `tracing` handler), and there is no global
// provider. Without a span in the context, each hook is one context
// lookup.

// TracerName is the instrumentation scope of the spans of this module.
const TracerName = "github.com/caddy-mcp/caddy-mcp"

// traceContext is the W3C Trace Context format, the one upstreams are
// sent.
var traceContext propagation.TraceContext

// RequestSpan is the span of one upstream HTTP request; the zero value,
// for an untraced request, does nothing.
type RequestSpan struct{ span trace.Span }

// StartRequestSpan starts the CLIENT span of req, a child of the span in
// its context, if there is one, and sends its traceparent with req. It
// returns req with the new span in its context. The span carries no URL:
// a query may hold a key.
func StartRequestSpan(req *http.Request) (*http.Request, RequestSpan) {
	parent := trace.SpanFromContext(req.Context())
	if !parent.SpanContext().IsValid() {
		return req, RequestSpan{}
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", req.Method),
		attribute.String("server.address", req.URL.Hostname()),
	}
	if port := req.URL.Port(); port != "" {
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	if req.URL.Scheme != "" {
		attrs = append(attrs, attribute.String("url.scheme", req.URL.Scheme))
	}
	ctx, span := parent.TracerProvider().Tracer(TracerName).Start(req.Context(), req.Method,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	req = req.WithContext(ctx)
	if req.Header == nil {
		req.Header = http.Header{}
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return req, RequestSpan{span: span}
}

// End ends the span with the upstream's status, or with err if the
// request got no answer. A 4xx or 5xx is an error of a client span.
func (s RequestSpan) End(status int, err error) {
	if s.span == nil {
		return
	}
	switch {
	case err != nil:
		// The kind, never the text: an error of a later handler (route
		// mode) or a panic value may hold anything.
		kind := ErrorType(err)
		s.span.SetAttributes(attribute.String("error.type", kind))
		s.span.SetStatus(codes.Error, kind)
	case status != 0:
		s.span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 400 {
			s.span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
			s.span.SetStatus(codes.Error, "")
		}
	}
	s.span.End()
}

// ErrorType is the error.type of a span that ended in err: a short word
// for the errors a caller tells apart, else "_OTHER", as the semantic
// conventions ask for an unknown type.
func ErrorType(err error) string {
	var tooLarge *TooLargeError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &tooLarge):
		return "too_large"
	default:
		return "_OTHER"
	}
}
