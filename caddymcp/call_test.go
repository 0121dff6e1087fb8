package caddymcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mccutchen/go-httpbin/v2/httpbin"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
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
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		%s
	}
}`, fmt.Sprintf(restTools, "upstream "+bin)))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, restClientHeaders)
			runRESTScenarios(t, c, "/mcp")
		})
	}
}

// restClientHeaders are what runRESTScenarios' client sends: credentials
// of the MCP client, which must not reach the upstream, and X-User, which
// a placeholder header line forwards.
var restClientHeaders = map[string]string{
	"Authorization": "Bearer client-token",
	"Cookie":        "session=client-cookie",
	"X-User":        "alice",
}

// runRESTScenarios checks every way an argument travels and every result
// type, against the tools of restTools, for a client of restClientHeaders.
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
			t.Errorf("small body: %s", mcptest.ResultText(res))
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
		_, err := mcptest.CallTool(cl, "no_such_tool", nil)
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
}`, mcptest.ClosedAddr(t)))
	for _, era := range eras {
		c := connect(t, "/mcp", era, nil)
		text := wantToolError(t, callTool(t, c, "get", nil), "GET /items", "refused")
		if strings.Contains(text, "secret-query-value") || strings.Contains(text, "/base") {
			t.Errorf("error text shows the query or base path: %q", text)
		}
		stillServing(t, "/mcp")
	}
}

// faultServer is a REST upstream on 127.0.0.1 that misbehaves at the TCP
// level, chosen by the request path. It speaks HTTP/1.1 by hand so that it
// can lie about lengths, stall, and reset connections.
type faultServer struct {
	ln   net.Listener
	done chan struct{}

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup

	// What the big bodies did: bytes written before a write failed (the
	// client stopped reading), and whether one did fail.
	bigWritten atomic.Int64
	bigStopped chan struct{}
}

// The big body: declared (or streamed) as 50 MB.
const faultBigBody = 50 << 20

func startFaultServer(t *testing.T) *faultServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &faultServer{ln: ln, done: make(chan struct{}), conns: map[net.Conn]bool{}, bigStopped: make(chan struct{}, 8)}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

func (f *faultServer) addr() string { return f.ln.Addr().String() }

func (f *faultServer) close() {
	close(f.done)
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *faultServer) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[c] = true
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer func() {
				f.mu.Lock()
				delete(f.conns, c)
				f.mu.Unlock()
				c.Close()
			}()
			f.serve(c)
		}()
	}
}

// hold keeps a connection open and silent until the server closes.
func (f *faultServer) hold() { <-f.done }

func (f *faultServer) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		switch req.URL.Path {
		case "/ok":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}")
			continue // keep-alive
		case "/reset":
			// A declared body cut by a reset: half of it, then RST.
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\":[%s", strings.Repeat("1,", 200))
			time.Sleep(20 * time.Millisecond)
			c.(*net.TCPConn).SetLinger(0)
			return
		case "/silent":
			f.hold() // the request was read; no answer ever comes
			return
		case "/stall":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"items\":[1,2,3")
			f.hold()
			return
		case "/big", "/big-streamed":
			head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n", faultBigBody)
			if req.URL.Path == "/big-streamed" {
				head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
			}
			io.WriteString(c, head)
			f.writeBig(c)
			return
		case "/bad-json":
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n{\"orders\": [1, 2, ")
			continue
		case "/loop":
			// 302 to itself, the way a misconfigured auth redirect does,
			// with a key in the query that must not show anywhere.
			fmt.Fprintf(c, "HTTP/1.1 302 Found\r\nLocation: http://%s/loop?key=loop-key-q7&%s\r\nContent-Length: 0\r\n\r\n", f.addr(), req.URL.RawQuery)
			continue
		case "/long":
			// Content-Length longer than the body, then a plain close.
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"ok\":true}")
			return
		case "/short":
			// Content-Length shorter than the body; the rest is left on the
			// connection, where the next answer would start.
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{\"ok\":true}")
			continue
		default:
			fmt.Fprintf(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			continue
		}
	}
}

