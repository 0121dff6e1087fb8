//go:build linux

package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The Caddy binary is built once per test binary run, on first use, into a
// directory that TestMain removes.
var (
	buildOnce sync.Once
	buildDir  string
	caddyBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if caddyBin != "" {
		// No process of ours may outlive the tests.
		if left := processesOf(caddyBin); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "loadtest: Caddy processes left running: %v; killing them\n", left)
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			code = 1
		}
	}
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// caddyBinary builds ./cmd/caddy from the repository root, once.
func caddyBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			buildErr = err
			return
		}
		if _, err := os.Stat(filepath.Join(root, "cmd", "caddy", "main.go")); err != nil {
			buildErr = fmt.Errorf("not the repository root: %s: %v", root, err)
			return
		}
		if buildDir, err = os.MkdirTemp("", "caddy-mcp-loadtest-"); err != nil {
			buildErr = err
			return
		}
		bin := filepath.Join(buildDir, "caddy")
		start := time.Now()
		// Without DWARF and the symbol table the link takes half the time;
		// stack traces and goroutine profiles do not need them.
		cmd := exec.Command(goTool(), "build", "-ldflags=-s -w", "-o", bin, "./cmd/caddy")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/caddy: %v\n%s", err, out)
			return
		}
		caddyBin = bin
		fmt.Fprintf(os.Stderr, "loadtest: built %s in %s\n", bin, time.Since(start).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return caddyBin
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

// processesOf lists the live processes running the executable at path.
func processesOf(path string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil {
			continue
		}
		if strings.TrimSuffix(exe, " (deleted)") == path {
			pids = append(pids, pid)
		}
	}
	return pids
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// The kernel may give a port just closed again: two calls in a
		// row once gave one port, and Caddy refused a config with two
		// sites on it.
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
}

// handedOut are the ports freePort has returned in this test binary.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// globalOptions starts every Caddyfile of these tests: the admin endpoint
// on a loopback port of its own (`caddy reload` and /debug/pprof go
// there), no autosave, everything on 127.0.0.1.
//
// Server-side keep-alive connections close after 2 s idle (and those
// that never carried a request after 2 s without one), so that after a
// load run the connections the codemode backend clients keep to the same
// Caddy are gone, and goroutines can be compared with the start.
const globalOptions = `{
	admin %s
	persist_config off
	default_bind 127.0.0.1
	auto_https off
	servers {
		timeouts {
			idle 2s
			read_header 2s
		}
	}
}
`

// caddyProc is one Caddy process of a test.
type caddyProc struct {
	name    string
	admin   string // host:port of the admin endpoint
	logPath string
	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{}
	waitErr error
	stopped bool
}

// startCaddy writes sites (a Caddyfile without global options) into a
// file in the test's directory and runs Caddy on it, its output in a log
// file there. It waits until the admin endpoint and every address in
// ready accept connections. The process is killed when the test ends.
func startCaddy(t *testing.T, name, sites string, env []string, ready ...string) *caddyProc {
	t.Helper()
	return runCaddy(t, name, sites, env, 0, ready...)
}

// startCaddyLimited is startCaddy for a Caddy whose address space is
// limited to limit bytes (RLIMIT_AS, set by the shell that execs it).
func startCaddyLimited(t *testing.T, name, sites string, limit int64, ready ...string) *caddyProc {
	t.Helper()
	return runCaddy(t, name, sites, nil, limit, ready...)
}

