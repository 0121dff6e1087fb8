package caddymcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/caddy-mcp/caddy-mcp/internal/fuzzing"
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"golang.org/x/text/unicode/norm"
)

// The fuzz targets of the Caddy glue. Each provisions its handler in
// process, against servers on 127.0.0.1 with ports the kernel picks, so
// they run beside the live tests. Run one longer with, e.g.:
//
//	go test ./caddymcp -run '^$' -fuzz '^FuzzMCPHandler$' -fuzztime 10m

// fuzzStatuses are the answers an MCP endpoint may give: success,
// accepted notifications, CORS preflight, and the documented refusals
// (bad request, forbidden, not found for a session id, method not allowed,
// body too large).
var fuzzStatuses = map[int]bool{200: true, 202: true, 204: true, 400: true, 403: true, 404: true, 405: true, 413: true}

// fuzzRequestTimeout bounds one request; fuzzHang is when a request that
// has not returned counts as hung.
const (
	fuzzRequestTimeout = 5 * time.Second
	fuzzHang           = 15 * time.Second
)

func fuzzRandomHex(t testing.TB) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// fuzzRequest is one HTTP request to an MCP endpoint, from fuzzed parts.
type fuzzRequest struct {
	method   string
	body     []byte
	header   http.Header
	host     string
	loopback bool
	query    string
}

var fuzzMethods = []string{http.MethodPost, http.MethodPost, http.MethodPost, http.MethodGet, http.MethodDelete, http.MethodOptions, http.MethodPut}

// fuzzHeaders sets the MCP and browser headers a client sends from fuzzed
// values; an empty value leaves the header out. flags picks the Accept and
// Content-Type variants.
func fuzzHeaders(flags byte, version, mcpMethod, mcpName, origin string) http.Header {
	h := make(http.Header)
	switch flags & 3 {
	case 0:
		h.Set("Accept", "application/json, text/event-stream")
	case 1:
		h.Set("Accept", "application/json")
	case 2:
		h.Set("Accept", "text/event-stream")
	}
	switch (flags >> 2) & 3 {
	case 0, 1:
		h.Set("Content-Type", "application/json")
	case 2:
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	for k, v := range map[string]string{
		"Mcp-Protocol-Version": version, "Mcp-Method": mcpMethod, "Mcp-Name": mcpName, "Origin": origin,
	} {
		if v != "" {
			h.Set(k, v)
		}
	}
	if flags&16 != 0 {
		h.Set("Mcp-Session-Id", "mcp-session-fuzz")
	}
	if flags&32 != 0 {
		h.Set("Access-Control-Request-Method", "POST")
	}
	return h
}

// fuzzServe sends r through handle as Caddy would (a prepared request with
// its replacer and vars), bounded by a context timeout; it fails the test
// if the handler does not return. It returns the status (from the answer
// or from a returned caddyhttp.HandlerError), the answer and the time taken.
func fuzzServe(t *testing.T, handle func(http.ResponseWriter, *http.Request) error, in fuzzRequest) (int, *httptest.ResponseRecorder, time.Duration) {
	t.Helper()
	req := httptest.NewRequest(in.method, "/mcp"+in.query, bytes.NewReader(in.body))
	for k, v := range in.header {
		req.Header[k] = v
	}
	if in.host != "" {
		req.Host = in.host
	}
	ctx, cancel := context.WithTimeout(req.Context(), fuzzRequestTimeout)
	defer cancel()
	if in.loopback {
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443})
		req.RemoteAddr = "127.0.0.1:50000"
	}
	w := httptest.NewRecorder()
	req = caddyhttp.PrepareRequest(req.WithContext(ctx), caddy.NewReplacer(), w, nil)

	var err error
	start := time.Now()
	fuzzing.Within(t, fuzzHang, "the handler", func() { err = handle(w, req) })
	took := time.Since(start)
	status := w.Code
	if err != nil {
		var he caddyhttp.HandlerError
		if !errors.As(err, &he) {
			t.Fatalf("the handler returned an error that is not a caddyhttp.HandlerError: %v", err)
		}
		status = he.StatusCode
	}
	return status, w, took
}

