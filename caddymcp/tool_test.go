package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

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
}`, logFile, api.URL, mcptest.ClosedAddr(t)))

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

// The secrets of TestLiveSecretsEverywhere, each in an {env.X}: distinct
// values, so that a leak names its source.
var everywhereSecrets = map[string]string{
	"CADDY_MCP_SE_HEADER":   "hdr-secret-9f1c42",     // mcp handler header
	"CADDY_MCP_SE_TOOLHDR":  "toolhdr-secret-27ab91", // mcp tool header
	"CADDY_MCP_SE_QUERY":    "query-secret-6d3e07",   // mcp tool query value
	"CADDY_MCP_SE_PATH":     "path-secret-b84a55",    // upstream URL path
	"CADDY_MCP_SE_URLQ":     "urlq-secret-03fd68",    // upstream URL query
	"CADDY_MCP_SE_BACKEND":  "backend-secret-5e7713", // codemode backend header
	"CADDY_MCP_SE_BACKEND2": "backend2-secret-c4d1e0",
}

// requestLog records what a test server received.
type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r)
	l.mu.Unlock()
}

func (l *requestLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// secretAPI is the REST upstream: it answers only requests that carry
// every credential, and never echoes one.
func secretAPI(t *testing.T, elsewhere string, authorized *requestLog) *httptest.Server {
	s := everywhereSecrets
	prefix := "/t/" + s["CADDY_MCP_SE_PATH"] + "/v1"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, ok := strings.CutPrefix(r.URL.Path, prefix)
		routeMode := false
		if !ok {
			// Route mode: the tool paths hold the secret as a placeholder.
			route, routeMode = r.URL.Path, true
			if route, ok = strings.CutPrefix(route, "/rm/"+s["CADDY_MCP_SE_PATH"]); !ok {
				w.WriteHeader(http.StatusNotFound)
				return
			}
		}
		q := r.URL.Query()
		if r.Header.Get("Authorization") != "Bearer "+s["CADDY_MCP_SE_HEADER"] || q.Get("key") != s["CADDY_MCP_SE_QUERY"] ||
			(!routeMode && q.Get("tenant") != s["CADDY_MCP_SE_URLQ"]) ||
			(route == "/ok" && r.Header.Get("X-Api-Key") != s["CADDY_MCP_SE_TOOLHDR"]) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "missing or wrong credentials")
			return
		}
		authorized.add(r)
		switch route {
		case "/ok":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"q": q["q"], "h": r.Header.Get("X-Arg"), "body": string(body), "path": strings.TrimPrefix(route, "/echo")})
		case "/fail":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "upstream failure")
		case "/redirect":
			http.Redirect(w, r, elsewhere+"/landing?token=redirect-token-x1", http.StatusFound)
		case "/slash":
			// The redirect every web framework makes to add a slash: to the
			// request's own path, base path included.
			http.Redirect(w, r, r.URL.Path+"/?"+r.URL.RawQuery, http.StatusMovedPermanently)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		case "/big":
			io.WriteString(w, strings.Repeat("b", 64<<10))
		case "/wrong":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"unexpected":true}`)
		case "/notjson":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"broken":`)
		default:
			if strings.HasPrefix(route, "/echo/") {
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"path": strings.TrimPrefix(route, "/echo/")})
				return
			}
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// keyedBackend is an MCP backend that wants the backend secret as a
// bearer token.
func keyedBackend(t *testing.T, authorized *requestLog) string {
	srv := server.NewMCPServer("keyed", "1")
	srv.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Who the gateway is.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("the gateway"), nil
	})
	srv.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fails.")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("keyed failure: the order does not exist"), nil
	})
	srv.AddTool(mcp.NewTool("echo_args", mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := req.Params.Arguments.(map[string]any)
		return mcp.NewToolResultText(fmt.Sprint(args["text"])), nil
	})
	mcpHandler := server.NewStreamableHTTPServer(srv, server.WithDisableLocalhostProtection(true))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+everywhereSecrets["CADDY_MCP_SE_BACKEND"] {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, "missing or wrong credentials")
			return
		}
		authorized.add(r)
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// secretTools are the tools of the mcp endpoints. %[1]s is the upstream
// line (or nothing, in route mode), %[2]s the path prefix of route mode.
const secretTools = `
		%[1]s
		header Authorization "Bearer {env.CADDY_MCP_SE_HEADER}"
		timeout 300ms
		max_response_size 16KiB
		tool ok {
			description "Authorized."
			get %[2]s/ok
			header X-Api-Key {env.CADDY_MCP_SE_TOOLHDR}
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool echo {
			description "Echoes its arguments."
			post %[2]s/echo
			query key {env.CADDY_MCP_SE_QUERY}
			body arg text
			arg text string required
			arg q {
				in query
			}
			arg h {
				in header
				header_name X-Arg
			}
		}
		tool echo_path {
			description "Echoes a path argument."
			get %[2]s/echo/{p}
			query key {env.CADDY_MCP_SE_QUERY}
			arg p required
		}
		tool fail {
			description "Fails upstream."
			get %[2]s/fail
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool redirect {
			description "Redirects to another host."
			get %[2]s/redirect
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool slash {
			description "Redirects to add a slash."
			get %[2]s/slash
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool slow {
			description "Slower than the timeout."
			get %[2]s/slow
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool big {
			description "Larger than max_response_size."
			get %[2]s/big
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool wrong {
			description "Breaks its output schema."
			get %[2]s/wrong
			query key {env.CADDY_MCP_SE_QUERY}
			output_schema <<JSON
			{"type": "object", "required": ["orders"]}
			JSON
		}
		tool notjson {
			description "Invalid JSON."
			get %[2]s/notjson
			query key {env.CADDY_MCP_SE_QUERY}
		}
		tool typed {
			description "Typed arguments."
			get %[2]s/ok
			query key {env.CADDY_MCP_SE_QUERY}
			arg n integer required
			arg state string {
				enum open closed
			}
		}
`

// TestLiveSecretsEverywhere puts secrets in {env.X} for mcp header and
// query values, the mcp upstream URL's path and query, and codemode
// backend headers; drives both directives through successes and every
// kind of failure, and code that goes looking for the secrets; and scans
// every response (raw HTTP too), the tool lists and declarations, the
// logs at the default level and the admin config: no secret appears
// anywhere, and the placeholders stay in the config.
func TestLiveSecretsEverywhere(t *testing.T) {
	for k, v := range everywhereSecrets {
		t.Setenv(k, v)
	}
	elsewhereLog := &requestLog{}
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereLog.add(r)
		io.WriteString(w, "{}")
	}))
	defer elsewhere.Close()
	// Redirects an MCP backend to elsewhere.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/mcp?token=redirect-token-x2", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	apiLog, keyedLog := &requestLog{}, &requestLog{}
	api := secretAPI(t, elsewhere.URL, apiLog)
	keyed := keyedBackend(t, keyedLog)
	down := mcptest.ClosedAddr(t)

	dir := t.TempDir()
	mainLog, accessLog := filepath.Join(dir, "caddy.log"), filepath.Join(dir, "access.log")
	base := "/t/{env.CADDY_MCP_SE_PATH}/v1?tenant={env.CADDY_MCP_SE_URLQ}"
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
	}`, mainLog), fmt.Sprintf(`http://:{$LIVE_PORT} {
	log {
		output file %s
	}
	mcp /se-mcp {
		%s
	}
	mcp /se-mcp-down {
		%s
	}
	route /se-route {
		mcp {
			%s
		}
		reverse_proxy %s
	}
	route /se-route-down {
		mcp {
			%s
		}
		reverse_proxy %s
	}
	codemode /code {
		discovery all
		backend keyed %s {
			header Authorization "Bearer {env.CADDY_MCP_SE_BACKEND}"
			timeout 2s
		}
		# A path no earlier test serves: the backend connects while the
		# previous config still answers.
		backend rest http://127.0.0.1:{$LIVE_PORT}/se-mcp {
			# This Caddy's access log records the request: only the
			# credential headers (Authorization, Cookie...) are redacted.
			header Authorization "Bearer {env.CADDY_MCP_SE_BACKEND2}"
		}
		backend wrongkey %s {
			header Authorization "Bearer {env.CADDY_MCP_SE_BACKEND2}"
		}
		backend down http://%s/mcp {
			header Authorization "Bearer {env.CADDY_MCP_SE_BACKEND}"
		}
		backend moved %s/mcp {
			header Authorization "Bearer {env.CADDY_MCP_SE_BACKEND}"
		}
		timeout 5s
		max_output 1MiB
	}
}`, accessLog,
		fmt.Sprintf(secretTools, "upstream "+api.URL+base, ""),
		fmt.Sprintf(secretTools, "upstream http://"+down+base, ""),
		fmt.Sprintf(secretTools, "", "/rm/{env.CADDY_MCP_SE_PATH}"), strings.TrimPrefix(api.URL, "http://"),
		fmt.Sprintf(secretTools, "", "/rm/{env.CADDY_MCP_SE_PATH}"), down,
		keyed, keyed, down, redirector.URL))

	var seen []string // everything a client received
	record := func(v any) {
		b, _ := json.Marshal(v)
		seen = append(seen, string(b))
	}
	// errorText records an error result and checks that it shows no query.
	errorText := func(t *testing.T, res *mcp.CallToolResult, want ...string) {
		t.Helper()
		record(res)
		text := wantToolError(t, res, want...)
		t.Logf("%.300s", text)
		for _, q := range []string{"key=", "tenant=", "token=", "?"} {
			if strings.Contains(text, q) {
				t.Errorf("the error text shows a query string (%q): %s", q, text)
			}
		}
	}

	t.Run("mcp", func(t *testing.T) {
		for _, ep := range []string{"/se-mcp", "/se-route"} {
			for _, era := range eras {
				t.Run(ep+" "+era, func(t *testing.T) {
					c := connect(t, ep, era, map[string]string{"Authorization": "Bearer client-token"})
					tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
					if err != nil {
						t.Fatal(err)
					}
					record(tools)

					res := callTool(t, c, "ok", nil)
					record(res)
					if text := wantOK(t, res); text != `{"ok":true}` {
						t.Fatalf("the credentials did not reach the upstream: %s", text)
					}

					// Argument values that look like placeholders travel as they are,
					// in the body, the query, a header and the path.
					for _, name := range []string{"CADDY_MCP_SE_HEADER", "CADDY_MCP_SE_QUERY", "CADDY_MCP_SE_PATH"} {
						ph := "{env." + name + "}"
						res = callTool(t, c, "echo", map[string]any{"text": ph, "q": ph, "h": ph})
						record(res)
						var echo struct {
							Q    []string `json:"q"`
							H    string   `json:"h"`
							Body string   `json:"body"`
						}
						if err := json.Unmarshal([]byte(wantOK(t, res)), &echo); err != nil {
							t.Fatal(err)
						}
						if len(echo.Q) != 1 || echo.Q[0] != ph || echo.H != ph || echo.Body != `"`+ph+`"` {
							t.Errorf("argument values were expanded: %+v", echo)
						}
						res = callTool(t, c, "echo_path", map[string]any{"p": ph})
						record(res)
						if text := wantOK(t, res); !strings.Contains(text, `"path":"`+ph+`"`) {
							t.Errorf("a path argument was expanded: %s", text)
						}
					}

					errorText(t, callTool(t, c, "fail", nil), "GET", "/fail", "500", "upstream failure")
					before := elsewhereLog.count()
					errorText(t, callTool(t, c, "redirect", nil), "302", elsewhere.URL+"/landing", "not followed")
					if elsewhereLog.count() != before {
						t.Errorf("the redirect to another host was followed")
					}
					errorText(t, callTool(t, c, "slash", nil), "301", "/slash/", "not followed")
					errorText(t, callTool(t, c, "slow", nil), "timeout of 300ms")
					errorText(t, callTool(t, c, "big", nil), "max_response_size (16KiB)")
					errorText(t, callTool(t, c, "wrong", nil), "output_schema", "orders")
					errorText(t, callTool(t, c, "notjson", nil), "invalid JSON")
					errorText(t, callTool(t, c, "typed", map[string]any{"n": "x", "state": "merged", "extra": 1}), "invalid arguments", "/n", "/state")
					_, err = mcptest.CallTool(c, "no_such_tool", nil)
					record(fmt.Sprint(err))

					down := connect(t, ep+"-down", era, nil)
					errorText(t, callTool(t, down, "ok", nil), "GET", "/ok", "refused")
					errorText(t, callTool(t, down, "echo", map[string]any{"text": "x"}), "POST", "/echo", "refused")
				})
			}
			// Raw answers, including refusals and JSON-RPC errors.
			for _, body := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"redirect","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"typed","arguments":{"n":"{env.CADDY_MCP_SE_QUERY}"}}}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`,
				`{"jsonrpc":"2.0","id":6,`,
			} {
				for _, h := range []map[string]string{nil, {"Origin": "https://evil.example"}, {"Host": "evil.example"}} {
					resp, raw := rawPost(t, ep, []byte(body), h)
					seen = append(seen, fmt.Sprint(resp.Header), string(raw))
				}
			}
		}
		if apiLog.count() == 0 {
			t.Fatal("no authorized request reached the upstream; the scan would prove nothing")
		}
	})

	t.Run("codemode", func(t *testing.T) {
		for _, era := range eras {
			c := connect(t, "/code", era, nil)
			tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			record(tools)
			decl := tools.Tools[0].Description
			for _, want := range []string{"declare const keyed", "whoami(", "declare const rest", "declare const wrongkey", "declare const down", "declare const moved", "unavailable"} {
				if !strings.Contains(decl, want) {
					t.Errorf("the declarations lack %q:\n%s", want, decl)
				}
			}

			run := func(code string) string {
				t.Helper()
				res := execute(t, c, code)
				record(res)
				return mcptest.ResultText(res)
			}
			if text := run(`return [await keyed.whoami({}), await rest.ok({})]`); text != `["the gateway",{"ok":true}]` {
				t.Errorf("calls through the backends: %s", text)
			}
			if text := run(`return await keyed.echo_args({text: "{env.CADDY_MCP_SE_BACKEND}"})`); text != `"{env.CADDY_MCP_SE_BACKEND}"` {
				t.Errorf("an argument was expanded: %s", text)
			}
			// Errors from every kind of failing backend, printed every way.
			for _, call := range []string{
				"keyed.fail({})", "rest.fail({})", "rest.redirect({})", "rest.slow({})", "rest.typed({n: 'x'})",
				"wrongkey.whoami({})", "down.anything({})", "moved.anything({})",
			} {
				text := run(fmt.Sprintf(`try { await %s; return "no error" } catch (e) {
	console.log(e); console.log(String(e)); console.log(e.stack);
	console.error(JSON.stringify(e), JSON.stringify(Object.getOwnPropertyNames(e)));
	return {message: e.message, backend: e.backend, tool: e.tool, props: Object.getOwnPropertyNames(e).map(k => String(e[k]))};
}`, call))
				if strings.Contains(text, `"no error"`) {
					t.Errorf("%s did not fail", call)
				}
				t.Logf("%s: %.400q", call, text)
			}
			run(`await keyed.fail({})`)
			run(`await down.anything({})`)
			// Code that goes looking for the secrets: every property of every
			// object it can reach from the global object.
			text := run(`
const seen = new Set(), out = [];
function walk(v, depth) {
	if (depth > 6 || v === null || (typeof v !== "object" && typeof v !== "function") || seen.has(v)) return;
	seen.add(v);
	let keys = [];
	try { keys = Reflect.ownKeys(v) } catch (e) { out.push(String(e)); }
	for (const k of keys) {
		out.push(String(k));
		let d;
		try { d = Object.getOwnPropertyDescriptor(v, k) } catch (e) { out.push(String(e)); continue }
		if (!d) continue;
		if ("value" in d) {
			if (typeof d.value === "string") out.push(d.value);
			if (typeof d.value === "function") { try { out.push(Function.prototype.toString.call(d.value)) } catch (e) {} }
			walk(d.value, depth + 1);
		} else {
			try { const g = v[k]; if (typeof g === "string") out.push(g); walk(g, depth + 1) } catch (e) { out.push(String(e)) }
		}
	}
	try { walk(Object.getPrototypeOf(v), depth + 1) } catch (e) {}
}
walk(globalThis, 0);
for (const b of [keyed, rest, wrongkey, down, moved]) { try { out.push(String(b), JSON.stringify(b)) } catch (e) { out.push(e.name) } }
const probes = ["typeof process", "typeof require", "typeof fetch", "typeof Deno", "typeof globalThis.env", "this === undefined"];
for (const p of probes) { try { out.push(p + " = " + String(eval(p))) } catch (e) { out.push(String(e)) } }
console.log("walked", seen.size, "objects");
return out.join("\n")`)
			t.Logf("the walk over the globals returned %d bytes", len(text))
			if !strings.Contains(text, "walked") || !strings.Contains(text, "whoami") || len(text) < 2000 {
				t.Errorf("the walk over the globals did not run: %.500s", text)
			}
		}
		if keyedLog.count() == 0 {
			t.Fatal("no authorized request reached the keyed backend; the scan would prove nothing")
		}
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute","arguments":{"code":"return await keyed.whoami({})"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute","arguments":{"code":"const a = ;"}}}`,
		} {
			for _, h := range []map[string]string{nil, {"Origin": "https://evil.example"}} {
				resp, raw := rawPost(t, "/code", []byte(body), h)
				seen = append(seen, fmt.Sprint(resp.Header), string(raw))
			}
		}
	})

	t.Run("no redirect reached another host", func(t *testing.T) {
		if n := elsewhereLog.count(); n != 0 {
			r := elsewhereLog.reqs[0]
			t.Errorf("%d requests reached the other host; the first: %s %s, headers %v", n, r.Method, r.URL, r.Header)
		}
	})

	t.Run("scan", func(t *testing.T) {
		// Let the access log catch up with the last requests.
		time.Sleep(100 * time.Millisecond)
		logs, err := os.ReadFile(mainLog)
		if err != nil {
			t.Fatal(err)
		}
		access, err := os.ReadFile(accessLog)
		if err != nil {
			t.Fatal(err)
		}
		if len(logs) == 0 || len(access) == 0 {
			t.Fatal("no logs were written; the scan would prove nothing")
		}
		_, cfg := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/config/"))
		sources := map[string]string{
			"responses":  strings.Join(seen, "\n"),
			"the log":    string(logs),
			"access log": string(access),
			"the config": string(cfg),
		}
		for where, text := range sources {
			for name, secret := range everywhereSecrets {
				if i := strings.Index(text, secret); i >= 0 {
					t.Errorf("%s holds the secret of %s: …%s…", where, name, text[max(0, i-300):min(len(text), i+100)])
				}
			}
		}
		for name := range everywhereSecrets {
			if !strings.Contains(string(cfg), "{env."+name+"}") {
				t.Errorf("the config lost the placeholder {env.%s}", name)
			}
		}
	})
}

// TestLiveEmptySecretIsNamed: with the variable of `header Authorization
// "Bearer {env.X}"` unset, every call sends "Bearer" and the upstream
// refuses it. The load logs a warning naming the variable and where it is
// used, and the refused call's log line, at warn, names it too; so does
// the line of a call whose upstream URL does not resolve, with the request
// it was for. No value is logged.
func TestLiveEmptySecretIsNamed(t *testing.T) {
	for _, name := range []string{"CADDY_MCP_SE_UNSET", "CADDY_MCP_SE_UNSET_BASE"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	const secret = "set-secret-51ab"
	t.Setenv("CADDY_MCP_SE_SET", secret)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "forbidden")
			return
		}
		io.WriteString(w, "ok")
	}))
	defer api.Close()
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
	}`, logFile), fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		header Authorization "Bearer {env.CADDY_MCP_SE_UNSET}"
		header X-Set {env.CADDY_MCP_SE_SET}
		tool whoami {
			description "Who am I."
			get /whoami
		}
	}
	mcp /base {
		upstream {env.CADDY_MCP_SE_UNSET_BASE}/v1
		tool item {
			description "An item."
			get /items/{id}
			arg id required
		}
	}
}`, api.URL))
	wantToolError(t, callTool(t, connect(t, "/mcp", eras[0], nil), "whoami", nil), "403")
	wantToolError(t, callTool(t, connect(t, "/base", eras[0], nil), "item", map[string]any{"id": "42"}), "does not resolve")

	raw, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Errorf("the log shows a value")
	}
	var warned, calls []string
	for _, e := range readLogs(t, logFile) {
		switch e["msg"] {
		case "a placeholder in the configuration resolves to empty text":
			warned = append(warned, fmt.Sprint(e["level"], " ", e["env"], " ", e["state"], " ", e["used_in"]))
		case "tool call":
			calls = append(calls, fmt.Sprint(e["level"], " ", e["tool"], " ", e["request"], " ", e["outcome"], " ", e["empty_env"]))
		}
	}
	// One line each: the handlers are provisioned once, in Caddy's order.
	sort.Strings(warned)
	wantWarned := []string{
		"warn CADDY_MCP_SE_UNSET unset [header Authorization]",
		"warn CADDY_MCP_SE_UNSET_BASE unset [upstream]",
	}
	if fmt.Sprint(warned) != fmt.Sprint(wantWarned) {
		t.Errorf("load warnings\n%q\nwant\n%q", warned, wantWarned)
	}
	wantCalls := []string{
		"warn whoami GET /whoami upstream_status [CADDY_MCP_SE_UNSET]",
		"warn item GET /items/42 upstream_error [CADDY_MCP_SE_UNSET_BASE]",
	}
	if fmt.Sprint(calls) != fmt.Sprint(wantCalls) {
		t.Errorf("call log lines\n%q\nwant\n%q", calls, wantCalls)
	}
}

