//go:build unix

// Package browsertest drives a real browser against the MCP endpoints:
// Debian's headless Chromium, started by puppeteer-core, loads a page from
// another origin on 127.0.0.1 whose script is the TypeScript SDK's client,
// bundled for the browser with esbuild. The browser's own fetch then sends
// the MCP requests, CORS preflights and all, so what is checked is what a
// web application meets, not what a client in Node would.
//
// Without Chromium the test is skipped and says why, unless CI is set: CI
// installs it (.ci/run) and a missing browser there is a failure. It is a
// package of its own so that it runs in its own test binary: caddy.Load
// replaces the running config of the whole process.
package browsertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/caddy-mcp/caddy-mcp"
	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
)

// TestBrowser loads the page from an origin in allow_origins, where the
// client connects, lists the tools and calls one: on the `mcp` endpoint in
// each negotiation mode (the 2025 handshake, server/discover first,
// 2026-07-28 pinned), and on the `codemode` endpoint. And from
// an origin that is not, where the browser stops at the refused preflight
// and no tool runs. What Caddy saw comes from its access log.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium, Node and Caddy")
	}
	t.Parallel() // the package's only Caddy; its browsers have profiles of their own
	b := newBrowser(t)
	bundle := bundlePage(t)
	allowed := startPageServer(t, bundle)
	refused := startPageServer(t, bundle)
	upstream := startCountingHTTPBin(t)
	log := &accessLogFile{name: filepath.Join(t.TempDir(), "access.log")}
	base := startCaddy(t, upstream.url, log.name, allowed)

	// Each run has a fresh profile, so nothing of an earlier run (the
	// preflight cache above all) carries over.
	for _, c := range []struct {
		name, path, mode, protocol string
		modernHeaders              bool // Mcp-Method and Mcp-Name on each request
		tools                      []string
		tool, args                 string
		result                     func(result) (string, bool) // what the call returned, and whether it is what was wanted
	}{
		{name: "mcp, legacy", path: "/mcp", mode: "legacy", protocol: "2025-11-25",
			tools: []string{"echo", "uuid"}, tool: "echo", args: `{"word":"from-the-browser"}`, result: echoedWord},
		{name: "mcp, auto", path: "/mcp", mode: "auto", protocol: "2026-07-28", modernHeaders: true,
			tools: []string{"echo", "uuid"}, tool: "echo", args: `{"word":"from-the-browser"}`, result: echoedWord},
		{name: "mcp, 2026-07-28", path: "/mcp", mode: "2026-07-28", protocol: "2026-07-28", modernHeaders: true,
			tools: []string{"echo", "uuid"}, tool: "echo", args: `{"word":"from-the-browser"}`, result: echoedWord},
		{name: "codemode, auto", path: "/code", mode: "auto", protocol: "2026-07-28", modernHeaders: true,
			tools: []string{"execute"}, tool: "execute",
			args:   `{"code":"const r = await httpbin.echo({ word: \"from-the-browser\" }); return r.args.word;"}`,
			result: returnedWord},
	} {
		t.Run("an allowed origin lists and calls tools, "+c.name, func(t *testing.T) {
			before := upstream.count()
			log.skip(t)
			r := b.run(t, pageURL(allowed, base+c.path, c.mode, c.tool, c.args))
			o := r.Outcome
			if o.Error != nil {
				t.Fatalf("the page's client failed after steps %v: %s: %s", o.Steps, o.Error.Name, o.Error.Message)
			}
			t.Logf("protocol %q, server %v", o.ProtocolVersion, o.Server)
			if o.ProtocolVersion != c.protocol {
				t.Errorf("the client negotiated %q; want %q", o.ProtocolVersion, c.protocol)
			}
			if !slices.Equal(o.Tools, c.tools) {
				t.Errorf("listed tools %v; want %v", o.Tools, c.tools)
			}
			if got, ok := c.result(o.Result); o.Result.IsError || !ok {
				t.Errorf("%s's result: isError=%v, %s; want the word from-the-browser, echoed by go-httpbin", c.tool, o.Result.IsError, got)
			}
			if got := upstream.since(before); !slices.Equal(got, []string{"word=from-the-browser"}) {
				t.Errorf("the upstream got the queries %q; want one call with word=from-the-browser", got)
			}

			entries := log.next(t)
			preflights := entries.preflights(t, allowed)
			asked := ""
			for _, e := range preflights {
				asked += e.header("Access-Control-Request-Headers") + ","
				if e.Status != 204 || e.header("Access-Control-Request-Method") != "POST" || e.responseHeader("Access-Control-Allow-Origin") != allowed {
					t.Errorf("preflight from %s for %q: status %d, Access-Control-Allow-Origin %q; want 204 for a POST, allowing %s",
						allowed, e.header("Access-Control-Request-Method"), e.Status, e.responseHeader("Access-Control-Allow-Origin"), allowed)
				}
			}
			posts := entries.from(allowed, "POST")
			if len(posts) < 3 { // at the least the handshake, tools/list and tools/call
				t.Errorf("%d POSTs from %s in Caddy's access log; want at least 3:\n%s", len(posts), allowed, entries)
			}
			for _, e := range posts {
				if e.Status >= 300 {
					t.Errorf("POST from %s answered %d; want 2xx", allowed, e.Status)
				}
			}
			if c.modernHeaders {
				// The preflight let the 2026-07-28 headers through, and the
				// call carried them.
				if !strings.Contains(strings.ToLower(asked), "mcp-method") {
					t.Errorf("no preflight asked for Mcp-Method (asked for %q)", asked)
				}
				if !slices.ContainsFunc(posts, func(e accessEntry) bool {
					return e.header("Mcp-Method") == "tools/call" && e.header("Mcp-Name") == c.tool
				}) {
					t.Errorf("no POST carried Mcp-Method: tools/call and Mcp-Name: %s:\n%s", c.tool, entries)
				}
			}
		})
	}

	for _, mode := range []string{"legacy", "auto"} {
		t.Run("an origin not in allow_origins is refused, "+mode, func(t *testing.T) {
			before := upstream.count()
			log.skip(t)
			r := b.run(t, pageURL(refused, base+"/mcp", mode, "echo", `{"word":"never-sent"}`))
			o := r.Outcome
			if o.Error == nil || slices.Contains(o.Steps, "connected") {
				t.Fatalf("the client from %s got through: steps %v, tools %v; want connect to fail", refused, o.Steps, o.Tools)
			}
			t.Logf("connect failed as it should: %s: %s", o.Error.Name, o.Error.Message)
			if !slices.ContainsFunc(r.Console, func(line string) bool { return strings.Contains(line, "CORS") }) {
				t.Errorf("the browser's console says nothing of CORS: %q", r.Console)
			}
			if got := upstream.since(before); len(got) != 0 {
				t.Errorf("the upstream got %q from a refused origin; want nothing", got)
			}
			entries := log.next(t)
			preflights := entries.preflights(t, refused)
			for _, e := range preflights {
				if e.Status != 403 || e.responseHeader("Access-Control-Allow-Origin") != "" {
					t.Errorf("preflight from %s: status %d, Access-Control-Allow-Origin %q; want 403 and none", refused, e.Status, e.responseHeader("Access-Control-Allow-Origin"))
				}
			}
			if others := slices.DeleteFunc(slices.Clone(entries), func(e accessEntry) bool { return e.Request.Method == "OPTIONS" }); len(others) != 0 {
				t.Errorf("requests other than the preflight reached Caddy; want none: the browser sends nothing after a refused preflight:\n%s", others)
			}
		})
	}
}

