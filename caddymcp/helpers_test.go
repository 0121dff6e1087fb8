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
	"go.uber.org/zap"

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
