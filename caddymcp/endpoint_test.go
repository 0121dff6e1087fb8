package caddymcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// TestLiveBadRequests sends what an MCP client would not.
func TestLiveBadRequests(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		max_request_size 2KiB
		tool get {
			description "x"
			get /get
		}
	}
}`, bin))
	tests := []struct {
		name       string
		method     string
		body       string
		wantStatus int
		wantInBody string
	}{
		{"notification", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ""},
		{"cancellation of an unknown request", "POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`, 202, ""},
		{"malformed JSON", "POST", `{"jsonrpc":"2.0","id":1,`, 400, `"code":-32700`},
		{"batch", "POST", `[` + pingBody + `]`, 400, `"code":-32600`},
		{"unknown method", "POST", `{"jsonrpc":"2.0","id":1,"method":"no/such"}`, 200, `"code":-32601`},
		{"wrong jsonrpc version", "POST", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, 200, `"code":-32600`},
		{"unknown tool", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, 200, `"code":-32602`},
		{"oversized body", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 4096) + `"}}`, 413, "max_request_size (2KiB)"},
		{"subscriptions/listen", "POST", `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{}}`, 200, `"id":7,"error":{"code":-32601`},
		{"GET stream", "GET", "", 405, "stateless"},
		{"PUT", "PUT", "", 405, "method PUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, "http://"+liveAddr+"/mcp", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			resp, body := do(t, req)
			if resp.StatusCode != tt.wantStatus || !strings.Contains(string(body), tt.wantInBody) {
				t.Errorf("got %d %s; want %d with %q", resp.StatusCode, body, tt.wantStatus, tt.wantInBody)
			}
			stillServing(t, "/mcp")
		})
	}
	t.Run("declared length over the limit, no body sent", func(t *testing.T) {
		for _, length := range []int{4096, 100 << 10, 1 << 30} {
			wantRefusedAtOnce(t, liveAddr, length)
		}
		stillServing(t, "/mcp")
	})
}