// writeBig streams the big body from one reused buffer until the client
// stops reading, and records how much it got out.
func (f *faultServer) writeBig(c net.Conn) {
	buf := []byte(strings.Repeat("0123456789abcdef", 2048)) // 32 KiB
	var n int64
	defer func() {
		f.bigWritten.Store(n)
		select {
		case f.bigStopped <- struct{}{}:
		default:
		}
	}()
	for n < faultBigBody {
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		m, err := c.Write(buf)
		n += int64(m)
		if err != nil {
			return
		}
	}
	n = -1 // the whole body went out: the client read it all
}

// faultTools is one tool per fault, and a healthy one. %s is the upstream
// line, or nothing in route mode.
const faultTools = `
		%s
		timeout 500ms
		max_response_size 1MiB
		tool ok {
			description "A healthy endpoint."
			get /ok
			query key fault-query-key-3e
		}
		tool reset {
			description "Reset mid-body."
			get /reset
			query key fault-query-key-3e
		}
		tool silent {
			description "Headers never come."
			get /silent
			query key fault-query-key-3e
		}
		tool stall {
			description "The body stalls."
			get /stall
			query key fault-query-key-3e
		}
		tool big {
			description "A 50 MB body, declared."
			get /big
			query key fault-query-key-3e
		}
		tool big_streamed {
			description "A 50 MB body, streamed without a length."
			get /big-streamed
			query key fault-query-key-3e
		}
		tool bad_json {
			description "Invalid JSON under a JSON content type."
			get /bad-json
			query key fault-query-key-3e
		}
		tool loop {
			description "A redirect to itself."
			get /loop
			query key fault-query-key-3e
		}
		tool long {
			description "Content-Length longer than the body."
			get /long
			query key fault-query-key-3e
		}
		tool short {
			description "Content-Length shorter than the body."
			get /short
			query key fault-query-key-3e
		}
`

