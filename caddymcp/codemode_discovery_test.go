package caddymcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
)

func TestCodeModeDiscoveryCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		discovery   string
		max         int64
		err         string
	}{
		{"default", "codemode {\n}", "", 0, ""},
		{"search", "codemode {\n discovery search\n}", "search", 0, ""},
		{"all and a size", "codemode {\n discovery all\n max_declarations 64KiB\n}", "all", 64 << 10, ""},
		{"auto", "codemode {\n discovery auto\n max_declarations 1000\n}", "auto", 1000, ""},
		{"unknown mode", "codemode {\n discovery lazy\n}", "", 0, `discovery "lazy": want all, search or auto`},
		{"upper case", "codemode {\n discovery SEARCH\n}", "", 0, `discovery "SEARCH"`},
		{"no mode", "codemode {\n discovery\n}", "", 0, "wrong argument count"},
		{"two modes", "codemode {\n discovery all search\n}", "", 0, "wrong argument count"},
		{"twice", "codemode {\n discovery all\n discovery search\n}", "", 0, "discovery is set twice"},
		{"no size", "codemode {\n max_declarations\n}", "", 0, "wrong argument count"},
		{"bad size", "codemode {\n max_declarations big\n}", "", 0, `max_declarations "big": want a size`},
		{"zero size", "codemode {\n max_declarations 0\n}", "", 0, `max_declarations "0"`},
		{"size twice", "codemode {\n max_declarations 1KiB\n max_declarations 2KiB\n}", "", 0, "max_declarations is set twice"},
		{"description size", "codemode {\n max_description 4KiB\n}", "", 0, ""},
		{"bad description size", "codemode {\n max_description big\n}", "", 0, `max_description "big": want a size`},
		{"tool_name search", "codemode {\n tool_name search\n}", "", 0, `tool_name "search" is the name of the search tool`},
		{"tool_name search, discovery all", "codemode {\n tool_name search\n discovery all\n}", "all", 0, ""},
		{"in a backend", backendSnippet("discovery all"), "", 0, `backend api: unknown subdirective "discovery"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm, err := unmarshalCodeMode(tc.input)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cm.Discovery != tc.discovery || cm.MaxDeclarations != tc.max {
				t.Errorf("discovery %q, max_declarations %d", cm.Discovery, cm.MaxDeclarations)
			}
		})
	}
}

// JSON configs do not pass the Caddyfile's checks: Provision makes them.
func TestCodeModeDiscoveryProvision(t *testing.T) {
	backend := `"backends":[{"name":"api","url":"http://127.0.0.1:9/mcp"}]`
	for _, tc := range []struct{ config, err string }{
		{`{"discovery":"lazy",` + backend + `}`, `discovery "lazy": want all, search or auto`},
		{`{"max_declarations":-1,` + backend + `}`, "max_declarations must not be negative"},
		{`{"max_description":-1,` + backend + `}`, "max_description must not be negative"},
		{`{"max_description":1000,` + backend + `}`, "max_description 1000 bytes is too small: the rules and the backends' names need 1536 bytes"},
		{`{"max_description":1536,` + backend + `}`, ""},
		{`{"tool_name":"search",` + backend + `}`, `tool_name "search" is the name of the search tool of discovery auto`},
		{`{"tool_name":"search","discovery":"search",` + backend + `}`, "of discovery search"},
		{`{"backends":[{"name":"tools","url":"http://127.0.0.1:9/mcp"}]}`, "shadows the sandbox global tools"},
		{`{"tool_name":"search","discovery":"all",` + backend + `}`, ""},
	} {
		cm, _, err := loadCodeMode(t, tc.config)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.config, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.config, err, tc.err)
		}
		_ = cm
	}
	cm, _, err := loadCodeMode(t, `{`+backend+`}`)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Discovery != "auto" || cm.MaxDeclarations != 32<<10 || cm.MaxDescription != 2<<10 {
		t.Errorf("defaults: discovery %q, max_declarations %d, max_description %d", cm.Discovery, cm.MaxDeclarations, cm.MaxDescription)
	}
}

// discoveryRPC posts one JSON-RPC request with a bearer token and returns
// its result.
func discoveryRPC(t *testing.T, token, method, params string) json.RawMessage {
	t.Helper()
	resp, body := rawPost(t, "/code", []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`),
		map[string]string{"Authorization": "Bearer " + token})
	var answer struct{ Result json.RawMessage }
	if err := json.Unmarshal(body, &answer); resp.StatusCode != http.StatusOK || err != nil || answer.Result == nil {
		t.Fatalf("%s: status %d: %s", method, resp.StatusCode, body)
	}
	return answer.Result
}

