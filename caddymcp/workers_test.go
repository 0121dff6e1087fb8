package caddymcp

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
)

// workerPids lists this test process's code mode workers, sorted.
func workerPids(t testing.TB) []int {
	t.Helper()
	if !proctest.Available() {
		t.Skip("no /proc here: worker processes cannot be listed")
	}
	var pids []int
	for _, pid := range proctest.Children(os.Getpid()) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), "codemode-worker") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitWorkers waits until the test process has n workers and returns them.
func waitWorkers(t testing.TB, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := workerPids(t)
		if len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d worker processes, want %d: %v", len(pids), n, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Workers are kept across a reload that keeps their settings. A reload
// that changes them, and Caddy's stop, let the executions running finish,
// as Caddy lets the requests of an old config finish, and then end the old
// workers, also those stuck in an execution: no process outlives the
// config that made it by more than its execution's timeout.
func TestLiveCodeModeWorkersAcrossReloadAndStop(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	config := func(workers int, extra string) string {
		if extra != "" {
			extra = "\t" + extra + "\n"
		}
		return fmt.Sprintf(`http://:{$LIVE_PORT} {
%s	mcp /api {
		upstream %s
		tool one {
			description "One."
			get /get
		}
	}
	codemode /code {
		backend api http://127.0.0.1:{$LIVE_PORT}/api
		workers %d
		timeout 5s
	}
}`, extra, bin, workers)
	}
	loadCaddyfile(t, "", config(2, ""))
	first := waitWorkers(t, 2)
	c := connect(t, "/code", eras[0], nil)
	wantOK(t, execute(t, c, `return (await api.one({})).url`))

	// The same settings, another route: the same workers serve.
	loadCaddyfile(t, "", config(2, "respond /other 204"))
	if got := waitWorkers(t, 2); !slices.Equal(got, first) {
		t.Errorf("workers %v after a reload that keeps their settings, want %v", got, first)
	}
	c = connect(t, "/code", eras[0], nil)
	wantOK(t, execute(t, c, `return 1`))

	// While the settings change, one execution is busy for three seconds
	// and one is stuck in a loop: the first finishes, the second ends at its
	// timeout, and then their workers go with the old pool; three new ones
	// serve meanwhile.
	busy := runInBackground(t, "/code", `const end = Date.now() + 3000; while (Date.now() < end) {} return "finished"`)
	stuck := runInBackground(t, "/code", `for (;;) {}`)
	waitBusyWorkers(t, 2)
	loadCaddyfile(t, "", config(3, ""))
	c = connect(t, "/code", eras[0], nil)
	wantOK(t, execute(t, c, `return 2`))
	for name, want := range map[string]string{"busy": "finished", "stuck": "TimeoutError"} {
		ch := map[string]<-chan *mcp.CallToolResult{"busy": busy, "stuck": stuck}[name]
		select {
		case res := <-ch:
			if res == nil || !strings.Contains(mcptest.ResultText(res), want) {
				t.Errorf("the %s execution, its pool closed by a reload: %v, want %q", name, res, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the %s execution did not end", name)
		}
	}
	second := waitWorkers(t, 3)
	for _, pid := range first {
		if slices.Contains(second, pid) {
			t.Errorf("worker %d of the old pool outlived it", pid)
		}
	}

	// Stopping Caddy, with an execution stuck: it ends at its timeout, and
	// no worker is left.
	stuck = runInBackground(t, "/code", `for (;;) {}`)
	waitBusyWorkers(t, 1)
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-stuck:
		if res == nil || !strings.Contains(mcptest.ResultText(res), "TimeoutError") {
			t.Errorf("the execution running while Caddy stopped: %v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the execution running while Caddy stopped never ended")
	}
	waitWorkers(t, 0)
}

// waitBusyWorkers waits until n worker processes spend CPU time in three
// windows of 200 ms in a row: their executions' loops run. A worker that
// only collects its garbage once (as an idle one does) is not counted.
func waitBusyWorkers(t *testing.T, n int) {
	t.Helper()
	ticks := func() map[int]int {
		m := make(map[int]int)
		for _, pid := range workerPids(t) {
			if s, ok := proctest.Read(pid); ok {
				m[pid] = s.UserTicks
			}
		}
		return m
	}
	streak := make(map[int]int)
	for deadline := time.Now().Add(30 * time.Second); ; {
		before := ticks()
		time.Sleep(200 * time.Millisecond)
		busy := 0
		after := ticks()
		for pid := range streak {
			if _, ok := after[pid]; !ok {
				delete(streak, pid)
			}
		}
		for pid, n := range after {
			if was, ok := before[pid]; ok && n-was >= 2 {
				streak[pid]++
			} else {
				streak[pid] = 0
			}
			if streak[pid] >= 3 {
				busy++
			}
		}
		if busy >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d worker processes busy, want %d", busy, n)
		}
	}
}

// runInBackground starts an execution and returns where its result will
// come (nil when the request failed).
func runInBackground(t *testing.T, endpoint, code string) <-chan *mcp.CallToolResult {
	t.Helper()
	c := connect(t, endpoint, eras[0], nil)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "execute"
		req.Params.Arguments = map[string]any{"code": code}
		res, _ := c.CallTool(ctx, req)
		done <- res
	}()
	time.Sleep(300 * time.Millisecond)
	return done
}
