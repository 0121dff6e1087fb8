package caddymcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// BenchmarkRouteCall sets one tools/call in route mode (mcp, then
// reverse_proxy) beside the same REST call through reverse_proxy alone and
// through mcp with upstream, all three served by one Caddy server's
// handler in process, to the same in-process REST upstream. What route
// mode costs over reverse_proxy is the difference of the first two.
func BenchmarkRouteCall(b *testing.B) {
	list := orderList(50)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/orders" {
			w.Header().Set("Content-Length", strconv.Itoa(len(list)))
			io.WriteString(w, list)
			return
		}
		io.WriteString(w, `{"id":42,"status":"open","total":99.5}`)
	}))
	defer api.Close()
	tool := `
			tool get_order {
				description "Get one order by id."
				get /orders/{id}
				arg id string required "Order id"
			}
			tool list_orders {
				description "List orders."
				get /orders
			}`
	loadCaddyfile(b, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	route {
		mcp /mcp {%s
		}
		mcp /mcp-upstream {
			upstream %s%s
		}
		reverse_proxy %s
	}
}`, tool, api.URL, tool, strings.TrimPrefix(api.URL, "http://")))
	srv := benchServer(b)

	call := func(era string) (string, map[string]string) {
		if era == "2025-11-25" {
			return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"42"}}}`,
				map[string]string{"Mcp-Protocol-Version": era}
		}
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"42"},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
				`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`,
			map[string]string{"Mcp-Protocol-Version": era, "Mcp-Method": "tools/call", "Mcp-Name": "get_order"}
	}
	b.Run("reverse_proxy", func(b *testing.B) {
		serveServer(b, srv, http.MethodGet, "/orders/42", "", nil, `"status":"open"`)
	})
	// A 34 KB answer, in two of reverse_proxy's 32 KiB chunks.
	list25, header25 := call(eras[0])
	list25 = strings.Replace(list25, `"name":"get_order","arguments":{"id":"42"}`, `"name":"list_orders","arguments":{}`, 1)
	b.Run("reverse_proxy/list", func(b *testing.B) {
		serveServer(b, srv, http.MethodGet, "/orders", "", nil, `"status":"open"`)
	})
	b.Run("route/list", func(b *testing.B) {
		serveServer(b, srv, http.MethodPost, "/mcp", list25, header25, `\"status\":\"open\"`)
	})
	b.Run("upstream/list", func(b *testing.B) {
		serveServer(b, srv, http.MethodPost, "/mcp-upstream", list25, header25, `\"status\":\"open\"`)
	})
	for _, era := range eras {
		body, header := call(era)
		b.Run("route/"+era, func(b *testing.B) {
			serveServer(b, srv, http.MethodPost, "/mcp", body, header, `\"status\":\"open\"`)
		})
		b.Run("upstream/"+era, func(b *testing.B) {
			serveServer(b, srv, http.MethodPost, "/mcp-upstream", body, header, `\"status\":\"open\"`)
		})
	}
}

// benchServer is the running config's one HTTP server.
func benchServer(b *testing.B) *caddyhttp.Server {
	b.Helper()
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		b.Fatal(err)
	}
	for _, srv := range app.(*caddyhttp.App).Servers {
		return srv
	}
	b.Fatal("no HTTP server is running")
	return nil
}

// serveServer measures srv answering one request, after checking that the
// answer holds want.
func serveServer(b *testing.B, srv *caddyhttp.Server, method, path, body string, header map[string]string, want string) {
	serve := func() *httptest.ResponseRecorder {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, "http://"+liveAddr+path, r)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		// net/http gives each request a context that ends with it, and
		// a transport watches such a context; so does this one.
		ctx, cancel := context.WithCancel(req.Context())
		defer cancel()
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req.WithContext(ctx))
		return w
	}
	w := serve()
	if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(want)) {
		b.Fatalf("unexpected answer %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := processCPU(b)
	for b.Loop() {
		serve()
	}
	// The CPU time of the whole process per request: the upstream's share
	// is the same in every configuration, and wall time on a shared
	// machine says less.
	b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// orderList is a JSON list of n orders, about 700 bytes each.
func orderList(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"status":"open","total":%d.5,"customer":"cus_%03d","note":"%s","items":[`, 1000+i, 10+i, i%7, strings.Repeat("n", 300))
		for j := range 4 {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"sku":"sku_%d_%d","qty":%d,"price":%d.25,"title":"item %d of order %d"}`, i, j, j+1, 5+j, j, i)
		}
		b.WriteString(`]}`)
	}
	b.WriteByte(']')
	return b.String()
}
