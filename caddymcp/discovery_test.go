package caddymcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/search"
)

// callThrough calls tool through call_tool.
func callThrough(t *testing.T, c *client.Client, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	in := map[string]any{"name": tool}
	if args != nil {
		in["arguments"] = args
	}
	return callTool(t, c, callToolName, in)
}

// localPort is the client side of a connection in an error text, which
// differs from call to call.
var localPort = regexp.MustCompile(`127\.0\.0\.1:[0-9]+-(>|\\u003e)`)

// resultJSON is what a client reads of a result, for comparing two.
func resultJSON(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Content           []mcp.Content `json:"content"`
		StructuredContent any           `json:"structuredContent"`
		IsError           bool          `json:"isError"`
	}{res.Content, res.StructuredContent, res.IsError})
	if err != nil {
		t.Fatal(err)
	}
	return localPort.ReplaceAllString(string(b), "127.0.0.1:port->")
}

// serverToolSeries are the caddy_mcp_tool_calls_total and duration count
// series of server, by their other labels.
func serverToolSeries(t *testing.T, server string) map[string]string {
	t.Helper()
	_, body := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/metrics"))
	series := map[string]string{}
	label := `server="` + server + `"`
	for line := range strings.SplitSeq(string(body), "\n") {
		if !strings.HasPrefix(line, "caddy_mcp_tool_calls_total{") && !strings.HasPrefix(line, "caddy_mcp_tool_call_duration_seconds_count{") {
			continue
		}
		if key, value, ok := strings.Cut(line, " "); ok && strings.Contains(key, label) {
			series[strings.Replace(key, label, "", 1)] = value
		}
	}
	return series
}