// TestLiveOlderProtocolVersions: clients that ask for an earlier revision
// get it, and can call tools with it.
func TestLiveOlderProtocolVersions(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool get {
			description "x"
			get /get
		}
	}
}`, bin))
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`, version)
			resp, body := rawPost(t, "/mcp", []byte(init), map[string]string{"MCP-Protocol-Version": ""})
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"protocolVersion":"`+version+`"`) {
				t.Fatalf("initialize: %d %s", resp.StatusCode, body)
			}
			call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get","arguments":{}}}`
			resp, body = rawPost(t, "/mcp", []byte(call), map[string]string{"MCP-Protocol-Version": version})
			if resp.StatusCode != 200 || !strings.Contains(string(body), `\"url\"`) || strings.Contains(string(body), `"isError":true`) {
				t.Fatalf("tools/call: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// originCheck is one request of the Origin and Host tests: the headers it
// sends, and the status and Access-Control-Allow-Origin it must get.
type originCheck struct {
	name       string
	header     map[string]string
	wantStatus int
	wantACAO   string
}

// defaultPolicyChecks are what an endpoint under the default Host policy
// with allow_origins https://app.example.com refuses and serves: the
// checks are the shared Endpoint's, so both directives are held to them.
func defaultPolicyChecks() []originCheck {
	return []originCheck{
		{"client without Origin", nil, 200, ""},
		{"DNS rebinding: hostile Host with matching Origin", map[string]string{"Host": "evil.example:" + livePort, "Origin": "http://evil.example:" + livePort}, 403, ""},
		{"DNS rebinding: hostile Host, no Origin", map[string]string{"Host": "evil.example"}, 403, ""},
		{"DNS rebinding: hostile Host with a loopback Origin", map[string]string{"Host": "evil.example:" + livePort, "Origin": "http://127.0.0.1:" + livePort}, 403, ""},
		{"cross-site Origin", map[string]string{"Origin": "https://evil.example"}, 403, ""},
		{"a page from another port on this machine", map[string]string{"Origin": "http://127.0.0.1:8000"}, 403, ""},
		{"a page from localhost on another port", map[string]string{"Host": "localhost:" + livePort, "Origin": "http://localhost:3000"}, 403, ""},
		{"Origin null", map[string]string{"Origin": "null"}, 403, ""},
		{"browser client from an allowed Origin", map[string]string{"Origin": "https://app.example.com"}, 200, "https://app.example.com"},
		{"same-origin page on loopback", map[string]string{"Origin": "http://" + liveAddr}, 200, "http://" + liveAddr},
		{"same-origin page on localhost", map[string]string{"Host": "localhost:" + livePort, "Origin": "http://localhost:" + livePort}, 200, "http://localhost:" + livePort},
		{"same-host proxy forwarding a public Host", map[string]string{"Host": "api.example.com"}, 403, ""},
	}
}

// preflight sends the CORS preflight of a POST from origin to path.
func preflight(t *testing.T, path, origin string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodOptions, "http://"+liveAddr+path, nil)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version")
	resp, _ := do(t, req)
	return resp
}

func TestLiveOriginAndHost(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	site := func(extra string) string {
		return fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		%s
		tool get {
			description "x"
			get /get
		}
	}
}`, bin, extra)
	}

	run := func(t *testing.T, checks []originCheck) {
		for _, c := range checks {
			resp, body := rawPost(t, "/mcp", []byte(pingBody), c.header)
			if resp.StatusCode != c.wantStatus {
				t.Errorf("%s: status %d (%s), want %d", c.name, resp.StatusCode, body, c.wantStatus)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != c.wantACAO {
				t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", c.name, got, c.wantACAO)
			}
		}
	}

	t.Run("default policy", func(t *testing.T) {
		loadCaddyfile(t, "", site("allow_origins https://app.example.com"))
		run(t, defaultPolicyChecks())

		// Preflight: answered for an allowed origin, refused otherwise.
		resp := preflight(t, "/mcp", "https://app.example.com")
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			resp.Header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id" {
			t.Errorf("preflight from allowed origin: %d %v", resp.StatusCode, resp.Header)
		}
		resp = preflight(t, "/mcp", "https://evil.example")
		if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from another origin: %d %v", resp.StatusCode, resp.Header)
		}
	})

	t.Run("allow_hosts admits a same-host proxy", func(t *testing.T) {
		loadCaddyfile(t, "", site("allow_hosts api.example.com"))
		run(t, []originCheck{
			{"listed Host", map[string]string{"Host": "api.example.com"}, 200, ""},
			{"listed Host with a same-origin page", map[string]string{"Host": "api.example.com", "Origin": "https://api.example.com"}, 200, "https://api.example.com"},
			{"other Host", map[string]string{"Host": "evil.example"}, 403, ""},
		})
	})

	t.Run("trusted proxies are not held to the loopback Host rule", func(t *testing.T) {
		loadCaddyfile(t, `servers {
		trusted_proxies static private_ranges
	}`, site(""))
		run(t, []originCheck{
			{"public Host forwarded by a trusted proxy", map[string]string{"Host": "api.example.com", "X-Forwarded-For": "203.0.113.7"}, 200, ""},
			{"same-origin page behind a trusted proxy", map[string]string{"Host": "api.example.com", "X-Forwarded-For": "203.0.113.7", "Origin": "https://api.example.com"}, 200, "https://api.example.com"},
			{"cross-site Origin through a trusted proxy", map[string]string{"Host": "api.example.com", "X-Forwarded-For": "203.0.113.7", "Origin": "https://evil.example"}, 403, ""},
			// A browser on this machine is a trusted peer too, but it says
			// nothing about forwarding: the rebinding attack still fails.
			{"DNS rebinding from a trusted loopback peer", map[string]string{"Host": "evil.example:" + livePort, "Origin": "http://evil.example:" + livePort}, 403, ""},
		})
	})
}

// TestLiveCodeModeOriginAndHost: the codemode endpoint refuses DNS
// rebinding and cross-site requests before any code runs, and serves the
// allowed cases.
func TestLiveCodeModeOriginAndHost(t *testing.T) {
	var calls atomic.Int32
	srv := server.NewMCPServer("counter", "1")
	srv.AddTool(mcp.NewTool("count", mcp.WithDescription("Counts its calls.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprint(calls.Add(1))), nil
	})
	backend := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithDisableLocalhostProtection(true)))
	defer backend.Close()

	site := func(extra string) string {
		return fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend counter %s/mcp
		%s
	}
}`, backend.URL, extra)
	}
	const execBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"return await counter.count({})"}}}`

	run := func(t *testing.T, checks []originCheck) {
		for _, c := range checks {
			for _, body := range []string{pingBody, execBody} {
				before := calls.Load()
				resp, raw := rawPost(t, "/code", []byte(body), c.header)
				if resp.StatusCode != c.wantStatus {
					t.Errorf("%s: status %d (%s), want %d", c.name, resp.StatusCode, raw, c.wantStatus)
				}
				if got := resp.Header.Get("Access-Control-Allow-Origin"); got != c.wantACAO {
					t.Errorf("%s: Access-Control-Allow-Origin %q, want %q", c.name, got, c.wantACAO)
				}
				ran := calls.Load() != before
				switch {
				case body == execBody && c.wantStatus == 200 && (!ran || strings.Contains(string(raw), `"isError":true`)):
					t.Errorf("%s: the code did not run: %s", c.name, raw)
				case c.wantStatus != 200 && ran:
					t.Errorf("%s: a refused request ran the code", c.name)
				}
			}
		}
	}

	t.Run("default policy", func(t *testing.T) {
		loadCaddyfile(t, "", site("allow_origins https://app.example.com"))
		run(t, defaultPolicyChecks())

		if resp := preflight(t, "/code", "https://app.example.com"); resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("preflight from the allowed origin: %d %v", resp.StatusCode, resp.Header)
		}
		if resp := preflight(t, "/code", "https://evil.example"); resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from another origin: %d %v", resp.StatusCode, resp.Header)
		}

		// An MCP client from the allowed origin works end to end, both eras.
		for _, era := range eras {
			c := connect(t, "/code", era, map[string]string{"Origin": "https://app.example.com"})
			wantOK(t, execute(t, c, `return await counter.count({})`))
		}
	})

	t.Run("allow_hosts admits a same-host proxy", func(t *testing.T) {
		loadCaddyfile(t, "", site("allow_hosts api.example.com"))
		run(t, []originCheck{
			{"listed Host", map[string]string{"Host": "api.example.com"}, 200, ""},
			{"listed Host with a same-origin page", map[string]string{"Host": "api.example.com", "Origin": "https://api.example.com"}, 200, "https://api.example.com"},
			{"listed Host with a cross-site Origin", map[string]string{"Host": "api.example.com", "Origin": "https://evil.example"}, 403, ""},
			{"other Host", map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 403, ""},
		})
	})
}

// TestServeAnswersALargeDeclaredLengthAtOnce: a client that declares a
// body over max_request_size and sends none of it gets its 413 without
// sending a byte of the body, whether the declared length is under what
// net/http would read to drain a body (256KiB) or far over it.
func TestServeAnswersALargeDeclaredLengthAtOnce(t *testing.T) {
	h, err := loadMCP(t, `{"max_request_size":1024,"tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, r, nil); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	for _, length := range []int{1025, 100 << 10, 10 << 20} {
		wantRefusedAtOnce(t, srv.Listener.Addr().String(), length)
	}
}

