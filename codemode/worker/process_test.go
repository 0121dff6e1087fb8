//go:build linux

package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

// processPool is a pool of this test binary's workers, closed at the end,
// when no worker process may be left.
func processPool(t *testing.T, cfg worker.PoolConfig) *worker.Pool {
	t.Helper()
	p, err := worker.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		if kids := childPids(t); len(kids) != 0 {
			t.Errorf("worker processes left after Close: %v", kids)
		}
	})
	return p
}

// childPids lists the processes whose parent is this test process, but
// for the test pool's workers.
func childPids(t *testing.T) []int {
	t.Helper()
	if !proctest.Available() {
		t.Skip("no /proc here: child processes cannot be counted")
	}
	var pids []int
	for _, pid := range proctest.Children(os.Getpid()) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if !strings.Contains(string(cmdline), codemodetest.PoolWorker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFor waits up to 10 s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessRunnerRunsCode(t *testing.T) {
	p := processPool(t, worker.PoolConfig{})
	r := worker.NewRunner(codemode.Limits{}, p)
	var e codemodetest.Echo
	res := r.Run(context.Background(), `console.log("hi"); const a = await api.echo({x: "<&>"}); return [a.args.x, await api.fail().catch(e => e.message)]`,
		[]codemode.Binding{e.Binding("api")})
	codemodetest.WantValue(t, res, `["<&>","api.fail: the backend says no"]`)
	if len(res.Logs) != 1 || res.Logs[0] != "hi" {
		t.Fatalf("logs = %q", res.Logs)
	}
}

// Workers serve one execution after another and are kept; the tools of a
// binding cross the pipe once while they stay the same.
func TestProcessPoolKeepsWorkers(t *testing.T) {
	p := processPool(t, worker.PoolConfig{Workers: 1})
	r := worker.NewRunner(codemode.Limits{}, p)
	var e codemodetest.Echo
	b := e.Binding("api")
	waitFor(t, "a warm worker", func() bool { return p.Workers() == 1 && len(childPids(t)) == 1 })
	pids := map[int]bool{}
	for range 5 {
		res := r.Run(context.Background(), `globalThis.seen = (globalThis.seen || 0) + 1; return [seen, (await api.get_weather({})).tool]`, []codemode.Binding{b})
		codemodetest.WantValue(t, res, `[1,"get-weather"]`)
		for _, pid := range childPids(t) {
			pids[pid] = true
		}
	}
	if len(pids) != 1 {
		t.Errorf("five executions ran in %d worker processes, want the one kept", len(pids))
	}
	// A changed tools map reaches the worker.
	b.Tools = map[string]string{"renamed": "echo"}
	res := r.Run(context.Background(), `return (await api.renamed({})).tool`, []codemode.Binding{b})
	codemodetest.WantValue(t, res, `"echo"`)
}

// An execution that comes while the pool starts its first worker waits
// for that worker rather than start a second one beside it.
func TestProcessFirstExecutionTakesTheWarmingWorker(t *testing.T) {
	for i := range 3 {
		p := processPool(t, worker.PoolConfig{Workers: 1})
		r := worker.NewRunner(codemode.Limits{}, p)
		waitFor(t, "the first start", func() bool { return p.Starting() == 1 || p.Workers() == 1 })
		codemodetest.WantValue(t, r.Run(context.Background(), `return 1`, nil), `1`)
		if kids := childPids(t); len(kids) != 1 {
			t.Fatalf("try %d: %d worker processes after one execution, want 1", i, len(kids))
		}
		p.Close()
	}
}

// A worker that breaks the protocol, stops answering, dies or cannot
// start ends its execution with a clear error, soon, and leaves no
// process behind; the next execution works.
func TestProcessBrokenWorkers(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command  []string
		timeout  time.Duration
		wantKind string
		want     string
	}{
		{[]string{self, worker.BrokenWorker, "silent"}, time.Second, codemode.KindTimeout, "its worker process was stopped"},
		{[]string{self, worker.BrokenWorker, "garbage"}, 5 * time.Second, codemode.KindWorker, "sent an unreadable message"},
		{[]string{self, worker.BrokenWorker, "huge-frame"}, 5 * time.Second, codemode.KindWorker, "past the bound"},
		{[]string{self, worker.BrokenWorker, "other-execution"}, 5 * time.Second, codemode.KindWorker, `sent a "log" message out of turn`},
		{[]string{self, worker.BrokenWorker, "forbidden-tool"}, 5 * time.Second, codemode.KindWorker, `called a tool it was not given ("not-given")`},
		{[]string{self, worker.BrokenWorker, "unasked-search"}, 5 * time.Second, codemode.KindWorker, "searched without tools.search"},
		{[]string{self, worker.BrokenWorker, "exit"}, 5 * time.Second, codemode.KindWorker, "exit status 3"},
		{[]string{self, worker.BrokenWorker, "never-ready"}, 5 * time.Second, codemode.KindWorker, "not ready within"},
		{[]string{filepath.Join(t.TempDir(), "no-such-caddy")}, 5 * time.Second, codemode.KindWorker, "no such file or directory"},
	}
	for _, tt := range tests {
		name := tt.command[len(tt.command)-1]
		t.Run(name, func(t *testing.T) {
			if name == "never-ready" && racetest.Enabled {
				t.Skip("waits out the start bound, 30 s under the race detector")
			}
			p := processPool(t, worker.PoolConfig{Command: tt.command})
			r := worker.NewRunner(codemode.Limits{Timeout: tt.timeout}, p)
			var e codemodetest.Echo
			start := time.Now()
			res := r.Run(context.Background(), `return 1`, []codemode.Binding{e.Binding("api")})
			codemodetest.WantError(t, res, tt.wantKind, tt.want)
			if d := time.Since(start); d > tt.timeout+worker.StartTimeout+time.Second {
				t.Errorf("answered after %v", d)
			}
			if e.Calls.Load() != 0 {
				t.Errorf("the backend was called %d times", e.Calls.Load())
			}
		})
	}
}

// A worker that answers once, then stops reading its pipe or floods it:
// the next execution still ends at its timeout, and nothing of Caddy's
// waits on the worker after it is gone.
func TestProcessWorkerGoesDeafOrFloods(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"deaf-after-one", "flood-after-one"} {
		t.Run(how, func(t *testing.T) {
			goroutines := runtime.NumGoroutine()
			p := processPool(t, worker.PoolConfig{Command: []string{self, worker.BrokenWorker, how}, Workers: 1})
			r := worker.NewRunner(codemode.Limits{Timeout: 300 * time.Millisecond, MaxCodeSize: 1 << 20}, p)
			codemodetest.WantValue(t, r.Run(context.Background(), `return 1`, nil), `1`)
			// More code than a pipe holds: the write itself blocks on a
			// worker that does not read.
			code := "return 2 // " + strings.Repeat("x", 300<<10)
			start := time.Now()
			res := r.Run(context.Background(), code, nil)
			if res.Err == nil && how == "deaf-after-one" {
				t.Fatalf("a deaf worker answered: %s", res.Value)
			}
			if d := time.Since(start); d > 300*time.Millisecond+worker.Grace+worker.StartTimeout {
				t.Errorf("answered after %v", d)
			}
			p.Close()
			waitFor(t, "the goroutines back", func() bool { return runtime.NumGoroutine() <= goroutines })
		})
	}
}