// TestLiveUpstreamFaults drives an upstream that fails in every way, in
// both upstream modes: each call is a clear tool error within the timeout
// that names what happened and not the query, and the next call works.
func TestLiveUpstreamFaults(t *testing.T) {
	f := startFaultServer(t)
	down := mcptest.ClosedAddr(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		%s
	}
	mcp /mcp-down {
		%s
	}
	route /route {
		mcp {
			%s
		}
		reverse_proxy %s
	}
	route /route-down {
		mcp {
			%s
		}
		reverse_proxy %s
	}
}`, fmt.Sprintf(faultTools, "upstream http://"+f.addr()+"/"),
		fmt.Sprintf(faultTools, "upstream http://"+down+"/base"),
		fmt.Sprintf(faultTools, ""), f.addr(),
		fmt.Sprintf(faultTools, ""), down))

	const timeout = 500 * time.Millisecond
	type fault struct {
		tool string
		// want are the words of the error in upstream mode, then in route
		// mode (through reverse_proxy).
		want, wantRoute []string
	}
	faults := []fault{
		{"reset", []string{"GET /reset", "the upstream request failed", "connection reset"}, []string{"GET /reset", "aborted the response"}},
		{"silent", []string{"GET /silent", "no complete answer within the tool's timeout of 500ms"}, []string{"GET /silent", "timeout of 500ms"}},
		{"stall", []string{"GET /stall", "no complete answer within the tool's timeout of 500ms"}, []string{"GET /stall", "timeout of 500ms"}},
		{"big", []string{"GET /big", "max_response_size (1MiB)"}, []string{"GET /big", "max_response_size (1MiB)"}},
		{"big_streamed", []string{"GET /big-streamed", "max_response_size (1MiB)"}, []string{"GET /big-streamed", "max_response_size (1MiB)"}},
		{"bad_json", []string{"GET /bad-json", "invalid JSON", `{"orders": [1, 2,`}, nil},
		{"loop", []string{"GET /loop", "302 Found", "redirect to /loop, not followed"}, nil},
		{"long", []string{"GET /long", "the upstream request failed", "unexpected EOF"}, []string{"GET /long", "aborted the response"}},
		{"short", []string{"GET /short", "invalid JSON", `{"ok"`}, nil},
	}

	modes := []struct{ name, endpoint, down string }{
		{"upstream", "/mcp", "/mcp-down"},
		{"route mode", "/route", "/route-down"},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			for _, era := range eras {
				t.Run(era, func(t *testing.T) {
					c := connect(t, mode.endpoint, era, nil)
					wantOK(t, callTool(t, c, "ok", nil))
					for _, ft := range faults {
						t.Run(ft.tool, func(t *testing.T) {
							want := ft.want
							if mode.endpoint == "/route" && ft.wantRoute != nil {
								want = ft.wantRoute
							}
							var before runtime.MemStats
							runtime.ReadMemStats(&before)
							start := time.Now()
							res := callTool(t, c, ft.tool, nil)
							elapsed := time.Since(start)
							var after runtime.MemStats
							runtime.ReadMemStats(&after)

							// The words say what ended the call: for silent
							// and stall, the tool's timeout. The client's own
							// timeout (mcptest.Timeout) ends a call that hangs.
							text := wantToolError(t, res, want...)
							t.Logf("%s in %s: %s", ft.tool, elapsed.Round(time.Millisecond), text)
							checkFaultText(t, text)
							if strings.HasPrefix(ft.tool, "big") {
								checkBigBodyStopped(t, f, before, after)
							}
							if text := wantOK(t, callTool(t, c, "ok", nil)); text != `{"ok":true}` {
								t.Errorf("the next call answered %q", text)
							}
						})
					}

					t.Run("connection refused", func(t *testing.T) {
						d := connect(t, mode.down, era, nil)
						res := callTool(t, d, "ok", nil)
						want := []string{"GET /ok", "refused"}
						if mode.endpoint == "/route" {
							want = []string{"GET /ok", "502", "refused"}
						}
						text := wantToolError(t, res, want...)
						t.Logf("refused: %s", text)
						checkFaultText(t, text)
						if strings.Contains(text, "/base") {
							t.Errorf("the error shows the upstream's base path: %q", text)
						}
						stillServing(t, mode.down)
						wantOK(t, callTool(t, c, "ok", nil))
					})
				})
			}
		})
	}
}

// checkFaultText: an error text never shows the query string.
func checkFaultText(t *testing.T, text string) {
	t.Helper()
	for _, leak := range []string{"fault-query-key-3e", "key=", "loop-key-q7", "?"} {
		if strings.Contains(text, leak) {
			t.Errorf("the error text shows %q: %s", leak, text)
		}
	}
}

// checkBigBodyStopped: the client stopped reading the 50 MB body near the
// limit, and the process did not hold it in memory.
func checkBigBodyStopped(t *testing.T, f *faultServer, before, after runtime.MemStats) {
	t.Helper()
	select {
	case <-f.bigStopped:
	case <-time.After(30 * time.Second): // a hang guard: it stops at once
		t.Fatal("the upstream is still writing the big body: the client did not stop reading")
	}
	written := f.bigWritten.Load()
	if written < 0 {
		t.Fatal("the client read the whole 50 MB body")
	}
	// The limit (1 MiB) plus what the loopback socket buffers hold.
	if written > 24<<20 {
		t.Errorf("the upstream wrote %d MB before the client stopped reading", written>>20)
	}
	// Loose: everything this process allocated during the call, the test
	// and both servers included.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the upstream wrote %d KiB; the process allocated %d KiB", written>>10, alloc>>10)
	if alloc > 24<<20 {
		t.Errorf("the call allocated %d MB", alloc>>20)
	}
}

// TestLiveHugeInvalidArguments calls a tool whose string[] argument is
// given 450,000 integers, a 900 KB body under the default
// max_request_size: the answer is a tool error listing the first 20
// violations and the count of the others, a few hundred bytes, not one
// line per violation, and nothing reaches the upstream.
func TestLiveHugeInvalidArguments(t *testing.T) {
	var hits atomic.Int64
	bin := httpbin.New()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		bin.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool tag {
			description "Tag things."
			post /anything/tags
			arg tags string[] required
		}
	}
}`, api.URL))

	tags := make([]int, 450_000)
	for i := range tags {
		tags[i] = 1
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)
			before := hits.Load()
			res := callTool(t, c, "tag", map[string]any{"tags": tags})
			text := mcptest.ResultText(res)
			// Not wantToolError: a failure must not print megabytes.
			if !res.IsError || len(text) > 2048 || strings.Count(text, "\n- ") != 21 ||
				!strings.HasPrefix(text, "invalid arguments for tool tag:\n- /tags/0: expected string, but got number\n- /tags/1: ") ||
				!strings.HasSuffix(text, "\n- /tags/19: expected string, but got number\n- and 449,980 more") {
				t.Fatalf("isError %v, %d bytes: %.300s", res.IsError, len(text), text)
			}
			if hits.Load() != before {
				t.Fatalf("the upstream was called for invalid arguments")
			}
			// The same tool with strings reaches the upstream: the count
			// above would have seen a request.
			wantOK(t, callTool(t, c, "tag", map[string]any{"tags": []string{"a"}}))
			if hits.Load() != before+1 {
				t.Fatalf("%d upstream requests for one valid call", hits.Load()-before)
			}
		})
	}
}

