package caddymcp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// faultServer is a REST upstream on 127.0.0.1 that misbehaves at the TCP
// level, chosen by the request path. It speaks HTTP/1.1 by hand so that it
// can lie about lengths, stall, and reset connections.
type faultServer struct {
	ln   net.Listener
	done chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup

	// What the big bodies did: bytes written before a write failed (the
	// client stopped reading), and whether one did fail.
	bigWritten atomic.Int64
	bigStopped chan struct{}
}

// The big body: declared (or streamed) as 50 MB.
const faultBigBody = 50 << 20

func startFaultServer(t *testing.T) *faultServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &faultServer{ln: ln, done: make(chan struct{}), conns: map[net.Conn]bool{}, bigStopped: make(chan struct{}, 8)}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *faultServer) addr() string { return f.ln.Addr().String() }

func (f *faultServer) close() {
	close(f.done)
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *faultServer) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[c] = true
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer func() {
				f.mu.Lock()
				delete(f.conns, c)
				f.mu.Unlock()
				c.Close()
			}()
			f.serve(c)
		}()
	}
}

// hold keeps a connection open and silent until the server closes.
func (f *faultServer) hold() { <-f.done }

func (f *faultServer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		switch req.URL.Path {
		case "/ok":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
			continue // keep-alive
		case "/reset":
			// A declared body cut by a reset: half of it, then RST.
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\":[%s", strings.Repeat("1,", 200))
			time.Sleep(20 * time.Millisecond)
			c.(*net.TCPConn).SetLinger(0)
			return
		case "/silent":
			f.hold() // the request was read; no answer ever comes
			return
		case "/stall":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\":[1,2,3")
			f.hold()
			return
		case "/big", "/big-streamed":
			head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n", faultBigBody)
			if req.URL.Path == "/big-streamed" {
				head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
			}
			io.WriteString(c, head)
			f.writeBig(c)
			return
		case "/bad-json":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n{\"orders\": [1, 2, ")
			continue
		case "/loop":
			// 302 to itself, the way a misconfigured auth redirect does,
			// with a key in the query that must not show anywhere.
			fmt.Fprintf(c, "HTTP/1.1 302 Found\r\nLocation: http://%s/loop?key=loop-key-q7&%s\r\nContent-Length: 0\r\n\r\n", f.addr(), req.URL.RawQuery)
			continue
		case "/long":
			// Content-Length longer than the body, then a plain close.
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"ok\":true}")
			return
		case "/short":
			// Content-Length shorter than the body; the rest is left on the
			// connection, where the next answer would start.
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"ok\":true}")
			continue
		default:
			fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			continue
		}
	}
}

// writeBig streams the big body from one reused buffer until the client
// stops reading, and records how much it got out.
func (f *faultServer) writeBig(c net.Conn) {
	buf := []byte(strings.Repeat("0123456789abcdef", 2048)) // 32 KiB
	var n int64
	defer func() {
		f.bigWritten.Store(n)
		select {
		case f.bigStopped <- struct{}{}:
		default:
		}
	}()
	for n < faultBigBody {
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		m, err := c.Write(buf)
		n += int64(m)
		if err != nil {
			return
		}
	}
	n = -1 // the whole body went out: the client read it all
}

// faultTools is one tool per fault, and a healthy one. %s is the upstream
// line, or nothing in route mode.
const faultTools = `
		%s
		timeout 500ms
		max_response_size 1MiB
		tool ok {
			description "A healthy endpoint."
			get /ok
			query key fault-query-key-3e
		}
		tool reset {
			description "Reset mid-body."
			get /reset
			query key fault-query-key-3e
		}
		tool silent {
			description "Headers never come."
			get /silent
			query key fault-query-key-3e
		}
		tool stall {
			description "The body stalls."
			get /stall
			query key fault-query-key-3e
		}
		tool big {
			description "A 50 MB body, declared."
			get /big
			query key fault-query-key-3e
		}
		tool big_streamed {
			description "A 50 MB body, streamed without a length."
			get /big-streamed
			query key fault-query-key-3e
		}
		tool bad_json {
			description "Invalid JSON under a JSON content type."
			get /bad-json
			query key fault-query-key-3e
		}
		tool loop {
			description "A redirect to itself."
			get /loop
			query key fault-query-key-3e
		}
		tool long {
			description "Content-Length longer than the body."
			get /long
			query key fault-query-key-3e
		}
		tool short {
			description "Content-Length shorter than the body."
			get /short
			query key fault-query-key-3e
		}
`

