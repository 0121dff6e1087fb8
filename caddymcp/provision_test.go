package caddymcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard" // the directives the adapter tests use
)

// loadMCP loads an mcp handler from its JSON config the way Caddy does when
// a config is loaded: strict decoding, then Provision and Validate.
func loadMCP(t *testing.T, config string) (*Handler, error) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel) // also runs the handler's Cleanup
	mod, err := ctx.LoadModuleByID("http.handlers.mcp", json.RawMessage(config))
	if err != nil {
		return nil, err
	}
	return mod.(*Handler), nil
}

// loadMCPCaddyfile parses an mcp Caddyfile snippet, turns it into JSON as
// the adapter does, and loads that.
func loadMCPCaddyfile(t *testing.T, input string) (*Handler, error) {
	t.Helper()
	h, err := unmarshalMCP(input)
	if err != nil {
		t.Fatalf("the Caddyfile does not parse: %v", err)
	}
	config, err := json.Marshal(h)
	if err != nil {
		t.Fatalf("the parsed handler does not marshal: %v", err)
	}
	return loadMCP(t, string(config))
}

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

// adaptMCPHandlers adapts a whole Caddyfile with Caddy's own adapter and
// returns the JSON of every mcp handler in the result, in order, without
// the "handler" key (the module's own config, as LoadModuleByID takes it).
func adaptMCPHandlers(t *testing.T, input string) []json.RawMessage {
	t.Helper()
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("adapt warning: %s:%d: %s", w.File, w.Line, w.Message)
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("adapted JSON: %v", err)
	}
	var found []json.RawMessage
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "mcp" {
				delete(v, "handler")
				raw, _ := json.Marshal(v)
				found = append(found, raw)
				return
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(doc)
	return found
}

// Caddy's adapter rewrites {path} to {http.request.uri.path} (and {query}
// to {http.request.uri.query}) in every token. A tool with an argument of
// that name must get its argument back, not the MCP request's path.
func TestShorthandPlaceholdersAsArguments(t *testing.T) {
	handlers := adaptMCPHandlers(t, `:8080 {
	mcp /mcp {
		upstream http://127.0.0.1:9/api
		tool read_file {
			description "Read a file."
			get /files/{path}
			arg path required
		}
		tool search {
			description "Search."
			get /search/{query}
			arg query required
		}
		tool echo_path {
			description "Echo the MCP request's path."
			get /echo{path}
		}
	}
}
`)
	if len(handlers) != 1 {
		t.Fatalf("found %d mcp handlers, want 1", len(handlers))
	}
	var cfg struct {
		Tools []struct {
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(handlers[0], &cfg); err != nil {
		t.Fatal(err)
	}
	wantPaths := map[string]string{
		"read_file": "/files/{path}",
		"search":    "/search/{query}",
		"echo_path": "/echo{http.request.uri.path}",
	}
	for _, tool := range cfg.Tools {
		if want := wantPaths[tool.Name]; tool.Path != want {
			t.Errorf("tool %s: adapted path %q, want %q", tool.Name, tool.Path, want)
		}
	}

	// And the adapted config loads, with the argument in the path and the
	// placeholder left for the replacer.
	h, err := loadMCP(t, string(handlers[0]))
	if err != nil {
		t.Fatalf("load the adapted handler: %v", err)
	}
	repl := caddy.NewReplacer()
	repl.Set("http.request.uri.path", "/mcp")
	repl.Set("http.request.uri.query", "from=mcp")
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{tool: "read_file", args: map[string]any{"path": "notes.txt"}, want: "/api/files/notes.txt"},
		{tool: "search", args: map[string]any{"query": "caddy"}, want: "/api/search/caddy"},
		{tool: "echo_path", args: map[string]any{}, want: "/api/echo/mcp"},
	}
	for _, tc := range tests {
		req, _, err := h.tools[tc.tool].op.Request(context.Background(), h.base, tc.args, repl)
		if err != nil {
			t.Errorf("tool %s: %v", tc.tool, err)
			continue
		}
		if got := req.URL.EscapedPath(); got != tc.want {
			t.Errorf("tool %s: upstream path %q, want %q", tc.tool, got, tc.want)
		}
	}
}

// The DESIGN says the parser maps {path} back "when the tool has an
// argument of that name". With input_schema, a property is an argument
// even without an arg line.
func TestShorthandPlaceholderAsInputSchemaProperty(t *testing.T) {
	handlers := adaptMCPHandlers(t, `:8080 {
	mcp /mcp {
		upstream http://127.0.0.1:9
		tool read_file {
			description "Read a file."
			get /files/{path}
			input_schema <<JSON
				{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
				JSON
		}
	}
}
`)
	if len(handlers) != 1 {
		t.Fatalf("found %d mcp handlers, want 1", len(handlers))
	}
	var cfg struct {
		Tools []struct {
			Path string `json:"path"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(handlers[0], &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tools) != 1 || cfg.Tools[0].Path != "/files/{path}" {
		t.Errorf("adapted tools %s, want path /files/{path}", asJSON(cfg.Tools))
	}
}

// Every shorthand the Caddyfile adapter expands whose name could be an
// argument name comes back as that argument in a tool's path line.
func TestShorthandNamesAsArguments(t *testing.T) {
	names := []string{
		"host", "hostport", "port", "orig_method", "orig_uri", "orig_path", "orig_dir", "orig_file",
		"orig_query", "method", "uri", "path", "dir", "file", "query", "remote", "remote_host",
		"remote_port", "scheme", "uuid", "upstream_hostport", "client_ip",
		"header.X-Id", "cookie.session", "labels.0", "path.0", "file.ext", "query.page",
		"re.m.1", "vars.user",
		"tls_cipher", "tls_version", "tls_client_fingerprint", "tls_client_issuer",
		"tls_client_serial", "tls_client_subject", "tls_client_certificate_pem",
		"tls_client_certificate_der_base64", "rp.status", "resp.status_code", "err.status_code",
		"file_match.relative",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			handlers := adaptMCPHandlers(t, ":8080 {\n\tmcp {\n\t\ttool t {\n\t\t\tdescription d\n\t\t\tget /x/{"+
				name+"}\n\t\t\targ "+name+"\n\t\t}\n\t}\n}\n")
			if len(handlers) != 1 {
				t.Fatalf("found %d mcp handlers, want 1", len(handlers))
			}
			var cfg struct {
				Tools []struct {
					Path string `json:"path"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(handlers[0], &cfg); err != nil {
				t.Fatal(err)
			}
			if want := "/x/{" + name + "}"; len(cfg.Tools) != 1 || cfg.Tools[0].Path != want {
				t.Errorf("adapted tools %s, want path %s", asJSON(cfg.Tools), want)
			}
		})
	}
}

