package caddymcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLiveOriginAndHost(t *testing.T) {
	bin := startHTTPBin(t)
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

	type check struct {
		name       string
		header     map[string]string
		wantStatus int
		wantACAO   string
	}
	run := func(t *testing.T, checks []check) {
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
		run(t, []check{
			{"client without Origin", nil, 200, ""},
			{"DNS rebinding: hostile Host with matching Origin", map[string]string{"Host": "evil.example:" + livePort, "Origin": "http://evil.example:" + livePort}, 403, ""},
			{"DNS rebinding: hostile Host, no Origin", map[string]string{"Host": "evil.example"}, 403, ""},
			{"cross-site Origin", map[string]string{"Origin": "https://evil.example"}, 403, ""},
			{"Origin null", map[string]string{"Origin": "null"}, 403, ""},
			{"browser client from an allowed Origin", map[string]string{"Origin": "https://app.example.com"}, 200, "https://app.example.com"},
			{"same-origin page on loopback", map[string]string{"Origin": "http://" + liveAddr}, 200, "http://" + liveAddr},
			{"same-origin page on localhost", map[string]string{"Host": "localhost:" + livePort, "Origin": "http://localhost:" + livePort}, 200, "http://localhost:" + livePort},
			{"same-host proxy forwarding a public Host", map[string]string{"Host": "api.example.com"}, 403, ""},
		})

		// Preflight: answered for an allowed origin, refused otherwise.
		pre := func(origin string) *http.Response {
			req, _ := http.NewRequest(http.MethodOptions, "http://"+liveAddr+"/mcp", nil)
			req.Header.Set("Origin", origin)
			req.Header.Set("Access-Control-Request-Method", "POST")
			req.Header.Set("Access-Control-Request-Headers", "content-type, mcp-protocol-version")
			resp, _ := do(t, req)
			return resp
		}
		resp := pre("https://app.example.com")
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			resp.Header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id" {
			t.Errorf("preflight from allowed origin: %d %v", resp.StatusCode, resp.Header)
		}
		resp = pre("https://evil.example")
		if resp.StatusCode != 403 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from another origin: %d %v", resp.StatusCode, resp.Header)
		}
	})

	t.Run("allow_hosts admits a same-host proxy", func(t *testing.T) {
		loadCaddyfile(t, "", site("allow_hosts api.example.com"))
		run(t, []check{
			{"listed Host", map[string]string{"Host": "api.example.com"}, 200, ""},
			{"listed Host with a same-origin page", map[string]string{"Host": "api.example.com", "Origin": "https://api.example.com"}, 200, "https://api.example.com"},
			{"other Host", map[string]string{"Host": "evil.example"}, 403, ""},
		})
	})

	t.Run("trusted proxies are not held to the loopback Host rule", func(t *testing.T) {
		loadCaddyfile(t, `servers {
		trusted_proxies static private_ranges
	}`, site(""))
		run(t, []check{
			{"public Host forwarded by a trusted proxy", map[string]string{"Host": "api.example.com", "X-Forwarded-For": "203.0.113.7"}, 200, ""},
			{"same-origin page behind a trusted proxy", map[string]string{"Host": "api.example.com", "X-Forwarded-For": "203.0.113.7", "Origin": "https://api.example.com"}, 200, "https://api.example.com"},
			{"cross-site Origin through a trusted proxy", map[string]string{"Host": "api.example.com", "X-Forwarded-For": "203.0.113.7", "Origin": "https://evil.example"}, 403, ""},
			// A browser on this machine is a trusted peer too, but it says
			// nothing about forwarding: the rebinding attack still fails.
			{"DNS rebinding from a trusted loopback peer", map[string]string{"Host": "evil.example:" + livePort, "Origin": "http://evil.example:" + livePort}, 403, ""},
		})
	})
}