// The bad inputs and failing upstreams of the direct path, each called
// directly on an endpoint with discovery all and through call_tool on one
// with discovery search: the same result, and the same metrics under the
// inner tool's name, on both paths of both eras.
func TestLiveCallToolIsADirectCall(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	f := startFaultServer(t)
	down := mcptest.ClosedAddr(t)
	tools := fmt.Sprintf(restTools, "upstream "+bin)
	faults := fmt.Sprintf(faultTools, "upstream http://"+f.addr()+"/")
	downTools := fmt.Sprintf(faultTools, "upstream http://"+down+"/base")
	loadCaddyfile(t, "metrics", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /direct {
		name direct
		%s
	}
	mcp /found {
		name found
		discovery search
		%s
	}
	mcp /fault-direct {
		name fault_direct
		%s
	}
	mcp /fault-found {
		name fault_found
		discovery search
		%s
	}
	mcp /down-direct {
		name down_direct
		%s
	}
	mcp /down-found {
		name down_found
		discovery search
		%s
	}
}`, tools, tools, faults, faults, downTools, downTools))

	type input struct {
		tool string
		args any
	}
	rest := []input{
		{"raw_schema", map[string]any{"id": 0, "tags": []any{"a", "b", "c"}}}, // schema violations
		{"create", map[string]any{"count": "three", "extra": 1}},              // wrong type, missing, unknown
		{"repo", map[string]any{"owner": "o"}},                                // missing required
		{"search", map[string]any{"state": "merged"}},                         // not in the enum
		{"search", map[string]any{"limit": 1.5}},                              // not an integer
		{"files", map[string]any{"path": ".."}},                               // a path value refused
		{"status", map[string]any{"code": 404}},                               // upstream 4xx
		{"status", map[string]any{"code": 503}},                               // upstream 5xx
		{"status", map[string]any{"code": 204}},
		{"slow", map[string]any{"seconds": 3}}, // past the tool's timeout
		{"bytes", map[string]any{"n": 100000}}, // past max_response_size
		{"redirect", map[string]any{"url": "http://elsewhere.example/x?key=1"}},
		{"wrong_shape", nil}, // breaks its output_schema
		{"slideshow", nil},   // structured content
		{"image", nil},       // not text
		{"html", nil},
		{"head", nil},
		{"fixed", nil},
		{"create", map[string]any{"name": "widget", "count": 3, "labels": []any{"x"}, "dry_run": true}},
	}
	var faulty []input
	for _, name := range []string{"ok", "reset", "silent", "stall", "big", "big_streamed", "bad_json", "loop", "long", "short"} {
		faulty = append(faulty, input{name, nil})
	}
	pairs := []struct {
		direct, found string
		inputs        []input
	}{
		{"/direct", "/found", rest},
		{"/fault-direct", "/fault-found", faulty},
		{"/down-direct", "/down-found", []input{{"ok", nil}}},
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			for _, pair := range pairs {
				direct := connect(t, pair.direct, era, nil)
				found := connect(t, pair.found, era, nil)
				for _, in := range pair.inputs {
					want := resultJSON(t, callTool(t, direct, in.tool, in.args))
					if got := resultJSON(t, callThrough(t, found, in.tool, in.args)); got != want {
						t.Errorf("%s %v: through call_tool\n%.600s\ndirectly\n%.600s", in.tool, in.args, got, want)
					}
				}
			}
		})
	}
	for _, pair := range []struct{ direct, found string }{{"direct", "found"}, {"fault_direct", "fault_found"}, {"down_direct", "down_found"}} {
		want, got := serverToolSeries(t, pair.direct), serverToolSeries(t, pair.found)
		if len(want) == 0 {
			t.Fatalf("no tool call series for %s", pair.direct)
		}
		for key, n := range want {
			if got[key] != n {
				t.Errorf("%s: %s is %q through call_tool, %q directly", pair.found, key, got[key], n)
			}
		}
		for key := range got {
			if _, ok := want[key]; !ok {
				t.Errorf("%s: %s counted through call_tool only", pair.found, key)
			}
		}
	}
	stillServing(t, "/found")
}

// With discovery search, tools/list holds the two tools, search_tools
// finds tools by what they do, call_tool and search_tools say what is
// wrong with their own arguments, and a tool not listed is unknown when
// called directly, on both paths.
func TestLiveDiscoverySearch(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /found {
		name httpbin
		discovery search
		%s
	}
}`, fmt.Sprintf(restTools, "upstream "+bin)))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/found", era, nil)
			list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if !strings.Contains(tool.Description, "19 tools of httpbin") && !strings.Contains(tool.Description, "httpbin: it has 19") {
					t.Errorf("%s's description does not name the API and its count: %q", tool.Name, tool.Description)
				}
			}
			if !slices.Equal(names, []string{callToolName, searchToolsName}) {
				t.Fatalf("tools/list holds %v", names)
			}

			t.Run("search_tools", func(t *testing.T) {
				res := callTool(t, c, searchToolsName, map[string]any{"query": "send a JSON body"})
				found := searchResult(t, res)
				if i := slices.Index(found.names(), "create"); i < 0 || i > 2 {
					t.Errorf("create is not in the top 3: %v", found.names())
				}
				if len(found.Tools) != search.DefaultLimit {
					t.Errorf("%d tools, want the default %d", len(found.Tools), search.DefaultLimit)
				}
				for _, tool := range found.Tools {
					if tool.Name == "create" {
						if !strings.Contains(string(tool.InputSchema), `"name"`) || tool.Annotations == nil || tool.Description != "Echo a JSON body." {
							t.Errorf("create as found: %+v", tool)
						}
					}
				}
				res = callTool(t, c, searchToolsName, map[string]any{"query": "structured slideshow JSON", "limit": 1})
				if found := searchResult(t, res); len(found.Tools) != 1 || found.Tools[0].Name != "slideshow" || len(found.Tools[0].OutputSchema) != 0 {
					t.Errorf("slideshow, without its output schema: %s", mcptest.ResultText(res))
				}
				res = callTool(t, c, searchToolsName, map[string]any{"query": "zzqx"})
				if found := searchResult(t, res); len(found.Tools) != 0 || found.Note == "" {
					t.Errorf("no match: %s", mcptest.ResultText(res))
				}
			})

			t.Run("found, then called", func(t *testing.T) {
				e := parseEcho(t, callThrough(t, c, "repo", map[string]any{"owner": "caddy server", "repo": "a/b"}))
				if !strings.HasSuffix(e.URL, "/anything/repos/caddy%20server/a%2Fb") {
					t.Errorf("url %s", e.URL)
				}
				wantOK(t, callThrough(t, c, "fixed", nil))
			})

			t.Run("bad arguments of search_tools and call_tool", func(t *testing.T) {
				for _, bad := range []struct {
					tool string
					args any
					want string
				}{
					{searchToolsName, map[string]any{}, `"query" must be a non-empty string`},
					{searchToolsName, map[string]any{"query": "  "}, `"query" must be a non-empty string`},
					{searchToolsName, map[string]any{"query": 7}, `"query" must be a non-empty string`},
					{searchToolsName, map[string]any{"query": strings.Repeat("issues ", 200)}, `"query" is 1400 bytes; the limit is 1024`},
					{searchToolsName, map[string]any{"query": "x", "limit": 0}, `"limit" must be an integer from 1 to 20`},
					{searchToolsName, map[string]any{"query": "x", "limit": 21}, `"limit" must be an integer from 1 to 20`},
					{searchToolsName, map[string]any{"query": "x", "limit": 2.5}, `"limit" must be an integer from 1 to 20`},
					{searchToolsName, map[string]any{"query": "x", "limit": "5"}, `"limit" must be an integer from 1 to 20`},
					{searchToolsName, map[string]any{"query": "x", "page": 2}, `search_tools takes only query and limit, not "page"`},
					{searchToolsName, "words", "search_tools: the arguments must be an object with query and limit"},
					{callToolName, map[string]any{}, `"name" must be a tool's name`},
					{callToolName, map[string]any{"name": 7}, `"name" must be a tool's name`},
					{callToolName, map[string]any{"name": "repo", "arguments": "owner=o"}, `"arguments" must be an object of repo's arguments`},
					{callToolName, map[string]any{"name": "repo", "arguments": []any{}}, `"arguments" must be an object of repo's arguments`},
					{callToolName, map[string]any{"name": "repo", "args": map[string]any{}}, `call_tool takes only name and arguments, not "args"`},
					{callToolName, map[string]any{"name": "no_such_tool"}, `there is no tool named "no_such_tool"; use search_tools`},
					{callToolName, map[string]any{"name": strings.Repeat("x", 500)}, `...`},
					{callToolName, map[string]any{"name": callToolName}, `there is no tool named "call_tool"`},
				} {
					text := wantToolError(t, callTool(t, c, bad.tool, bad.args), bad.want)
					if len(text) > 400 {
						t.Errorf("%s %v: a long error: %d bytes", bad.tool, bad.args, len(text))
					}
				}
			})

			t.Run("a tool not listed is unknown when called directly", func(t *testing.T) {
				_, err := mcptest.CallTool(c, "repo", map[string]any{"owner": "o", "repo": "r"})
				if err == nil || !strings.Contains(err.Error(), "repo") {
					t.Fatalf("error %v", err)
				}
			})
		})
	}

	// The same, through mcp-go (a progress token keeps a call off the fast
	// path) and through the fast path, as raw answers.
	for _, meta := range []string{"", `,"_meta":{"progressToken":"p"}`} {
		resp, body := rawPost(t, "/found", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"repo","arguments":{"owner":"o","repo":"r"}`+meta+`}}`), nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error"`) || !strings.Contains(string(body), "repo") {
			t.Errorf("a direct call of a tool not listed (meta %q): %d %s", meta, resp.StatusCode, body)
		}
		resp, body = rawPost(t, "/found", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"search","arguments":{"limit":9007199254740993}}`+meta+`}}`), nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `9007199254740993`) || strings.Contains(string(body), `"isError":true`) {
			t.Errorf("a large integer through call_tool (meta %q): %d %s", meta, resp.StatusCode, body)
		}
	}
	stillServing(t, "/found")
}

// foundTools is search_tools' answer.
type foundTools struct {
	Matched int `json:"matched"`
	Of      int `json:"of"`
	Tools   []struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  map[string]any  `json:"annotations"`
	} `json:"tools"`
	Note string `json:"note"`
}

func (f foundTools) names() []string {
	var names []string
	for _, t := range f.Tools {
		names = append(names, t.Name)
	}
	return names
}

// searchResult reads a search_tools result: its text, JSON, and no
// structuredContent (the tools are sent once).
func searchResult(t *testing.T, res *mcp.CallToolResult) foundTools {
	t.Helper()
	text := wantOK(t, res)
	if res.StructuredContent != nil {
		t.Errorf("search_tools sent its answer twice, as structuredContent too")
	}
	var found foundTools
	if err := json.Unmarshal([]byte(text), &found); err != nil {
		t.Fatalf("search_tools text is not JSON: %v\n%s", err, text)
	}
	if found.Note == "" || found.Of == 0 || found.Matched < len(found.Tools) {
		t.Errorf("search_tools: %d of %d match, note %q, %d tools", found.Matched, found.Of, found.Note, len(found.Tools))
	}
	return found
}

// With an authorization block and tool scopes, search_tools finds only
// the tools the caller may call, and call_tool of one it may not is
// refused as a direct call is: 403 with an insufficient_scope challenge
// naming the scopes, before the upstream hears of it. A direct call of a
// tool not listed is unknown, whatever the token's scopes.
func TestLiveDiscoveryAuthorization(t *testing.T) {
	as := authtest.New(t)
	api, upstreamHits := countingUpstream(t)
	const tools = `
		authorization {
			issuer %s
			require_scopes orders:read
		}
		tool echo {
			description "Echo an order."
			get /ok
		}
		tool refund {
			description "Refund an order."
			post /ok
			scopes refunds:write orders:read
		}`
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /mcp {
		upstream %[1]s
		%[2]s
	}
	mcp /found {
		upstream %[1]s
		discovery search
		%[2]s
	}
}
`, api.URL, fmt.Sprintf(tools, as.Issuer)))
	token := func(path, scope string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + as.Token(t, "http://"+liveAddr+path, scope, nil)}
	}
	const searchBody = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"refund an order"}}}`
	metadataOf := regexp.MustCompile(`, resource_metadata="[^"]*"`)
	for _, meta := range []string{"", `,"_meta":{"progressToken":"p"}`} {
		direct := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refund","arguments":{}` + meta + `}}`)
		through := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"refund","arguments":{}}` + meta + `}}`)

		// Without the tool's scope.
		before := upstreamHits.Load()
		wantResp, wantBody := rawPost(t, "/mcp", direct, token("/mcp", "orders:read"))
		resp, body := rawPost(t, "/found", through, token("/found", "orders:read"))
		if wantResp.StatusCode != http.StatusForbidden || resp.StatusCode != wantResp.StatusCode || string(body) != string(wantBody) {
			t.Errorf("call_tool of refund without its scope (meta %q): %d %s; directly %d %s", meta, resp.StatusCode, body, wantResp.StatusCode, wantBody)
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		if !strings.Contains(challenge, `scope="orders:read refunds:write"`) ||
			metadataOf.ReplaceAllString(challenge, "") != metadataOf.ReplaceAllString(wantResp.Header.Get("WWW-Authenticate"), "") ||
			!strings.Contains(challenge, `resource_metadata="http://`+liveAddr+`/.well-known/oauth-protected-resource/found"`) {
			t.Errorf("challenge %q; directly %q", challenge, wantResp.Header.Get("WWW-Authenticate"))
		}
		if upstreamHits.Load() != before {
			t.Errorf("the refused call reached the upstream")
		}
		_, body = rawPost(t, "/found", []byte(searchBody), token("/found", "orders:read"))
		if strings.Contains(string(body), `\"name\":\"refund\"`) || !strings.Contains(string(body), `\"name\":\"echo\"`) {
			t.Errorf("search_tools without refund's scope: %s", body)
		}
		resp, body = rawPost(t, "/found", direct, token("/found", "orders:read"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error"`) {
			t.Errorf("a direct call of refund without its scope: %d %s", resp.StatusCode, body)
		}

		// With it.
		resp, body = rawPost(t, "/found", through, token("/found", "orders:read refunds:write"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `{\"ok\":true}`) || upstreamHits.Load() != before+1 {
			t.Errorf("call_tool of refund with its scope: %d %s", resp.StatusCode, body)
		}
		_, body = rawPost(t, "/found", []byte(searchBody), token("/found", "orders:read refunds:write"))
		if !strings.Contains(string(body), `\"name\":\"refund\"`) {
			t.Errorf("search_tools with refund's scope: %s", body)
		}
		resp, body = rawPost(t, "/found", direct, token("/found", "orders:read refunds:write"))
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"error"`) || upstreamHits.Load() != before+1 {
			t.Errorf("a direct call of refund with its scope: %d %s", resp.StatusCode, body)
		}
	}
	// tools/list is the same two tools for every caller.
	for _, scope := range []string{"orders:read", "orders:read refunds:write"} {
		_, body := rawPost(t, "/found", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), token("/found", scope))
		if !strings.Contains(string(body), `"name":"call_tool"`) || !strings.Contains(string(body), `"name":"search_tools"`) || strings.Contains(string(body), `"name":"refund"`) {
			t.Errorf("tools/list with %s: %s", scope, body)
		}
	}
}

func TestDiscoveryConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, json, caddyfile string
		want                  []string
	}{
		{name: "unknown mode", json: `{"discovery":"some","tools":[{"name":"a","description":"d","method":"GET","path":"/a"}]}`,
			want: []string{`discovery "some": want all or search`}},
		{name: "a tool named call_tool", json: `{"discovery":"search","upstream":"http://127.0.0.1:9","tools":[{"name":"call_tool","description":"d","method":"GET","path":"/a"}]}`,
			want: []string{`tool "call_tool": with discovery search, call_tool is the name of the tool that finds or calls the others; rename this one`}},
		{name: "an imported tool named search_tools", caddyfile: "mcp {\n discovery search\n openapi " + petsDocument + " {\n rename listPets search_tools\n }\n}",
			want: []string{`tool "search_tools": with discovery search`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.json != "" {
				_, err = loadMCP(t, tc.json)
			} else {
				_, err = loadMCPCaddyfile(t, tc.caddyfile)
			}
			if err == nil {
				t.Fatal("loaded without error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// With discovery all, the names are a tool's like any other.
	if _, err := loadMCP(t, `{"upstream":"http://127.0.0.1:9","tools":[{"name":"call_tool","description":"d","method":"GET","path":"/a"}]}`); err != nil {
		t.Errorf("call_tool with discovery all: %v", err)
	}
}

func TestUnmarshalDiscovery(t *testing.T) {
	t.Parallel()
	const tool = "\n tool a {\n  description d\n  get /a\n }\n}"
	for _, tc := range []struct{ input, want string }{
		{"mcp {\n discovery" + tool, "wrong argument count"},
		{"mcp {\n discovery all search" + tool, "wrong argument count"},
		{"mcp {\n discovery everything" + tool, `discovery "everything": want all or search`},
		{"mcp {\n discovery all\n discovery search" + tool, "discovery is set twice"},
	} {
		if _, err := unmarshalMCP(tc.input); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.input, err, tc.want)
		}
	}
	h, err := unmarshalMCP("mcp {\n discovery search" + tool)
	if err != nil || h.Discovery != discoverySearch {
		t.Fatalf("discovery search: %v %q", err, h.Discovery)
	}
}
