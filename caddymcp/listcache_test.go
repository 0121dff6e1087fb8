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

// TestLiveListCaching: a 2026-07-28 tools/list and server/discover carry
// ttlMs, the list_ttl (1m by default, 0 allowed), and cacheScope, private
// for a tools/list that depends on the caller's token and public
// otherwise, on mcp and codemode, whether the fast path or mcp-go
// answers; a 2025-11-25 tools/list has neither field.
func TestLiveListCaching(t *testing.T) {
	as := authtest.New(t)
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /plain {
		upstream %[1]s
		tool get {
			description "Get."
			get /get
		}
	}
	mcp /zero {
		upstream %[1]s
		list_ttl 0
		tool get {
			description "Get."
			get /get
		}
	}
	mcp /open {
		upstream %[1]s
		list_ttl 5s
		authorization {
			issuer %[2]s
		}
		tool get {
			description "Get."
			get /get
		}
	}
	mcp /scoped {
		upstream %[1]s
		list_ttl 5s
		authorization {
			issuer %[2]s
		}
		tool get {
			description "Get."
			get /get
			scopes orders:read
		}
	}
	codemode /code {
		backend plain http://127.0.0.1:{$LIVE_PORT}/plain
		list_ttl 1500ms
	}
	codemode /code-scoped {
		backend plain http://127.0.0.1:{$LIVE_PORT}/plain {
			tool_scopes get orders:read
		}
		authorization {
			issuer %[2]s
		}
	}
}
`, bin, as.Issuer))

	const (
		plainList = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`
		// A member the fast path does not know: mcp-go answers.
		oddList  = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `,"x":1}}`
		discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`
		legacy   = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	)
	for _, tt := range []struct {
		path      string
		ttl       int64
		listScope string
	}{
		{"/plain", 60000, "public"},
		{"/zero", 0, "public"},
		{"/open", 5000, "public"},
		{"/scoped", 5000, "private"},
		{"/code", 1500, "public"},
		{"/code-scoped", 60000, "private"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			resource := "http://" + liveAddr + tt.path
			token := "Bearer " + as.Token(t, resource, "orders:read", nil)
			post := func(t *testing.T, body, method, version string) map[string]json.RawMessage {
				t.Helper()
				header := map[string]string{"MCP-Protocol-Version": version, "Authorization": token}
				if method != "" {
					header["Mcp-Method"] = method
				}
				resp, answer := rawPost(t, tt.path, []byte(body), header)
				var got struct{ Result map[string]json.RawMessage }
				if err := json.Unmarshal(answer, &got); resp.StatusCode != http.StatusOK || err != nil || got.Result == nil {
					t.Fatalf("status %d: %s", resp.StatusCode, answer)
				}
				return got.Result
			}
			for _, c := range []struct {
				name, body, method, scope string
			}{
				{"tools/list", plainList, "tools/list", tt.listScope},
				{"tools/list through mcp-go", oddList, "tools/list", tt.listScope},
				{"server/discover", discover, "server/discover", "public"},
			} {
				res := post(t, c.body, c.method, "2026-07-28")
				if got := string(res["ttlMs"]) + " " + string(res["cacheScope"]); got != fmt.Sprintf(`%d "%s"`, tt.ttl, c.scope) {
					t.Errorf("%s: ttlMs and cacheScope %s, want %d %q", c.name, got, tt.ttl, c.scope)
				}
			}
			res := post(t, legacy, "", "2025-11-25")
			if _, ok := res["tools"]; !ok {
				t.Errorf("2025-11-25 tools/list without tools: %v", res)
			}
			for _, key := range []string{"ttlMs", "cacheScope"} {
				if v, ok := res[key]; ok {
					t.Errorf("2025-11-25 tools/list has %s %s", key, v)
				}
			}
		})
	}
}

// TestListTTLConfig: list_ttl takes 0 and whole milliseconds, and says
// what is wrong with anything else, in the Caddyfile and in JSON.
func TestListTTLConfig(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"0", ""},
		{"250ms", ""},
		{"2m", ""},
		{"-1s", "list_ttl -1s: want 0 or more whole milliseconds, such as 30s"},
		{"1500us", "list_ttl 1.5ms: want 0 or more whole milliseconds, such as 30s"},
		{"soon", `list_ttl "soon"`},
	} {
		for _, directive := range []string{"mcp", "codemode"} {
			input := directive + " {\n\tlist_ttl " + tt.value + "\n}"
			var err error
			if directive == "mcp" {
				_, err = unmarshalMCP(input)
			} else {
				_, err = unmarshalCodeMode(input)
			}
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("%s list_ttl %s: error %v, want %q", directive, tt.value, err, tt.want)
			}
		}
	}
	for _, tt := range []struct{ value, want string }{
		{"-1000000000", "list_ttl -1s: want 0 or more whole milliseconds"},
		{"1500", "list_ttl 1.5µs: want 0 or more whole milliseconds"},
	} {
		_, err := loadMCP(t, `{"upstream":"http://127.0.0.1:9","list_ttl":`+tt.value+`,"tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("mcp list_ttl %s: error %v, want %q", tt.value, err, tt.want)
		}
		_, _, err = loadCodeMode(t, `{"list_ttl":`+tt.value+`,"backends":[{"name":"b","url":"http://127.0.0.1:9/mcp"}]}`)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("codemode list_ttl %s: error %v, want %q", tt.value, err, tt.want)
		}
	}
}
