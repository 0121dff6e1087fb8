package worker_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// benchModes runs bench as the sub-benchmark process, whose runner has a
// pool of workers started and warmed before the timing begins.
func benchModes(b *testing.B, workers int, bench func(b *testing.B, r *worker.Runner)) {
	b.Run("process", func(b *testing.B) { bench(b, worker.NewRunner(codemode.Limits{}, warmPool(b, workers))) })
}

// warmPool is a pool of this test binary's workers, all started, closed
// when the benchmark ends.
func warmPool(b *testing.B, workers int) *worker.Pool {
	b.Helper()
	p, err := worker.NewPool(worker.PoolConfig{Workers: workers})
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

// mustRun runs code and fails the benchmark on an error.
func mustRun(b *testing.B, r *worker.Runner, code string, bindings ...codemode.Binding) *codemode.Result {
	b.Helper()
	res := r.Run(context.Background(), code, bindings)
	if res.Err != nil {
		b.Fatalf("%s: %v", code, res.Err)
	}
	return res
}

// median sorts times and returns the middle one.
func median(times []time.Duration) time.Duration {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2]
}

// timeRuns runs code n times and returns the time of each run.
func timeRuns(b *testing.B, r *worker.Runner, n int, code string, bindings ...codemode.Binding) []time.Duration {
	b.Helper()
	times := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		mustRun(b, r, code, bindings...)
		times = append(times, time.Since(start))
	}
	return times
}

// benchRuns runs code b.N times and reports the median time of one run,
// after a few runs that warm the caches and the worker.
func benchRuns(b *testing.B, r *worker.Runner, code string, bindings ...codemode.Binding) {
	timeRuns(b, r, 5, code, bindings...)
	b.ReportAllocs()
	b.ResetTimer()
	times := timeRuns(b, r, b.N, code, bindings...)
	b.StopTimer()
	b.ReportMetric(float64(median(times).Microseconds())/1000, "ms-median")
}

// BenchmarkRunJavaScript: an execution with no tool calls (target: median
// under 0.5 ms, in a worker process).
func BenchmarkRunJavaScript(b *testing.B) {
	benchModes(b, 1, func(b *testing.B, r *worker.Runner) {
		benchRuns(b, r, `const xs = [3, 1, 2]; return xs.sort().map(x => x * 2)`)
	})
}

// BenchmarkRunTypeScript: the same through esbuild (target: under 2 ms).
func BenchmarkRunTypeScript(b *testing.B) {
	benchModes(b, 1, func(b *testing.B, r *worker.Runner) {
		benchRuns(b, r, `const xs: number[] = [3, 1, 2]; return xs.sort().map((x: number): number => x * 2)`)
	})
}

// echoBinding is a backend whose one tool answers with its arguments.
var echoBinding = codemode.Binding{Name: "api", Tools: map[string]string{"get": "get"}, Call: func(ctx context.Context, _ string, args []byte) (codemode.Answer, error) {
	return codemode.Answer{Value: args}, nil
}}

// BenchmarkBindingCall: what one binding call costs the sandbox, with
// about 1 KB of arguments and 1 KB of result from a backend that answers
// at once: an execution making 20 calls one after another against the
// same execution making none, the difference of their medians per call
// (target: under 100 µs).
func BenchmarkBindingCall(b *testing.B) {
	const calls = 20
	text := strings.Repeat("x", 1000)
	withCalls := fmt.Sprintf(`const text = %q; let n = 0;
for (let i = 0; i < %d; i++) { const r = await api.get({text}); n += r.text.length }
return n`, text, calls)
	without := fmt.Sprintf(`const text = %q; let n = 0;
for (let i = 0; i < %d; i++) { const r = {text}; n += r.text.length }
return n`, text, calls)
	benchModes(b, 1, func(b *testing.B, r *worker.Runner) {
		if got := string(mustRun(b, r, withCalls, echoBinding).Value); got != "20000" {
			b.Fatalf("the calls returned %s, want 20000", got)
		}
		timeRuns(b, r, 5, without, echoBinding)
		b.ResetTimer()
		// Interleaved, so that both see the same machine.
		var with, none []time.Duration
		for i := 0; i < b.N; i++ {
			with = append(with, timeRuns(b, r, 1, withCalls, echoBinding)...)
			none = append(none, timeRuns(b, r, 1, without, echoBinding)...)
		}
		b.StopTimer()
		b.ReportMetric(float64(median(with)-median(none))/float64(time.Microsecond)/calls, "µs/call")
	})
}

