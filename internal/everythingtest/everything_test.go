//go:build unix

// Package everythingtest runs a codemode endpoint against an MCP server that
// no one on this project wrote: @modelcontextprotocol/server-everything from
// npm, installed from interop/package-lock.json and started as a streamable
// HTTP server on 127.0.0.1. The same codemode endpoint also aggregates an
// `mcp` endpoint of the same Caddy, so the code calls tools of both.
//
// Without Node the test is skipped and says why. It is a package of its own
// so that it runs in its own test binary: caddy.Load replaces the running
// config of the whole process.
package everythingtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	_ "github.com/caddy-mcp/caddy-mcp"
	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
)

// everythingMain is server-everything's entry point, relative to interop/.
const everythingMain = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// TestEverything runs code on a codemode endpoint whose backends are
// server-everything and an `mcp` endpoint in front of a small REST API,
// in both protocol eras of the client.
func TestEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node and Caddy")
	}
	everythingURL, _ := runEverything(t)
	realTools := listTools(t, everythingURL)
	shopURL := startShop(t)
	base := startCaddy(t, everythingURL, shopURL)
	firstListingComplete(t, base+"/code")

	for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			s := newSession(t, base+"/code", version)

			t.Run("one tool that declares both backends", func(t *testing.T) {
				checkDeclarations(t, s, realTools)
			})

			t.Run("code calls tools of both backends", func(t *testing.T) {
				res := s.execute(t, `
const [echo, sum, product] = await Promise.all([
  everything.echo({ message: "hello from codemode" }),
  everything.get_sum({ a: 19, b: 23 }),
  shop.get_product({ sku: "TEA-01" }),
]);
const weather = await everything.get_structured_content({ location: "Chicago" });
const n = Number(/ is (-?[0-9.]+)\.$/.exec(sum)[1]);
console.log("sum says:", sum);
return { echo, n, stock: product.stock, total: n + product.stock, humidity: weather.humidity };
`)
				s.wantResult(t, res, `{"echo":"Echo: hello from codemode","n":42,"stock":7,"total":49,"humidity":82}`,
					[]string{"sum says: The sum of 19 and 23 is 42."})
			})

			t.Run("TypeScript chaining both backends", func(t *testing.T) {
				res := s.execute(t, `
interface Product { sku: string; name: string; price: number; stock: number }
const p: Product = await shop.get_product({ sku: "MUG-02" });
const total: string = await everything.get_sum({ a: p.price, b: 0.5 });
const line = await everything.echo({ message: `+"`${p.name}: ${total}`"+` });
return line;
`)
				s.wantResult(t, res, `"Echo: Stoneware mug: The sum of 12.25 and 0.5 is 12.75."`, nil)
			})

			t.Run("content that is not all text comes back as the content array", func(t *testing.T) {
				res := s.execute(t, `
const content = await everything.get_tiny_image({});
return content.map((c) => c.type === "image" ? [c.type, c.mimeType, c.data.length > 100] : [c.type, c.text]);
`)
				s.wantResult(t, res, `[["text","Here's the image you requested:"],["image","image/png",true],["text","The image above is the MCP logo."]]`, nil)
			})

			t.Run("a failing everything call throws an Error the code catches", func(t *testing.T) {
				res := s.execute(t, `
try {
  await everything.get_sum({ a: "nineteen", b: 23 });
  return "no error";
} catch (e) {
  return { isError: e instanceof Error, backend: e.backend, tool: e.tool, message: e.message };
}
`)
				var got struct {
					IsError bool   `json:"isError"`
					Backend string `json:"backend"`
					Tool    string `json:"tool"`
					Message string `json:"message"`
				}
				s.resultValue(t, res, &got)
				t.Logf("caught: %s", got.Message)
				if !got.IsError || got.Backend != "everything" || got.Tool != "get_sum" ||
					!strings.HasPrefix(got.Message, "everything.get_sum: ") || !strings.Contains(got.Message, "number") {
					t.Errorf("caught %+v; want an Error from everything.get_sum whose message names the expected type (number)", got)
				}
			})

			t.Run("an uncaught failing call fails the execution with the backend's message", func(t *testing.T) {
				res := s.call(t, `await everything.get_structured_content({ location: "Atlantis" }); return "no error";`)
				text := mcptest.ResultText(res)
				t.Logf("execution error: %s", text)
				if !res.IsError || !strings.Contains(text, "everything.get_structured_content: ") || !strings.Contains(text, "location") {
					t.Errorf("isError=%v %q; want an execution error naming everything.get_structured_content and location", res.IsError, text)
				}
			})

			t.Run("a failing shop call throws too", func(t *testing.T) {
				res := s.execute(t, `
try {
  await shop.get_product({ sku: "NOPE-00" });
  return "no error";
} catch (e) {
  return [e instanceof Error, e.backend, e.tool, e.message.startsWith("shop.get_product: ") && e.message.includes("404")];
}
`)
				s.wantResult(t, res, `[true,"shop","get_product",true]`, nil)
			})
		})
	}
}

