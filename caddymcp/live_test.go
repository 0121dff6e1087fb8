package caddymcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// restTools fronts go-httpbin with a tool for each way an argument can
// travel. %s is the upstream line (or nothing, in route mode).
const restTools = `
		%s
		header X-Fixed fixed-value
		header X-User {http.request.header.X-User}
		timeout 5s
		max_response_size 64KiB
		max_request_size 16KiB

		tool repo {
			description "Echo a path with two arguments."
			get /anything/repos/{owner}/{repo}
			arg owner required "Owner login"
			arg repo required
		}
		tool search {
			title "Search"
			description "Echo query arguments: enum, default, array."
			get /anything/search
			arg state string "Issue state" {
				enum open closed
			}
			arg limit integer {
				default 10
			}
			arg tags string[]
			arg exact boolean
		}
		tool traced {
			description "Echo a header argument."
			get /anything/traced
			arg trace required {
				in header
				header_name X-Trace
			}
		}
		tool create {
			description "Echo a JSON body."
			post /anything/items
			arg name string required
			arg count integer
			arg labels string[]
			arg meta object
			arg dry_run boolean {
				in query
			}
			annotations destructive=false idempotent
		}
		tool create_form {
			description "Echo a form body."
			post /anything/form
			body form
			arg name string required
			arg count integer
		}
		tool replace_list {
			description "Echo a whole-body array."
			put /anything/list
			body arg items
			arg items object[] required
		}
		tool fixed {
			description "Echo the fixed query and header."
			get /anything/fixed
			query api_version 2024-01
			header X-Tool tool-value
			header X-Fixed tool-overrides
		}
		tool files {
			description "A file API whose argument is called path."
			get /anything/files/{path}
			arg path required
		}
		tool find {
			description "A search API whose argument is called query."
			get /anything/find/{query}
			arg query required
		}
		tool raw_schema {
			description "Arguments from a whole input_schema."
			post /anything/raw/{id}
			input_schema <<JSON
			{
				"type": "object",
				"properties": {
					"id": {"type": "integer", "minimum": 1},
					"tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
					"trace": {"type": "string"},
					"page": {"type": "integer", "default": 1}
				},
				"required": ["id"]
			}
			JSON
			arg trace {
				in header
			}
			arg page {
				in query
			}
		}
		tool status {
			description "Answer a status code."
			get /status/{code}
			arg code integer required
		}
		tool slow {
			description "Answer after a delay."
			get /delay/{seconds}
			arg seconds integer required
			timeout 300ms
		}
		tool bytes {
			description "Answer n random bytes."
			get /bytes/{n}
			arg n integer required
		}
		tool redirect {
			description "Redirect elsewhere."
			get /redirect-to
			arg url required
		}
		tool image {
			description "A PNG image."
			get /image/png
		}
		tool slideshow {
			description "Structured JSON."
			get /json
			output_schema <<JSON
			{"type": "object", "properties": {"slideshow": {"type": "object"}}, "required": ["slideshow"]}
			JSON
		}
		tool wrong_shape {
			description "JSON that breaks its output_schema."
			get /json
			output_schema <<JSON
			{"type": "object", "required": ["orders"]}
			JSON
		}
		tool html {
			description "An HTML page."
			get /html
		}
		tool head {
			description "A HEAD request."
			head /get
		}
`

