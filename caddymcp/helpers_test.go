package caddymcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard" // the directives the live and adapter tests use
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-mcp/caddy-mcp/internal/adapttest"
	"github.com/caddy-mcp/caddy-mcp/internal/fuzzing"
	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// Live tests run a real Caddy in this process, on ports of 127.0.0.1 that
// were free when the test binary started: two test runs on one machine never
// meet. The admin endpoint listens on a free port too (the metrics and config
// tests read it), and nothing is persisted: no autosave.json, no storage
// files. caddy.Load replaces the config of the whole process, so live tests
// do not run in parallel. Caddyfiles name the HTTP port {$LIVE_PORT}.
var livePort, liveAddr, adminAddr string

func TestMain(m *testing.M) {
	livePort = freePort()
	liveAddr = "127.0.0.1:" + livePort
	adminAddr = "127.0.0.1:" + freePort()
	os.Setenv("LIVE_PORT", livePort)
	code := m.Run()
	_ = caddy.Stop()
	os.Exit(code)
}

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// eras are the protocol revisions every live scenario runs under.
var eras = []string{"2025-11-25", "2026-07-28"}

// globalOptions starts every live Caddyfile.
const globalOptions = `{
	http_port {$LIVE_PORT}
	default_bind 127.0.0.1
	grace_period 1s
	%s
}
`

// loadCaddyfile (re)configures the test Caddy, as a reload would: the
// config stays running until the next test loads its own. extraGlobal goes
// into the global options block.
func loadCaddyfile(t testing.TB, extraGlobal, sites string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	incaddy.Load(t, "Caddyfile", fmt.Sprintf(globalOptions, extraGlobal)+sites, func(cfg map[string]any) {
		cfg["admin"] = map[string]any{"listen": adminAddr, "config": map[string]any{"persist": false}}
	})
	// The previous config's server closes its idle connections as it shuts
	// down; a client that picks one for a POST gets EOF (Go retries only
	// idempotent requests). The clients here use the default transport.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	// caddy.Load returns once the old servers' shutdowns have started, not
	// once they have closed their listeners (Caddy's own comment in
	// caddyhttp.App.Stop): a connection made in between can be accepted by
	// the old server and reset. Give the shutdowns a moment.
	time.Sleep(100 * time.Millisecond)
}

// connect returns an initialized mcp-go client speaking the given protocol
// revision to endpoint (a path on the test Caddy).
func connect(t *testing.T, endpoint, era string, headers map[string]string) *client.Client {
	t.Helper()
	c, _ := mcptest.Connect(t, "http://"+liveAddr+endpoint, mcptest.Options{Era: era, Headers: headers})
	return c
}

// callTool calls a tool and fails the test on a protocol error.
func callTool(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := mcptest.CallTool(c, name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// wantOK checks a successful result and returns its text.
func wantOK(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected tool error: %s", mcptest.ResultText(res))
	}
	return mcptest.ResultText(res)
}

// wantToolError checks an isError result whose text holds every want.
func wantToolError(t *testing.T, res *mcp.CallToolResult, want ...string) string {
	t.Helper()
	text := mcptest.ResultText(res)
	if !res.IsError {
		t.Fatalf("want a tool error, got success: %s", text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Fatalf("tool error %q does not contain %q", text, w)
		}
	}
	return text
}

// echoed is the part of go-httpbin's /anything answer the tests read.
type echoed struct {
	Method  string              `json:"method"`
	URL     string              `json:"url"`
	Args    map[string][]string `json:"args"`
	Headers map[string][]string `json:"headers"`
	Form    map[string][]string `json:"form"`
	Data    string              `json:"data"`
	JSON    any                 `json:"json"`
}

func parseEcho(t *testing.T, res *mcp.CallToolResult) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal([]byte(wantOK(t, res)), &e); err != nil {
		t.Fatalf("upstream answer is not httpbin JSON: %v\n%s", err, mcptest.ResultText(res))
	}
	return e
}