// runEverything installs interop/'s pinned server-everything and starts
// it, or skips the test where Node is missing; it returns its URL and
// the interop folder it was installed in.
func runEverything(t *testing.T) (url, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node not found on PATH: %v; this test runs @modelcontextprotocol/server-everything from interop/", err)
	}
	dir, err = filepath.Abs(filepath.Join("..", "..", "interop"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
		t.Fatalf("interop/package-lock.json: %v", err)
	}
	npmtest.Install(t, dir, strings.TrimPrefix(everythingMain, "node_modules/"))
	return startEverything(t, node, dir), dir
}

// startEverything starts server-everything in streamable HTTP mode on a
// free port of 127.0.0.1 and returns its MCP URL. interop/loopback.cjs
// pins every listen() to 127.0.0.1: the server itself binds all
// interfaces and has no option for the host. The whole process group is
// killed when the test ends.
func startEverything(t *testing.T, node, dir string) string {
	t.Helper()
	port := incaddy.FreePort(t)
	cmd := exec.Command(node, "--require", "./loopback.cjs", everythingMain, "streamableHttp")
	cmd.Dir = dir
	// A small environment: the server has a tool (get-env) that returns
	// its whole environment.
	cmd.Env = []string{"PORT=" + port, "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NODE_ENV=production"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, stderr := &proctest.Output{}, &proctest.Output{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting server-everything: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("server-everything stderr:\n%s", stderr.String())
			t.Logf("server-everything stdout (last lines):\n%s", lastLines(stdout.String(), 30))
		}
	})

	addr := "127.0.0.1:" + port
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("server-everything exited before it listened (%v); stderr:\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s within 20s; stderr:\n%s", addr, stderr.String())
		}
	}
	t.Logf("server-everything listens on %s after %s", addr, time.Since(start).Round(time.Millisecond))
	checkLoopbackOnly(t, port, cmd.Process.Pid)
	return "http://" + addr + "/mcp"
}