func TestLiveUpstreamMode(t *testing.T) {
	bin := startHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		%s
	}
}`, fmt.Sprintf(restTools, "upstream "+bin)))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, map[string]string{
				"Authorization": "Bearer client-token",
				"Cookie":        "session=client-cookie",
				"X-User":        "alice",
			})
			runRESTScenarios(t, c, "/mcp")
		})
	}
}

// runRESTScenarios checks every way an argument travels and every result
// type, against the tools of restTools.
func runRESTScenarios(t *testing.T, cl *client.Client, endpoint string) {
	t.Run("tools/list", func(t *testing.T) {
		res, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]mcp.Tool{}
		for _, tool := range res.Tools {
			byName[tool.Name] = tool
		}
		if len(byName) != 19 {
			t.Fatalf("%d tools listed, want 19", len(byName))
		}
		search := byName["search"]
		if search.Title != "Search" || search.Description == "" {
			t.Errorf("search: title %q description %q", search.Title, search.Description)
		}
		schema, _ := json.Marshal(search.InputSchema)
		for _, want := range []string{`"enum":["open","closed"]`, `"default":10`, `"items":{"type":"string"}`, `"description":"Issue state"`} {
			if !strings.Contains(string(schema), want) {
				t.Errorf("search schema %s lacks %s", schema, want)
			}
		}
		if byName["slideshow"].OutputSchema.Type != "object" {
			t.Errorf("slideshow has no output schema: %+v", byName["slideshow"].OutputSchema)
		}
		ann := byName["create"].Annotations
		if ann.DestructiveHint == nil || *ann.DestructiveHint || ann.IdempotentHint == nil || !*ann.IdempotentHint || ann.ReadOnlyHint != nil {
			t.Errorf("create annotations %+v", ann)
		}
	})

	t.Run("path arguments", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "repo", map[string]any{"owner": "caddy server", "repo": "a/b"}))
		if !strings.HasSuffix(e.URL, "/anything/repos/caddy%20server/a%2Fb") {
			t.Errorf("url %s", e.URL)
		}
		if e.Method != "GET" {
			t.Errorf("method %s", e.Method)
		}
	})

	t.Run("query arguments, enum, default, array", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "search", map[string]any{"state": "open", "tags": []any{"a", "b"}, "exact": true}))
		want := map[string][]string{"state": {"open"}, "limit": {"10"}, "tags": {"a", "b"}, "exact": {"true"}}
		for k, v := range want {
			if strings.Join(e.Args[k], ",") != strings.Join(v, ",") {
				t.Errorf("query %s = %v, want %v", k, e.Args[k], v)
			}
		}
		wantToolError(t, callTool(t, cl, "search", map[string]any{"state": "merged"}), "/state")
	})

	t.Run("header argument", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "traced", map[string]any{"trace": "t-123"}))
		if got := e.Headers["X-Trace"]; len(got) != 1 || got[0] != "t-123" {
			t.Errorf("X-Trace %v", got)
		}
	})

	t.Run("json body", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "create", map[string]any{
			"name": "widget", "count": 3, "labels": []any{"x"}, "meta": map[string]any{"k": "v"}, "dry_run": true,
		}))
		body, _ := json.Marshal(e.JSON)
		if string(body) != `{"count":3,"labels":["x"],"meta":{"k":"v"},"name":"widget"}` {
			t.Errorf("json body %s", body)
		}
		if strings.Join(e.Args["dry_run"], "") != "true" {
			t.Errorf("dry_run query %v", e.Args)
		}
		if ct := strings.Join(e.Headers["Content-Type"], ""); ct != "application/json" {
			t.Errorf("content type %q", ct)
		}
	})

	t.Run("form body", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "create_form", map[string]any{"name": "a b", "count": 2}))
		if strings.Join(e.Form["name"], "") != "a b" || strings.Join(e.Form["count"], "") != "2" {
			t.Errorf("form %v", e.Form)
		}
	})

	t.Run("whole-body array argument", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "replace_list", map[string]any{"items": []any{map[string]any{"id": 1}, map[string]any{"id": 2}}}))
		if e.Data != `[{"id":1},{"id":2}]` || e.Method != "PUT" {
			t.Errorf("body %q method %s", e.Data, e.Method)
		}
	})

	t.Run("fixed query and headers; client headers not forwarded", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "fixed", nil))
		if strings.Join(e.Args["api_version"], "") != "2024-01" {
			t.Errorf("api_version %v", e.Args)
		}
		if strings.Join(e.Headers["X-Tool"], "") != "tool-value" || strings.Join(e.Headers["X-Fixed"], "") != "tool-overrides" {
			t.Errorf("fixed headers %v", e.Headers)
		}
		for _, h := range []string{"Authorization", "Cookie"} {
			if _, ok := e.Headers[h]; ok {
				t.Errorf("the MCP client's %s reached the upstream", h)
			}
		}
		if strings.Join(e.Headers["X-User"], "") != "alice" {
			t.Errorf("X-User placed by a placeholder: %v", e.Headers["X-User"])
		}
	})

	t.Run("arguments named path and query", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "files", map[string]any{"path": "readme.md"}))
		if !strings.HasSuffix(e.URL, "/anything/files/readme.md") {
			t.Errorf("url %s", e.URL)
		}
		e = parseEcho(t, callTool(t, cl, "find", map[string]any{"query": "caddy"}))
		if !strings.HasSuffix(e.URL, "/anything/find/caddy") {
			t.Errorf("url %s", e.URL)
		}
	})

	t.Run("input_schema with placement lines", func(t *testing.T) {
		e := parseEcho(t, callTool(t, cl, "raw_schema", map[string]any{"id": 7, "tags": []any{"a"}, "trace": "t9"}))
		if !strings.Contains(e.URL, "/anything/raw/7") || strings.Join(e.Args["page"], "") != "1" {
			t.Errorf("url %s args %v", e.URL, e.Args)
		}
		if strings.Join(e.Headers["Trace"], "") != "t9" {
			t.Errorf("trace header %v", e.Headers)
		}
		if body, _ := json.Marshal(e.JSON); string(body) != `{"tags":["a"]}` {
			t.Errorf("body %s", body)
		}
	})

	t.Run("schema violations list every one, nothing sent", func(t *testing.T) {
		text := wantToolError(t, callTool(t, cl, "raw_schema", map[string]any{"id": 0, "tags": []any{"a", "b", "c"}}), "/id", "/tags")
		if !strings.Contains(text, "invalid arguments") {
			t.Errorf("message %q", text)
		}
		wantToolError(t, callTool(t, cl, "create", map[string]any{"count": "three", "extra": 1}), "/count", "'name'", "extra")
		wantToolError(t, callTool(t, cl, "create", "not an object"))
	})

	t.Run("integers past 2**53 keep every digit", func(t *testing.T) {
		// mcp-go's client would send a float64: send the digits by hand.
		resp, raw := rawPost(t, endpoint, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"limit":9007199254740993}}}`), nil)
		if resp.StatusCode != 200 || !strings.Contains(string(raw), `9007199254740993`) || strings.Contains(string(raw), `"isError":true`) {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
	})

	t.Run("path value of ..", func(t *testing.T) {
		wantToolError(t, callTool(t, cl, "files", map[string]any{"path": ".."}), "not allowed")
	})

	t.Run("upstream 4xx and 5xx", func(t *testing.T) {
		wantToolError(t, callTool(t, cl, "status", map[string]any{"code": 404}), "404 Not Found")
		wantToolError(t, callTool(t, cl, "status", map[string]any{"code": 503}), "503 Service Unavailable")
		wantOK(t, callTool(t, cl, "status", map[string]any{"code": 204}))
	})

	t.Run("upstream slower than the timeout", func(t *testing.T) {
		wantToolError(t, callTool(t, cl, "slow", map[string]any{"seconds": 3}), "timeout of 300ms")
	})

	t.Run("body over the cap", func(t *testing.T) {
		wantToolError(t, callTool(t, cl, "bytes", map[string]any{"n": 100000}), "max_response_size (64KiB)")
		if res := callTool(t, cl, "bytes", map[string]any{"n": 100}); res.IsError {
			t.Errorf("small body: %s", resultText(res))
		}
	})

	t.Run("redirect to another host is not followed", func(t *testing.T) {
		wantToolError(t, callTool(t, cl, "redirect", map[string]any{"url": "http://elsewhere.example/x?key=1"}),
			"302", "http://elsewhere.example/x", "not followed")
	})

	t.Run("image", func(t *testing.T) {
		res := callTool(t, cl, "image", nil)
		img, ok := res.Content[0].(mcp.ImageContent)
		if res.IsError || !ok || img.MIMEType != "image/png" {
			t.Fatalf("image result %+v", res)
		}
		if data, err := base64.StdEncoding.DecodeString(img.Data); err != nil || !strings.HasPrefix(string(data), "\x89PNG") {
			t.Errorf("image data is not a PNG")
		}
	})

	t.Run("structured content", func(t *testing.T) {
		res := callTool(t, cl, "slideshow", nil)
		wantOK(t, res)
		sc, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(sc), `"slideshow"`) {
			t.Errorf("structuredContent %s", sc)
		}
		wantToolError(t, callTool(t, cl, "wrong_shape", nil), "output_schema", "orders")
	})

	t.Run("html text and HEAD", func(t *testing.T) {
		if text := wantOK(t, callTool(t, cl, "html", nil)); !strings.Contains(text, "<html>") {
			t.Errorf("html %q", text)
		}
		if text := wantOK(t, callTool(t, cl, "head", nil)); !strings.Contains(text, "200 OK") {
			t.Errorf("head %q", text)
		}
	})

	t.Run("unknown tool is a JSON-RPC error", func(t *testing.T) {
		_, err := callToolErr(cl, "no_such_tool", nil)
		if err == nil || !strings.Contains(err.Error(), "no_such_tool") {
			t.Fatalf("error %v", err)
		}
	})

	stillServing(t, endpoint)
}

func TestLiveUpstreamDown(t *testing.T) {
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream http://%s/base
		tool get {
			description "Upstream that is down."
			get /items
			query key secret-query-value
		}
	}
}`, closedAddr(t)))
	for _, era := range eras {
		c := connect(t, "/mcp", era, nil)
		text := wantToolError(t, callTool(t, c, "get", nil), "GET /items", "refused")
		if strings.Contains(text, "secret-query-value") || strings.Contains(text, "/base") {
			t.Errorf("error text shows the query or base path: %q", text)
		}
		stillServing(t, "/mcp")
	}
}

// TestLiveBadRequests sends what an MCP client would not.
func TestLiveBadRequests(t *testing.T) {
	bin := startHTTPBin(t)
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
}

// TestLiveOlderProtocolVersions: clients that ask for an earlier revision
// get it, and can call tools with it.
func TestLiveOlderProtocolVersions(t *testing.T) {
	bin := startHTTPBin(t)
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

// TestLiveUpstreamFromPlaceholder resolves the upstream URL per call.
func TestLiveUpstreamFromPlaceholder(t *testing.T) {
	bin := startHTTPBin(t)
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
