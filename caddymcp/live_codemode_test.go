package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// concurrencyAPI is a REST server that answers after a delay and records
// how many requests it served at once.
type concurrencyAPI struct {
	running, maxSeen atomic.Int32
}

func (c *concurrencyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.running.Add(1)
	defer c.running.Add(-1)
	for {
		m := c.maxSeen.Load()
		if n <= m || c.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(150 * time.Millisecond)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q}`, r.URL.Query().Get("id"))
}

// execute runs code through a codemode endpoint's tool.
func execute(t *testing.T, c *client.Client, code string) *mcp.CallToolResult {
	t.Helper()
	return callTool(t, c, "execute", map[string]any{"code": code})
}

// listenOn starts an MCP server on addr (host:port); stop it with the
// returned function. stateful servers keep sessions, as older servers do,
// and speak only 2025-11-25.
func listenOn(t *testing.T, addr string, stateful bool) func() {
	t.Helper()
	srv := server.NewMCPServer("late", "1")
	srv.AddTool(mcp.NewTool("ping_back", mcp.WithString("word")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := req.Params.Arguments.(map[string]any)
		return mcp.NewToolResultText(fmt.Sprintf("pong %v", args["word"])), nil
	})
	opts := []server.StreamableHTTPOption{server.WithDisableLocalhostProtection(true)}
	if stateful {
		opts = append(opts, server.WithStateful(true), server.WithStreamableHTTPProtocolVersions("2025-11-25"))
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: server.NewStreamableHTTPServer(srv, opts...)}
	go hs.Serve(ln)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			hs.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

func TestLiveCodeMode(t *testing.T) {
	bin := startHTTPBin(t)
	api := &concurrencyAPI{}
	apiSrv := &http.Server{Handler: api}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go apiSrv.Serve(apiLn)
	defer apiSrv.Close()
	lateAddr := closedAddr(t)

	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /rest {
		upstream %s
		tool echo {
			description "Echo the arguments."
			post /anything
			arg word string required
			arg n integer
		}
		tool status {
			description "Answer a status code."
			get /status/{code}
			arg code integer required
		}
	}
	mcp /slow {
		upstream http://%s
		tool get {
			description "Answer after 150ms."
			get /item
			arg id string required
		}
	}
	codemode /code {
		backend rest http://127.0.0.1:{$LIVE_PORT}/rest
		backend slow http://127.0.0.1:{$LIVE_PORT}/slow {
			timeout 5s
		}
		backend late http://%s/mcp
		timeout 2s
	}
}`, bin, apiLn.Addr(), lateAddr))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/code", era, nil)

			t.Run("one tool whose description declares the backends", func(t *testing.T) {
				res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Tools) != 1 || res.Tools[0].Name != "execute" {
					t.Fatalf("tools %+v", res.Tools)
				}
				d := res.Tools[0].Description
				for _, want := range []string{"declare const rest", "echo(input: {", "word: string", "declare const slow", "status(input: {", "declare const late", "unavailable"} {
					if !strings.Contains(d, want) {
						t.Errorf("description lacks %q:\n%s", want, d)
					}
				}
			})

			t.Run("chained calls across backends", func(t *testing.T) {
				res := execute(t, c, `
const first = await rest.echo({word: "caddy", n: 2});
const item = await slow.get({id: first.json.word + "-" + first.json.n});
console.log("got", item.id);
return {word: first.json.word, item: item.id}`)
				text := wantOK(t, res)
				if !strings.Contains(text, `{"word":"caddy","item":"caddy-2"}`) || !strings.Contains(text, "got caddy-2") {
					t.Fatalf("text %q", text)
				}
				sc, _ := json.Marshal(res.StructuredContent)
				if string(sc) != `{"logs":["got caddy-2"],"result":{"item":"caddy-2","word":"caddy"}}` {
					t.Errorf("structuredContent %s", sc)
				}
			})

			t.Run("calls started together overlap", func(t *testing.T) {
				api.maxSeen.Store(0)
				res := execute(t, c, `const ids = Array.from({length: 10}, (_, i) => "p" + i);
const items = await Promise.all(ids.map(id => slow.get({id})));
return items.map(i => i.id).join(",")`)
				if text := wantOK(t, res); text != `"p0,p1,p2,p3,p4,p5,p6,p7,p8,p9"` {
					t.Fatalf("text %q", text)
				}
				if got := api.maxSeen.Load(); got < 10 {
					t.Errorf("at most %d calls reached the REST API at once, want 10", got)
				}
			})

			t.Run("backend errors are thrown, with the backend's message", func(t *testing.T) {
				res := execute(t, c, `try { await rest.status({code: 503}); return "no error" } catch (e) { return e.message }`)
				if text := wantOK(t, res); !strings.Contains(text, "503 Service Unavailable") || !strings.Contains(text, "rest.status") {
					t.Fatalf("text %q", text)
				}
				res = execute(t, c, `await rest.status({code: "not a number"})`)
				wantToolError(t, res, "UncaughtError", "invalid arguments", "/code")
			})

			t.Run("TypeScript", func(t *testing.T) {
				res := execute(t, c, "interface Echo { json: { word: string } }\nconst r: Echo = await rest.echo({word: 'typed'});\nreturn r.json.word.toUpperCase()")
				if text := wantOK(t, res); text != `"TYPED"` {
					t.Fatalf("text %q", text)
				}
			})

			t.Run("errors in the code are tool errors with positions", func(t *testing.T) {
				wantToolError(t, execute(t, c, "const a = 1;\nconst b = ;"), "SyntaxError", "line 2")
				wantToolError(t, execute(t, c, "while (true) {}"), "TimeoutError")
				wantToolError(t, callTool(t, c, "execute", map[string]any{}), `"code" argument is required`)
				wantToolError(t, callTool(t, c, "execute", map[string]any{"code": "return 1", "timeout": 5}), `unknown argument "timeout"`)
			})
		})
	}

	t.Run("a backend that is down at start and comes up later", func(t *testing.T) {
		c := connect(t, "/code", eras[0], nil)
		wantToolError(t, execute(t, c, `return await late.ping_back({word: "a"})`), "late.ping_back", "unavailable")
		listenOn(t, lateAddr, false)
		res := execute(t, c, `return await late.ping_back({word: "b"})`)
		if text := wantOK(t, res); text != `"pong b"` {
			t.Fatalf("text %q", text)
		}
		// Its tools are listed once it is back.
		res2, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res2.Tools[0].Description, "ping_back(input") {
			t.Errorf("late's tools are not declared:\n%s", res2.Tools[0].Description)
		}
	})
}