// TestLiveArgumentsKeepToTheirPlaces: what the configuration fixes (query
// lines here), no argument adds to, declared or let through by a free-form
// input_schema, in a GET's query or a POST's body; and path values with
// control characters or dots that normalize to a dot segment are refused.
func TestLiveArgumentsKeepToTheirPlaces(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool search {
			description "Search."
			get /get
			query tenant acme
			query api_key k3y
			input_schema `+"`"+`{"type":"object","properties":{"q":{"type":"string"}}}`+"`"+`
		}
		tool create {
			description "Create."
			post /anything
			query tenant acme
			input_schema `+"`"+`{"type":"object","properties":{"name":{"type":"string"}}}`+"`"+`
		}
		tool file {
			description "A file."
			get /anything/files/{name}
			arg name required
		}
	}
}`, bin))
	type echoed struct {
		Args map[string][]string `json:"args"`
		JSON map[string]any      `json:"json"`
		URL  string              `json:"url"`
	}
	echoOf := func(res *mcp.CallToolResult) (e echoed) {
		t.Helper()
		if err := json.Unmarshal([]byte(wantOK(t, res)), &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, era := range eras {
		c := connect(t, "/mcp", era, nil)

		wantToolError(t, callTool(t, c, "search", map[string]any{"q": "x", "tenant": "globex", "api_key": "attacker"}),
			`arguments "api_key", "tenant" are fixed by the configuration and cannot be sent`)
		wantToolError(t, callTool(t, c, "search", map[string]any{"q": "x", "Tenant": "globex"}), `argument "Tenant" is fixed`)
		if got := fmt.Sprint(echoOf(callTool(t, c, "search", map[string]any{"q": "x", "page": 2})).Args); got != "map[api_key:[k3y] page:[2] q:[x] tenant:[acme]]" {
			t.Errorf("search query %s", got)
		}

		wantToolError(t, callTool(t, c, "create", map[string]any{"name": "n", "tenant": "globex"}), `argument "tenant" is fixed`)
		if echo := echoOf(callTool(t, c, "create", map[string]any{"name": "n"})); fmt.Sprint(echo.Args) != "map[tenant:[acme]]" || fmt.Sprint(echo.JSON) != "map[name:n]" {
			t.Errorf("create query %v body %v", echo.Args, echo.JSON)
		}

		for _, name := range []string{"..\x00", "..\t", "a\x7f", "a\u0085", "\uff0e\uff0e", "\uff0e", "\u2025", "a\uff0f\uff0e\uff0e"} {
			wantToolError(t, callTool(t, c, "file", map[string]any{"name": name}), `argument "name"`, "not allowed as a path value")
		}
		if url := echoOf(callTool(t, c, "file", map[string]any{"name": "\uff0e\uff0e\uff0e"})).URL; !strings.HasSuffix(url, "/anything/files/%EF%BC%8E%EF%BC%8E%EF%BC%8E") {
			t.Errorf("three fullwidth dots went to %s", url)
		}
	}
}

// BenchmarkToolCall measures one tools/call through the handler to an
// in-process upstream, in both protocol eras. mcp-go's own cost per call
// is the floor (see CONTRIBUTING.md); everything above it is this plugin's.
func BenchmarkToolCall(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":42,"status":"open","total":99.5}`)
	}))
	defer api.Close()

	h := &Handler{
		Upstream: api.URL,
		Headers:  http.Header{"Authorization": {"Bearer {env.BENCH_KEY}"}},
		Tools: []*Tool{{
			Name: "get_order", Description: "Get an order.", Method: "GET", Path: "/orders/{id}",
			Args: []*Arg{{Name: "id", Type: "integer", Required: true}, {Name: "expand", Type: "boolean"}},
		}},
	}
	defer provisionBench(b, h)()

	bodies := map[string]struct {
		body   string
		header map[string]string
	}{
		"2025-11-25": {
			body:   `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":42,"expand":true}}}`,
			header: map[string]string{"Mcp-Protocol-Version": "2025-11-25"},
		},
		"2026-07-28": {
			body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":42,"expand":true},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
				`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`,
			header: map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_order"},
		},
	}
	fast := h.fast
	for _, era := range eras {
		for _, path := range []string{"endpoint", "mcp-go"} {
			b.Run(era+"/"+path, func(b *testing.B) {
				// "mcp-go" turns the endpoint's own answer off, to show
				// what it saves: the figures before and after it.
				h.fast = fast
				if path == "mcp-go" {
					h.fast = nil
				}
				defer func() { h.fast = fast }()
				benchToolCall(b, h, bodies[era].body, bodies[era].header)
			})
		}
	}
}