// fuzzCheckAnswer checks the answer's status, and that a 200 is valid JSON
// or a valid event stream of JSON messages. It returns the JSON-RPC
// messages of the answer.
func fuzzCheckAnswer(t *testing.T, status int, w *httptest.ResponseRecorder) []json.RawMessage {
	t.Helper()
	if !fuzzStatuses[status] {
		t.Fatalf("status %d is not one an MCP endpoint gives; body: %.500s", status, w.Body.Bytes())
	}
	if status != http.StatusOK {
		return nil
	}
	ctype := w.Header().Get("Content-Type")
	body := w.Body.Bytes()
	switch {
	case strings.HasPrefix(ctype, "application/json"):
		if !json.Valid(body) {
			t.Fatalf("a 200 application/json answer is not JSON: %.500q", body)
		}
		return []json.RawMessage{body}
	case strings.HasPrefix(ctype, "text/event-stream"):
		var msgs []json.RawMessage
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				data = strings.TrimSpace(data)
				if !json.Valid([]byte(data)) {
					t.Fatalf("an event of a 200 event stream is not JSON: %.500q", data)
				}
				msgs = append(msgs, json.RawMessage(data))
			}
		}
		return msgs
	case len(body) == 0:
		return nil
	default:
		t.Fatalf("a 200 answer with content type %q: %.500q", ctype, body)
	}
	return nil
}

// fuzzRecorded is what a fuzz upstream or backend saw: every header value
// and every query value, with the header's name.
type fuzzRecorded struct {
	mu    sync.Mutex
	lines []string
}

func (r *fuzzRecorded) record(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, vs := range req.Header {
		for _, v := range vs {
			r.lines = append(r.lines, "header "+k+": "+v)
		}
	}
	if req.Host != "" {
		r.lines = append(r.lines, "host: "+req.Host)
	}
	for k, vs := range req.URL.Query() {
		for _, v := range vs {
			r.lines = append(r.lines, "query "+k+"="+v)
		}
	}
	r.lines = append(r.lines, "path: "+req.URL.Path)
}

// recordBody records the top-level keys of a JSON object or form body.
func (r *fuzzRecorded) recordBody(req *http.Request, body []byte) {
	var keys []string
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		form, _ := url.ParseQuery(string(body))
		for k := range form {
			keys = append(keys, k)
		}
	} else {
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(body, &obj)
		for k := range obj {
			keys = append(keys, k)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		r.lines = append(r.lines, "body key "+k)
	}
}

func (r *fuzzRecorded) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

// fuzzQuiet silences the development loggers tests get without a Caddy
// logging config.
func fuzzQuiet(e *Endpoint) { e.logger = zap.NewNop() }

