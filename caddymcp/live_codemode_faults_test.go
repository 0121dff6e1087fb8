package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// faultyBackend is an MCP server (mcp-go) behind a handler that
// misbehaves on the tools/calls of some tools, and that can restart on
// its address the way a process does: connections dropped, sessions
// forgotten.
type faultyBackend struct {
	t        *testing.T
	addr     string
	stateful bool // keeps sessions and speaks only 2025-11-25, as older servers do
	// everything answers a request with a session it does not know 400,
	// as server-everything (the TypeScript SDK) does, instead of mcp-go's 404.
	everything bool

	mu       sync.Mutex
	hs       *http.Server
	inner    http.Handler
	sessions map[string]bool // the sessions this process gave out
	calls    map[string]int  // tools/calls received, by tool
	closed   bool

	hold     chan struct{} // closed at cleanup: releases hanging calls
	restarts atomic.Int32
	// hugeWritten is how much of the huge answer went out before the
	// client stopped reading (-1: all of it).
	hugeWritten atomic.Int64
}

// faultyTools are the tools whose calls misbehave; ping_back and
// restart_soon behave.
var faultyTools = []string{"die", "garbage", "not_rpc", "html", "html_error", "huge", "huge_sse", "hang"}

// hugeAnswer is the size of the text in the huge answer.
const hugeAnswer = 50 << 20

func startFaultyBackend(t *testing.T, stateful, everything bool) *faultyBackend {
	t.Helper()
	f := &faultyBackend{t: t, addr: closedAddr(t), stateful: stateful, everything: everything,
		calls: map[string]int{}, hold: make(chan struct{})}
	f.start()
	t.Cleanup(func() {
		close(f.hold)
		f.mu.Lock()
		f.closed = true
		hs := f.hs
		f.mu.Unlock()
		hs.Close()
	})
	return f
}

func (f *faultyBackend) url() string { return "http://" + f.addr + "/mcp" }

// start listens on the address with a fresh server, as a new process.
func (f *faultyBackend) start() {
	srv := server.NewMCPServer("faulty", "1")
	srv.AddTool(mcp.NewTool("ping_back", mcp.WithString("word")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := req.Params.Arguments.(map[string]any)
		return mcp.NewToolResultText(fmt.Sprintf("pong %v", args["word"])), nil
	})
	srv.AddTool(mcp.NewTool("restart_soon", mcp.WithDescription("Answer, then restart the server.")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		go func() {
			time.Sleep(50 * time.Millisecond)
			f.restart()
		}()
		return mcp.NewToolResultText("restarting"), nil
	})
	for _, name := range faultyTools {
		srv.AddTool(mcp.NewTool(name, mcp.WithDescription("Misbehaves.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("the fault handler should have answered"), nil
		})
	}
	opts := []server.StreamableHTTPOption{server.WithDisableLocalhostProtection(true)}
	if f.stateful {
		opts = append(opts, server.WithStateful(true), server.WithStreamableHTTPProtocolVersions("2025-11-25"))
	}
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ {
		if ln, err = net.Listen("tcp", f.addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		f.t.Errorf("backend restart: %v", err)
		return
	}
	hs := &http.Server{Handler: f}
	f.mu.Lock()
	f.hs, f.inner, f.sessions = hs, server.NewStreamableHTTPServer(srv, opts...), map[string]bool{}
	f.mu.Unlock()
	go hs.Serve(ln)
}

// restart stops the server, dropping its connections, and starts a new
// one on the same address.
func (f *faultyBackend) restart() {
	f.mu.Lock()
	hs, closed := f.hs, f.closed
	f.mu.Unlock()
	if closed {
		return
	}
	hs.Close()
	f.restarts.Add(1)
	f.start()
}

func (f *faultyBackend) callsOf(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

func (f *faultyBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)

	f.mu.Lock()
	inner, sessions := f.inner, f.sessions
	if msg.Method == "tools/call" {
		f.calls[msg.Params.Name]++
	}
	f.mu.Unlock()

	if id := r.Header.Get("Mcp-Session-Id"); f.everything && id != "" {
		f.mu.Lock()
		known := sessions[id]
		f.mu.Unlock()
		if !known {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)
			return
		}
	}
	if msg.Method == "tools/call" && f.misbehave(w, msg.Params.Name, msg.ID) {
		return
	}
	inner.ServeHTTP(w, r)
	if id := w.Header().Get("Mcp-Session-Id"); id != "" {
		f.mu.Lock()
		sessions[id] = true
		f.mu.Unlock()
	}
}

// misbehave answers a faulty tool's call; it reports false for the others.
func (f *faultyBackend) misbehave(w http.ResponseWriter, tool string, id json.RawMessage) bool {
	switch tool {
	case "die":
		// The call arrived; the process dies before answering.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "this is not JSON {{{")
	case "not_rpc":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"hello":"world","items":[1,2,3]}`)
	case "html":
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>")
	case "html_error":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1>"+strings.Repeat("<p>padding</p>", 10000)+"</body></html>")
	case "huge", "huge_sse":
		// A well-formed answer whose text is 50 MB, streamed.
		prefix := ""
		if tool == "huge_sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			prefix = "event: message\ndata: "
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		fmt.Fprintf(w, `%s{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, prefix, id)
		chunk := []byte(strings.Repeat("x", 32<<10))
		n := int64(0)
		for n < hugeAnswer {
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				f.hugeWritten.Store(n)
				return true
			}
		}
		io.WriteString(w, `"}]}}`)
		f.hugeWritten.Store(-1)
	case "hang":
		w.Header().Set("Content-Type", "application/json")
		select {
		case <-f.hold:
		case <-time.After(30 * time.Second):
		}
	default:
		return false
	}
	return true
}