// BenchmarkHugeArguments measures one tools/call through the handler
// whose arguments are 450,000 integers, a 900 KB body: given for
// `arg tags string[]` (invalid: the validator words the first violations
// and counts the others) and for `arg tags integer[]` (valid: the call
// reaches an in-process upstream, whose reading of the request counts
// too). B/op is what one such request allocates; a small multiple of the
// body is the aim.
func BenchmarkHugeArguments(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer api.Close()
	h := &Handler{
		Upstream: api.URL,
		Tools: []*Tool{
			{Name: "tag", Description: "Tag things.", Method: "POST", Path: "/tags", Args: []*Arg{{Name: "tags", Type: "string[]", Required: true}}},
			{Name: "count", Description: "Count things.", Method: "POST", Path: "/count", Args: []*Arg{{Name: "tags", Type: "integer[]", Required: true}}},
		},
	}
	defer provisionBench(b, h)()

	for _, c := range []struct{ tool, want string }{
		{"tag", `and 449,980 more`},
		{"count", `{\"ok\":true}`},
	} {
		b.Run(c.tool, func(b *testing.B) {
			body := hugeCall(c.tool, 450_000)
			b.SetBytes(int64(len(body)))
			serveCall(b, h, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, c.want)
		})
	}
}

// hugeCall is a tools/call of tool with n integers as its tags.
func hugeCall(tool string, n int) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"tags":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('1')
	}
	b.WriteString(`]}}}`)
	return b.String()
}

// provisionBench provisions h for a benchmark, with quiet logs, and
// returns its cleanup.
func provisionBench(b testing.TB, h *Handler) func() {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	if err := h.Provision(ctx); err != nil {
		cancel()
		b.Fatal(err)
	}
	// Tests have no Caddy logging config, so the context's logger is a
	// development logger at debug level; production logs are quieter.
	h.logger, h.Endpoint.logger = zap.NewNop(), zap.NewNop()
	return func() {
		_ = h.Cleanup()
		cancel()
	}
}

func benchToolCall(b *testing.B, h *Handler, body string, header map[string]string) {
	serveCall(b, h, body, header, `\"status\":\"open\"`)
}

// serveCall measures h answering body, after checking that the answer
// holds want.
func serveCall(b *testing.B, h *Handler, body string, header map[string]string, want string) {
	serve := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		repl := caddy.NewReplacer()
		req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, repl))
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, req, nil); err != nil {
			b.Fatal(err)
		}
		return w
	}
	w := serve()
	if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(want)) {
		b.Fatalf("unexpected answer %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serve()
	}
}
