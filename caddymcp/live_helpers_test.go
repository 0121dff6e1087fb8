package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mccutchen/go-httpbin/v2/httpbin"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
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

// startHTTPBin runs go-httpbin on 127.0.0.1 and returns its base URL.
func startHTTPBin(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(httpbin.New(httpbin.WithMaxDuration(10 * time.Second)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// connect returns an initialized mcp-go client speaking the given protocol
// revision to endpoint (a path on the test Caddy).
func connect(t *testing.T, endpoint, era string, headers map[string]string) *client.Client {
	t.Helper()
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(20 * time.Second)}
	if headers != nil {
		opts = append(opts, transport.WithHTTPHeaders(headers))
	}
	tr, err := transport.NewStreamableHTTP("http://"+liveAddr+endpoint, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(era))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = era
	req.Params.ClientInfo = mcp.Implementation{Name: "caddy-mcp-test", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize (%s): %v", era, err)
	}
	if res.ProtocolVersion != era {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, era)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// callTool calls a tool and fails the test on a protocol error.
func callTool(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := callToolErr(c, name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func callToolErr(c *client.Client, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// resultText joins the text content of a result.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// wantOK checks a successful result and returns its text.
func wantOK(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected tool error: %s", resultText(res))
	}
	return resultText(res)
}

// wantToolError checks an isError result whose text holds every want.
func wantToolError(t *testing.T, res *mcp.CallToolResult, want ...string) string {
	t.Helper()
	text := resultText(res)
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
		t.Fatalf("upstream answer is not httpbin JSON: %v\n%s", err, resultText(res))
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