// TestLiveCodeModeBackendFaults: backends that die mid-call, answer
// garbage or hang. Each execution fails cleanly with the backend named
// (or the code catches the Error), and the next execution works, with no
// reload in between.
func TestLiveCodeModeBackendFaults(t *testing.T) {
	modern := startFaultyBackend(t, false, false)
	legacy := startFaultyBackend(t, true, false)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend modern %s {
			timeout 500ms
		}
		backend legacy %s {
			timeout 500ms
		}
		timeout 5s
	}
	codemode /code-big {
		backend modern %s {
			timeout 20s
		}
		backend legacy %s {
			timeout 20s
		}
		timeout 20s
	}
	codemode /code-short {
		backend modern %s {
			timeout 10s
		}
		timeout 500ms
	}
}`, modern.url(), legacy.url(), modern.url(), legacy.url(), modern.url()))

	type fault struct {
		tool string
		want []string // beside "<backend>.<tool>"
		// big answers go through an endpoint with generous timeouts: the
		// race detector makes reading 16 MiB slow.
		big bool
	}
	faults := []fault{
		{"die", []string{"failed"}, false},
		{"garbage", []string{"failed"}, false},
		{"not_rpc", []string{"failed"}, false},
		{"html", []string{"failed", "text/html"}, false},
		{"html_error", []string{"failed", "502"}, false},
		{"huge", []string{"failed", "the backend's answer is larger than 16MiB"}, true},
		{"huge_sse", []string{"failed", "the backend's answer is larger than 16MiB"}, true},
		{"hang", []string{"no answer before the time ran out"}, false},
	}
	c, big := connect(t, "/code", eras[0], nil), connect(t, "/code-big", eras[0], nil)
	for _, backend := range []string{"modern", "legacy"} {
		t.Run(backend, func(t *testing.T) {
			wantOK(t, execute(t, c, fmt.Sprintf(`return await %s.ping_back({word: "warm"})`, backend)))
			for _, ft := range faults {
				t.Run(ft.tool, func(t *testing.T) {
					c := c
					if ft.big {
						c = big
					}
					label := backend + "." + ft.tool
					start := time.Now()
					res := execute(t, c, fmt.Sprintf(`await %s.%s({}); return "no error"`, backend, ft.tool))
					elapsed := time.Since(start)
					text := resultText(res)
					t.Logf("%s in %s: %.300s", label, elapsed.Round(time.Millisecond), text)
					if elapsed > 20*time.Second+3*time.Second {
						t.Errorf("the execution took %s", elapsed)
					}
					wantToolError(t, res, append([]string{"UncaughtError", label}, ft.want...)...)
					if len(text) > 64<<10 {
						t.Errorf("the error is %d bytes long", len(text))
					}

					// The code can catch it, and learns which backend failed.
					res = execute(t, c, fmt.Sprintf(`try { await %s.%s({}); return "no error" } catch (e) { return e.backend + " " + (e.message.length < 4096) }`, backend, ft.tool))
					if text := wantOK(t, res); text != fmt.Sprintf(`"%s true"`, backend) {
						t.Errorf("caught: %s", text)
					}

					// The next execution works, with no reload.
					res = execute(t, c, fmt.Sprintf(`return await %s.ping_back({word: "after-%s"})`, backend, ft.tool))
					if text := wantOK(t, res); text != fmt.Sprintf(`"pong after-%s"`, ft.tool) {
						t.Errorf("the next execution answered %s", text)
					}
				})
			}
		})
	}

	t.Run("the huge answers were not read whole", func(t *testing.T) {
		for _, f := range []*faultyBackend{modern, legacy} {
			if n := f.hugeWritten.Load(); n < 0 || n > 40<<20 {
				t.Errorf("the backend wrote %d bytes of a 50 MB answer", n)
			}
		}
	})

	t.Run("the execution timeout bounds a backend that hangs", func(t *testing.T) {
		short := connect(t, "/code-short", eras[0], nil)
		start := time.Now()
		res := execute(t, short, `console.log("calling"); return await modern.hang({})`)
		elapsed := time.Since(start)
		text := wantToolError(t, res, "modern.hang", "no answer before the time ran out", "calling")
		t.Logf("in %s: %s", elapsed.Round(time.Millisecond), text)
		if elapsed > 500*time.Millisecond+3*time.Second {
			t.Errorf("the execution took %s; its timeout is 500ms", elapsed)
		}
		res = execute(t, short, `return await modern.ping_back({word: "again"})`)
		if text := wantOK(t, res); text != `"pong again"` {
			t.Errorf("the next execution answered %s", text)
		}
	})
}

// TestLiveCodeModeBackendRestartMidExecution restarts a backend that keeps
// sessions between two calls of one execution. A restarted mcp-go server
// answers the old session 404; server-everything answers 400. Either way
// the second call re-initializes and succeeds.
func TestLiveCodeModeBackendRestartMidExecution(t *testing.T) {
	for _, tc := range []struct {
		name       string
		everything bool
	}{{"404 for a stale session (mcp-go)", false}, {"400 for a stale session (server-everything)", true}} {
		t.Run(tc.name, func(t *testing.T) {
			b := startFaultyBackend(t, true, tc.everything)
			loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend stateful %s {
			timeout 2s
		}
		timeout 5s
	}
}`, b.url()))
			c := connect(t, "/code", eras[0], nil)
			res := execute(t, c, `const before = await stateful.ping_back({word: "one"});
await stateful.restart_soon({});
await new Promise(r => setTimeout(r, 300));
const after = await stateful.ping_back({word: "two"});
return [before, after]`)
			if text := wantOK(t, res); text != `["pong one","pong two"]` {
				t.Fatalf("text %q", text)
			}
			if b.restarts.Load() != 1 {
				t.Fatalf("the backend restarted %d times", b.restarts.Load())
			}
			// And again across executions: the session from the second
			// process goes stale too.
			b.restart()
			if text := wantOK(t, execute(t, c, `return await stateful.ping_back({word: "three"})`)); text != `"pong three"` {
				t.Fatalf("after the second restart: %q", text)
			}
		})
	}
}

