package caddymcp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// BenchmarkCallBesideProxy puts one tools/call in upstream mode, in both
// eras, beside one reverse_proxy request for the same REST call, each
// through the same running Caddy server's handler in this process (its
// routes, replacer, vars and logging set-up included), to the same
// loopback upstream. The upstream answers from raw TCP with canned bytes
// and allocates next to nothing, so the figures are Caddy's (and the
// request recorder's, the same for both). B/op
// and allocs/op are the figures to compare: what a call allocates during a
// mark phase is what makes it wait, so a call should allocate no more than
// a proxied request does.
func BenchmarkCallBesideProxy(b *testing.B) {
	addr := cannedUpstream(b, `{"id":"1001","status":"shipped","customer_id":"cus_007","total":128.4,"currency":"EUR","items":3}`)
	loadCaddyfile(b, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream http://%[1]s
		tool get_order {
			description "Get one order by id."
			get /orders/{id}
			arg id string required "Order id"
		}
	}
	reverse_proxy %[1]s
}
`, addr))
	srv := liveServer(b)

	const modern = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1001"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"caddy-mcp-bench","version":"1"}}}}`
	cases := []struct {
		name, method, path, body, want string
		header                         map[string]string
	}{
		{"reverse_proxy", http.MethodGet, "/orders/1001", "", `"status":"shipped"`, nil},
		{"2025-11-25", http.MethodPost, "/mcp",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1001"}}}`,
			`\"status\":\"shipped\"`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
		{"2026-07-28", http.MethodPost, "/mcp", modern, `\"status\":\"shipped\"`,
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_order"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchServe(b, srv, c.method, c.path, c.body, c.want, c.header, true)
		})
	}
	// What building the request and the recorder allocates, in every
	// figure above: subtract it for Caddy's own share.
	b.Run("harness", func(b *testing.B) {
		c := cases[2]
		benchServe(b, srv, c.method, c.path, c.body, c.want, c.header, false)
	})
}

// benchServe measures srv answering one request, or with serve false
// only the making of the request and its recorder.
func benchServe(b *testing.B, srv http.Handler, method, path, reqBody, want string, header map[string]string, serve bool) {
	do := func() *httptest.ResponseRecorder {
		var body io.Reader
		if reqBody != "" {
			body = strings.NewReader(reqBody)
		}
		req := httptest.NewRequest(method, "http://"+liveAddr+path, body)
		req.RemoteAddr = "127.0.0.1:40000"
		if reqBody != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		if serve {
			srv.ServeHTTP(deadlineRecorder{w}, req)
		}
		return w
	}
	if w := do(); serve && (w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(want))) {
		b.Fatalf("unexpected answer %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}

// liveServer is the HTTP server of the running test Caddy, which has one.
func liveServer(tb testing.TB) *caddyhttp.Server {
	tb.Helper()
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		tb.Fatal(err)
	}
	servers := app.(*caddyhttp.App).Servers
	if len(servers) != 1 {
		tb.Fatalf("%d servers, want one", len(servers))
	}
	for _, s := range servers {
		return s
	}
	return nil
}

// cannedUpstream serves HTTP/1.1 keep-alive connections on 127.0.0.1 that
// answer every request (without a body: GETs) with body as JSON, reading
// and writing through buffers it keeps, so that what it allocates does not
// blur a benchmark's figures. It returns the address.
func cannedUpstream(tb testing.TB, body string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	answer := []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				rd := bufio.NewReaderSize(conn, 16<<10)
				for {
					// A request ends at its first empty line.
					for {
						line, err := rd.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) <= 2 {
							break
						}
					}
					if _, err := conn.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// deadlineRecorder takes the read and write deadlines that Caddy's server
// sets through http.ResponseController, as a connection's writer does: a
// bare recorder refuses them with a new error each time, which would count
// for a call (which reads a body) and not for a proxied GET.
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }
