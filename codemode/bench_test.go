package codemode

import (
	"context"
	"runtime"
	"sort"
	"testing"
	"time"
)

// benchRuns runs code b.N times and reports the median time of one run.
func benchRuns(b *testing.B, code string, bindings ...Binding) {
	r := NewRunner(Limits{})
	ctx := context.Background()
	if res := r.Run(ctx, code, bindings); res.Err != nil {
		b.Fatal(res.Err)
	}
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r.Run(ctx, code, bindings)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
}

// BenchmarkRunJavaScript: an execution with no tool calls (target: median
// under 1 ms).
func BenchmarkRunJavaScript(b *testing.B) {
	benchRuns(b, `const xs = [3, 1, 2]; return xs.sort().map(x => x * 2)`)
}

// BenchmarkRunTypeScript: the same through esbuild (target: under 2 ms).
func BenchmarkRunTypeScript(b *testing.B) {
	benchRuns(b, `const xs: number[] = [3, 1, 2]; return xs.sort().map((x: number): number => x * 2)`)
}

// BenchmarkParallelCalls: 10 calls in Promise.all to a backend that takes
// 50 ms each (target: the execution under 80 ms).
func BenchmarkParallelCalls(b *testing.B) {
	slow := Binding{Name: "api", Tools: map[string]string{"get": "get"}, Call: func(ctx context.Context, _ string, args []byte) ([]byte, error) {
		time.Sleep(50 * time.Millisecond)
		return args, nil
	}}
	benchRuns(b, `return (await Promise.all(Array.from({length: 10}, (_, i) => api.get({i})))).length`, slow)
}

// BenchmarkManyExecutions runs 10,000 executions and reports goroutines
// and live heap after them against before (target: back where they
// started).
func BenchmarkManyExecutions(b *testing.B) {
	echo := Binding{Name: "api", Tools: map[string]string{"get": "get"}, Call: func(ctx context.Context, _ string, args []byte) ([]byte, error) {
		return args, nil
	}}
	r := NewRunner(Limits{})
	ctx := context.Background()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := 0; i < b.N; i++ {
		r.Run(ctx, `return 1`, nil) // warm up caches
		goroutines, before := runtime.NumGoroutine(), heap()
		for j := 0; j < 10000; j++ {
			r.Run(ctx, `const a = await api.get({j: 1}); console.log(a); return [a, "x".repeat(1000)]`, []Binding{echo})
		}
		time.Sleep(50 * time.Millisecond) // let the heap watcher's goroutine exit
		after := heap()
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines-delta")
		b.ReportMetric(float64(int64(after)-int64(before))/1024, "heap-KiB-delta")
	}
}
