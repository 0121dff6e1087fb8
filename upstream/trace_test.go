package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// traced is a context under a recording span of a provider that keeps
// its spans in the returned exporter.
func traced(t *testing.T) (context.Context, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	ctx, span := provider.Tracer("test").Start(context.Background(), "tools/call t", trace.WithSpanKind(trace.SpanKindServer))
	t.Cleanup(func() { span.End() })
	return ctx, exp
}

func attrOf(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

func TestClientDoTracesTheRequest(t *testing.T) {
	t.Parallel()
	var got sync.Map // path -> the traceparent the upstream received last
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Path, r.Header.Get("Traceparent"))
		if r.URL.Path == "/slow" {
			// No answer before the client gives up (the minute is a hang
			// guard).
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
			}
		}
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer api.Close()
	c := NewClient()
	defer c.Close()
	received := func(path string) any { v, _ := got.Load(path); return v }

	for _, tt := range []struct {
		path, status, errorType string
		timeout                 time.Duration
	}{
		{"/ok", "200", "", 0},
		{"/fail", "502", "502", 0},
		{"/slow", "", "timeout", 50 * time.Millisecond},
	} {
		t.Run(tt.path, func(t *testing.T) {
			ctx, exp := traced(t)
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api.URL+tt.path+"?api_key=secret", nil)
			_, _ = c.Do(req, 1<<20)
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want the request's", len(spans))
			}
			s := spans[0]
			if s.Name != "GET" || s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != trace.SpanContextFromContext(ctx).SpanID() {
				t.Errorf("span %s (%s), parent %s", s.Name, s.SpanKind, s.Parent.SpanID())
			}
			if attrOf(s, "http.response.status_code") != tt.status || attrOf(s, "error.type") != tt.errorType {
				t.Errorf("attributes %v: want status %q, error.type %q", s.Attributes, tt.status, tt.errorType)
			}
			for _, kv := range s.Attributes {
				// No URL: its query holds the key.
				if v := kv.Value.Emit(); strings.Contains(v, "secret") || strings.Contains(v, "/") {
					t.Errorf("attribute %s = %s", kv.Key, v)
				}
			}
			if tt.errorType != "timeout" {
				if want := fmt.Sprintf("00-%s-%s-01", s.SpanContext.TraceID(), s.SpanContext.SpanID()); received(tt.path) != want {
					t.Errorf("the upstream received traceparent %q, want %q", received(tt.path), want)
				}
			}
		})
	}

	t.Run("untraced", func(t *testing.T) {
		// A path of its own: what an earlier request sent cannot be
		// mistaken for this one's.
		req, _ := http.NewRequest(http.MethodGet, api.URL+"/untraced", nil)
		if _, err := c.Do(req, 1<<20); err != nil {
			t.Fatal(err)
		}
		if sent, ok := got.Load("/untraced"); !ok || sent != "" {
			t.Errorf("an untraced request sent traceparent %q (received: %v)", sent, ok)
		}
	})
}
