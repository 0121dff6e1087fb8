package caddymcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// A backend tool whose scopes the caller lacks is neither declared to the
// code nor callable by it, on codemode endpoints behind authorization;
// callers holding them see and call it. A backend whose tool list is not
// known takes any name, so the scopes are checked again on each call.
func TestCodeModeBackendScopes(t *testing.T) {
	as := authtest.New(t)
	api, upstreamHits := countingUpstream(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /shop {
		upstream %[1]s
		tool get_order {
			description "Read an order."
			get /ok
		}
		tool create_refund {
			description "Refund an order."
			post /ok
		}
	}
	codemode /code {
		backend shop http://127.0.0.1:{$LIVE_PORT}/shop {
			tool_scopes create_* refunds:write
		}
		backend billing http://%[3]s/mcp {
			scopes billing
		}
		authorization {
			issuer %[2]s
			require_scopes code
		}
	}
}
`, api.URL, as.Issuer, mcptest.ClosedAddr(t)))
	resource := "http://" + liveAddr + "/code"
	execute := func(t *testing.T, token, code string) (bool, string) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"code": code})
		resp, body := rawPost(t, "/code", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute","arguments":`+string(args)+`}}`),
			map[string]string{"Authorization": "Bearer " + token})
		var answer struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct{ Text string }
			}
		}
		if err := json.Unmarshal(body, &answer); resp.StatusCode != http.StatusOK || err != nil || len(answer.Result.Content) == 0 {
			t.Fatalf("execute: status %d: %s", resp.StatusCode, body)
		}
		return answer.Result.IsError, answer.Result.Content[0].Text
	}
	for _, tc := range []struct {
		name     string
		scope    string
		declared bool // create_refund in the declarations
		refunds  bool // the code may call it
	}{
		{"without the tool's scope", "code", false, false},
		{"with it", "code refunds:write", true, true},
		// The key of the views kept per caller must not mix them up.
		{"without it again", "code billing", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token := as.Token(t, resource, tc.scope, nil)
			resp, body := rawPost(t, "/code", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{"Authorization": "Bearer " + token})
			var list struct {
				Result struct {
					Tools []struct{ Description string } `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal(body, &list); resp.StatusCode != http.StatusOK || err != nil || len(list.Result.Tools) != 1 {
				t.Fatalf("tools/list: status %d: %s", resp.StatusCode, body)
			}
			desc := list.Result.Tools[0].Description
			if !strings.Contains(desc, "get_order(") || strings.Contains(desc, "create_refund(") != tc.declared {
				t.Errorf("declarations (create_refund declared: want %v):\n%s", tc.declared, desc)
			}

			if _, text := execute(t, token, `return "create_refund" in shop`); strings.Contains(text, "true") != tc.refunds {
				t.Errorf(`"create_refund" in shop: %s`, text)
			}
			before := upstreamHits.Load()
			isErr, text := execute(t, token, `return await shop.get_order({})`)
			if isErr || upstreamHits.Load() != before+1 {
				t.Fatalf("get_order: error %v, upstream requests %d: %s", isErr, upstreamHits.Load()-before, text)
			}
			before = upstreamHits.Load()
			isErr, text = execute(t, token, `return await shop.create_refund({})`)
			if isErr == tc.refunds || upstreamHits.Load() != before+map[bool]int64{true: 1}[tc.refunds] {
				t.Errorf("create_refund: error %v, upstream requests %d: %s", isErr, upstreamHits.Load()-before, text)
			}
			// The code that calls a tool it may not is told the scope.
			if want := "shop.create_refund is not callable here: it needs the scope refunds:write, which the caller's token does not carry"; !tc.refunds && !strings.Contains(text, want) {
				t.Errorf("create_refund without its scope says %q, want %q", text, want)
			}

			// billing is down: the sandbox takes any tool name for it.
			_, text = execute(t, token, `try { await billing.charge({}) } catch (e) { return e.message }`)
			refused := strings.Contains(text, "insufficient scope: billing.charge needs billing")
			if refused == strings.Contains(tc.scope, "billing") {
				t.Errorf("billing.charge with scopes %q: %s", tc.scope, text)
			}
		})
	}
}

// The scopes of a backend's config: checked at load (JSON configs do not
// pass the Caddyfile's checks), and a tool needs those of the backend and
// of every glob it matches, once each.
func TestBackendScopesConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		backend       CodeModeBackend
		authorization bool
		err           string
	}{
		{"without authorization", CodeModeBackend{ToolScopes: []BackendToolScopes{{Tool: "*", Scopes: []string{"a"}}}}, false, "scopes need an authorization block"},
		{"bad glob", CodeModeBackend{ToolScopes: []BackendToolScopes{{Tool: "[", Scopes: []string{"a"}}}}, true, `tool_scopes "[": not a glob`},
		{"empty glob", CodeModeBackend{ToolScopes: []BackendToolScopes{{Scopes: []string{"a"}}}}, true, `tool_scopes "": not a glob`},
		{"no scopes for a glob", CodeModeBackend{ToolScopes: []BackendToolScopes{{Tool: "x"}}}, true, "tool_scopes x: no scopes"},
		{"not a scope token", CodeModeBackend{Scopes: []string{`a"b`}}, true, "scopes: "},
		{"none", CodeModeBackend{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newBackendScopes(&tc.backend, tc.authorization)
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}

	s, err := newBackendScopes(&CodeModeBackend{Scopes: []string{"shop"}, ToolScopes: []BackendToolScopes{
		{Tool: "create_*", Scopes: []string{"refunds:write", "shop"}},
		{Tool: "*_refund", Scopes: []string{"refunds:write", "audit"}},
	}}, true)
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{"get_order": "shop", "create_order": "shop refunds:write", "create_refund": "shop refunds:write audit",
		"create_a/b": "shop refunds:write", "orders/create_refund": "shop refunds:write audit"} {
		if got := strings.Join(s.needs(tool), " "); got != want {
			t.Errorf("needs(%s) = %q, want %q", tool, got, want)
		}
	}
	if got := strings.Join(s.needs("get_order"), " "); got != "shop" {
		t.Errorf("needs changed the backend's own scopes: %q", got)
	}
}

// A codemode backend's header lines may pass the caller's identity to the
// backend, from a worker process: the placeholders of the MCP request reach
// the binding calls its code makes.
func TestCodeModeBackendIdentity(t *testing.T) {
	as := authtest.New(t)
	bin := mcptest.StartHTTPBin(t)
	for _, isolation := range []string{"process"} {
		t.Run(isolation, func(t *testing.T) {
			loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /shop {
		upstream %s
		tool whoami {
			description "Who am I."
			get /anything
			header X-Caller {http.request.header.X-User}
		}
	}
	codemode /code {
		isolation %s
		backend shop http://127.0.0.1:{$LIVE_PORT}/shop {
			header X-User {http.auth.user.id}
		}
		authorization {
			issuer %s
		}
	}
}
`, bin, isolation, as.Issuer))
			token := as.Token(t, "http://"+liveAddr+"/code", "", map[string]any{"sub": "ann"})
			args, _ := json.Marshal(map[string]string{"code": `const r = await shop.whoami({}); return r.headers["X-Caller"]`})
			resp, body := rawPost(t, "/code", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute","arguments":`+string(args)+`}}`),
				map[string]string{"Authorization": "Bearer " + token})
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":["ann"]`) || strings.Contains(string(body), token) {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
		})
	}
}