// fuzzMCPTools are the tools of FuzzMCPHandler: every placement, body mode,
// defaults, enums, an input and an output schema, and upstream answers of
// every kind (errors, timeouts, oversize, text, images, HEAD).
func fuzzMCPTools() []*Tool {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	return []*Tool{
		{Name: "get_order", Description: "Get one order.", Method: "GET", Path: "/orders/{id}", Args: []*Arg{
			{Name: "id", Type: "integer", Required: true},
			{Name: "expand", Type: "string[]", Enum: []json.RawMessage{raw(`"customer"`), raw(`"items"`)}},
			{Name: "request_id", In: "header", HeaderName: "X-Request-Id"},
			{Name: "limit", Type: "integer", Default: raw(`10`)},
		}},
		{Name: "read_file", Description: "Read a file.", Method: "GET", Path: "/files/{path}", Args: []*Arg{
			{Name: "path", Required: true}, {Name: "query"}, {Name: "flag", Type: "boolean", In: "query"},
		}, Query: map[string][]string{"api_version": {"2024-01"}}},
		{Name: "create_issue", Description: "Open an issue.", Method: "POST", Path: "/repos/{owner}/{repo}/issues",
			InputSchema: raw(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string","maxLength":200},` +
				`"labels":{"type":"array","items":{"type":"string"}},"meta":{"type":"object"},"request_id":{"type":"string"}},"required":["owner","repo","title"]}`),
			Args: []*Arg{{Name: "request_id", In: "header", HeaderName: "X-Request-Id"}}, Query: map[string][]string{"tenant": {"acme"}}},
		{Name: "free_form", Description: "Anything goes.", Method: "DELETE", Path: "/free", InputSchema: raw(`{"type":"object"}`),
			Query: map[string][]string{"tenant": {"acme"}}},
		{Name: "submit_form", Description: "A form.", Method: "POST", Path: "/form", Body: "form", Args: []*Arg{
			{Name: "a"}, {Name: "b", Type: "string[]"}, {Name: "n", Type: "number"},
		}},
		{Name: "put_tags", Description: "Replace tags.", Method: "PUT", Path: "/orders/{id}/tags", Body: "arg", BodyArg: "tags", Args: []*Arg{
			{Name: "id", Type: "integer", Required: true}, {Name: "tags", Type: "string[]", Required: true},
		}},
		{Name: "structured", Description: "Structured.", Method: "GET", Path: "/structured",
			OutputSchema: raw(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)},
		{Name: "bad_structured", Description: "Breaks its schema.", Method: "GET", Path: "/text",
			OutputSchema: raw(`{"type":"object"}`)},
		{Name: "fail", Description: "Fails.", Method: "GET", Path: "/fail"},
		{Name: "slow", Description: "Times out.", Method: "GET", Path: "/slow", Timeout: caddy.Duration(30 * time.Millisecond)},
		{Name: "big", Description: "Too large.", Method: "GET", Path: "/big"},
		{Name: "image", Description: "An image.", Method: "GET", Path: "/image"},
		{Name: "redirect", Description: "Redirects.", Method: "GET", Path: "/redirect"},
		{Name: "head", Description: "HEAD.", Method: "HEAD", Path: "/h/{id}", Args: []*Arg{{Name: "id", Type: "number"}}},
		{Name: "secret_path", Description: "A placeholder in the path.", Method: "PATCH", Path: "/t/{env.FUZZ_MCP_TENANT}/{id}", Args: []*Arg{
			{Name: "id", Required: true}, {Name: "obj", Type: "object"}, {Name: "objs", Type: "object[]"},
		}, Headers: http.Header{"Content-Type": {"application/merge-patch+json"}}},
	}
}

// fuzzUpstream answers by path, and records what it saw.
func fuzzUpstream(rec *fuzzRecorded) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		rec.recordBody(r, body)
		switch {
		case r.URL.Path == "/v2/fail":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"boom"}`)
		case r.URL.Path == "/v2/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
		case r.URL.Path == "/v2/big":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `"`+strings.Repeat("x", 80<<10)+`"`)
		case r.URL.Path == "/v2/structured":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":9007199254740993,"extra":"é"}`)
		case r.URL.Path == "/v2/text":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "plain text \xff")
		case r.URL.Path == "/v2/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
		case r.URL.Path == "/v2/redirect":
			http.Redirect(w, r, "http://elsewhere.example/?key=k", http.StatusFound)
		default:
			// Echo what the request carried that came from arguments.
			w.Header().Set("Content-Type", "application/json")
			out, _ := json.Marshal(map[string]any{"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.RawQuery, "body": string(body)})
			w.Write(out)
		}
	})
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

// fuzzBackend is an in-process MCP server for FuzzCodeModeHandler, on
// 127.0.0.1, recording the headers and query of each request.
func fuzzBackend(rec *fuzzRecorded) *httptest.Server {
	srv := server.NewMCPServer("fuzz-backend", "1")
	srv.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the arguments."), mcp.WithString("text"), mcp.WithNumber("n")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out, _ := json.Marshal(req.Params.Arguments)
			return mcp.NewToolResultText(string(out)), nil
		})
	srv.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fail.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("the backend says no"), nil
		})
	srv.AddTool(mcp.NewTool("get-weather", mcp.WithDescription("*/ Weather. /*"), mcp.WithString("city", mcp.Required()),
		mcp.WithOutputSchema[struct {
			Temperature float64 `json:"temperature"`
		}]()),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"temperature": 21.5}, `{"temperature":21.5}`), nil
		})
	srv.AddTool(mcp.NewTool("slow", mcp.WithDescription("Wait.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			return mcp.NewToolResultText("late"), nil
		})
	srv.AddTool(mcp.NewTool("big", mcp.WithDescription("A large answer.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("y", 200<<10)), nil
		})
	h := server.NewStreamableHTTPServer(srv, server.WithStateLess(true), server.WithDisableLocalhostProtection(true))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		h.ServeHTTP(w, r)
	}))
}