// BenchmarkLargeAnswer: one call whose answer is a list of 50 orders,
// about 35 KB of JSON, and the code picking the top 3 by total, as the
// bench's code-mode task does; most of it is moving the answer into the
// sandbox.
func BenchmarkLargeAnswer(b *testing.B) {
	answer := []byte(codemodetest.OrdersJSON())
	orders := codemode.Binding{Name: "api", Tools: map[string]string{"list": "list"}, Call: func(context.Context, string, []byte) (codemode.Answer, error) {
		return codemode.Answer{Value: answer}, nil
	}}
	code := `const {orders} = await api.list();
return orders.sort((a, b) => b.total - a.total).slice(0, 3).map(o => o.customer.id)`
	benchModes(b, 1, func(b *testing.B, r *worker.Runner) {
		if got := string(mustRun(b, r, code, orders).Value); !strings.HasPrefix(got, `["cus-`) {
			b.Fatalf("the code returned %s", got)
		}
		benchRuns(b, r, code, orders)
	})
}

// BenchmarkParallelCalls: 10 calls in Promise.all to a backend that takes
// 50 ms each (target: the execution under 80 ms).
func BenchmarkParallelCalls(b *testing.B) {
	slow := codemode.Binding{Name: "api", Tools: map[string]string{"get": "get"}, Call: func(ctx context.Context, _ string, args []byte) (codemode.Answer, error) {
		time.Sleep(50 * time.Millisecond)
		return codemode.Answer{Value: args}, nil
	}}
	benchModes(b, 1, func(b *testing.B, r *worker.Runner) {
		benchRuns(b, r, `return (await Promise.all(Array.from({length: 10}, (_, i) => api.get({i})))).length`, slow)
	})
}

// BenchmarkManyExecutions runs 10,000 executions and reports goroutines
// and live heap of this process after them against before (target: back
// where they started; the heap is Caddy's, not the workers').
func BenchmarkManyExecutions(b *testing.B) {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	benchModes(b, 1, func(b *testing.B, r *worker.Runner) {
		for i := 0; i < b.N; i++ {
			timeRuns(b, r, 5, `return 1`) // warm up caches
			time.Sleep(50 * time.Millisecond)
			goroutines, before := runtime.NumGoroutine(), heap()
			for j := 0; j < 10000; j++ {
				mustRun(b, r, `const a = await api.get({j: 1}); console.log(a); return [a, "x".repeat(1000)]`, echoBinding)
			}
			time.Sleep(50 * time.Millisecond) // let the heap watcher's goroutine exit
			after := heap()
			b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines-delta")
			b.ReportMetric(float64(int64(after)-int64(before))/1024, "heap-KiB-delta")
		}
	})
}

// BenchmarkWorkerMemory reports the resident memory of one warm idle
// worker, after JavaScript and TypeScript executions with a binding call:
// all of it (VmRSS) and its private part (RssAnon), which is what the
// worker adds to the machine; the rest is the program's file pages,
// shared with Caddy and the other workers.
func BenchmarkWorkerMemory(b *testing.B) {
	pool := warmPool(b, 1)
	r := worker.NewRunner(codemode.Limits{}, pool)
	for i := 0; i < 20; i++ {
		mustRun(b, r, `const a = await api.get({i: 1}); return [a, "x".repeat(1000)]`, echoBinding)
		mustRun(b, r, `const xs: number[] = [3, 1, 2]; return xs.sort()`)
	}
	idle := worker.IdlePIDs(pool)
	if len(idle) != 1 {
		b.Fatalf("%d idle workers after the executions, want the one that ran them", len(idle))
	}
	pid := idle[0]
	var rss, anon int64
	for i := 0; i < b.N; i++ {
		rss, anon = procStatus(b, pid, "VmRSS"), procStatus(b, pid, "RssAnon")
	}
	b.ReportMetric(float64(rss)/(1<<20), "VmRSS-MiB")
	b.ReportMetric(float64(anon)/(1<<20), "RssAnon-MiB")

	// The same worker while an execution waits on a call: a live sandbox.
	waiting, release := make(chan struct{}), make(chan struct{})
	hold := codemode.Binding{Name: "api", Tools: map[string]string{"hold": "hold"}, Call: func(context.Context, string, []byte) (codemode.Answer, error) {
		close(waiting)
		<-release
		return codemode.Answer{Value: []byte(`1`)}, nil
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		mustRun(b, r, `const a = [1, 2, 3].map(x => ({x})); return [a, await api.hold({})]`, hold)
	}()
	<-waiting
	b.ReportMetric(float64(procStatus(b, pid, "RssAnon"))/(1<<20), "RssAnon-held-MiB")
	close(release)
	<-done
}

// procStatus reads a size field (in kB) of /proc/<pid>/status, in bytes.
func procStatus(b *testing.B, pid int, field string) int64 {
	b.Helper()
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("/proc/%d/status %s: %v", pid, field, err)
			}
			return kb << 10
		}
	}
	b.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}
