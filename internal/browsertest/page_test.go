//go:build unix

package browsertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

// pageHTML loads the bundle as a module; the page's query tells the script
// what to do.
const pageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>caddy-mcp in a browser</title>
<script type="module" src="/page.js"></script>
</head><body></body></html>
`

// bundlePage bundles js/page.mjs and the SDK's browser client, resolved
// from js/node_modules with the "browser" export conditions, into one
// script.
func bundlePage(t *testing.T) []byte {
	t.Helper()
	dir, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{"page.mjs"},
		AbsWorkingDir: dir,
		Bundle:        true,
		Platform:      api.PlatformBrowser,
		Format:        api.FormatESModule,
		Target:        api.ES2022,
		Define:        map[string]string{"process.env.NODE_ENV": `"production"`},
		Write:         false,
		LogLevel:      api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		var msgs []string
		for _, m := range res.Errors {
			where := ""
			if m.Location != nil {
				where = fmt.Sprintf("%s:%d: ", m.Location.File, m.Location.Line)
			}
			msgs = append(msgs, where+m.Text)
		}
		t.Fatalf("bundling js/page.mjs:\n%s", strings.Join(msgs, "\n"))
	}
	if len(res.OutputFiles) != 1 {
		t.Fatalf("bundling js/page.mjs gave %d files; want 1", len(res.OutputFiles))
	}
	js := res.OutputFiles[0].Contents
	t.Logf("page bundle: %d KiB in %s", len(js)/1024, time.Since(start).Round(time.Millisecond))
	return js
}

// startPageServer serves the page and its script on a free port of
// 127.0.0.1, an origin of its own, and returns that origin.
func startPageServer(t *testing.T, script []byte) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, pageHTML)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent) // asked for by every page load
	})
	mux.HandleFunc("GET /page.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Write(script)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// upstreamLog is go-httpbin on 127.0.0.1 with the query of every request
// it got: what reached the upstream, tool calls and nothing else.
type upstreamLog struct {
	url     string
	mu      sync.Mutex
	queries []string
}

func startCountingHTTPBin(t *testing.T) *upstreamLog {
	t.Helper()
	u := &upstreamLog{}
	bin := httpbin.New(httpbin.WithMaxDuration(10 * time.Second))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.queries = append(u.queries, r.URL.RawQuery)
		u.mu.Unlock()
		bin.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

// count is how many requests the upstream got so far.
func (u *upstreamLog) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.queries)
}

// since returns the queries of the requests after the first n.
func (u *upstreamLog) since(n int) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.queries[n:])
}

// accessEntry is a line of Caddy's JSON access log, the fields read here.
type accessEntry struct {
	Request struct {
		Method  string              `json:"method"`
		URI     string              `json:"uri"`
		Headers map[string][]string `json:"headers"`
	} `json:"request"`
	Status          int                 `json:"status"`
	ResponseHeaders map[string][]string `json:"resp_headers"`
}

func (e accessEntry) header(name string) string {
	return strings.Join(http.Header(e.Request.Headers).Values(name), ",")
}

func (e accessEntry) responseHeader(name string) string {
	return strings.Join(http.Header(e.ResponseHeaders).Values(name), ",")
}

// accessLogFile reads Caddy's access log a run at a time.
type accessLogFile struct {
	name string
	read int // entries already seen
}

// skip passes over the entries so far.
func (f *accessLogFile) skip(t *testing.T) {
	t.Helper()
	f.next(t)
}

// next returns the entries written since the last call.
func (f *accessLogFile) next(t *testing.T) accessLog {
	t.Helper()
	b, err := os.ReadFile(f.name)
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing logged yet
	}
	if err != nil {
		t.Fatalf("Caddy's access log: %v", err)
	}
	var entries accessLog
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e accessEntry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("a line of Caddy's access log is not JSON (%v): %s", err, line)
		}
		entries = append(entries, e)
	}
	if f.read > len(entries) {
		t.Fatalf("Caddy's access log has %d entries, fewer than the %d read before", len(entries), f.read)
	}
	entries = entries[f.read:]
	f.read += len(entries)
	return entries
}

type accessLog []accessEntry

// from returns the requests with the given method sent from origin.
func (l accessLog) from(origin, method string) accessLog {
	var out accessLog
	for _, e := range l {
		if e.Request.Method == method && e.header("Origin") == origin {
			out = append(out, e)
		}
	}
	return out
}

// preflights returns the preflights from origin; there must be one at
// least, as the client's POSTs have a Content-Type that needs one.
func (l accessLog) preflights(t *testing.T, origin string) accessLog {
	t.Helper()
	p := l.from(origin, http.MethodOptions)
	if len(p) == 0 {
		t.Errorf("no preflight OPTIONS from %s in Caddy's access log:\n%s", origin, l)
	}
	return p
}

func (l accessLog) String() string {
	var b strings.Builder
	for _, e := range l {
		fmt.Fprintf(&b, "%s %s Origin=%q Mcp-Method=%q -> %d\n", e.Request.Method, e.Request.URI, e.header("Origin"), e.header("Mcp-Method"), e.Status)
	}
	return b.String()
}