// checkLoopbackOnly checks in /proc/net that every listening socket on
// port is bound to 127.0.0.1, so that the loopback shim really worked.
func checkLoopbackOnly(t *testing.T, port string, pid int) {
	t.Helper()
	p, _ := strconv.Atoi(port)
	wantPort := fmt.Sprintf("%04X", p)
	found := 0
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			host, lport, ok := strings.Cut(fields[1], ":")
			if !ok || lport != wantPort {
				continue
			}
			found++
			if host != "0100007F" { // 127.0.0.1, little-endian
				t.Errorf("a socket listens on port %s at %s (%s), not 127.0.0.1 only: is interop/loopback.cjs preloaded?", port, host, file)
			}
		}
		f.Close()
	}
	if found == 0 {
		t.Logf("no listening socket for port %s in /proc/net; the loopback check was not made (pid %d)", port, pid)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// listTools lists server-everything's tools directly, as the codemode
// backend does: mcp-go's client with no capabilities.
func listTools(t *testing.T, url string) []mcp.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	c, err := client.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "everythingtest", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize server-everything directly: %v", err)
	}
	t.Logf("server-everything: %s %s, protocol %s", res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion)
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list on server-everything: %v", err)
	}
	names := make([]string, len(list.Tools))
	for i, tool := range list.Tools {
		names[i] = tool.Name
	}
	t.Logf("server-everything tools: %s", strings.Join(names, ", "))
	for _, want := range []string{"echo", "get-sum", "get-structured-content"} {
		if !slices.Contains(names, want) {
			t.Fatalf("server-everything has no %s tool any more (tools: %v); update this test", want, names)
		}
	}
	return list.Tools
}

// startShop starts a small REST API on 127.0.0.1.
func startShop(t *testing.T) string {
	t.Helper()
	products := map[string]map[string]any{
		"TEA-01": {"sku": "TEA-01", "name": "Green tea, 100 g", "price": 8.5, "stock": 7},
		"MUG-02": {"sku": "MUG-02", "name": "Stoneware mug", "price": 12.25, "stock": 0},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /products/{sku}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p, ok := products[r.PathValue("sku")]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"no such product"}`)
			return
		}
		json.NewEncoder(w).Encode(p)
	})
	srv := httptest.NewServer(mux) // on 127.0.0.1
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("the shop API listens on %s, not 127.0.0.1", srv.URL)
	}
	return srv.URL
}

// startCaddy runs Caddy in this process, from a Caddyfile, on a free
// loopback port and without the admin endpoint: an `mcp` endpoint for the
// shop API and a `codemode` endpoint aggregating it and server-everything.
// It returns Caddy's base URL and stops when the test ends.
func startCaddy(t *testing.T, everythingURL, shopURL string) string {
	t.Helper()
	port := incaddy.FreePort(t)
	text := fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%[1]s {
	mcp /shop {
		name shop
		upstream %[2]s
		tool get_product {
			description "Get a product by SKU: name, price and stock."
			get /products/{sku}
			arg sku string required "Product SKU, such as TEA-01"
		}
	}
	codemode /code {
		name everything-and-shop
		# The clients read every declaration: past 2 KB, auto would offer search.
		discovery all
		backend everything %[3]s {
			timeout 10s
		}
		backend shop http://127.0.0.1:%[1]s/shop
		timeout 20s
	}
}
`, port, shopURL, everythingURL)
	incaddy.Run(t, "everythingtest", text, nil)
	return "http://127.0.0.1:" + port
}

// firstListingComplete checks the cold start: the codemode backends
// connect in the background from Provision, before Caddy listens, so the
// first attempt to reach shop (served by this same Caddy) is refused. The
// first tools/list must still declare both backends: it waits (about 2 s)
// for first connections, not for first attempts.
func firstListingComplete(t *testing.T, url string) {
	t.Helper()
	s := newSession(t, url, mcp.LATEST_PROTOCOL_VERSION)
	list, err := s.c.ListTools(s.ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 {
		t.Fatalf("%d tools, want 1", len(list.Tools))
	}
	if d := list.Tools[0].Description; strings.Contains(d, "unavailable right now") {
		i := strings.Index(d, "unavailable right now")
		t.Fatalf("the first tools/list calls a backend unavailable: %s", d[i:min(len(d), i+200)])
	}
}

type session struct {
	c   *client.Client
	ctx context.Context
}

func newSession(t *testing.T, url, version string) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	c, _ := mcptest.Connect(t, url, mcptest.Options{Era: version, Name: "everythingtest"})
	return &session{c: c, ctx: ctx}
}

