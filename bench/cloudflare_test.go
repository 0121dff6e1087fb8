package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func fakeCloudflare() *cloudflareResult {
	return &cloudflareResult{Workerd: "workerd 2026-11-17", Rounds: 3, Round: 2 * time.Second, Sides: []*sandboxSide{
		{Name: "caddy-mcp codemode, isolation process", P50: 2 * time.Millisecond, P99: 5 * time.Millisecond, C1: 480, C2: 900, CPU: 3 * time.Millisecond,
			IdleMem: 100 << 20, HeldMem: 100<<20 + cloudflareHeld*(9<<20)},
		{Name: "caddy-mcp codemode, isolation in_process", P50: time.Millisecond, P99: 3 * time.Millisecond, C1: 950, C2: 1800, CPU: 1500 * time.Microsecond,
			IdleMem: 100 << 20, HeldMem: 100<<20 + cloudflareHeld*(100<<10)},
		{Name: "workerd dynamic worker, @cloudflare/codemode 0.5.6", workerd: true, P50: 25 * time.Millisecond, P99: 80 * time.Millisecond,
			C1: 40, C2: 37, CPU: 30 * time.Millisecond, IdleMem: 64 << 20, HeldMem: 64<<20 + cloudflareHeld*(2<<20)},
	}, Alone: &sandboxAlone{Median: 400 * time.Microsecond, Bytes: 300 << 10}}
}

func TestCloudflareTargets(t *testing.T) {
	ts := fakeCloudflare().targets()
	if len(ts) != 4 {
		t.Fatalf("%d targets, want 2 for each isolation mode: %v", len(ts), ts)
	}
	want := []bool{true, false, true, true} // process: 12.5x faster, 9 MiB; in_process: 25x, 100 KiB
	for i, tg := range ts {
		if tg.met != want[i] {
			t.Errorf("%s: met %v, want %v (%s)", tg.name, tg.met, want[i], tg.measured)
		}
	}
	if !strings.HasPrefix(ts[0].measured, "12.5x (2.00 ms vs 25.00 ms; exec/s at c=2 900 vs 37; CPU per execution 3.00 ms vs 30.00 ms, 10.0x)") {
		t.Errorf("speed measured as %q", ts[0].measured)
	}
	if !strings.HasPrefix(ts[3].measured, "100 KiB (workerd's dynamic worker: 2048 KiB)") {
		t.Errorf("memory measured as %q", ts[3].measured)
	}
}

func TestCloudflareMarkdown(t *testing.T) {
	md := fakeCloudflare().markdown()
	for _, want := range []string{
		cloudflareHeading,
		"| workerd dynamic worker, @cloudflare/codemode 0.5.6 | 25.00 ms | 80.00 ms | 40 | 37 | 30.00 ms | 64.0 MiB | 128.0 MiB | 2048 KiB |",
		"| caddy-mcp codemode, isolation in_process | 1.00 ms | 3.00 ms | 950 | 1800 | 1.50 ms | 100.0 MiB | 103.1 MiB | 100 KiB |",
		"in_process: 25.0x faster per execution (median), 23.8x the executions per second at c=1 and 48.6x at c=2, 20.0x less CPU per execution",
		"no HTTP or MCP): 400 µs median, 300 KiB allocated",
		cloudflareScript,
		"bench/charts/" + cloudflareSpeedChart,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the section lacks %q:\n%s", want, md)
		}
	}
}

func TestCloudflareSkippedKeepsTheLastFigures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	last := fakeCloudflare().markdown()
	if err := os.WriteFile(path, []byte("# Benchmarks\n\n"+last+"\n## Next section\n\nother text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cloudflareResult{Skipped: "workerd did not start: no binary", previous: previousCloudflareSection(path)}
	c.Sides = fakeCloudflare().Sides[:2]
	md := c.markdown()
	if !strings.Contains(md, "Not measured in this run: workerd did not start: no binary.") {
		t.Errorf("no reason in:\n%s", md)
	}
	if !strings.Contains(md, "| 25.00 ms | 80.00 ms |") || strings.Contains(md, "Next section") {
		t.Errorf("the last run's figures, and only they, should follow:\n%s", md)
	}
	for _, tg := range c.targets() {
		if tg.met || !strings.Contains(tg.measured, "no binary") {
			t.Errorf("%s: %v %q, want not met with the reason", tg.name, tg.met, tg.measured)
		}
	}
	if got := previousCloudflareSection(filepath.Join(t.TempDir(), "none.md")); got != "" {
		t.Errorf("a missing file gave %q", got)
	}
}

func TestWriteCloudflareCharts(t *testing.T) {
	dir := chartDir(t)
	if err := writeCloudflareCharts(dir, fakeCloudflare()); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, filepath.Join(dir, cloudflareSpeedChart))
	checkPNG(t, filepath.Join(dir, cloudflareMemoryChart))
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestHolderHoldsUntilReleased(t *testing.T) {
	h, err := startHolder()
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	release := h.arm()
	type answer struct {
		status int
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		status, body := get(t, "http://"+h.addr+"/hold/60000")
		done <- answer{status, body}
	}()
	for deadline := time.Now().Add(5 * time.Second); h.arrived() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never arrived")
		}
	}
	select {
	case a := <-done:
		t.Fatalf("answered before the release: %v", a)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	release() // twice is harmless
	a := <-done
	if a.status != 200 || a.body != `{"held":60000}` {
		t.Fatalf("answer %d %q", a.status, a.body)
	}
	if h.arm(); h.arrived() != 0 {
		t.Fatal("arm did not reset the count")
	}
	for _, bad := range []string{"abc", "-1", "60001"} {
		status, body := get(t, "http://"+h.addr+"/hold/"+bad)
		if status != http.StatusBadRequest || !strings.Contains(body, "ms must be a whole number") {
			t.Errorf("hold/%s: %d %q", bad, status, body)
		}
	}
}

