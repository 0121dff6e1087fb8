package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// BenchmarkBindingCall compares a tool call made from sandboxed code with
// the same call made directly with mcp-go's client, against an in-process
// MCP server, with about 1 KB of arguments and 1 KB of result, with the
// code run in this process and in a worker process. The difference is the
// sandbox's overhead per call (target: under 100 µs in process mode).
func BenchmarkBindingCall(b *testing.B) {
	srv := server.NewMCPServer("bench", "1")
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		out, _ := json.Marshal(req.Params.Arguments)
		return mcp.NewToolResultText(string(out)), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithStateLess(true), server.WithDisableLocalhostProtection(true)))
	defer hs.Close()
	text := strings.Repeat("x", 1000)
	const calls = 50

	ctx := context.Background()
	c, err := client.NewStreamableHttpClient(hs.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	// The same client identity as the backends send.
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "caddy-mcp", Version: "0.1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": text}

	backend := upstream.NewBackend(upstream.BackendConfig{Name: "api", URL: hs.URL})
	defer backend.Close()
	if _, err := backend.Tools(ctx, time.Now().Add(5*time.Second)); err != nil {
		b.Fatal(err)
	}
	binding := codemode.Binding{Name: "api", Tools: map[string]string{"echo": "echo"},
		Call: func(ctx context.Context, tool string, args []byte) ([]byte, error) {
			return backend.Call(ctx, tool, args)
		}}
	code := fmt.Sprintf(`const text = "%s"; let n = 0;
for (let i = 0; i < %d; i++) { const r = await api.echo({text}); n += r.text.length }
return n`, text, calls)
	empty := fmt.Sprintf(`const text = "%s"; return 0`, text)

	runners := map[string]func(b *testing.B) *codemode.Runner{
		isolationInProcess: func(*testing.B) *codemode.Runner { return codemode.NewRunner(codemode.Limits{}) },
		isolationProcess: func(b *testing.B) *codemode.Runner {
			return codemode.NewProcessRunner(codemode.Limits{}, warmPool(b, 1))
		},
	}
	for _, mode := range []string{isolationInProcess, isolationProcess} {
		b.Run(mode, func(b *testing.B) {
			r := runners[mode](b)
			if res := r.Run(ctx, code, []codemode.Binding{binding}); res.Err != nil || string(res.Value) != "50000" {
				b.Fatalf("%v %s", res.Err, res.Value)
			}
			// Interleaved, so that all three see the same machine.
			var direct, withCalls, without time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				for j := 0; j < calls; j++ {
					if _, err := c.CallTool(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
				direct += time.Since(start)
				start = time.Now()
				r.Run(ctx, code, []codemode.Binding{binding})
				withCalls += time.Since(start)
				start = time.Now()
				r.Run(ctx, empty, []codemode.Binding{binding})
				without += time.Since(start)
			}
			perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N*calls) }
			b.ReportMetric(perCall(direct), "direct-µs/call")
			b.ReportMetric(perCall(withCalls-without), "sandbox-µs/call")
			b.ReportMetric(perCall(withCalls-without-direct), "overhead-µs/call")
		})
	}
}

// warmPool is a pool of this test binary's workers, all started, closed
// when the benchmark ends.
func warmPool(b *testing.B, workers int) *codemode.Pool {
	b.Helper()
	p, err := codemode.NewPool(codemode.PoolConfig{Workers: workers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Close)
	for deadline := time.Now().Add(10 * time.Second); p.Workers() < workers; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d workers started within 10s", p.Workers(), workers)
		}
	}
	return p
}

// BenchmarkManyToolsOfOneName: a backend listing 20,000 tools named "t".
// It reports what a change of the tool list costs once (naming the tools
// and writing the declarations), what each tools/list costs after it,
// and an execution of `return 1`.
func BenchmarkManyToolsOfOneName(b *testing.B) {
	cm, _ := loadObserved(b, `{"timeout":"10s","backends":[{"name":"api","url":"`+sameNameBackend(b, 20000, "").URL+`"}]}`)
	waitListed(b, cm)
	ctx := context.Background()
	tools := []mcp.Tool{{Name: cm.ToolName}}
	var changed, listed, executed time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cm.describe.mu.Lock()
		cm.describe.views, cm.describe.built = nil, false // as after a change
		cm.describe.mu.Unlock()
		start := time.Now()
		cm.describe.filter(ctx, tools)
		changed += time.Since(start)
		start = time.Now()
		cm.describe.filter(ctx, tools)
		listed += time.Since(start)
		start = time.Now()
		if res := executeCode(cm, map[string]any{"code": "return 1"}); res.IsError {
			b.Fatal(resultText(res))
		}
		executed += time.Since(start)
	}
	per := func(d time.Duration, unit time.Duration) float64 { return float64(d) / float64(unit) / float64(b.N) }
	b.ReportMetric(per(changed, time.Millisecond), "change-ms")
	b.ReportMetric(per(listed, time.Microsecond), "list-µs")
	b.ReportMetric(per(executed, time.Millisecond), "execute-ms")
}