// checkDeclarations checks that tools/list shows the one tool, execute,
// whose description declares every tool server-everything listed, typed,
// and the shop's tool.
func checkDeclarations(t *testing.T, s *session, realTools []mcp.Tool) {
	t.Helper()
	list, err := s.c.ListTools(s.ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "execute" {
		names := make([]string, len(list.Tools))
		for i, tool := range list.Tools {
			names[i] = tool.Name
		}
		t.Fatalf("tools %v, want only execute", names)
	}
	d := list.Tools[0].Description
	want := []string{
		"declare const everything: {",
		"declare const shop: {",
		// The real tools, typed from their schemas.
		"/** Echoes back the input string */\n",
		"echo(input: { /** Message to echo */ message: string }): Promise<unknown>;",
		"* Returns the sum of two numbers\n",
		`* Calls the backend tool "get-sum".`,
		"get_sum(input: { /** First number */ a: number; /** Second number */ b: number }): Promise<unknown>;",
		// An enum is a union of literals; an outputSchema gives the result type.
		`get_structured_content(input: { /** Choose city */ location: "New York" | "Chicago" | "Los Angeles" }): Promise<EverythingGetStructuredContentOutput>;`,
		"type EverythingGetStructuredContentOutput = {",
		"/** Humidity percentage */\n  humidity: number;",
		"get_product(input: { /** Product SKU, such as TEA-01 */ sku: string }): Promise<unknown>;",
	}
	tools := make([]codemode.APITool, len(realTools))
	for i, tool := range realTools {
		tools[i] = codemode.APITool{Name: tool.Name}
	}
	api := codemode.NewBackendAPI(codemode.APIBackend{Name: "everything", Tools: tools})
	for _, id := range slices.Sorted(maps.Keys(api.Tools())) {
		want = append(want, "  "+id+"(input")
	}
	for _, w := range want {
		if !strings.Contains(d, w) {
			t.Errorf("the description lacks %q", w)
		}
	}
	if strings.Contains(d, "unavailable") {
		t.Errorf("the description says a backend is unavailable")
	}
	if t.Failed() {
		t.Logf("description:\n%s", d)
	}
}

// call runs code and returns the tool result; a failure of the call
// itself (not a tool error) ends the test.
func (s *session) call(t *testing.T, code string) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = "execute"
	req.Params.Arguments = map[string]any{"code": code}
	res, err := s.c.CallTool(s.ctx, req)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return res
}

// execute runs code that must succeed.
func (s *session) execute(t *testing.T, code string) *mcp.CallToolResult {
	t.Helper()
	res := s.call(t, code)
	if res.IsError {
		t.Fatalf("execute: isError: %s", mcptest.ResultText(res))
	}
	return res
}

// resultValue decodes the code's return value from structuredContent.
func (s *session) resultValue(t *testing.T, res *mcp.CallToolResult, v any) []string {
	t.Helper()
	var out struct {
		Result json.RawMessage `json:"result"`
		Logs   []string        `json:"logs"`
	}
	if err := json.Unmarshal(res.RawStructuredContent, &out); err != nil {
		t.Fatalf("structuredContent %s: %v", res.RawStructuredContent, err)
	}
	if err := json.Unmarshal(out.Result, v); err != nil {
		t.Fatalf("result %s: %v", out.Result, err)
	}
	return out.Logs
}

// wantResult checks the returned value (as JSON) and the logs exactly.
func (s *session) wantResult(t *testing.T, res *mcp.CallToolResult, wantJSON string, wantLogs []string) {
	t.Helper()
	var got, want any
	logs := s.resultValue(t, res, &got)
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		gotJSON, _ := json.Marshal(got)
		t.Errorf("result %s\nwant   %s", gotJSON, wantJSON)
	}
	if wantLogs == nil {
		wantLogs = []string{}
	}
	if !reflect.DeepEqual(logs, wantLogs) {
		t.Errorf("logs %q, want %q", logs, wantLogs)
	}
}