// TestLiveCodeModeBackendDiesMidCall: a backend that read a tools/call and
// then dropped the connection may have run the tool; the call fails, and
// is not sent again.
func TestLiveCodeModeBackendDiesMidCall(t *testing.T) {
	b := startFaultyBackend(t, false, false)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend flaky %s {
			timeout 1s
		}
	}
}`, b.url()))
	c := connect(t, "/code", eras[0], nil)
	for i := 1; i <= 3; i++ {
		// A call first, so that the dying one goes out on a pooled connection.
		wantOK(t, execute(t, c, `return await flaky.ping_back({word: "warm"})`))
		wantToolError(t, execute(t, c, `await flaky.die({})`), "flaky.die")
		if n := b.callsOf("die"); n != i {
			t.Fatalf("the backend received the dying call %d times for %d executions", n, i)
		}
	}
}

// TestLiveCodeModeSameCaddyBackendReload: codemode aggregates an mcp
// endpoint of the same Caddy, and a reload adds a tool to that endpoint.
// The code can call the new tool after the reload, without waiting for
// the tool list's TTL.
func TestLiveCodeModeSameCaddyBackendReload(t *testing.T) {
	bin := startHTTPBin(t)
	config := func(tools string) string {
		return fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /reload-api {
		upstream %s
		%s
	}
	codemode /code {
		backend api http://127.0.0.1:{$LIVE_PORT}/reload-api
	}
}`, bin, tools)
	}
	const one = `tool one {
			description "One."
			get /get
		}`
	const two = `tool two {
			description "Two."
			get /get
		}`
	loadCaddyfile(t, "", config(one))
	c := connect(t, "/code", eras[0], nil)
	wantOK(t, execute(t, c, `return await api.one({})`))
	loadCaddyfile(t, "", config(one+"\n\t\t"+two))
	c = connect(t, "/code", eras[0], nil)
	wantOK(t, execute(t, c, `return await api.two({})`))
}
