// Package codemodetest runs the code mode packages' test executions in
// worker processes of the test binary itself, with the backend and the
// checks those tests share.
package codemodetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
)

// pool runs the test binary's executions in worker processes: the test
// binary, started again with PoolWorker after worker.Command.
var pool *worker.Pool

// PoolWorker marks the test pool's workers on their command line, so
// that tests counting their own pools' processes can tell the test
// pool's apart.
const PoolWorker = "codemode-test-pool"

// ChildTest, set in the environment, makes the test binary one that tests
// its own confinement, with no test pool.
const ChildTest = "CODEMODE_CHILD_TEST"

// Main is the test binary's TestMain: started as a worker, it serves as
// one; else it runs the tests with a pool of its own workers, unless it
// is a child that tests its confinement.
func Main(m *testing.M) {
	worker.Main()
	if os.Getenv(ChildTest) != "" {
		os.Exit(m.Run())
	}
	self, err := os.Executable()
	if err == nil {
		// The heap ceiling the tests' expectations were written for.
		pool, err = worker.NewPool(worker.PoolConfig{Command: []string{self, worker.Command, PoolWorker}, Workers: 2,
			MaxMemory: codemode.DefaultMaxMemory * 4 / 3})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	pool.Close()
	os.Exit(code)
}

// Pool is the test pool, for a test that compares its own pool with it.
func Pool() *worker.Pool { return pool }

// Runner is the runner the tests use: executions in the test pool's
// workers, as every execution runs in Caddy.
func Runner(l codemode.Limits) *worker.Runner { return worker.NewRunner(l, pool) }

// Run runs code in the test pool under l.
func Run(t testing.TB, l codemode.Limits, code string, bindings ...codemode.Binding) *codemode.Result {
	t.Helper()
	return Runner(l).Run(context.Background(), code, bindings)
}

// WantValue fails t unless res is the value want.
func WantValue(t testing.TB, res *codemode.Result, want string) {
	t.Helper()
	if res.Err != nil {
		t.Fatalf("unexpected error: %v\nlogs: %v", res.Err, res.Logs)
	}
	if string(res.Value) != want {
		t.Fatalf("value %s, want %s", res.Value, want)
	}
}

// WantError fails t unless res is an error of kind whose text holds each
// of contains.
func WantError(t testing.TB, res *codemode.Result, kind string, contains ...string) {
	t.Helper()
	if res.Err == nil {
		t.Fatalf("want %s, got value %s", kind, res.Value)
	}
	if res.Err.Kind != kind {
		t.Fatalf("want %s, got %v", kind, res.Err)
	}
	for _, c := range contains {
		if !strings.Contains(res.Err.Error(), c) {
			t.Fatalf("error %q does not contain %q", res.Err.Error(), c)
		}
	}
}

// Healthy fails t unless a normal execution still works, after a hostile
// one.
func Healthy(t testing.TB) {
	t.Helper()
	WantValue(t, Run(t, codemode.Limits{}, `return [1, 2, 3].map(x => x * 2).join("-")`), `"2-4-6"`)
}

// Echo is a backend that answers every tool with {"tool": ..., "args":
// ...} after Delay and records how many calls overlapped.
type Echo struct {
	Delay   time.Duration
	running atomic.Int32
	MaxSeen atomic.Int32
	Calls   atomic.Int32
}

// Binding is the backend as the global name, with the tools echo, fail
// (which fails with a tool error) and get_weather (get-weather).
func (e *Echo) Binding(name string) codemode.Binding {
	return codemode.Binding{
		Name:  name,
		Tools: map[string]string{"echo": "echo", "fail": "fail", "get_weather": "get-weather"},
		Call: func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
			e.Calls.Add(1)
			n := e.running.Add(1)
			defer e.running.Add(-1)
			for {
				m := e.MaxSeen.Load()
				if n <= m || e.MaxSeen.CompareAndSwap(m, n) {
					break
				}
			}
			select {
			case <-time.After(e.Delay):
			case <-ctx.Done():
				return codemode.Answer{}, ctx.Err()
			}
			if tool == "fail" {
				return codemode.Answer{}, &codemode.ToolError{Message: "the backend says no"}
			}
			return codemode.Answer{Value: []byte(fmt.Sprintf(`{"tool":%q,"args":%s}`, tool, args))}, nil
		},
	}
}

// OrdersJSON is an answer like the bench's list of 50 orders, about
// 35 KB.
func OrdersJSON() string {
	var sb strings.Builder
	sb.WriteString(`{"orders":[`)
	for i := 0; i < 50; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"ord-%04d","status":"shipped","total":%d.%02d,"currency":"EUR","created":"2026-11-%02dT10:00:00Z",`+
			`"customer":{"id":"cus-%03d","name":"Customer %d","email":"c%d@example.com"},"items":[`, i, 100+(i*37)%500, i, 1+i%28, i%17, i, i)
		for j := 0; j < 5; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"sku":"sku-%d-%d","name":"Item with a longer name %d","qty":%d,"price":%d.99,"tags":["a","b"]}`, i, j, j, j+1, j*3)
		}
		sb.WriteString(`],"note":"Leave at the door, ring twice \"please\""}`)
	}
	sb.WriteString(`],"next":null}`)
	return sb.String()
}

// Shorten is s cut to n bytes, with "..." when it was longer.
func Shorten(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
