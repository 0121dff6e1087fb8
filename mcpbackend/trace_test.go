package mcpbackend

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// underSpan is a context that carries a sampled span context, as the
// context of a traced call does.
func underSpan() context.Context {
	return trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	}))
}

func TestTraceMeta(t *testing.T) {
	t.Parallel()
	if m := TraceMeta(context.Background()); m != nil {
		t.Errorf("untraced: %v", m)
	}
	ctx := underSpan()
	sc := trace.SpanContextFromContext(ctx)
	want := fmt.Sprintf("00-%s-%s-01", sc.TraceID(), sc.SpanID())
	if m := callMeta(ctx); m == nil || m.AdditionalFields["traceparent"] != want {
		t.Errorf("callMeta = %+v, want traceparent %s", m, want)
	}
}

func TestTracedTransportLeavesTheRequestAlone(t *testing.T) {
	t.Parallel()
	var got string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.Header.Get("Traceparent")
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	req, _ := http.NewRequestWithContext(underSpan(), http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	if _, err := (tracedTransport{base}).RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got == "" || req.Header.Get("Traceparent") != "" {
		t.Errorf("sent %q; the caller's request has %q", got, req.Header.Get("Traceparent"))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
