package caddymcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
)

// workerPids lists this test process's code mode workers, sorted.
func workerPids(t testing.TB) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	if dirs == nil {
		t.Skip("no /proc here: worker processes cannot be listed")
	}
	var pids []int
	self := strconv.Itoa(os.Getpid())
	for _, d := range dirs {
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[1] != self || fields[0] == "Z" {
			continue
		}
		cmdline, _ := os.ReadFile(d + "/cmdline")
		if strings.Contains(string(cmdline), "codemode-worker") {
			pid, _ := strconv.Atoi(filepath.Base(d))
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
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

// Workers are kept across a reload that keeps their settings; a reload
// that changes them, and Caddy's stop, end every worker, also those stuck
// in an execution: no process outlives the config that made it.
func TestLiveCodeModeWorkersAcrossReloadAndStop(t *testing.T) {
	bin := startHTTPBin(t)
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
		timeout 20s
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

	// An execution stuck in a loop while the settings change: its worker
	// goes with the old pool, and three new ones start.
	stuck := runInBackground(t, "/code", `for (;;) {}`)
	loadCaddyfile(t, "", config(3, ""))
	select {
	case res := <-stuck:
		if res == nil || !res.IsError || !strings.Contains(resultText(res), "WorkerError") {
			t.Errorf("the stuck execution, its pool closed: %v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck execution did not end when its pool closed")
	}
	second := waitWorkers(t, 3)
	for _, pid := range first {
		if slices.Contains(second, pid) {
			t.Errorf("worker %d of the old pool outlived it", pid)
		}
	}

	// Stopping Caddy, with an execution running: no worker is left.
	stuck = runInBackground(t, "/code", `for (;;) {}`)
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}
	if pids := workerPids(t); len(pids) != 0 {
		t.Errorf("workers left after Caddy stopped: %v", pids)
	}
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Fatal("the execution running while Caddy stopped never ended")
	}
}

// runInBackground starts an execution and returns where its result will
// come (nil when the request failed), once the execution is running.
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
