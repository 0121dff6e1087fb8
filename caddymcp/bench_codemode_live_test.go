package caddymcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// echoMCPServer is a stateless mcp-go server whose tool echo answers with
// its text argument.
func echoMCPServer(b *testing.B) *httptest.Server {
	b.Helper()
	srv := server.NewMCPServer("echo", "1")
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithStateLess(true), server.WithDisableLocalhostProtection(true)))
	b.Cleanup(hs.Close)
	return hs
}

// executeBody is a tools/call of execute, of the 2025-11-25 era without a
// session, whose code makes one backend call and returns its answer.
const executeBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute",` +
	`"arguments":{"code":"return await api.echo({text: \"pong\"})"}}}`

// executions posts executeBody to path n times from clients goroutines,
// each with a connection of its own kept alive, and returns how long they
// took. Every answer must be the execution's success.
func executions(b *testing.B, hc *http.Client, path string, clients, n int) time.Duration {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	failure := make(chan string, clients)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if msg := postExecute(hc, path); msg != "" {
					failure <- msg
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	select {
	case msg := <-failure:
		b.Fatalf("%s: %s", path, msg)
	default:
	}
	return took
}

// postExecute sends one execution and says what was wrong with its
// answer, if anything.
func postExecute(hc *http.Client, path string) string {
	req, err := http.NewRequest(http.MethodPost, "http://"+liveAddr+path, strings.NewReader(executeBody))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err.Error()
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"result":"pong"`)) || bytes.Contains(body, []byte(`"isError":true`)) {
		return fmt.Sprintf("status %d: %.300s", resp.StatusCode, body)
	}
	return ""
}

// quietCaddy, in the global options, keeps Caddy's logs off the lines
// where the benchmarks print their figures.
const quietCaddy = "log {\n\t\toutput discard\n\t}"

// keepAliveClient is an HTTP client that keeps a connection per client
// goroutine.
func keepAliveClient(b *testing.B, clients int) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// BenchmarkCodeModeOverHTTP: executions per second through a real Caddy,
// from 8 clients posting tools/call of execute over HTTP, each execution
// making one call of an mcp-go backend, with the code run in this process
// and in worker processes, in the same run: 1,000 executions of each mode
// per iteration (target: process mode at least 70% of in_process mode).
// Both endpoints allow 8 executions at once; process mode keeps 8
// workers. Read it on an otherwise idle machine: the kernel shares a busy
// CPU per thread, and process mode, with nine processes, gets more of it.
func BenchmarkCodeModeOverHTTP(b *testing.B) {
	const clients, rounds, perRound = 8, 10, 100
	backend := echoMCPServer(b)
	loadCaddyfile(b, quietCaddy, fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /in_process {
		backend api %[1]s
		isolation in_process
		max_concurrent %[2]d
	}
	codemode /process {
		backend api %[1]s
		isolation process
		max_concurrent %[2]d
	}
}`, backend.URL, clients))
	hc := keepAliveClient(b, clients)
	modes := []string{isolationInProcess, isolationProcess}
	for _, mode := range modes {
		executions(b, hc, "/"+mode, clients, 4*clients) // warm up
	}
	waitWorkers(b, clients)
	took := map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// In short rounds, alternated and each mode first in turn, so
		// that both see the same machine.
		for round := range rounds {
			for j := range modes {
				mode := modes[(round+j)%len(modes)]
				took[mode] += executions(b, hc, "/"+mode, clients, perRound)
			}
		}
	}
	b.StopTimer()
	rate := func(mode string) float64 { return float64(b.N*rounds*perRound) / took[mode].Seconds() }
	b.ReportMetric(rate(isolationInProcess), "in_process-exec/s")
	b.ReportMetric(rate(isolationProcess), "process-exec/s")
	b.ReportMetric(rate(isolationProcess)/rate(isolationInProcess), "process/in_process")
}

// BenchmarkCodeModeMemory: the resident memory of this process (a real
// Caddy, its code mode handler and the backend) after executions run in
// it, and after the same executions run in a pool of 4 warm workers, whose
// own memory it reports too, per worker: all of it (VmRSS) and its private
// part (RssAnon), which is what a worker adds to the machine (the rest is
// the program's file pages, shared). process-RssAnon-added is what process
// mode costs in all: Caddy's private memory and the workers' against
// Caddy's in in_process mode.
func BenchmarkCodeModeMemory(b *testing.B) {
	const workers = 4
	backend := echoMCPServer(b)
	site := func(isolation string) string {
		return fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend api %s
		isolation %s
		max_concurrent %d
	}
}`, backend.URL, isolation, workers)
	}
	hc := keepAliveClient(b, workers)
	// Each reading follows the same executions, then a collection that
	// hands freed memory back.
	settled := func() {
		executions(b, hc, "/code", workers, 200)
		time.Sleep(100 * time.Millisecond)
		debug.FreeOSMemory()
	}
	var without, with, worker [2]int64 // VmRSS, RssAnon
	for i := 0; i < b.N; i++ {
		// The pool first: executions in this process would leave it
		// bigger for the reading with the pool.
		loadCaddyfile(b, quietCaddy, site(isolationProcess))
		waitWorkers(b, workers)
		// Executions that come while the pool is still filling start
		// workers of their own, and the pool stops the extra ones after:
		// the workers read are those of a second round.
		settled()
		pids := waitWorkers(b, workers)
		settled()
		with = residentOf(b, os.Getpid())
		worker = [2]int64{}
		for _, pid := range pids {
			m := residentOf(b, pid)
			worker[0] += m[0] / workers
			worker[1] += m[1] / workers
		}
		loadCaddyfile(b, quietCaddy, site(isolationInProcess))
		waitWorkers(b, 0)
		settled()
		without = residentOf(b, os.Getpid())
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mib(without[0]), "caddy-in_process-VmRSS-MiB")
	b.ReportMetric(mib(without[1]), "caddy-in_process-RssAnon-MiB")
	b.ReportMetric(mib(with[0]), "caddy-process-VmRSS-MiB")
	b.ReportMetric(mib(with[1]), "caddy-process-RssAnon-MiB")
	b.ReportMetric(mib(worker[0]), "worker-VmRSS-MiB")
	b.ReportMetric(mib(worker[1]), "worker-RssAnon-MiB")
	b.ReportMetric(mib(with[1]+workers*worker[1]-without[1]), "process-RssAnon-added-MiB")
}

// residentOf reads VmRSS and RssAnon of /proc/<pid>/status, in bytes.
func residentOf(b *testing.B, pid int) [2]int64 {
	b.Helper()
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	var out [2]int64
	for _, line := range strings.Split(string(text), "\n") {
		for i, field := range []string{"VmRSS:", "RssAnon:"} {
			if v, ok := strings.CutPrefix(line, field); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					b.Fatalf("/proc/%d/status %s %v", pid, field, err)
				}
				out[i] = kb << 10
			}
		}
	}
	return out
}