// FuzzCodeModeHandler posts fuzzed JSON-RPC bodies, or tools/calls of
// fuzzed code, to a provisioned codemode handler whose backend is an
// in-process MCP server. Invariants: no panic, no hang; the status is one
// an MCP endpoint gives; a 200 is valid JSON (or an event stream of JSON);
// a tools/call answers within the execution timeout plus the sandbox's
// grace plus a margin; a result's text stays within max_output plus a
// small margin; the backend's secret header never reaches the client, and
// the backend never sees a value the client sent in a header or the query.
func FuzzCodeModeHandler(f *testing.F) {
	type seed struct {
		body, code, version, origin, host string
		flags                             byte
	}
	seeds := []seed{
		{code: `return 1 + 1`},
		{code: `const r = await api.echo({text: "hi", n: 1}); console.log(r.text); return r`},
		{code: `return await Promise.all([1, 2, 3].map(n => api.echo({n})))`},
		{code: `return await api.get_weather({city: "Paris"})`},
		{code: `try { await api.fail({}) } catch (e) { return [e.message, e.backend, e.tool] }`},
		{code: `await api.fail({})`},
		{code: `await api.slow({})`},
		{code: `return (await api.big({})).length`},
		{code: `return await api.nope({})`},
		{code: `for (let i = 0; i < 100; i++) await api.echo({n: i})`},
		{code: `while (true) {}`},
		{code: `for (let i = 0; ; i++) console.log("x".repeat(1000) + i)`},
		{code: `"x".repeat(2**40)`},
		{code: `/^(?=(a+)+b)/.test("a".repeat(40))`},
		{code: `let o = {}; for (let i = 0; i < 100000; i++) o = {o}; return o`},
		{code: "```ts\nconst n: number = 3;\nreturn n\n```"},
		{code: `async () => { return await api.echo({text: "{env.FUZZ_CM_SECRET}"}) }`},
		{code: `return [typeof fetch, typeof require, Object.keys(globalThis)]`},
		{code: `return Object.getOwnPropertyNames(api).concat(Object.getOwnPropertyNames(Object.getPrototypeOf(api)))`},
		{code: `return api.echo.toString() + api.constructor.toString()`},
		{code: `foo(;`},
		{code: "\x00"},
		{code: `return 1`, version: "2026-07-28", flags: 1},
		{code: `return 1`, flags: 2},
		{code: `return 1`, origin: "https://evil.example"},
		{code: `return 1`, host: "evil.com", origin: "http://evil.com", flags: 4},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":1}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute"}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"return 1","extra":true}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"api.echo","arguments":{}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{body: `[]`},
		{body: `{`},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.code, s.version, s.origin, s.host, s.flags)
	}

	secret := "cm-secret-" + fuzzRandomHex(f)
	marker := "client-" + fuzzRandomHex(f)
	os.Setenv("FUZZ_CM_SECRET", secret)
	rec := &fuzzRecorded{}
	backend := fuzzBackend(rec)
	f.Cleanup(backend.Close)

	config, err := json.Marshal(&CodeMode{
		Backends: []*CodeModeBackend{{Name: "api", URL: backend.URL, Headers: http.Header{"Authorization": {"Bearer {env.FUZZ_CM_SECRET}"}},
			Timeout: caddy.Duration(time.Second)}},
		Timeout:       caddy.Duration(200 * time.Millisecond),
		MaxToolCalls:  20,
		MaxOutput:     4096,
		MaxConcurrent: 8,
		Endpoint:      Endpoint{MaxRequestSize: 128 << 10, AllowOrigins: []string{"https://app.example.com"}},
	})
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	f.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("http.handlers.codemode", config)
	if err != nil {
		f.Fatal(err)
	}
	cm := mod.(*CodeMode)
	cm.logger = zap.NewNop()
	fuzzQuiet(&cm.Endpoint)
	handle := func(w http.ResponseWriter, r *http.Request) error { return cm.ServeHTTP(w, r, nil) }

	// Wait for the backend's tools, so that executions call it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, err := cm.backends[0].backend.Tools(context.Background(), time.Now().Add(time.Second))
		if err == nil && len(tools) > 0 {
			break
		}
		if time.Now().After(deadline) {
			f.Fatalf("the backend did not come up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	limits := cm.runner.Limits()
	// The execution timeout, the sandbox's grace for native code, and a
	// margin for parsing, the JSON-RPC around it and a loaded machine.
	callBound := limits.Timeout + time.Second + 3*time.Second

	f.Fuzz(func(t *testing.T, body []byte, code, version, origin, host string, flags byte) {
		generated := len(body) == 0
		if generated {
			params := map[string]any{"name": cm.ToolName, "arguments": map[string]any{"code": code}}
			if flags&1 != 0 {
				params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
					"io.modelcontextprotocol/clientCapabilities": map[string]any{}, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "f", "version": "1"}}
			}
			body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		}
		mcpMethod, mcpName := "", ""
		if generated && flags&1 != 0 {
			mcpMethod, mcpName = "tools/call", cm.ToolName
		}
		header := fuzzHeaders(flags&^(3|16|32), version, mcpMethod, mcpName, origin)
		if flags&2 != 0 {
			header.Set("Accept", "application/json")
		}
		header.Set("Authorization", "Bearer "+marker)
		header.Set("Cookie", "session="+marker)
		header.Set("X-Forwarded-For", marker)
		rec.take()
		status, w, took := fuzzServe(t, handle, fuzzRequest{
			method:   http.MethodPost,
			body:     body,
			header:   header,
			host:     host,
			loopback: flags&4 != 0,
			query:    "?token=" + marker,
		})
		msgs := fuzzCheckAnswer(t, status, w)
		if took > callBound {
			t.Errorf("the request took %s, want at most %s", took, callBound)
		}
		if bytes.Contains(w.Body.Bytes(), []byte(secret)) {
			t.Fatalf("the answer shows the backend's secret: %.1000s", w.Body.Bytes())
		}
		for _, m := range msgs {
			var resp struct {
				Result *struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(m, &resp) != nil || resp.Result == nil {
				continue
			}
			for _, c := range resp.Result.Content {
				if c.Type == "text" && len(c.Text) > limits.MaxOutput+512 {
					t.Errorf("a result text is %d bytes; max_output is %d", len(c.Text), limits.MaxOutput)
				}
			}
		}
		for _, line := range rec.take() {
			if strings.Contains(line, marker) {
				t.Fatalf("the backend saw a client value: %.300q", line)
			}
		}
	})
}