func TestReviewFixes(t *testing.T) {
	t.Run("enum on a plain array lists the allowed items", func(t *testing.T) {
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
	})
	t.Run("typed object arguments cannot go in the query", func(t *testing.T) {
		for _, typ := range []string{"object", "object[]"} {
			_, err := loadMCPCaddyfile(t, "mcp {\n tool t {\n  description d\n  get /x\n  arg f "+typ+"\n }\n}")
			if err == nil || !strings.Contains(err.Error(), "only in the body") {
				t.Errorf("%s: error %v", typ, err)
			}
		}
	})
	t.Run("a query in the path line is a config error", func(t *testing.T) {
		_, err := loadMCPCaddyfile(t, "mcp {\n tool t {\n  description d\n  get /search?type=repo\n }\n}")
		if err == nil || !strings.Contains(err.Error(), "query lines") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("shorthands stay as written in text that is never replaced", func(t *testing.T) {
		handlers := adaptMCPHandlers(t, `:8080 {
	mcp {
		tool read {
			title "Read {path}"
			description "Read the file at {path} on {host}"
			get /files/{path}
			arg path required "Where, like {dir}/{file}"
			arg mode {
				default "{query}"
				enum "{query}" raw
			}
			output_schema <<JSON
			{"type":"object","description":"as {uri}"}
			JSON
		}
	}
}
`)
		raw := string(handlers[0])
		for _, want := range []string{`"Read {path}"`, `"Read the file at {path} on {host}"`, `"Where, like {dir}/{file}"`,
			`"default":"{query}"`, `"enum":["{query}","raw"]`, `as {uri}`, `"/files/{path}"`} {
			if !strings.Contains(raw, want) {
				t.Errorf("adapted JSON lacks %s:\n%s", want, raw)
			}
		}
	})
}
