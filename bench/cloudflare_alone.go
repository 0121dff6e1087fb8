package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
)

// sandboxAlone is the 3-call script in this process's sandbox (goja,
// isolation in_process) with bindings that answer from memory: what the
// sandbox itself costs, without HTTP or MCP on either side of it.
type sandboxAlone struct {
	Median time.Duration
	Bytes  int64 // allocated per execution
}

func measureSandboxAlone() (*sandboxAlone, error) {
	runner, bindings := scriptInProcess()
	ctx := context.Background()
	res := runner.Run(ctx, cloudflareScript, bindings)
	if res.Err != nil {
		return nil, fmt.Errorf("the script in process: %s", res.Err.Message)
	}
	got, err := compactJSON(string(res.Value))
	if want, _ := compactJSON(cloudflareAnswer); err != nil || got != want {
		return nil, fmt.Errorf("the script in process returned %s, want %s", res.Value, want)
	}
	b := testing.Benchmark(func(b *testing.B) { runScript(b, runner, bindings) })
	var times []float64
	for i := 0; i < 300; i++ {
		start := time.Now()
		runner.Run(ctx, cloudflareScript, bindings)
		times = append(times, float64(time.Since(start)))
	}
	return &sandboxAlone{Median: time.Duration(median(times)), Bytes: b.AllocedBytesPerOp()}, nil
}

// runScript runs the script b.N times.
func runScript(b *testing.B, runner *sandbox.Runner, bindings []codemode.Binding) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res := runner.Run(context.Background(), cloudflareScript, bindings); res.Err != nil {
			b.Fatal(res.Err.Message)
		}
	}
}

// scriptInProcess is a runner and the shop binding answering from memory.
func scriptInProcess() (*sandbox.Runner, []codemode.Binding) {
	records := map[string][]byte{"get_order": []byte(cfOrder), "get_customer": []byte(cfCustomer), "get_shipment": []byte(cfShipment)}
	shop := codemode.Binding{Name: "shop",
		Tools: map[string]string{"get_order": "get_order", "get_customer": "get_customer", "get_shipment": "get_shipment"},
		Call: func(_ context.Context, tool string, _ []byte) (codemode.Answer, error) {
			if r, ok := records[tool]; ok {
				return codemode.Answer{Value: r}, nil
			}
			return codemode.Answer{}, fmt.Errorf("no tool %q", tool)
		}}
	return sandbox.NewRunner(codemode.Limits{}), []codemode.Binding{shop}
}