// fuzzCaddyfileSeeds are Caddyfile snippets for the parser targets: the
// adapt test inputs' directive blocks and hand-made nasty ones.
func fuzzCaddyfileSeeds(directive string) []string {
	if directive == "mcp" {
		return []string{
			"mcp",
			"mcp {\n}",
			"mcp /mcp {\n\tupstream https://api.example.com/v2\n\theader Authorization \"Bearer {env.API_KEY}\"\n\ttool get_order {\n\t\tdescription \"Get one order by its id.\"\n\t\tget /orders/{id}\n\t\targ id integer required \"Order id\"\n\t}\n}",
			"mcp {\n\tname shop\n\tversion 1.2.3\n\tinstructions \"Call list_orders first.\"\n\tupstream https://api.example.com/v2\n\theader X-Client a\n\theader X-Client b\n\ttimeout 20s\n\tmax_response_size 8MiB\n\tmax_request_size 512KiB\n\tallow_origins https://app.example.com http://localhost:3000\n\tallow_hosts mcp.internal\n" +
				"\ttool update_order {\n\t\ttitle \"Update\"\n\t\tdescription \"Change an order.\"\n\t\tpatch /orders/{id}\n\t\targ id integer required \"Order id\"\n\t\targ status string required {\n\t\t\tenum open shipped cancelled\n\t\t}\n\t\targ notify boolean \"Send\" {\n\t\t\tin query\n\t\t\tdefault false\n\t\t}\n\t\targ tags string[] {\n\t\t\tdefault urgent\n\t\t}\n\t\targ limits object {\n\t\t\tdefault `{\"max\": 3}`\n\t\t}\n\t\targ weight number {\n\t\t\tdefault 1.5\n\t\t\tenum 1.5 2.5\n\t\t}\n\t\targ request_id {\n\t\t\tin header\n\t\t\theader_name X-Request-Id\n\t\t}\n\t\tquery api_version 2024-01-01\n\t\theader Idempotency-Key {uuid}\n\t\tbody json\n\t\ttimeout 5s\n\t\tannotations idempotent destructive=false\n\t}\n}",
			"mcp {\n\ttool search {\n\t\tdescription \"Search.\"\n\t\tpost /search\n\t\tinput_schema <<JSON\n\t\t{\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\"}, \"token\": {\"type\": \"string\"}}}\n\t\tJSON\n\t\targ token {\n\t\t\tin header\n\t\t\theader_name X-Token\n\t\t}\n\t\toutput_schema `{\"type\":\"object\"}`\n\t\tbody form\n\t}\n}",
			"mcp {\n\ttool put {\n\t\tdescription d\n\t\tput /list/{id}\n\t\targ id\n\t\targ items array\n\t\tbody arg items\n\t}\n}",
			"mcp {\n\ttool files {\n\t\tdescription d\n\t\tget /files/{http.request.uri.path}/{http.request.uri.query}\n\t\targ path\n\t\targ query\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x/{env.TENANT}/{id}\n\t\targ id string[]\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x\n\t\targ a integer {\n\t\t\tdefault 9999999999999999999999\n\t\t}\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x\n\t\tinput_schema `{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"http://example.com/s.json\"}}}`\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x\n\t\tinput_schema `{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/properties/a\"}}}`\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x\n\t\tinput_schema `{\"type\":\"object\",\"properties\":{\"a\":{\"pattern\":\"(\"}}}`\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x\n\t\targ a object\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x\n\t\tget /y\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /x/{a}{b}\n\t\targ a\n\t\targ b\n\t\targ c {\n\t\t\tin header\n\t\t\theader_name Content-Type\n\t\t}\n\t}\n}",
			"mcp {\n\ttool \"\" {\n\t}\n\ttool t {\n\t\tdescription\n\t}\n}",
			"mcp {\n\tupstream http://user:pass@example.com\n\ttimeout -1s\n\tmax_request_size 0\n}",
			"mcp {\n\tupstream {env.UPSTREAM}\n\tallow_origins *\n\tallow_hosts \"\"\n}",
			"mcp {\n\tupstream ://\n\tallow_origins http://[::1\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\thead /\n\t\tannotations read_only=maybe\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /\n\t\targ a string[] {\n\t\t\tdefault '[1,2]'\n\t\t\tenum a b\n\t\t}\n\t}\n}",
			"mcp {\n\timport x\n\t{$ENV}\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription <<EOF\n\t\tmulti\n\t\tEOF\n\t\tget /\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /\n\t\ttimeout 1ns\n\t\tquery a {http.request.header.X}\n\t\theader \"Bad Header\" v\n\t}\n}",
			"mcp { tool t { description d; get / } }",
			"mcp {\n" + strings.Repeat("\ttool t {\n", 50) + strings.Repeat("\t}\n", 50) + "}",
		}
	}
	return []string{
		"codemode",
		"codemode {\n}",
		"codemode {\n\tbackend shop http://127.0.0.1:8080/mcp\n}",
		"codemode /code {\n\tname gateway\n\tinstructions \"Use code.\"\n\ttool_name run_code\n\tbackend shop http://127.0.0.1:8080/mcp {\n\t\theader Authorization \"Bearer {env.SHOP_TOKEN}\"\n\t\ttransport sse\n\t\ttools get_* list_*\n\t\ttimeout 10s\n\t}\n\tbackend crm https://crm.example.com/mcp\n\ttimeout 10s\n\tmax_tool_calls 50\n\tmax_output 16KiB\n\tmax_code_size 32KiB\n\tmax_concurrent 4\n\tmax_memory 512MiB\n\tmax_request_size 256KiB\n\tallow_origins https://app.example.com\n\tallow_hosts code.internal\n}",
		"codemode {\n\tbackend my-api http://127.0.0.1:1/mcp\n}",
		"codemode {\n\tbackend console http://127.0.0.1:1/mcp\n}",
		"codemode {\n\tbackend a ftp://x\n\tbackend a http://x\n}",
		"codemode {\n\tbackend a http://x {\n\t\ttransport carrier-pigeon\n\t}\n}",
		"codemode {\n\tbackend a http://x {\n\t\theader \"Bad Header\" v\n\t\ttools\n\t}\n}",
		"codemode {\n\ttool_name \"bad name\"\n\tbackend a http://x\n}",
		"codemode {\n\tbackend a http://x\n\tmax_tool_calls 0\n\tmax_output 1B\n\tmax_concurrent 99999999999999999999\n\ttimeout 999999h\n}",
		"codemode {\n\tbackend a http://[::1]:0/{env.PATH}\n}",
		"codemode {\n\tbackend a http://x {\n\t\ttimeout 0s\n\t}\n}",
		"codemode { backend a http://x { tools * } }",
		"codemode {\n\tbackend a http://x {\n" + strings.Repeat("\t\theader X-A v\n", 20) + "\t}\n}",
	}
}