// rawPost sends one JSON-RPC message as a plain HTTP request, for the
// cases an MCP client would not produce.
func rawPost(t *testing.T, path string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+liveAddr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return do(t, req)
}

// rawClient opens a connection per request: tests reload Caddy between
// requests, and an idle connection kept from the previous config may be
// closed by its server just as the next POST is written on it, which Go
// does not retry.
var rawClient = &http.Client{
	Timeout:   15 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true},
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// stillServing checks that the endpoint answers a ping after a bad input.
func stillServing(t *testing.T, path string) {
	t.Helper()
	resp, body := rawPost(t, path, []byte(pingBody), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":{}`) {
		t.Fatalf("endpoint stopped serving: %d %s", resp.StatusCode, body)
	}
}

func mcpListTools() mcp.ListToolsRequest { return mcp.ListToolsRequest{} }

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
// has not returned counts as hung. Both are hang guards, far above what a
// request takes: a target checks the limits it configures (an execution
// timeout, a tool's timeout) by the request ending before its own
// deadline, not by the wall time it took.
const (
	fuzzRequestTimeout = 30 * time.Second
	fuzzHang           = 60 * time.Second
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

// servePost sends an MCP POST of body with header to the mcp handler h,
// as Caddy would hand it over (with a replacer), and returns the answer.
func servePost(t *testing.T, h *Handler, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, req, nil); err != nil {
		t.Fatal(err)
	}
	return w
}

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
// or from a returned caddyhttp.HandlerError), the answer, and whether the
// request's own deadline (fuzzRequestTimeout) had passed when the handler
// returned: then no limit of the handler ended the request.
func fuzzServe(t *testing.T, handle func(http.ResponseWriter, *http.Request) error, in fuzzRequest) (int, *httptest.ResponseRecorder, bool) {
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
	fuzzing.Within(t, fuzzHang, "the handler", func() { err = handle(w, req) })
	expired := ctx.Err() != nil
	status := w.Code
	if err != nil {
		var he caddyhttp.HandlerError
		if !errors.As(err, &he) {
			t.Fatalf("the handler returned an error that is not a caddyhttp.HandlerError: %v", err)
		}
		status = he.StatusCode
	}
	return status, w, expired
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
			"mcp {\n\tlist_ttl 0\n\tlist_ttl -1s\n\tlist_ttl 1us\n}",
			"mcp {\n\tupstream ://\n\tallow_origins http://[::1\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\thead /\n\t\tannotations read_only=maybe\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /\n\t\targ a string[] {\n\t\t\tdefault '[1,2]'\n\t\t\tenum a b\n\t\t}\n\t}\n}",
			"mcp {\n\timport x\n\t{$ENV}\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription <<EOF\n\t\tmulti\n\t\tEOF\n\t\tget /\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /\n\t\ttimeout 1ns\n\t\tquery a {http.request.header.X}\n\t\theader \"Bad Header\" v\n\t}\n}",
			"mcp {\n\ttool t {\n\t\tdescription d\n\t\tget /\n\t\targ region string required {\n\t\t\tenum eu us\n\t\t\tmirror_header Region\n\t\t}\n\t\targ zone number {\n\t\t\tmirror_header region\n\t\t}\n\t\targ x {\n\t\t\tmirror_header \"A B\"\n\t\t}\n\t}\n}",
			"mcp { tool t { description d; get / } }",
			"mcp {\n" + strings.Repeat("\ttool t {\n", 50) + strings.Repeat("\t}\n", 50) + "}",
		}
	}
	return []string{
		"codemode",
		"codemode {\n}",
		"codemode {\n\tbackend shop http://127.0.0.1:8080/mcp\n}",
		"codemode {\n\tbackend shop http://127.0.0.1:8080/mcp\n\tlist_ttl 1500ms\n}",
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
	var out []string
	for _, g := range adapttest.Goldens(tb, filepath.Join("testdata", "adapt", "*.caddyfiletest")) {
		lines := strings.Split(g.Input, "\n")
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

// execute runs code through a codemode endpoint's tool.
func execute(t *testing.T, c *client.Client, code string) *mcp.CallToolResult {
	t.Helper()
	return callTool(t, c, "execute", map[string]any{"code": code})
}

// listenOn starts an MCP server on addr (host:port); stop it with the
// returned function. stateful servers keep sessions, as older servers do,
// and speak only 2025-11-25.
func listenOn(t *testing.T, addr string, stateful bool) func() {
	t.Helper()
	srv := server.NewMCPServer("late", "1")
	srv.AddTool(mcp.NewTool("ping_back", mcp.WithString("word")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := req.Params.Arguments.(map[string]any)
		return mcp.NewToolResultText(fmt.Sprintf("pong %v", args["word"])), nil
	})
	opts := []server.StreamableHTTPOption{server.WithDisableLocalhostProtection(true)}
	if stateful {
		opts = append(opts, server.WithStateful(true), server.WithStreamableHTTPProtocolVersions("2025-11-25"))
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: server.NewStreamableHTTPServer(srv, opts...)}
	go hs.Serve(ln)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			hs.Close()
		}
	}
	t.Cleanup(stop)
	return stop
}