// A worker killed from outside in the middle of an execution: the
// execution says so at once, and the pool replaces the worker.
func TestProcessWorkerKilledFromOutside(t *testing.T) {
	p := processPool(t, worker.PoolConfig{Workers: 1})
	r := worker.NewRunner(codemode.Limits{Timeout: 20 * time.Second}, p)
	waitFor(t, "a warm worker", func() bool { return p.Workers() == 1 && len(childPids(t)) == 1 })
	victim := childPids(t)[0]
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = syscall.Kill(victim, syscall.SIGKILL)
	}()
	start := time.Now()
	res := r.Run(context.Background(), `console.log("started"); for (;;) {}`, nil)
	codemodetest.WantError(t, res, codemode.KindWorker, "signal: killed")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered %v after the kill", d)
	}
	if len(res.Logs) == 0 || res.Logs[0] != "started" {
		t.Errorf("logs %q: the line printed before the kill is lost", res.Logs)
	}
	waitFor(t, "a replacement worker", func() bool {
		kids := childPids(t)
		return len(kids) == 1 && kids[0] != victim
	})
	codemodetest.WantValue(t, r.Run(context.Background(), `return 2`, nil), `2`)
}

// A worker past max_memory is killed by the pool's watchdog, whatever the
// worker does with its own limits.
func TestProcessMemoryWatchdog(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.PrivateMemory(os.Getpid()); err != nil {
		t.Skipf("a process's memory cannot be read here: %v", err)
	}
	p := processPool(t, worker.PoolConfig{Command: []string{self, worker.BrokenWorker, "hog"}, MaxMemory: worker.MinMemory})
	r := worker.NewRunner(codemode.Limits{Timeout: 20 * time.Second}, p)
	start := time.Now()
	res := r.Run(context.Background(), `return 1`, nil)
	codemodetest.WantError(t, res, codemode.KindMemory, "past its max_memory of 64 MiB; its worker process was stopped")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("answered after %v", d)
	}
}