// fuzzAdaptSeeds returns the directive blocks of the adapt test inputs
// (testdata/adapt) that start with directive.
func fuzzAdaptSeeds(tb testing.TB, directive string) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "adapt", "*.caddyfiletest"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		input, _, _ := strings.Cut(string(data), "----------")
		lines := strings.Split(input, "\n")
		for i, line := range lines {
			if word := strings.Fields(line); len(word) == 0 || word[0] != directive {
				continue
			}
			// The block ends where its braces balance.
			depth := 0
			for j := i; j < len(lines); j++ {
				depth += strings.Count(lines[j], "{") - strings.Count(lines[j], "}")
				if depth <= 0 {
					out = append(out, strings.Join(lines[i:j+1], "\n"))
					break
				}
			}
		}
	}
	return out
}

// fuzzLoadParsed marshals a parsed handler and loads the JSON as Caddy
// does (strict decoding, Provision, Validate, Cleanup on failure), then
// unloads it, which runs Cleanup. It fails the test on a hang.
func fuzzLoadParsed(t *testing.T, id string, handler any) {
	t.Helper()
	config, err := json.Marshal(handler)
	if err != nil {
		return
	}
	fuzzing.Within(t, fuzzHang, "loading "+string(config), func() {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		defer cancel()
		_, _ = ctx.LoadModuleByID(id, config)
	})
}