// loadCodeMode loads a codemode handler from its JSON config the way Caddy
// does when a config is loaded: strict decoding, then Provision and
// Validate. unload cancels the handler's context, which runs its Cleanup,
// as Caddy does when the config is replaced; it runs at most once, and at
// the end of the test if the test did not call it.
func loadCodeMode(t testing.TB, config string) (cm *CodeMode, unload func(), err error) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	// Caddy cancels a context once; a second cancel would run Cleanup again.
	unload = sync.OnceFunc(cancel)
	t.Cleanup(unload)
	mod, err := ctx.LoadModuleByID("http.handlers.codemode", json.RawMessage(config))
	if err != nil {
		return nil, unload, err
	}
	return mod.(*CodeMode), unload, nil
}

// loadCodeModeCaddyfile parses a codemode Caddyfile snippet, turns it into
// JSON as the adapter does, and loads that.
func loadCodeModeCaddyfile(t *testing.T, input string) (*CodeMode, func(), error) {
	t.Helper()
	cm, err := unmarshalCodeMode(input)
	if err != nil {
		t.Fatalf("the Caddyfile does not parse: %v", err)
	}
	config, err := json.Marshal(cm)
	if err != nil {
		t.Fatalf("the parsed handler does not marshal: %v", err)
	}
	return loadCodeMode(t, string(config))
}

// adaptCodeModeHandlers adapts a whole Caddyfile and returns the JSON of
// every codemode handler in it, without the "handler" key.
func adaptCodeModeHandlers(t *testing.T, input string) []json.RawMessage {
	t.Helper()
	return adapttest.Handlers(adapttest.Adapt(t, input), "codemode")
}

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

// adaptMCPHandlers adapts a whole Caddyfile with Caddy's own adapter and
// returns the JSON of every mcp handler in the result, in order, without
// the "handler" key (the module's own config, as LoadModuleByID takes it).
func adaptMCPHandlers(t *testing.T, input string) []json.RawMessage {
	t.Helper()
	return adapttest.Handlers(adapttest.Adapt(t, input), "mcp")
}

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

// asJSON renders v for failure messages, where %+v would print pointers.
func asJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// readLogs parses a JSON log file into entries.
func readLogs(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// loadObserved loads a codemode handler whose logs the test reads.
func loadObserved(t testing.TB, config string) (*CodeMode, *observer.ObservedLogs) {
	t.Helper()
	cm, _, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	cm.logger = zap.New(core)
	return cm, logs
}

// executeCode calls the execute tool as mcp-go does.
func executeCode(cm *CodeMode, args map[string]any) *mcp.CallToolResult {
	req := mcp.CallToolRequest{}
	req.Params.Name = cm.ToolName
	req.Params.Arguments = args
	res, _ := cm.execute(context.Background(), req)
	return res
}