// Executions that would kill or pin the process they run in end within
// their timeout plus a bounded grace, max_concurrent of them at once: only
// their workers are hurt, the caller's memory and goroutines stay where
// they were, and the next execution is served at once.
func TestProcessContainsAttacks(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	attacks := []struct {
		name, code string
		kinds      []string // the errors it may end with, if it fails
	}{
		{"a Proxy chain with an apply trap", `let g=function(){return 1}; const h={apply:Reflect.apply}; for(let i=0;i<600000;i++) g=new Proxy(g,h); return g();`,
			[]string{codemode.KindStack, codemode.KindLimit, codemode.KindTimeout, codemode.KindMemory}},
		{"a Proxy chain with a get trap", `let p={x:1}; const h={get:Reflect.get}; for(let i=0;i<600000;i++) p=new Proxy(p,h); return p.x;`,
			[]string{codemode.KindStack, codemode.KindLimit, codemode.KindTimeout, codemode.KindMemory}},
		{"a chain of bound forEach", `let g=function(){}; for(let i=0;i<900000;i++) g=Array.prototype.forEach.bind([0],g); g(); return 1`,
			[]string{codemode.KindStack, codemode.KindLimit, codemode.KindTimeout, codemode.KindMemory}},
		// On a busy machine the time may run out before the memory.
		{"doubling a string", `let s="x"; for(;;) s+=s;`, []string{codemode.KindMemory, codemode.KindLimit, codemode.KindTimeout}},
		{"indexOf of non-ASCII strings", `return "\u4241".repeat(1<<21).indexOf("\u4142".repeat(1<<20))`, []string{codemode.KindTimeout, codemode.KindLimit, codemode.KindMemory}},
		{"lastIndexOf of non-ASCII strings", `return "\u4241".repeat(1<<21).lastIndexOf("\u4142".repeat(1<<20))`, []string{codemode.KindTimeout, codemode.KindLimit, codemode.KindMemory}},
		{"sort of 4 Mi numbers", `const a = Array.from({length: 1<<22}, (_, i) => (i*7919) % 1000003); a.sort(); return a.length`, []string{codemode.KindTimeout, codemode.KindLimit, codemode.KindMemory}},
		{"NFKD of U+FDFA", `return "\uFDFA".repeat(1<<20).normalize("NFKD").length`, []string{codemode.KindTimeout, codemode.KindLimit, codemode.KindMemory}},
	}
	concurrent := 2 * runtime.GOMAXPROCS(0)
	p := processPool(t, worker.PoolConfig{Workers: concurrent})
	r := worker.NewRunner(codemode.Limits{Timeout: timeout, MaxConcurrent: concurrent}, p)
	settled := func() bool { return p.Workers() == concurrent && len(childPids(t)) == concurrent }
	waitFor(t, "warm workers", settled)
	codemodetest.WantValue(t, r.Run(context.Background(), `return 1`, nil), `1`)
	time.Sleep(100 * time.Millisecond)
	goroutines, rss := runtime.NumGoroutine(), residentMemory(t)

	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for range concurrent {
				wg.Add(1)
				go func() {
					defer wg.Done()
					start := time.Now()
					res := r.Run(context.Background(), a.code, nil)
					if d := time.Since(start); d > timeout+worker.Grace+worker.StartTimeout {
						t.Errorf("answered after %v", d)
					}
					if res.Err != nil && !slices.Contains(a.kinds, res.Err.Kind) {
						t.Errorf("error %v, want one of %v", res.Err, a.kinds)
					}
				}()
			}
			wg.Wait()
			start := time.Now()
			codemodetest.WantValue(t, r.Run(context.Background(), `return 1 + 1`, nil), `2`)
			// Each attack's worker is replaced: the next may wait for
			// a start, never for an attack.
			if d := time.Since(start); d > worker.StartTimeout {
				t.Errorf("the next execution took %v", d)
			}
		})
	}
	waitFor(t, "the pool refilled", settled)
	waitFor(t, "the goroutines back", func() bool { return runtime.NumGoroutine() <= goroutines })
	if grown := residentMemory(t) - rss; grown > 100<<20 {
		t.Errorf("the caller's resident memory grew by %d MiB", grown>>20)
	}
}

