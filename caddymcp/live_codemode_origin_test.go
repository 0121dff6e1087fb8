package caddymcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

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

	type check struct {
		name       string
		header     map[string]string
		wantStatus int
		wantACAO   string
	}
	run := func(t *testing.T, checks []check) {
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
		run(t, []check{
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
		})

		pre := func(origin string) *http.Response {
			req, _ := http.NewRequest(http.MethodOptions, "http://"+liveAddr+"/code", nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version")
			resp, _ := do(t, req)
			return resp
		}
		if resp := pre("https://app.example.com"); resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("preflight from the allowed origin: %d %v", resp.StatusCode, resp.Header)
		}
		if resp := pre("https://evil.example"); resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
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
		run(t, []check{
			{"listed Host", map[string]string{"Host": "api.example.com"}, 200, ""},
			{"listed Host with a same-origin page", map[string]string{"Host": "api.example.com", "Origin": "https://api.example.com"}, 200, "https://api.example.com"},
			{"listed Host with a cross-site Origin", map[string]string{"Host": "api.example.com", "Origin": "https://evil.example"}, 403, ""},
			{"other Host", map[string]string{"Host": "evil.example", "Origin": "http://evil.example"}, 403, ""},
		})
	})
}