// wantRefusedAtOnce posts headers declaring a body of length bytes to addr,
// sends none of it, and wants a 413 naming max_request_size that closes the
// connection.
func wantRefusedAtOnce(t *testing.T, addr string, length int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n",
		addr, length)
	// Only a guard against a hang: the answer is read before any body byte
	// is sent, so it came without one.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Errorf("Content-Length %d and no body: no answer (%v)", length, err)
		return
	}
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "max_request_size") {
		t.Errorf("Content-Length %d: %d %s, want 413 naming max_request_size", length, resp.StatusCode, msg)
	}
	if !resp.Close {
		t.Errorf("Content-Length %d: the connection stays open for a body that is not wanted", length)
	}
}

// TestLiveProgressFlushes checks that a notification sent during a call
// reaches the client while the call is still running: the upstream answers
// only once the client has seen the progress notification, so a response
// that is not flushed through Caddy's writer would never complete.
func TestLiveProgressFlushes(t *testing.T) {
	var mu sync.Mutex
	seen := make(map[string]chan struct{})
	waitFor := func(key string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if seen[key] == nil {
			seen[key] = make(chan struct{})
		}
		return seen[key]
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-waitFor(r.URL.Query().Get("era")):
			io.WriteString(w, "answered after the progress notification")
		case <-time.After(5 * time.Second):
			w.WriteHeader(http.StatusGatewayTimeout)
			io.WriteString(w, "the progress notification never reached the client")
		}
	}))
	defer api.Close()
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool wait {
			description "Answers once the client saw progress."
			get /wait
			arg era
		}
	}
}`, api.URL))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)
			var once sync.Once
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationProgress) {
					once.Do(func() { close(waitFor(era)) })
				}
			})
			req := mcp.CallToolRequest{}
			req.Params.Name = "wait"
			req.Params.Arguments = map[string]any{"era": era}
			req.Params.Meta = &mcp.Meta{ProgressToken: "p-" + era}
			res, err := c.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if text := wantOK(t, res); text != "answered after the progress notification" {
				t.Fatalf("result %q", text)
			}
		})
	}
}