// residentMemory is this process's resident set, in bytes.
func residentMemory(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	pages, _ := strconv.ParseInt(strings.Fields(string(b))[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// Close lets a busy worker finish its execution and stops it then, and
// stops idle workers at once; an execution that comes after it (a request
// of the config a reload replaced) runs in a worker of its own. Kill stops
// the busy ones too, and refuses what comes after. Neither leaves a
// process behind.
func TestProcessPoolCloseDrainsKillStops(t *testing.T) {
	for _, how := range []string{"Close", "Kill"} {
		t.Run(how, func(t *testing.T) {
			p := processPool(t, worker.PoolConfig{Workers: 2})
			r := worker.NewRunner(codemode.Limits{Timeout: 10 * time.Second}, p)
			waitFor(t, "two warm workers", func() bool { return len(childPids(t)) == 2 })
			done := make(chan *codemode.Result, 1)
			go func() {
				done <- r.Run(context.Background(), `const end = Date.now() + 3000; while (Date.now() < end) {} return "finished"`, nil)
			}()
			time.Sleep(200 * time.Millisecond)
			if how == "Close" {
				p.Close()
			} else {
				p.Kill()
			}
			running := len(done) == 0
			if n := len(childPids(t)); how == "Close" && n != 1 || how == "Kill" && n != 0 {
				t.Errorf("%d worker processes after %s returned", n, how)
			}
			res := <-done
			if how == "Close" {
				if !running {
					t.Error("Close waited for the busy execution")
				}
				codemodetest.WantValue(t, res, `"finished"`)
			} else {
				codemodetest.WantError(t, res, codemode.KindWorker, "shutting down")
			}
			waitFor(t, "no worker left", func() bool { return len(childPids(t)) == 0 })
			late := r.Run(context.Background(), `return 1`, nil)
			if how == "Close" {
				codemodetest.WantValue(t, late, `1`)
			} else {
				codemodetest.WantError(t, late, codemode.KindWorker, "shutting down")
			}
			waitFor(t, "no worker left after the late execution", func() bool { return len(childPids(t)) == 0 })
		})
	}
}

// A Close that comes while a background start is handing its worker to
// the pool returns, and the worker ends: it once stayed in the closed
// pool, idle, and Close waited for it forever.
func TestProcessPoolCloseDuringABackgroundStart(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	hook := func(p *worker.Pool) {
		if p == codemodetest.Pool() {
			return
		}
		once.Do(func() { close(started) })
		time.Sleep(300 * time.Millisecond)
	}
	worker.AfterFillStart.Store(&hook)
	t.Cleanup(func() { worker.AfterFillStart.Store(nil) })
	p := processPool(t, worker.PoolConfig{Workers: 1})
	<-started
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Errorf("Close still waits 5 s after it began; children %v", childPids(t))
		p.Kill()
	}
}

// A worker that cannot answer at the timeout (here stopped with SIGSTOP
// while its execution waits for a binding call) is killed, and the error
// still names the call it was waiting for.
func TestProcessStoppedWorkerNamesItsCall(t *testing.T) {
	p := processPool(t, worker.PoolConfig{Workers: 1})
	r := worker.NewRunner(codemode.Limits{Timeout: 300 * time.Millisecond}, p)
	waitFor(t, "a warm worker", func() bool { return p.Workers() == 1 && len(childPids(t)) == 1 })
	victim := childPids(t)[0]
	api := codemode.Binding{Name: "api", Tools: map[string]string{"slowLookup": "slow_lookup"},
		Call: func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
			_ = syscall.Kill(victim, syscall.SIGSTOP)
			<-ctx.Done()
			return codemode.Answer{}, ctx.Err()
		}}
	res := r.Run(context.Background(), `return await api.slowLookup({})`, []codemode.Binding{api})
	codemodetest.WantError(t, res, codemode.KindTimeout, "api.slowLookup: no answer before the time ran out", "could not be interrupted")
	waitFor(t, "a replacement worker", func() bool {
		kids := childPids(t)
		return len(kids) == 1 && kids[0] != victim
	})
}

// A burst of executions, more than the pool keeps warm, starts at most
// MaxStarting workers at once; the others wait for a worker to come free
// or a start to end, and every execution runs.
func TestProcessPoolBoundsStarts(t *testing.T) {
	p := processPool(t, worker.PoolConfig{Workers: 1})
	r := worker.NewRunner(codemode.Limits{Timeout: 30 * time.Second, MaxConcurrent: 16}, p)
	waitFor(t, "a warm worker", func() bool { return p.Workers() == 1 && len(childPids(t)) == 1 })
	const executions = 8
	var wg sync.WaitGroup
	results := make([]*codemode.Result, executions)
	for i := range executions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.Run(context.Background(), `const end = Date.now() + 300; while (Date.now() < end) {} return 1`, nil)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	most := 0
	for watching := true; watching; {
		most = max(most, p.Starting())
		select {
		case <-done:
			watching = false
		case <-time.After(time.Millisecond):
		}
	}
	// Without the bound, each execution the warm worker cannot take
	// starts its own: executions-1 at once.
	if most > worker.MaxStarting || most >= executions-1 {
		t.Errorf("%d workers starting at once, want at most %d", most, worker.MaxStarting)
	}
	if most == 0 {
		t.Errorf("no worker was started for the burst: the test shows nothing")
	}
	for i, res := range results {
		if res.Err != nil || string(res.Value) != "1" {
			t.Errorf("execution %d: %v %s", i, res.Err, res.Value)
		}
	}
}