// TestLiveUpstreamFaults drives an upstream that fails in every way, in
// both upstream modes: each call is a clear tool error within the timeout
// that names what happened and not the query, and the next call works.
func TestLiveUpstreamFaults(t *testing.T) {
	f := startFaultServer(t)
	down := closedAddr(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		%s
	}
	mcp /mcp-down {
		%s
	}
	route /route {
		mcp {
			%s
		}
		reverse_proxy %s
	}
	route /route-down {
		mcp {
			%s
		}
		reverse_proxy %s
	}
}`, fmt.Sprintf(faultTools, "upstream http://"+f.addr()+"/"),
		fmt.Sprintf(faultTools, "upstream http://"+down+"/base"),
		fmt.Sprintf(faultTools, ""), f.addr(),
		fmt.Sprintf(faultTools, ""), down))

	const timeout = 500 * time.Millisecond
	type fault struct {
		tool string
		// want are the words of the error in upstream mode, then in route
		// mode (through reverse_proxy).
		want, wantRoute []string
	}
	faults := []fault{
		{"reset", []string{"GET /reset", "the upstream request failed", "connection reset"}, []string{"GET /reset", "aborted the response"}},
		{"silent", []string{"GET /silent", "no complete answer within the tool's timeout of 500ms"}, []string{"GET /silent", "timeout of 500ms"}},
		{"stall", []string{"GET /stall", "no complete answer within the tool's timeout of 500ms"}, []string{"GET /stall", "timeout of 500ms"}},
		{"big", []string{"GET /big", "max_response_size (1MiB)"}, []string{"GET /big", "max_response_size (1MiB)"}},
		{"big_streamed", []string{"GET /big-streamed", "max_response_size (1MiB)"}, []string{"GET /big-streamed", "max_response_size (1MiB)"}},
		{"bad_json", []string{"GET /bad-json", "invalid JSON", `{"orders": [1, 2,`}, nil},
		{"loop", []string{"GET /loop", "302 Found", "redirect to /loop, not followed"}, nil},
		{"long", []string{"GET /long", "the upstream request failed", "unexpected EOF"}, []string{"GET /long", "aborted the response"}},
		{"short", []string{"GET /short", "invalid JSON", `{"ok"`}, nil},
	}

	modes := []struct{ name, endpoint, down string }{
		{"upstream", "/mcp", "/mcp-down"},
		{"route mode", "/route", "/route-down"},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			for _, era := range eras {
				t.Run(era, func(t *testing.T) {
					c := connect(t, mode.endpoint, era, nil)
					wantOK(t, callTool(t, c, "ok", nil))
					for _, ft := range faults {
						t.Run(ft.tool, func(t *testing.T) {
							want := ft.want
							if mode.endpoint == "/route" && ft.wantRoute != nil {
								want = ft.wantRoute
							}
							var before runtime.MemStats
							runtime.ReadMemStats(&before)
							start := time.Now()
							res := callTool(t, c, ft.tool, nil)
							elapsed := time.Since(start)
							var after runtime.MemStats
							runtime.ReadMemStats(&after)

							text := wantToolError(t, res, want...)
							t.Logf("%s in %s: %s", ft.tool, elapsed.Round(time.Millisecond), text)
							checkFaultText(t, text)
							// A hang guard, not a performance bound.
							if elapsed > timeout+4*time.Second {
								t.Errorf("the call took %s; its timeout is %s", elapsed, timeout)
							}
							if strings.HasPrefix(ft.tool, "big") {
								checkBigBodyStopped(t, f, before, after)
							}
							if text := wantOK(t, callTool(t, c, "ok", nil)); text != `{"ok":true}` {
								t.Errorf("the next call answered %q", text)
							}
						})
					}

					t.Run("connection refused", func(t *testing.T) {
						d := connect(t, mode.down, era, nil)
						start := time.Now()
						res := callTool(t, d, "ok", nil)
						want := []string{"GET /ok", "refused"}
						if mode.endpoint == "/route" {
							want = []string{"GET /ok", "502", "refused"}
						}
						text := wantToolError(t, res, want...)
						t.Logf("refused: %s", text)
						checkFaultText(t, text)
						if strings.Contains(text, "/base") {
							t.Errorf("the error shows the upstream's base path: %q", text)
						}
						if elapsed := time.Since(start); elapsed > timeout+4*time.Second {
							t.Errorf("the call took %s", elapsed)
						}
						stillServing(t, mode.down)
						wantOK(t, callTool(t, c, "ok", nil))
					})
				})
			}
		})
	}
}

// checkFaultText: an error text never shows the query string.
func checkFaultText(t *testing.T, text string) {
	t.Helper()
	for _, leak := range []string{"fault-query-key-3e", "key=", "loop-key-q7", "?"} {
		if strings.Contains(text, leak) {
			t.Errorf("the error text shows %q: %s", leak, text)
		}
	}
}

// checkBigBodyStopped: the client stopped reading the 50 MB body near the
// limit, and the process did not hold it in memory.
func checkBigBodyStopped(t *testing.T, f *faultServer, before, after runtime.MemStats) {
	t.Helper()
	select {
	case <-f.bigStopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream is still writing the big body: the client did not stop reading")
	}
	written := f.bigWritten.Load()
	if written < 0 {
		t.Fatal("the client read the whole 50 MB body")
	}
	// The limit (1 MiB) plus what the loopback socket buffers hold.
	if written > 24<<20 {
		t.Errorf("the upstream wrote %d MB before the client stopped reading", written>>20)
	}
	// Loose: everything this process allocated during the call, the test
	// and both servers included.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the upstream wrote %d KiB; the process allocated %d KiB", written>>10, alloc>>10)
	if alloc > 24<<20 {
		t.Errorf("the call allocated %d MB", alloc>>20)
	}
}