// TestLiveCodeModeBackendRestart restarts a backend that keeps sessions:
// the old session is unknown to the new process (404), and the next call
// re-initializes without a reload.
func TestLiveCodeModeBackendRestart(t *testing.T) {
	addr := closedAddr(t)
	stop := listenOn(t, addr, true)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend stateful http://%s/mcp
	}
}`, addr))
	c := connect(t, "/code", eras[0], nil)
	if text := wantOK(t, execute(t, c, `return await stateful.ping_back({word: "one"})`)); text != `"pong one"` {
		t.Fatalf("text %q", text)
	}
	stop()
	listenOn(t, addr, true)
	if text := wantOK(t, execute(t, c, `return await stateful.ping_back({word: "two"})`)); text != `"pong two"` {
		t.Fatalf("after the restart: %q", text)
	}
}

// TestLiveCodeModeBackendRedirect: a backend that redirects is not followed.
func TestLiveCodeModeBackendRedirect(t *testing.T) {
	var hit atomic.Int32
	elsewhere := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit.Add(1)
		io.WriteString(w, "{}")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go elsewhere.Serve(ln)
	defer elsewhere.Close()
	redirector := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+ln.Addr().String()+"/mcp", http.StatusTemporaryRedirect)
	})}
	rl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go redirector.Serve(rl)
	defer redirector.Close()

	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend moved http://%s/mcp {
			header Authorization "Bearer backend-secret"
		}
	}
}`, rl.Addr()))
	c := connect(t, "/code", eras[0], nil)
	res := execute(t, c, `return await moved.anything({})`)
	text := wantToolError(t, res, "moved.anything")
	if strings.Contains(text, "backend-secret") {
		t.Errorf("the error shows the header: %s", text)
	}
	if hit.Load() != 0 {
		t.Errorf("the redirect was followed %d times", hit.Load())
	}
}
