package upstream

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content item, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

func call(t *testing.T, c *Client, ctx context.Context, spec planSpec, base string, args map[string]any, limit int64) (*Response, Target, error) {
	t.Helper()
	tool, err := newRequestPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	req, cl, err := tool.build(ctx, mustURL(t, base), args, mapReplacer{"env.KEY": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req, limit)
	return resp, cl, err
}

func TestClientAgainstHTTPBin(t *testing.T) {
	t.Parallel()
	base := mcptest.StartHTTPBin(t)
	c := NewClient()
	defer c.Close()
	ctx := context.Background()

	t.Run("json answer", func(t *testing.T) {
		resp, cl, err := call(t, c, ctx, planSpec{Method: "GET", Path: "/get", Args: []planArg{{Name: "q"}}}, base, map[string]any{"q": "x"}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := resp.result(context.Background(), cl, &Operation{})
		if res.IsError || !strings.Contains(textOf(t, res), `"q": [`) {
			t.Fatalf("unexpected result %+v", res)
		}
	})

	t.Run("redirect is not followed and its query is not shown", func(t *testing.T) {
		resp, cl, err := call(t, c, ctx, planSpec{Method: "GET", Path: "/redirect-to", Args: []planArg{{Name: "url"}}}, base,
			map[string]any{"url": "http://other.example/next?token=abc"}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusFound {
			t.Fatalf("status %d, want 302", resp.Status)
		}
		res, _ := resp.result(context.Background(), cl, &Operation{})
		text := textOf(t, res)
		if !res.IsError || !strings.Contains(text, "302") || !strings.Contains(text, "http://other.example/next") || strings.Contains(text, "token") {
			t.Fatalf("unexpected result %q", text)
		}
	})

	t.Run("over the size limit", func(t *testing.T) {
		_, _, err := call(t, c, ctx, planSpec{Method: "GET", Path: "/bytes/{n}", Args: []planArg{{Name: "n"}}}, base, map[string]any{"n": "5000"}, 1000)
		var tl *TooLargeError
		if !errors.As(err, &tl) {
			t.Fatalf("error %v, want TooLargeError", err)
		}
	})

	t.Run("streamed body over the size limit", func(t *testing.T) {
		_, _, err := call(t, c, ctx, planSpec{Method: "GET", Path: "/stream-bytes/{n}", Args: []planArg{{Name: "n"}}}, base, map[string]any{"n": "5000"}, 1000)
		var tl *TooLargeError
		if !errors.As(err, &tl) {
			t.Fatalf("error %v, want TooLargeError", err)
		}
	})

	t.Run("timeout", func(t *testing.T) {
		// A server that answers only when the test lets it: the call can
		// end only by its own deadline, and the server sees it give up.
		// The minute is a hang guard, not a bound on the call.
		release, gaveUp := make(chan struct{}), make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
				close(gaveUp)
			case <-release:
			case <-time.After(time.Minute):
			}
		}))
		defer srv.Close()
		defer close(release)
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, _, err := call(t, c, ctx, planSpec{Method: "GET", Path: "/slow"}, srv.URL, nil, 1<<20)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want deadline exceeded", err)
		}
		select {
		case <-gaveUp:
		case <-time.After(time.Minute):
			t.Fatal("the server never saw the call give up")
		}
	})

	t.Run("unreachable, without the query in the error", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, _, err = call(t, c, ctx, planSpec{Method: "GET", Path: "/x", Query: []Field{{"key", "{env.KEY}"}}}, "http://"+addr, nil, 1<<20)
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "key=") {
			t.Fatalf("error shows the query: %v", err)
		}
		if !strings.Contains(err.Error(), "refused") {
			t.Fatalf("error does not say what happened: %v", err)
		}
	})
}

func TestReadResponseHugeLimit(t *testing.T) {
	t.Parallel()
	resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("hello")), ContentLength: -1}
	r, err := ReadResponse(resp, math.MaxInt64)
	if err != nil || string(r.Body) != "hello" {
		t.Fatalf("%v %q", err, r.Body)
	}
}