// fuzzParse runs a Caddyfile parser on the tokens of text, as
// caddyfile.NewTestDispenser would give them, and fails the test on a hang.
// Text that does not tokenize is an error here: NewTestDispenser would
// call log.Fatalf, which ends the fuzzing process without a word.
func fuzzParse(t *testing.T, text string, unmarshal func(*caddyfile.Dispenser) error) error {
	t.Helper()
	tokens, err := caddyfile.Tokenize([]byte(text), "Testfile")
	if err != nil {
		return err
	}
	fuzzing.Within(t, fuzzHang, "the parser", func() { err = unmarshal(caddyfile.NewDispenser(tokens)) })
	return err
}

// FuzzMCPCaddyfile parses fuzzed Caddyfile text with the mcp directive's
// parser; what parses is turned into JSON and loaded (Provision,
// Validate). Invariants: no panic and no hang; errors are fine.
func FuzzMCPCaddyfile(f *testing.F) {
	for _, s := range append(fuzzCaddyfileSeeds("mcp"), fuzzAdaptSeeds(f, "mcp")...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		h := new(Handler)
		if fuzzParse(t, text, h.UnmarshalCaddyfile) != nil {
			return
		}
		fuzzLoadParsed(t, "http.handlers.mcp", h)
	})
}

// FuzzCodeModeCaddyfile parses fuzzed Caddyfile text with the codemode
// directive's parser; what parses is turned into JSON and loaded
// (Provision, Validate, Cleanup). Backend hosts are pointed at a closed
// port on 127.0.0.1 first, so that the background connections reach no
// network. Invariants: no panic and no hang; errors are fine.
func FuzzCodeModeCaddyfile(f *testing.F) {
	for _, s := range append(fuzzCaddyfileSeeds("codemode"), fuzzAdaptSeeds(f, "codemode")...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cm := new(CodeMode)
		if fuzzParse(t, text, cm.UnmarshalCaddyfile) != nil {
			return
		}
		for _, b := range cm.Backends {
			if u, err := url.Parse(b.URL); err == nil && u.Host != "" {
				u.Host = "127.0.0.1:1"
				b.URL = u.String()
			}
		}
		fuzzLoadParsed(t, "http.handlers.codemode", cm)
	})
}