// TestLiveFileSecretRotates shows what docs/mcp.md promises for secrets
// that rotate: a {file./path} placeholder in a header is read per call, so
// a new token written to the file is sent from the next call on, without a
// reload, and a trailing newline in the file is not sent.
func TestLiveFileSecretRotates(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	secret := filepath.Join(t.TempDir(), "api_token")
	if err := os.WriteFile(secret, []byte("token-one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		header Authorization "Bearer {file.%s}"
		tool headers {
			description "Echo the request headers."
			get /headers
		}
	}
}
`, bin, secret))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)
			for _, token := range []string{"token-one", "token-two"} {
				if err := os.WriteFile(secret, []byte(token+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				text := mcptest.ResultText(callTool(t, c, "headers", nil))
				if want := `"Bearer ` + token + `"`; !strings.Contains(text, want) {
					t.Errorf("upstream saw headers %s, want Authorization %s", text, want)
				}
			}
		})
	}
}

// An enum on an array arg without an item type lists the allowed items,
// and the check holds the items to it.
func TestArrayArgEnumListsTheAllowedItems(t *testing.T) {
	h, err := loadMCPCaddyfile(t, "mcp {\n tool t {\n  description d\n  post /x\n  arg tags array {\n   enum a b\n  }\n }\n}")
	if err != nil {
		t.Fatal(err)
	}
	ct := h.tools["t"]
	schema, _ := json.Marshal(ct.mcpTool.RawInputSchema)
	if !strings.Contains(string(schema), `"tags":{"type":"array","items":{"enum":["a","b"]}}`) {
		t.Errorf("schema %s", schema)
	}
	if _, err := ct.op.Check(map[string]any{"tags": []any{"a", "b"}}); err != nil {
		t.Errorf("valid items refused: %v", err)
	}
	if _, err := ct.op.Check(map[string]any{"tags": []any{"c"}}); err == nil {
		t.Error("an item outside the enum passed")
	}
}

// TestLiveBodyFields: body_field members reach the upstream in the JSON
// body beside the arguments, and the model sees no argument for them.
func TestLiveBodyFields(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", `http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream `+bin+`
		tool close_issue {
			description "Close an issue."
			patch /anything/issues/{n}
			arg n integer required
			arg comment string
			body_field state "closed"
			body_field labels `+"`"+`["done"]`+"`"+`
		}
	}
}`)
	c := connect(t, "/mcp", eras[0], nil)
	e := parseEcho(t, callTool(t, c, "close_issue", map[string]any{"n": 7, "comment": "fixed"}))
	got, _ := json.Marshal(e.JSON)
	if want := `{"comment":"fixed","labels":["done"],"state":"closed"}`; string(got) != want {
		t.Errorf("the upstream got %s, want %s", got, want)
	}
	list, err := c.ListTools(context.Background(), mcpListTools())
	if err != nil || len(list.Tools) != 1 {
		t.Fatalf("%v %+v", err, list)
	}
	if schema, _ := json.Marshal(list.Tools[0].InputSchema); strings.Contains(string(schema), "state") || strings.Contains(string(schema), "labels") {
		t.Errorf("the model sees a fixed member: %s", schema)
	}
}
