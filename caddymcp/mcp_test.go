package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"golang.org/x/text/unicode/norm"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

func TestProvisionReportsConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		// Exactly one of json and caddyfile is set.
		json      string
		caddyfile string
		wantErr   []string
	}{
		{
			name:      "missing description",
			caddyfile: "mcp {\n tool list_orders {\n  get /orders\n }\n}",
			wantErr:   []string{`tool "list_orders"`, "a description is required"},
		},
		{
			name:    "blank description",
			json:    `{"tools":[{"name":"list_orders","description":"  ","method":"GET","path":"/orders"}]}`,
			wantErr: []string{`tool "list_orders"`, "a description is required"},
		},
		{
			name:      "missing method and path",
			caddyfile: "mcp {\n tool list_orders {\n  description \"List orders.\"\n }\n}",
			wantErr:   []string{`tool "list_orders"`, "a method and path are required"},
		},
		{
			name:    "bad tool name",
			json:    `{"tools":[{"name":"list orders","description":"d","method":"GET","path":"/orders"}]}`,
			wantErr: []string{`tool "list orders"`, `tool name "list orders"`},
		},
		{
			name:      "path placeholder without an argument",
			caddyfile: "mcp {\n tool get_order {\n  description \"Get an order.\"\n  get /orders/{id}\n }\n}",
			wantErr:   []string{`tool "get_order"`, `{id} in "/orders/{id}" names no argument`},
		},
		{
			name:      "path placeholder naming another argument",
			caddyfile: "mcp {\n tool get_order {\n  description \"Get an order.\"\n  get /orders/{order_id}\n  arg id required\n }\n}",
			wantErr:   []string{`tool "get_order"`, `{order_id} in "/orders/{order_id}" names no argument`},
		},
		{
			name:      "argument placed in the path that the path lacks",
			caddyfile: "mcp {\n tool get_order {\n  description \"Get an order.\"\n  get /orders\n  arg id {\n   in path\n  }\n }\n}",
			wantErr:   []string{`tool "get_order"`, `argument "id" is placed in the path, but the path "/orders" has no {id}`},
		},
		{
			name:      "invalid JSON Schema in a property",
			caddyfile: "mcp {\n tool search {\n  description Search.\n  get /search\n  input_schema `{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"strin\"}}}`\n }\n}",
			wantErr:   []string{`tool "search"`, "input_schema", "not a valid JSON Schema", "/properties/q/type"},
		},
		{
			name:    "invalid JSON Schema at the root",
			json:    `{"tools":[{"name":"search","description":"Search.","method":"GET","path":"/search","input_schema":{"type":"strin"}}]}`,
			wantErr: []string{`tool "search"`, "input_schema", `the root must be an object schema`},
		},
		{
			name:    "input_schema whose root is not an object",
			json:    `{"tools":[{"name":"search","description":"Search.","method":"GET","path":"/search","input_schema":{"type":"array"}}]}`,
			wantErr: []string{`tool "search"`, "input_schema: the root must be an object schema"},
		},
		{
			name:      "invalid output_schema",
			caddyfile: "mcp {\n tool get_order {\n  description \"Get an order.\"\n  get /orders\n  output_schema `{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"strin\"}}}`\n }\n}",
			wantErr:   []string{`tool "get_order"`, "output_schema", "not a valid JSON Schema"},
		},
		{
			name:      "output_schema whose root is not an object",
			caddyfile: "mcp {\n tool list_orders {\n  description \"List orders.\"\n  get /orders\n  output_schema `{\"type\":\"array\",\"items\":{\"type\":\"object\"}}`\n }\n}",
			wantErr:   []string{`tool "list_orders"`, "output_schema: the root must be an object schema"},
		},
		{
			name:      "duplicate tool name",
			caddyfile: "mcp {\n tool list_orders {\n  description A\n  get /a\n }\n tool list_orders {\n  description B\n  get /b\n }\n}",
			wantErr:   []string{`tool "list_orders" is defined twice`},
		},
		{
			name:    "unknown type in JSON config",
			json:    `{"tools":[{"name":"page","description":"Page.","method":"GET","path":"/items","args":[{"name":"n","type":"int"}]}]}`,
			wantErr: []string{`tool "page"`, `arg "n": unknown type "int"`},
		},
		{
			name:    "unknown field in JSON config",
			json:    `{"tools":[{"name":"page","descripton":"Page.","method":"GET","path":"/items"}]}`,
			wantErr: []string{"descripton"},
		},
		{
			name:    "arg declared twice in JSON config",
			json:    `{"tools":[{"name":"page","description":"Page.","method":"GET","path":"/items","args":[{"name":"n"},{"name":"n","type":"integer"}]}]}`,
			wantErr: []string{`tool "page"`, `arg "n" is declared twice`},
		},
		{
			name: "typed arg lines mixed with input_schema",
			caddyfile: "mcp {\n tool search {\n  description Search.\n  get /search\n" +
				"  input_schema `{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}`\n  arg q string required\n }\n}",
			wantErr: []string{`tool "search"`, `arg "q": typed arg lines and input_schema do not mix`},
		},
		{
			name: "described arg line mixed with input_schema",
			caddyfile: "mcp {\n tool search {\n  description Search.\n  get /search\n" +
				"  input_schema `{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}`\n  arg q \"The query\"\n }\n}",
			wantErr: []string{`tool "search"`, `arg "q": typed arg lines and input_schema do not mix`},
		},
		{
			name: "placement-only arg naming a property the schema lacks",
			caddyfile: "mcp {\n tool search {\n  description Search.\n  post /search\n" +
				"  input_schema `{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}`\n  arg token {\n   in header\n  }\n }\n}",
			wantErr: []string{`tool "search"`, `arg "token" places a property that input_schema does not have`},
		},
		{
			name:      "default outside the enum",
			caddyfile: "mcp {\n tool list_orders {\n  description \"List orders.\"\n  get /orders\n  arg status {\n   default pending\n   enum open shipped\n  }\n }\n}",
			wantErr:   []string{`tool "list_orders"`, `arg "status"`, `default "pending" does not fit the type and enum`},
		},
		{
			name:      "object default that is not an object",
			caddyfile: "mcp {\n tool find {\n  description Find.\n  post /find\n  arg filter object {\n   default 5\n  }\n }\n}",
			wantErr:   []string{`tool "find"`, `arg "filter"`, "default 5 does not fit the type and enum"},
		},
		{
			name:    "default of the wrong type in JSON config",
			json:    `{"tools":[{"name":"page","description":"Page.","method":"GET","path":"/items","args":[{"name":"n","type":"integer","default":"ten"}]}]}`,
			wantErr: []string{`tool "page"`, `arg "n"`, `default "ten" does not fit the type and enum`},
		},
		{
			name:    "array default outside the item enum in JSON config",
			json:    `{"tools":[{"name":"tag","description":"Tag.","method":"GET","path":"/items","args":[{"name":"tags","type":"string[]","enum":["a","b"],"default":["a","c"]}]}]}`,
			wantErr: []string{`tool "tag"`, `arg "tags"`, "does not fit the type and enum"},
		},
		{
			name:      "array argument in the path",
			caddyfile: "mcp {\n tool get_items {\n  description \"Get items.\"\n  get /items/{ids}\n  arg ids integer[] required\n }\n}",
			wantErr:   []string{`tool "get_items"`, `argument "ids": array arguments cannot go in the path`},
		},
		{
			name:      "array argument in a header",
			caddyfile: "mcp {\n tool get_items {\n  description \"Get items.\"\n  get /items\n  arg tags string[] {\n   in header\n  }\n }\n}",
			wantErr:   []string{`tool "get_items"`, `argument "tags": array arguments cannot go in the header`},
		},
		{
			name:      "object argument in a header",
			caddyfile: "mcp {\n tool get_items {\n  description \"Get items.\"\n  get /items\n  arg filter object {\n   in header\n  }\n }\n}",
			wantErr:   []string{`tool "get_items"`, `argument "filter": object arguments cannot go in the header`},
		},
		{
			name: "array property of input_schema placed in a header",
			caddyfile: "mcp {\n tool get_items {\n  description \"Get items.\"\n  get /items\n" +
				"  input_schema `{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\"}}}`\n  arg tags {\n   in header\n  }\n }\n}",
			wantErr: []string{`tool "get_items"`, `argument "tags": array arguments cannot go in the header`},
		},
		{
			name:      "path without a leading slash",
			caddyfile: "mcp {\n tool list_orders {\n  description \"List orders.\"\n  get orders\n }\n}",
			wantErr:   []string{`tool "list_orders"`, `path "orders" must start with /`},
		},
		{
			name:      "tool header with an invalid field name",
			caddyfile: "mcp {\n tool list_orders {\n  description \"List orders.\"\n  get /orders\n  header \"X Key\" v\n }\n}",
			wantErr:   []string{`tool "list_orders"`, `invalid header field name "X Key"`},
		},
		{
			name:      "body arg naming no argument",
			caddyfile: "mcp {\n tool put_items {\n  description \"Put items.\"\n  put /items\n  body arg items\n }\n}",
			wantErr:   []string{`tool "put_items"`, `body arg "items" names no argument`},
		},
		{
			name:      "argument named like a query line",
			caddyfile: "mcp {\n tool list {\n  description d\n  get /items\n  query tenant acme\n  arg tenant\n }\n}",
			wantErr:   []string{`tool "list"`, `argument "tenant": the query parameter tenant is fixed by a query line`},
		},
		{
			name: "input_schema property of a POST named like a query line",
			json: `{"tools":[{"name":"create","description":"d","method":"POST","path":"/items","query":{"Tenant":["acme"]},` +
				`"input_schema":{"type":"object","properties":{"tenant":{"type":"string"}}}}]}`,
			wantErr: []string{`tool "create"`, `argument "tenant": the query parameter Tenant is fixed by a query line`},
		},
		{
			name:    "argument named like a query parameter of the upstream URL",
			json:    `{"upstream":"https://api.example.com/v2?tenant=acme","tools":[{"name":"list","description":"d","method":"GET","path":"/items","args":[{"name":"tenant"}]}]}`,
			wantErr: []string{`tool "list"`, `argument "tenant": the query parameter tenant is fixed by the upstream URL`},
		},
		{
			name:      "header argument on a handler header",
			caddyfile: "mcp {\n header X-Tenant acme\n tool list {\n  description d\n  get /items\n  arg tenant {\n   in header\n   header_name x-tenant\n  }\n }\n}",
			wantErr:   []string{`tool "list"`, `argument "tenant": header X-Tenant is already set by a fixed header`},
		},
		{
			name:      "header argument on a tool header",
			caddyfile: "mcp {\n tool list {\n  description d\n  get /items\n  header X-Tenant acme\n  arg tenant {\n   in header\n   header_name X-Tenant\n  }\n }\n}",
			wantErr:   []string{`tool "list"`, `argument "tenant": header X-Tenant is already set by a fixed header`},
		},
		{
			name:    "no tools",
			json:    `{"upstream":"https://api.example.com"}`,
			wantErr: []string{"mcp needs at least one tool"},
		},
		{
			name:    "only a null tool",
			json:    `{"tools":[null]}`,
			wantErr: []string{"mcp needs at least one tool"},
		},
		{
			name:    "upstream without a scheme",
			json:    `{"upstream":"127.0.0.1:8090","tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`,
			wantErr: []string{`upstream "127.0.0.1:8090": want an http:// or https:// base URL`},
		},
		{
			name:    "upstream host without a scheme",
			json:    `{"upstream":"localhost:8090","tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`,
			wantErr: []string{`upstream "localhost:8090": want an http:// or https:// base URL`},
		},
		{
			name:    "http upstream the URL parser refuses",
			json:    `{"upstream":"http://api example.com","tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`,
			wantErr: []string{`upstream "http://api example.com": invalid character " " in host name`},
		},
		{
			name:    "max_request_size negative",
			json:    `{"max_request_size":-1,"tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`,
			wantErr: []string{"max_request_size must not be negative"},
		},
		{
			name:    "upstream that is not an http URL",
			json:    `{"upstream":"ftp://files.example.com","tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`,
			wantErr: []string{`upstream "ftp://files.example.com": want an http:// or https:// base URL`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.caddyfile != "" {
				_, err = loadMCPCaddyfile(t, tc.caddyfile)
			} else {
				_, err = loadMCP(t, tc.json)
			}
			if err == nil {
				t.Fatalf("loaded without error, want one containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// TestProvisionWarnsOfEmptyPlaceholders: each {env.*} and {file.*} of the
// upstream URL, headers, query lines and paths that resolves to nothing at
// load gets one warn line naming it, why, and every place it is used, and
// no line shows a value.
func TestProvisionWarnsOfEmptyPlaceholders(t *testing.T) {
	t.Setenv("CADDY_MCP_TEST_UNSET", "")
	os.Unsetenv("CADDY_MCP_TEST_UNSET")
	t.Setenv("CADDY_MCP_TEST_EMPTY", "")
	t.Setenv("CADDY_MCP_TEST_SET", "s3cret-value")
	dir := t.TempDir()
	emptyFile, missingFile, secretFile := filepath.Join(dir, "empty"), filepath.Join(dir, "missing"), filepath.Join(dir, "secret")
	// Caddy drops one trailing newline: a file of just that is empty text.
	if err := os.WriteFile(emptyFile, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, []byte("file-s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config, _ := json.Marshal(map[string]any{
		"upstream": "https://api.example.com/{env.CADDY_MCP_TEST_UNSET}",
		"headers": map[string][]string{
			"authorization": {"Bearer {env.CADDY_MCP_TEST_UNSET}"},
			"X-Set":         {"{env.CADDY_MCP_TEST_SET} {file." + secretFile + "}"},
		},
		"tools": []map[string]any{
			{"name": "t1", "description": "d", "method": "GET", "path": "/t/{env.CADDY_MCP_TEST_EMPTY}/x",
				"query":   map[string][]string{"key": {"{env.CADDY_MCP_TEST_EMPTY}"}},
				"headers": map[string][]string{"X-File": {"{file." + emptyFile + "}"}}},
			{"name": "t2", "description": "d", "method": "GET", "path": "/y",
				"headers": map[string][]string{"X-Missing": {"{file." + missingFile + "}"}, "X-Set": {"{env.CADDY_MCP_TEST_SET}"}}},
		},
	})
	logged := captureStderr(t, func() {
		if _, err := loadMCP(t, string(config)); err != nil {
			t.Fatal(err)
		}
	})
	for _, leak := range []string{"s3cret-value", "file-s3cret"} {
		if strings.Contains(logged, leak) {
			t.Errorf("the log shows a value: %s", logged)
		}
	}
	type warning struct {
		Env, File, State string
		UsedIn           []string `json:"used_in"`
	}
	var got []warning
	for _, line := range strings.Split(logged, "\n") {
		_, fields, ok := strings.Cut(line, "a placeholder in the configuration resolves to empty text\t")
		if !ok || !strings.Contains(line, "WARN") {
			continue
		}
		var w warning
		if err := json.Unmarshal([]byte(fields), &w); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got = append(got, w)
	}
	want := []warning{
		{Env: "CADDY_MCP_TEST_UNSET", State: "unset", UsedIn: []string{"upstream", "header Authorization"}},
		{File: emptyFile, State: "empty", UsedIn: []string{"tool t1: header X-File"}},
		{Env: "CADDY_MCP_TEST_EMPTY", State: "empty", UsedIn: []string{"tool t1: query key", "tool t1: path"}},
		{File: missingFile, State: "unreadable", UsedIn: []string{"tool t2: header X-Missing"}},
	}
	if asJSON(got) != asJSON(want) {
		t.Errorf("warnings\n%s\nwant\n%s\nlog:\n%s", asJSON(got), asJSON(want), logged)
	}
}

// captureStderr returns what fn wrote to os.Stderr, where the development
// logger a Caddy context without a config gives writes.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stderr := os.Stderr
	os.Stderr = f
	func() {
		defer func() { os.Stderr = stderr }()
		fn()
	}()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A config that uses every tool subdirective loads, and what clients see
// (the tool list) is built from it.
func TestProvisionBuildsTools(t *testing.T) {
	h, err := loadMCPCaddyfile(t, `mcp {
		upstream https://api.example.com/v2
		header Authorization "Bearer {env.API_KEY}"
		timeout 10s
		tool list_orders {
			title "List orders"
			description "List orders, newest first."
			get /orders
			arg status string "Filter by status" {
				default open
				enum open shipped
			}
			arg limit integer required
			annotations read_only destructive=false
		}
		tool search {
			description Search.
			post /search
			input_schema `+"`"+`{"type":"object","properties":{"q":{"type":"string"},"token":{"type":"string"}},"required":["q"]}`+"`"+`
			output_schema `+"`"+`{"type":"object","properties":{"hits":{"type":"array"}}}`+"`"+`
			arg token {
				in header
				header_name X-Token
			}
			timeout 3s
		}
	}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(h.tools) != 2 {
		t.Fatalf("got %d compiled tools, want 2", len(h.tools))
	}

	list := h.tools["list_orders"]
	wantInput := `{"type":"object","properties":{` +
		`"status":{"type":"string","description":"Filter by status","enum":["open","shipped"],"default":"open"},` +
		`"limit":{"type":"integer"}},"required":["limit"],"additionalProperties":false}`
	if got := string(list.mcpTool.RawInputSchema); got != wantInput {
		t.Errorf("list_orders input schema\n%s\nwant\n%s", got, wantInput)
	}
	if list.mcpTool.Title != "List orders" || list.mcpTool.Description != "List orders, newest first." {
		t.Errorf("list_orders title %q description %q", list.mcpTool.Title, list.mcpTool.Description)
	}
	ann := list.mcpTool.Annotations
	if ann.ReadOnlyHint == nil || !*ann.ReadOnlyHint || ann.DestructiveHint == nil || *ann.DestructiveHint ||
		ann.IdempotentHint != nil || ann.OpenWorldHint != nil {
		t.Errorf("list_orders annotations %s", asJSON(ann))
	}
	if list.timeout != h.Timeout || h.Timeout != caddy.Duration(10e9) {
		t.Errorf("list_orders timeout %v, handler %v, want both 10s", list.timeout, h.Timeout)
	}

	search := h.tools["search"]
	if got := string(search.mcpTool.RawOutputSchema); got != `{"type":"object","properties":{"hits":{"type":"array"}}}` {
		t.Errorf("search output schema %s", got)
	}
	if search.timeout != caddy.Duration(3e9) {
		t.Errorf("search timeout %v, want 3s", search.timeout)
	}
	// The placement-only arg line put q's sibling token in a header.
	req, _, err := search.op.Request(context.Background(), h.base,
		map[string]any{"q": "caddy", "token": "t0k"}, caddy.NewReplacer())
	if err != nil {
		t.Fatalf("search request: %v", err)
	}
	if got := req.Header.Get("X-Token"); got != "t0k" {
		t.Errorf("X-Token header %q, want t0k", got)
	}
	if got := req.URL.String(); got != "https://api.example.com/v2/search" {
		t.Errorf("search URL %s", got)
	}
}

// FuzzMCPHandler posts fuzzed JSON-RPC bodies, with fuzzed MCP and browser
// headers, to a provisioned mcp handler in upstream mode and in route
// mode. Invariants: no panic, no hang; the status is one an MCP endpoint
// gives; a 200 is valid JSON (or an event stream of JSON); the configured
// secret never reaches the client; and the upstream never sees a value the
// client sent in a header or the query (they carry a random marker),
// except through the one header the config maps from the client.
func FuzzMCPHandler(f *testing.F) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"}}`
	call := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	modernCall := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + `}}`
	}
	type seed struct {
		body                                      string
		method, flags                             byte
		version, mcpMethod, mcpName, origin, host string
		extra                                     string
	}
	legacy := "2025-11-25"
	seeds := []seed{
		{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":3,"method":"ping"}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + meta + `}}`, version: "2026-07-28", mcpMethod: "server/discover"},
		{body: call("get_order", `{"id":42,"expand":["items"],"request_id":"r-1"}`), version: legacy},
		{body: call("get_order", `{"id":"42"}`), version: legacy},
		{body: call("get_order", `{"id":9007199254740993,"limit":1e400}`), version: legacy},
		{body: call("read_file", `{"path":"docs/../../etc/passwd","query":"{env.FUZZ_MCP_SECRET}"}`), version: legacy},
		{body: call("read_file", `{"path":"..","flag":true}`), version: legacy},
		{body: call("read_file", `{"path":"{env.FUZZ_MCP_SECRET}","query":"a&api_version=evil#x"}`), version: legacy},
		{body: call("create_issue", `{"owner":"o","repo":"r","title":"t","labels":["a"],"meta":{"k":[1,{"x":null}]},"request_id":"a\r\nX-Injected: 1"}`), version: legacy},
		{body: call("create_issue", `{"owner":"o","repo":"r","title":"t","request_id":"{env.FUZZ_MCP_SECRET}"}`), version: legacy},
		{body: call("free_form", `{"x":{"y":[1,2]},"Authorization":"mine","api_version":"v"}`), version: legacy},
		{body: call("free_form", `{"tenant":"globex","x":1}`), version: legacy},
		{body: call("free_form", `{"Tenant":null}`), version: legacy},
		{body: call("create_issue", `{"owner":"o","repo":"r","title":"t","tenant":"globex"}`), version: legacy},
		{body: call("read_file", `{"path":"..\u0000"}`), version: legacy},
		{body: call("read_file", `{"path":"..\t"}`), version: legacy},
		{body: call("read_file", `{"path":"\uff0e\uff0e"}`), version: legacy},
		{body: call("read_file", `{"path":"a/\uff0e\uff0e/b\u0085"}`), version: legacy},
		{body: call("submit_form", `{"a":"1 2","b":["x","y"],"n":-0.0}`), version: legacy},
		{body: call("put_tags", `{"id":1,"tags":["a","{env.FUZZ_MCP_SECRET}"]}`), version: legacy},
		// 30,000 violations, near max_request_size: 20 listed, the rest counted.
		{body: call("put_tags", `{"id":1,"tags":[1`+strings.Repeat(",1", 29_999)+`]}`), version: legacy},
		{body: call("structured", `{}`), version: legacy},
		{body: call("bad_structured", `null`), version: legacy},
		{body: call("fail", `{}`), version: legacy},
		{body: call("slow", `{}`), version: legacy},
		{body: call("big", `{}`), version: legacy},
		{body: call("image", `{}`), version: legacy},
		{body: call("redirect", `{}`), version: legacy},
		{body: call("head", `{"id":1.5}`), version: legacy},
		{body: call("secret_path", `{"id":"x","obj":{"a":1},"objs":[{}]}`), version: legacy},
		{body: call("nope", `{}`), version: legacy},
		{body: call("get_order", `"not an object"`), version: legacy},
		{body: modernCall("get_order", `{"id":1}`), version: "2026-07-28", mcpMethod: "tools/call", mcpName: "get_order"},
		{body: modernCall("get_order", `{"id":1}`), version: "2026-07-28", mcpMethod: "tools/call", mcpName: "other"},
		{body: modernCall("get_order", `{"id":1}`), mcpMethod: "tools/call", mcpName: "get_order"},
		{body: modernCall("fail", `{}`), version: "2026-07-28", mcpMethod: "tools/call", mcpName: "fail"},
		{body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"_meta":{"progressToken":"p"}}}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{}}`, version: "2026-07-28"},
		{body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{body: `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}}}`},
		{body: `{"jsonrpc":"1.0","id":{},"method":"tools/call"}`},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1},"arguments":[]}}`},
		{body: `{"jsonrpc":"2.0","result":{},"id":1}`},
		{body: `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`, version: legacy},
		{body: `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`, version: legacy},
		{body: `{`},
		{body: ``},
		{body: "\xff\xfe\x00"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, version: "1999-01-01"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, version: "\r\n"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, flags: 1 | 8},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, flags: 2 | 16},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, flags: 3 | 12},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, origin: "https://app.example.com"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, origin: "https://evil.example"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, origin: "http://evil.com", host: "evil.com", flags: 64},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, host: "api.example.com", flags: 64},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, host: "localhost:8080", origin: "http://localhost:8080", flags: 64},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, origin: "null"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, origin: "https://app.example.com", method: 5, flags: 32},
		{body: ``, method: 3},
		{body: ``, method: 4, flags: 16},
		{body: ``, method: 6},
		{body: call("get_order", `{"id":1}`), version: legacy, flags: 128, extra: "{env.FUZZ_MCP_SECRET}"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 70<<10) + `"}}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.method, s.flags, s.version, s.mcpMethod, s.mcpName, s.origin, s.host, s.extra)
		if strings.Contains(s.body, `"tools/call"`) && s.flags&128 == 0 {
			// The same call in route mode.
			f.Add([]byte(s.body), s.method, s.flags|128, s.version, s.mcpMethod, s.mcpName, s.origin, s.host, s.extra)
		}
	}

	secret := "mcp-secret-" + fuzzRandomHex(f)
	marker := "client-" + fuzzRandomHex(f)
	os.Setenv("FUZZ_MCP_SECRET", secret)
	os.Setenv("FUZZ_MCP_TENANT", "acme")

	rec := &fuzzRecorded{}
	api := httptest.NewServer(fuzzUpstream(rec))
	f.Cleanup(api.Close)
	endpoint := Endpoint{MaxRequestSize: 64 << 10, AllowOrigins: []string{"https://app.example.com"}, AllowHosts: []string{"api.example.com"}}
	headers := http.Header{
		"Authorization": {"Bearer {env.FUZZ_MCP_SECRET}"},
		// The one way a client value may reach the upstream: the config
		// says so.
		"X-User": {"{http.request.header.X-User}"},
	}
	load := func(h *Handler) *Handler {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		f.Cleanup(cancel)
		if err := h.Provision(ctx); err != nil {
			f.Fatal(err)
		}
		h.logger = zap.NewNop()
		fuzzQuiet(&h.Endpoint)
		return h
	}
	direct := load(&Handler{Upstream: api.URL + "/v2", Headers: headers, Timeout: caddy.Duration(2 * time.Second),
		MaxResponseSize: 64 << 10, Endpoint: endpoint, Tools: fuzzMCPTools()})
	route := load(&Handler{Headers: headers, Timeout: caddy.Duration(2 * time.Second),
		MaxResponseSize: 64 << 10, Endpoint: endpoint, Tools: fuzzMCPTools()})
	// In route mode the handlers that follow mcp answer the tool requests:
	// the same upstream, reached through a handler chain.
	upstreamHandler := fuzzUpstream(rec)
	var nilBody atomic.Bool
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if r.Body == nil {
			// A server request always has a Body; handlers such as
			// request_body read it without a check.
			nilBody.Store(true)
			r.Body = http.NoBody
		}
		r.URL.Path = "/v2" + r.URL.Path
		upstreamHandler.ServeHTTP(w, r)
		return nil
	})

	f.Fuzz(func(t *testing.T, body []byte, method, flags byte, version, mcpMethod, mcpName, origin, host, extra string) {
		h := direct
		var handle func(http.ResponseWriter, *http.Request) error
		if flags&128 != 0 {
			h = route
		}
		handle = func(w http.ResponseWriter, r *http.Request) error { return h.ServeHTTP(w, r, next) }
		header := fuzzHeaders(flags, version, mcpMethod, mcpName, origin)
		// Client values the upstream must never see carry the marker.
		header.Set("Authorization", "Bearer "+marker)
		header.Set("Cookie", "session="+marker)
		header.Set("X-Forwarded-For", marker)
		header.Set("X-Fuzz", extra+marker)
		header.Set("X-User", extra)
		rec.take()
		nilBody.Store(false)
		status, w, _ := fuzzServe(t, handle, fuzzRequest{
			method:   fuzzMethods[int(method)%len(fuzzMethods)],
			body:     body,
			header:   header,
			host:     host,
			loopback: flags&64 != 0,
			query:    "?token=" + marker,
		})
		fuzzCheckAnswer(t, status, w)
		for k, vs := range w.Header() {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					t.Fatalf("answer header %s shows the secret", k)
				}
			}
		}
		if bytes.Contains(w.Body.Bytes(), []byte(secret)) {
			t.Fatalf("the answer shows the secret: %.1000s", w.Body.Bytes())
		}
		for _, line := range rec.take() {
			if strings.Contains(line, marker) {
				t.Fatalf("the upstream saw a client value: %.300q", line)
			}
			// What a query line fixes, no argument adds to, in the query or
			// in the body (servers merge them); path values hold no control
			// character and make no dot segment, even once normalized.
			if key, _, ok := strings.Cut(strings.TrimPrefix(line, "query "), "="); strings.HasPrefix(line, "query ") && ok &&
				strings.EqualFold(key, "tenant") && line != "query tenant=acme" {
				t.Fatalf("an argument reached the fixed query parameter tenant: %.300q", line)
			}
			if key, ok := strings.CutPrefix(line, "body key "); ok && strings.EqualFold(key, "tenant") {
				t.Fatalf("an argument named like the fixed query parameter tenant reached the body: %.300q", line)
			}
			if path, ok := strings.CutPrefix(line, "path: "); ok {
				if strings.IndexFunc(path, unicode.IsControl) >= 0 {
					t.Fatalf("the upstream path has a control character: %q", path)
				}
				for _, seg := range strings.FieldsFunc(norm.NFKC.String(path), func(r rune) bool { return r == '/' || r == '\\' }) {
					if seg == "." || seg == ".." {
						t.Fatalf("the upstream path has a dot segment once normalized: %q", path)
					}
				}
			}
			if strings.Contains(line, secret) && !strings.HasPrefix(line, "header Authorization: Bearer ") {
				t.Fatalf("the upstream saw the secret outside the configured header: %.300q", line)
			}
		}
		if nilBody.Load() {
			t.Fatal("route mode handed the handlers after mcp a request with a nil Body")
		}
	})
}

// TestLiveUpstreamFromPlaceholder resolves the upstream URL per call.
func TestLiveUpstreamFromPlaceholder(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	t.Setenv("CADDY_MCP_TEST_UPSTREAM", bin+"/anything/base")
	loadCaddyfile(t, "", `http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream {env.CADDY_MCP_TEST_UPSTREAM}
		tool get {
			description "x"
			get /items
		}
	}
	mcp /unset {
		upstream {env.CADDY_MCP_TEST_UNSET}/x
		tool get {
			description "x"
			get /items
		}
	}
}`)
	c := connect(t, "/mcp", eras[0], nil)
	if e := parseEcho(t, callTool(t, c, "get", nil)); !strings.HasSuffix(e.URL, "/anything/base/items") {
		t.Errorf("url %s", e.URL)
	}
	c = connect(t, "/unset", eras[0], nil)
	wantToolError(t, callTool(t, c, "get", nil), "{env.CADDY_MCP_TEST_UNSET}/x", "does not resolve")
}
