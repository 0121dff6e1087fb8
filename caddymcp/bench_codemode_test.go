package caddymcp

import (
	"context"
	"encoding/json"
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
// MCP server, with about 1 KB of arguments and 1 KB of result. The
// difference is the sandbox's overhead per call (target: under 100 µs).
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

	b.Run("direct", func(b *testing.B) {
		c, err := client.NewStreamableHttpClient(hs.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
			b.Fatal(err)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"text": text}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < b.N; i++ {
			for j := 0; j < calls; j++ {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N*calls), "µs/call")
	})

	b.Run("codemode", func(b *testing.B) {
		backend := upstream.NewBackend(upstream.BackendConfig{Name: "api", URL: hs.URL})
		defer backend.Close()
		if _, err := backend.Tools(context.Background(), time.Now().Add(5*time.Second)); err != nil {
			b.Fatal(err)
		}
		binding := codemode.Binding{Name: "api", Tools: map[string]string{"echo": "echo"},
			Call: func(ctx context.Context, tool string, args []byte) ([]byte, error) { return backend.Call(ctx, tool, args) }}
		r := codemode.NewRunner(codemode.Limits{})
		code := `const text = "` + text + `"; let n = 0;
for (let i = 0; i < ` + "50" + `; i++) { const r = await api.echo({text}); n += r.text.length }
return n`
		ctx := context.Background()
		if res := r.Run(ctx, code, []codemode.Binding{binding}); res.Err != nil || string(res.Value) != "50000" {
			b.Fatalf("%v %s", res.Err, res.Value)
		}
		empty := `const text = "` + text + `"; return 0`
		b.ReportAllocs()
		b.ResetTimer()
		var withCalls, without time.Duration
		for i := 0; i < b.N; i++ {
			start := time.Now()
			r.Run(ctx, code, []codemode.Binding{binding})
			withCalls += time.Since(start)
			start = time.Now()
			r.Run(ctx, empty, []codemode.Binding{binding})
			without += time.Since(start)
		}
		b.ReportMetric(float64((withCalls-without).Microseconds())/float64(b.N*calls), "µs/call")
	})
}