func runCaddy(t *testing.T, name, sites string, env []string, addressSpace int64, ready ...string) *caddyProc {
	t.Helper()
	bin := caddyBinary(t)
	dir := t.TempDir()
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	config, err := writeCaddyfile(dir, name, admin, sites)
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", config, "--adapter", "caddyfile")
	if addressSpace > 0 {
		// The shell sets the limit and execs Caddy, which keeps its pid,
		// its process group and its parent-death signal.
		cmd = exec.Command("bash", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, addressSpace>>10),
			bin, "run", "--config", config, "--adapter", "caddyfile")
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// A group of its own, so that stopping it stops everything it started;
	// and killed with the test binary if that dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	p := &caddyProc{name: name, admin: admin, logPath: logPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			t.Logf("%s log (%s), last lines:\n%s", name, logPath, tail(logPath, 30))
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for _, addr := range append([]string{admin}, ready...) {
		for {
			c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-p.done:
				t.Fatalf("%s exited before listening on %s (%v):\n%s", name, addr, p.waitErr, tail(logPath, 30))
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not listen on %s after 30 s:\n%s", name, addr, tail(logPath, 30))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return p
}

// writeCaddyfile writes the global options and sites to dir/name.Caddyfile.
func writeCaddyfile(dir, name, admin, sites string) (string, error) {
	path := filepath.Join(dir, name+".Caddyfile")
	return path, os.WriteFile(path, []byte(fmt.Sprintf(globalOptions, admin)+sites), 0o644)
}

// stop ends the process group: SIGTERM (Caddy stops gracefully), then
// SIGKILL after 10 s.
func (p *caddyProc) stop(t *testing.T) {
	t.Helper()
	if p.stopped {
		return
	}
	p.stopped = true
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s did not stop within 10 s of SIGTERM; killing it", p.name)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything else left in the group (Caddy starts no children, but make
	// sure) goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	p.logFile.Close()
}

// reload runs `caddy reload` with sites as the new config (written to
// dir) and returns when the command started and ended. It is an error if
// the command fails or takes longer than limit; it is killed at twice
// limit. It may run on any goroutine.
func (p *caddyProc) reload(dir, sites string, limit time.Duration) (started, ended time.Time, err error) {
	config, err := writeCaddyfile(dir, p.name+"-reload", p.admin, sites)
	if err != nil {
		return started, ended, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, caddyBin, "reload", "--config", config, "--adapter", "caddyfile", "--address", p.admin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	started = time.Now()
	out, err := cmd.CombinedOutput()
	ended = time.Now()
	took := ended.Sub(started)
	if err != nil {
		return started, ended, fmt.Errorf("caddy reload failed after %s: %v\n%s", took, err, out)
	}
	if took > limit {
		return started, ended, fmt.Errorf("caddy reload took %s, more than %s", took, limit)
	}
	return started, ended, nil
}

// load posts sites as the new config to the admin API's /load as a
// Caddyfile, which Caddy adapts itself, and returns how long it took.
func (p *caddyProc) load(sites string) (time.Duration, error) {
	body := fmt.Sprintf(globalOptions, p.admin) + sites
	req, err := http.NewRequest(http.MethodPost, "http://"+p.admin+"/load", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "text/caddyfile")
	started := time.Now()
	resp, err := (&http.Client{Transport: adminClient.Transport, Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST /load: %s: %.300s", resp.Status, out)
	}
	return time.Since(started), nil
}

// adminClient talks to admin endpoints without keep-alive, so that its own
// connections do not show in the goroutine counts it reads.
var adminClient = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   30 * time.Second,
}

func (p *caddyProc) adminGet(path string) ([]byte, error) {
	resp, err := adminClient.Get("http://" + p.admin + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, body)
	}
	return body, nil
}

// runtimeStats is what the leak checks compare.
type runtimeStats struct {
	Goroutines int
	HeapAlloc  uint64 // live heap after two forced collections
}

func (s runtimeStats) String() string {
	return fmt.Sprintf("%d goroutines, heap %.1f MiB", s.Goroutines, float64(s.HeapAlloc)/(1<<20))
}

// stats reads the goroutine count from /debug/pprof/goroutine and the live
// heap from /debug/vars (expvar's memstats) after forcing two garbage
// collections through /debug/pprof/heap?gc=1 (two, so that sync.Pool
// victims are gone too). Both are on Caddy's admin endpoint.
func (p *caddyProc) stats() (runtimeStats, error) {
	var s runtimeStats
	for range 2 {
		if _, err := p.adminGet("/debug/pprof/heap?gc=1"); err != nil {
			return s, err
		}
	}
	vars, err := p.adminGet("/debug/vars")
	if err != nil {
		return s, err
	}
	var v struct {
		Memstats struct{ HeapAlloc uint64 } `json:"memstats"`
	}
	if err := json.Unmarshal(vars, &v); err != nil {
		return s, fmt.Errorf("/debug/vars: %v", err)
	}
	s.HeapAlloc = v.Memstats.HeapAlloc
	prof, err := p.adminGet("/debug/pprof/goroutine?debug=1")
	if err != nil {
		return s, err
	}
	first, _, _ := bytes.Cut(prof, []byte("\n"))
	n, ok := strings.CutPrefix(string(first), "goroutine profile: total ")
	if !ok {
		return s, fmt.Errorf("unexpected goroutine profile: %q", first)
	}
	if s.Goroutines, err = strconv.Atoi(n); err != nil {
		return s, err
	}
	return s, nil
}

// workers is how many code mode worker processes Caddy keeps track of:
// the goroutines, one per worker, that wait for a worker's end (-1 if the
// profile cannot be read).
func (p *caddyProc) workers() int {
	b, err := p.adminGet("/debug/pprof/goroutine?debug=1")
	if err != nil {
		return -1
	}
	n := 0
	for _, block := range strings.Split(string(b), "\n\n") {
		count, _, ok := strings.Cut(block, " @ ")
		count = count[strings.LastIndex(count, "\n")+1:] // past the profile's first line
		if c, err := strconv.Atoi(count); ok && err == nil && strings.Contains(block, "codemode/worker.(*Pool).start.func1") {
			n += c
		}
	}
	return n
}

// goroutineDump is the goroutine profile in text, for a failure message.
func (p *caddyProc) goroutineDump() string {
	b, err := p.adminGet("/debug/pprof/goroutine?debug=1")
	if err != nil {
		return err.Error()
	}
	if len(b) > 20000 {
		b = append(b[:20000], "\n[cut]"...)
	}
	return string(b)
}

// Tolerances of the leak check. A few goroutines come and go with
// background work (certmagic's lock file, the admin request being
// answered). The live heap keeps what warmed-up state holds (metrics
// series, pools, goroutine descriptors from the peak): 1-2.5 MiB over a
// 6 MiB start here, the same after the short load as after 60 s of load, where a leak
// would grow with the number of calls (over 100,000 per endpoint in the
// long form, so that 6 MiB is a few tens of bytes per call).
const (
	goroutineSlack = 3
	heapSlackBytes = 6 << 20
	heapSlackRatio = 0.25
)

// idleWait is how long keep-alive connections to Caddy take to close once
// idle: 2 s (globalOptions).
const idleWait = 3 * time.Second

func withinTolerance(before, after runtimeStats) error {
	var errs []error
	if after.Goroutines > before.Goroutines+goroutineSlack {
		errs = append(errs, fmt.Errorf("goroutines %d -> %d (more than %d up)", before.Goroutines, after.Goroutines, goroutineSlack))
	}
	limit := before.HeapAlloc + max(heapSlackBytes, uint64(float64(before.HeapAlloc)*heapSlackRatio))
	if after.HeapAlloc > limit {
		errs = append(errs, fmt.Errorf("heap %.1f MiB -> %.1f MiB (limit %.1f MiB)",
			float64(before.HeapAlloc)/(1<<20), float64(after.HeapAlloc)/(1<<20), float64(limit)/(1<<20)))
	}
	return errors.Join(errs...)
}

// settle waits idleWait for idle connections to close, then up to timeout
// until the process is back within the tolerance of before. It returns the
// last reading, and an error if it did not get there.
func (p *caddyProc) settle(before runtimeStats, timeout time.Duration) (runtimeStats, error) {
	time.Sleep(idleWait)
	deadline := time.Now().Add(timeout)
	for {
		after, err := p.stats()
		if err != nil {
			return after, err
		}
		err = withinTolerance(before, after)
		if err == nil || time.Now().After(deadline) {
			return after, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