// TestLiveSecrets puts a secret in {env.X} for a header and a fixed query
// value: it must reach the upstream and appear nowhere else.
func TestLiveSecrets(t *testing.T) {
	const secret = "s3cr3t-d0-n0t-l3ak-7f2a"
	t.Setenv("CADDY_MCP_TEST_SECRET", secret)

	var gotHeader, gotQuery string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader, gotQuery = r.Header.Get("Authorization"), r.URL.Query().Get("key")
		if gotHeader != "Bearer "+secret || gotQuery != secret {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "bad credentials")
			return
		}
		switch r.URL.Path {
		case "/hooks/" + secret:
			w.WriteHeader(http.StatusNoContent)
		case "/missing/" + secret:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "no such hook")
		case "/fail":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "upstream failure")
		case "/echo":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"q": r.URL.Query()["q"], "h": r.Header.Get("X-Arg")})
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"authorized":true}`)
		}
	}))
	defer api.Close()

	logFile := filepath.Join(t.TempDir(), "caddy.log")
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
	}`, logFile), fmt.Sprintf(`http://:{$LIVE_PORT} {
	log {
		output file %s
	}
	mcp /mcp {
		upstream %s
		header Authorization "Bearer {env.CADDY_MCP_TEST_SECRET}"
		instructions "Call whoami first."
		tool whoami {
			description "Who am I."
			get /whoami
			query key {env.CADDY_MCP_TEST_SECRET}
		}
		tool hook {
			description "A webhook whose path holds the secret."
			post /hooks/{env.CADDY_MCP_TEST_SECRET}
			query key {env.CADDY_MCP_TEST_SECRET}
		}
		tool hook_down {
			description "A webhook path that fails."
			post /missing/{env.CADDY_MCP_TEST_SECRET}
			query key {env.CADDY_MCP_TEST_SECRET}
		}
		tool fail {
			description "Fails upstream."
			get /fail
			query key {env.CADDY_MCP_TEST_SECRET}
		}
		tool echo {
			description "Echoes arguments."
			get /echo
			query key {env.CADDY_MCP_TEST_SECRET}
			arg q
			arg h {
				in header
				header_name X-Arg
			}
		}
	}
	mcp /down {
		upstream http://%s
		header Authorization "Bearer {env.CADDY_MCP_TEST_SECRET}"
		tool down {
			description "Upstream is down."
			get /x
			query key {env.CADDY_MCP_TEST_SECRET}
		}
	}
}`, logFile, api.URL, closedAddr(t)))

	var seen []string // every response the clients received, as JSON
	record := func(v any) {
		b, _ := json.Marshal(v)
		seen = append(seen, string(b))
	}
	for _, era := range eras {
		c := connect(t, "/mcp", era, nil)
		tools, err := c.ListTools(t.Context(), mcpListTools())
		if err != nil {
			t.Fatal(err)
		}
		record(tools)
		res := callTool(t, c, "whoami", nil)
		record(res)
		if text := wantOK(t, res); !strings.Contains(text, "authorized") {
			t.Fatalf("secret did not reach the upstream: header %q query %q", gotHeader, gotQuery)
		}
		res = callTool(t, c, "hook", nil)
		record(res)
		if text := wantOK(t, res); !strings.Contains(text, "POST /hooks/{env.CADDY_MCP_TEST_SECRET}") {
			t.Errorf("hook result %q", text)
		}
		res = callTool(t, c, "hook_down", nil)
		record(res)
		wantToolError(t, res, "404")
		res = callTool(t, c, "fail", nil)
		record(res)
		wantToolError(t, res, "500")

		// An argument whose value is the placeholder text stays that text.
		res = callTool(t, c, "echo", map[string]any{"q": "{env.CADDY_MCP_TEST_SECRET}", "h": "{env.CADDY_MCP_TEST_SECRET}"})
		record(res)
		var echo struct {
			Q []string `json:"q"`
			H string   `json:"h"`
		}
		if err := json.Unmarshal([]byte(wantOK(t, res)), &echo); err != nil {
			t.Fatal(err)
		}
		if len(echo.Q) != 1 || echo.Q[0] != "{env.CADDY_MCP_TEST_SECRET}" || echo.H != "{env.CADDY_MCP_TEST_SECRET}" {
			t.Errorf("argument values were expanded: %+v", echo)
		}

		down := connect(t, "/down", era, nil)
		res = callTool(t, down, "down", nil)
		record(res)
		wantToolError(t, res, "refused")
	}

	// Raw answers too, including refusals.
	for _, h := range []map[string]string{nil, {"Origin": "https://evil.example"}} {
		_, body := rawPost(t, "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), h)
		seen = append(seen, string(body))
	}

	for _, s := range seen {
		if strings.Contains(s, secret) {
			t.Errorf("a response holds the secret: %s", s)
		}
	}
	logs, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) == 0 {
		t.Fatal("no logs were written; the scan would prove nothing")
	}
	if strings.Contains(string(logs), secret) {
		t.Errorf("the log holds the secret")
	}
	_, cfg := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/config/"))
	if strings.Contains(string(cfg), secret) || !strings.Contains(string(cfg), "{env.CADDY_MCP_TEST_SECRET}") {
		t.Errorf("the config holds the secret, or lost the placeholder")
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