type listedTool struct{ Name, Description string }

func discoveryList(t *testing.T, token string) []listedTool {
	t.Helper()
	var list struct{ Tools []listedTool }
	_ = json.Unmarshal(discoveryRPC(t, token, "tools/list", "{}"), &list)
	return list.Tools
}

// discoveryCall calls a tool and returns whether it failed, and its text.
func discoveryCall(t *testing.T, token, tool string, args any) (bool, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	var res struct {
		IsError bool
		Content []struct{ Text string }
	}
	_ = json.Unmarshal(discoveryRPC(t, token, "tools/call", `{"name":"`+tool+`","arguments":`+string(a)+`}`), &res)
	if len(res.Content) == 0 {
		t.Fatalf("%s: no content", tool)
	}
	return res.IsError, res.Content[0].Text
}

// declarationsIn is the TypeScript block of an execute description.
func declarationsIn(t *testing.T, description string) string {
	t.Helper()
	_, ts, ok := strings.Cut(description, "```ts\n")
	if !ok || !strings.HasSuffix(ts, "```") {
		t.Fatalf("no declarations in\n%s", description)
	}
	return strings.TrimSuffix(ts, "```")
}

// Auto discovery decides per description served: a caller whose scopes
// leave a tool out may read declarations that fit while one holding them
// gets search, and each switches exactly past max_declarations. search
// and tools.search find only what the caller may call, and bad inputs
// get clear errors.
func TestCodeModeDiscoveryLive(t *testing.T) {
	as := authtest.New(t)
	api, _ := countingUpstream(t)
	load := func(discovery string) {
		loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /shop {
		upstream %[1]s
		tool get_order {
			description "Read an order by its number."
			arg number string "The order number"
			get /ok
		}
		tool create_refund {
			description "Refund an order, in part or in full."
			arg amount number "How much to refund"
			post /ok
		}
	}
	codemode /code {
		%[3]s
		backend shop http://127.0.0.1:{$LIVE_PORT}/shop {
			tool_scopes create_* refunds:write
		}
		authorization {
			issuer %[2]s
		}
	}
}
`, api.URL, as.Issuer, discovery))
	}
	resource := "http://" + liveAddr + "/code"
	reader := as.Token(t, resource, "orders", nil)
	refunder := as.Token(t, resource, "orders refunds:write", nil)

	load("discovery all")
	small := len(declarationsIn(t, waitDiscovery(t, reader, "get_order(")))
	large := len(declarationsIn(t, waitDiscovery(t, refunder, "create_refund(")))
	if small >= large {
		t.Fatalf("declarations of %d and %d bytes", small, large)
	}
	for _, tc := range []struct {
		max                     int
		readerSearch, refSearch bool
	}{
		{small, false, true},
		{small - 1, true, true},
		{large, false, false},
		{large - 1, false, true},
	} {
		load(fmt.Sprintf("max_declarations %d\n\t\tmax_description 1MiB", tc.max))
		for _, who := range []struct {
			token  string
			search bool
		}{{reader, tc.readerSearch}, {refunder, tc.refSearch}} {
			tools := waitDiscoveryTools(t, who.token)
			if got := len(tools) == 2; got != who.search {
				t.Errorf("max_declarations %d (declarations %d and %d): %d tools listed, want search %v", tc.max, small, large, len(tools), who.search)
				continue
			}
			if !who.search {
				// Not listed, not callable.
				_, body := rawPost(t, "/code", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"order"}}}`),
					map[string]string{"Authorization": "Bearer " + who.token})
				if !strings.Contains(string(body), "tool 'search' not found") {
					t.Errorf("a call of search while every tool is declared: %s", body)
				}
			}
			if who.search && (tools[1].Name != "search" || !strings.Contains(tools[0].Description, "call the search tool") ||
				strings.Contains(tools[0].Description, "declare const")) {
				t.Errorf("search mode lists %+v", tools)
			}
		}
	}

	load("discovery search")
	waitDiscoveryTools(t, reader)
	if failed, text := discoveryCall(t, reader, "search", map[string]any{"query": "refund an order"}); failed ||
		strings.Contains(text, "create_refund") || !strings.Contains(text, "shop.get_order") {
		t.Errorf("the reader's search (failed %v):\n%s", failed, text)
	}
	failed, text := discoveryCall(t, refunder, "search", map[string]any{"query": "refund an order", "limit": 1})
	if failed || !strings.Contains(text, " tools match \"refund an order\"") || !strings.Contains(text, "create_refund(input") || !strings.Contains(text, "amount") {
		t.Errorf("the refunder's search (failed %v):\n%s", failed, text)
	}
	code := `const m = await tools.search("refund an order"); return m.map(x => x.identifier)`
	if failed, text := discoveryCall(t, reader, "execute", map[string]any{"code": code}); failed || text != `["get_order"]` {
		t.Errorf("the reader's tools.search: %s", text)
	}
	code = `const [m] = await tools.search("refund", 1); return await shop[m.identifier]({amount: 5})`
	if failed, text := discoveryCall(t, refunder, "execute", map[string]any{"code": code}); failed || !strings.Contains(text, `"ok"`) {
		t.Errorf("the refunder's search then call: %s", text)
	}
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{}, `the "query" argument is required`},
		{map[string]any{"query": ""}, "the query is empty"},
		{map[string]any{"query": 42}, `the "query" argument is required: a string`},
		{map[string]any{"query": strings.Repeat("order ", 200)}, "the query is 1200 bytes; the limit is 1024"},
		{map[string]any{"query": "order", "limit": 0}, "limit 0 is out of range: use 1 to 20"},
		{map[string]any{"query": "order", "limit": 21}, "limit 21 is out of range"},
		{map[string]any{"query": "order", "limit": 2.5}, `the "limit" argument must be an integer`},
		{map[string]any{"query": "order", "limit": "3"}, `the "limit" argument must be an integer`},
		{map[string]any{"query": "order", "top": 3}, `unknown argument "top"`},
	} {
		if failed, text := discoveryCall(t, reader, "search", tc.args); !failed || !strings.Contains(text, tc.want) {
			t.Errorf("search %v: failed %v, %s; want %q", tc.args, failed, text, tc.want)
		}
	}
}

// waitDiscovery waits for the execute description to hold want (the
// backend's list is read in the background) and returns it.
func waitDiscovery(t *testing.T, token, want string) string {
	t.Helper()
	for i := 0; i < 100; i++ {
		if tools := discoveryList(t, token); strings.Contains(tools[0].Description, want) {
			return tools[0].Description
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the description never held %q", want)
	return ""
}

// waitDiscoveryTools waits for the backend's list to be read and returns
// the tools listed.
func waitDiscoveryTools(t *testing.T, token string) []listedTool {
	t.Helper()
	for i := 0; i < 100; i++ {
		tools := discoveryList(t, token)
		if !strings.Contains(tools[0].Description, "unavailable right now") {
			return tools
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the backend's list was never read")
	return nil
}