func TestTreePSSCountsChildren(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	time.Sleep(100 * time.Millisecond)
	alone := treePSS(child.Process.Pid)
	if alone <= 0 {
		t.Fatalf("a running process has PSS %d", alone)
	}
	self := rollupKB(os.Getpid(), "Pss:") * 1024
	if tree := treePSS(os.Getpid()); tree-self < alone/2 {
		t.Fatalf("the tree (%d) is not this process (%d) and its child (%d)", tree, self, alone)
	}
	if treePSS(1<<30) != 0 || treeCPU(1<<30) != 0 {
		t.Fatal("a process that does not exist has memory or CPU time")
	}
}

func TestTreeCPUCountsChildren(t *testing.T) {
	// A shell whose child spins: the CPU is the child's.
	sh := exec.Command("sh", "-c", "sh -c 'while :; do :; done' & sleep 30")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); sh.Wait() }()
	before := treeCPU(sh.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); treeCPU(sh.Process.Pid)-before < 50*time.Millisecond; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the spinning child's CPU time is not counted: %s in 10 s", treeCPU(sh.Process.Pid)-before)
		}
	}
}

func TestSandboxAlone(t *testing.T) {
	a, err := measureSandboxAlone()
	if err != nil {
		t.Fatal(err)
	}
	if a.Median <= 0 || a.Bytes <= 0 {
		t.Fatalf("%+v", a)
	}
}

// TestWorkerdRunsTheScript runs the parent worker in workerd, as the
// bench does; it needs npm ci in bench/workerd.
func TestWorkerdRunsTheScript(t *testing.T) {
	dir, _ := filepath.Abs("workerd")
	if !installed(dir) {
		t.Skip("workerd is not installed: npm ci in bench/workerd")
	}
	bin := filepath.Join(dir, "node_modules", "workerd", "bin", "workerd")
	h, err := startHolder()
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	srv, base, err := startWorkerd(&settings{work: t.TempDir()}, dir, bin, h.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()

	c, err := newWorkerdClient(base, cloudflareScript)
	if err != nil {
		t.Fatal(err)
	}
	got, err := resultOf(c)
	if want, _ := compactJSON(cloudflareAnswer); err != nil || got != want {
		t.Fatalf("the script returned %s, %v; want %s", got, err, want)
	}

	release := h.arm()
	held, _ := newWorkerdClient(base, holdScript())
	errs := make(chan error, 1)
	go func() { errs <- held.call(context.Background()) }()
	for deadline := time.Now().Add(10 * time.Second); h.arrived() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held execution never reached the holder")
		}
	}
	release()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}

	for _, bad := range []struct{ code, want string }{
		{`throw new Error("boom")`, "boom"},
		{`return nosuch.tool()`, "nosuch is not defined"},
		{`await slow.hold({ ms: "soon" })`, "ms must be a whole number"},
	} {
		c, _ := newWorkerdClient(base, bad.code)
		if err := c.call(context.Background()); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want an error with %q", bad.code, err, bad.want)
		}
	}
	if status, body := get(t, base+"/execute"); status != http.StatusMethodNotAllowed || !strings.Contains(body, "POST a script") {
		t.Errorf("GET: %d %q", status, body)
	}
}

// BenchmarkCloudflareScriptInProcess is the 3-call script in the sandbox
// alone: go test -run X -bench CloudflareScript -benchmem -cpuprofile cpu.out
func BenchmarkCloudflareScriptInProcess(b *testing.B) {
	runner, bindings := scriptInProcess()
	runScript(b, runner, bindings)
}

func TestInstallWorkerdSaysWhy(t *testing.T) {
	dir := t.TempDir() // no package.json, no lock file: npm ci fails
	bin, version, reason := installWorkerd(dir)
	if bin != "" || version != "" || !strings.Contains(reason, "npm ci in bench/workerd failed") {
		t.Fatalf("%q %q %q, want the reason npm ci failed", bin, version, reason)
	}
	if installed(dir) {
		t.Fatal("an empty directory counts as installed")
	}
}