// TestDriverTimeout loads a page whose script never finishes: the driver
// gives up at its timeout, says how far it got, and leaves no Chromium
// running (drive checks that).
func TestDriverTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium and Node")
	}
	t.Parallel()
	b := newBrowser(t)
	page := startPageServer(t, []byte("// never sets window.outcome\n"))
	start := time.Now()
	d := b.drive(t, page+"/", 5*time.Second)
	took := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(d.err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("drive.mjs: %v; want exit status 3\nstdout:\n%s\nstderr:\n%s", d.err, d.stdout, d.stderr)
	}
	if want := "no outcome within 5000 ms"; !strings.Contains(d.report.DriverError, want) {
		t.Errorf("the driver's error is %q; want it to say %q", d.report.DriverError, want)
	}
	if _, ok := d.report.Ms["outcome"]; ok {
		t.Errorf("the report has an outcome time (%v); want none", d.report.Ms)
	}
	t.Logf("the driver gave up after %s (its milliseconds: %v)", took.Round(time.Millisecond), d.report.Ms)
}

// echoedWord reads go-httpbin's echo of the request from an `mcp` tool's
// result.
func echoedWord(r result) (string, bool) {
	text := r.text()
	var echoed struct {
		Args map[string][]string `json:"args"`
	}
	if json.Unmarshal([]byte(text), &echoed) != nil {
		return text, false
	}
	return text, slices.Equal(echoed.Args["word"], []string{"from-the-browser"})
}

// returnedWord reads the code's return value from execute's result.
func returnedWord(r result) (string, bool) {
	var out struct {
		Result []string `json:"result"`
	}
	if json.Unmarshal(r.StructuredContent, &out) != nil {
		return string(r.StructuredContent), false
	}
	return string(r.StructuredContent), slices.Equal(out.Result, []string{"from-the-browser"})
}

// pageURL is the test page on origin, told to connect to endpoint in the
// given negotiation mode and call tool with args (JSON).
func pageURL(origin, endpoint, mode, tool, args string) string {
	q := url.Values{"endpoint": {endpoint}, "mode": {mode}, "tool": {tool}, "args": {args}}
	return origin + "/?" + q.Encode()
}

// startCaddy runs Caddy in this process with an access log in JSON and
// two endpoints that allow the page's origin: `mcp` at /mcp over
// go-httpbin, and `codemode` at /code over /mcp. It returns Caddy's base
// URL.
func startCaddy(t *testing.T, httpbin, logFile, origin string) string {
	t.Helper()
	port := incaddy.FreePort(t)
	text := fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%[1]s {
	log {
		output file %[2]q
		format json
	}
	mcp /mcp {
		name httpbin
		upstream %[3]s
		allow_origins %[4]s
		tool echo {
			description "Echo a word back: go-httpbin's /anything answers with the request it got."
			get /anything
			arg word string required "The word to echo"
		}
		tool uuid {
			description "A random UUID."
			get /uuid
		}
	}
	codemode /code {
		name httpbin-code
		backend httpbin http://127.0.0.1:%[1]s/mcp
		allow_origins %[4]s
		timeout 20s
	}
}
`, port, logFile, httpbin, origin)
	incaddy.Run(t, "browsertest", text, nil)
	return "http://127.0.0.1:" + port
}

// outcome is what the page's client did (window.outcome in page.mjs).
type outcome struct {
	Origin          string   `json:"origin"`
	Steps           []string `json:"steps"`
	ProtocolVersion string   `json:"protocolVersion"`
	Server          any      `json:"server"`
	Tools           []string `json:"tools"`
	Result          result   `json:"result"`
	Error           *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"error"`
}

type result struct {
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (r result) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}
