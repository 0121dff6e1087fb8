package boundedfetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// small is a policy of small bounds, for tests that reach them.
var small = Policy{Timeout: 300 * time.Millisecond, MaxSize: 1 << 10, MaxRedirects: 2, Allow: loopbackOnly}

func loopbackOnly(u *url.URL) error {
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return errors.New("not a loopback host")
	}
	return nil
}

func get(t *testing.T, c *Client, target string) ([]byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

// TestRedirects: a request follows MaxRedirects redirects, and not one
// more.
func TestRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /hop/3 redirects to /hop/2, ... /hop/0 answers.
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "here")
	}))
	defer srv.Close()
	c := New(small)
	defer c.Close()
	if body, err := get(t, c, srv.URL+"/hop/2"); err != nil || string(body) != "here" {
		t.Errorf("two redirects: %q, %v", body, err)
	}
	if _, err := get(t, c, srv.URL+"/hop/3"); err == nil || !strings.Contains(err.Error(), "more than 2 redirects") {
		t.Errorf("three redirects: %v, want them refused", err)
	}
}

func TestRefusals(t *testing.T) {
	var handler atomic.Value // http.HandlerFunc
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.HandlerFunc)(w, r)
	}))
	defer srv.Close()
	stop := make(chan struct{})
	defer close(stop)
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}

	down := "http://" + mcptest.ClosedAddr(t) + "/doc"

	tests := []struct {
		name      string
		url       string
		handler   http.HandlerFunc
		want      string
		transport bool // the error holds a *url.Error
	}{
		{"a server that is down", down, nil, "connection refused", true},
		{"a 404", srv.URL + "/doc", http.NotFound, "the server answered 404 Not Found (status 404, want 200)", false},
		{"headers late", srv.URL + "/doc", hang, "timeout: no whole answer within 300ms", true},
		{"a body late", srv.URL + "/doc", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"a":`))
			w.(http.Flusher).Flush()
			hang(w, r)
		}, "timeout: no whole answer within 300ms", false},
		{"too large, declared", srv.URL + "/doc", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "2048")
			w.Write(make([]byte, 2048))
		}, "the document is 2048 bytes, more than the 1024 allowed", false},
		{"too large, streamed", srv.URL + "/doc", func(w http.ResponseWriter, r *http.Request) {
			for range 4 {
				w.Write(make([]byte, 512))
				w.(http.Flusher).Flush()
			}
		}, "the document is larger than the limit: more than the 1024 bytes allowed", false},
		{"a redirect Allow refuses", srv.URL + "/doc", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.com/doc?token=secret", http.StatusFound)
		}, "redirected to http://example.com/doc: not a loopback host", true},
	}
	c := New(small)
	defer c.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.handler != nil {
				handler.Store(tt.handler)
			}
			start := time.Now()
			_, err := get(t, c, tt.url+"?access_token=secret")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows a query: %v", err)
			}
			var ue *url.Error
			if errors.As(err, &ue) != tt.transport {
				t.Errorf("error %v holds a *url.Error: %v, want %v", err, !tt.transport, tt.transport)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

// Whichever of the bounds of a request ends it first, the error says it
// timed out, and holds the error it words; another error is left as it
// says itself.
func TestTimeoutSaysSo(t *testing.T) {
	c := New(small)
	u, _ := url.Parse("https://as.example/jwks?x=secret")
	for _, err := range []error{
		fmt.Errorf("Get x: %w", context.DeadlineExceeded),
		&url.Error{Op: "Get", URL: "x", Err: &net.DNSError{IsTimeout: true}},
	} {
		got := c.failed(u, err)
		if got.Error() != "fetching https://as.example/jwks: timeout: no whole answer within 300ms" || !errors.Is(got, err) {
			t.Errorf("%v: %v", err, got)
		}
	}
	other := &url.Error{Op: "Get", URL: "https://as.example/jwks?x=secret", Err: errors.New("connection refused")}
	if got := c.failed(u, other); got.Error() != "fetching https://as.example/jwks: connection refused" || !errors.Is(got, other) {
		t.Errorf("%v became %v", other, got)
	}
}

// proxied counts the requests proxyServer has had.
var proxied atomic.Int32

// proxyServer answers for any host. It is one for the process, since
// http.ProxyFromEnvironment reads the environment once, at its first call
// (which only TestProxy makes here), and so keeps the first address it
// was given for all of go test -count.
var proxyServer = sync.OnceValue(func() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		fmt.Fprintf(w, "proxy for %s", r.Host)
	}))
})

// TestProxy: the policy's Proxy routes each request; nil goes direct. A
// proxy from the environment (as authz has) is used for a host off the
// machine, and a direct policy (as openapi has) ignores it.
func TestProxy(t *testing.T) {
	proxy := proxyServer()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "origin")
	}))
	defer origin.Close()
	proxyURL, _ := url.Parse(proxy.URL)

	through := small
	through.Proxy = http.ProxyURL(proxyURL)
	if body, err := get(t, New(through), origin.URL+"/doc"); err != nil || string(body) != "proxy for "+strings.TrimPrefix(origin.URL, "http://") {
		t.Errorf("through a proxy: %q, %v", body, err)
	}
	if body, err := get(t, New(small), origin.URL+"/doc"); err != nil || string(body) != "origin" {
		t.Errorf("direct: %q, %v", body, err)
	}

	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	fromEnv := small
	fromEnv.Proxy = http.ProxyFromEnvironment
	if body, err := get(t, New(fromEnv), "http://as.example/doc"); err != nil || string(body) != "proxy for as.example" {
		t.Errorf("a proxy from the environment: %q, %v", body, err)
	}
	proxied.Store(0)
	get(t, New(small), "http://as.example/doc")
	if proxied.Load() != 0 {
		t.Errorf("a direct policy went through the environment's proxy")
	}
}
