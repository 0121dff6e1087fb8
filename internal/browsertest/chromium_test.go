//go:build unix

package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
)

// driverTimeout bounds the driver's run, each of its waits included (the
// browser's start, the page's load, the client's outcome); runTimeout adds
// Node's start and the browser's close. Generous: on a loaded machine
// Chromium takes seconds to start.
const (
	driverTimeout = 90 * time.Second
	runTimeout    = driverTimeout + 30*time.Second
)

// browser runs js/drive.mjs, which starts Chromium with puppeteer-core.
type browser struct {
	node, chromium, dir string
}

// TestMain sets what every npm install of the package's tests inherits:
// puppeteer-core downloads no browser; this keeps it so for any version
// that would. (The tests run in parallel, so it is not t.Setenv.)
func TestMain(m *testing.M) {
	os.Setenv("PUPPETEER_SKIP_DOWNLOAD", "1")
	os.Exit(m.Run())
}

// newBrowser finds Chromium ($CHROMIUM, or Debian's /usr/bin/chromium) and
// Node, and installs js/'s pinned packages. Without Chromium or Node the
// test is skipped, or fails when CI is set: CI installs Chromium, and a
// browser test that skips there proves nothing.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and "+format, args...)
		}
		t.Skipf(format, args...)
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(chromium); err != nil {
		missing("chromium is not installed (%v): install Debian's package with `apt-get install --no-install-recommends chromium`, or set CHROMIUM to a Chromium binary", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found on PATH (%v); it runs puppeteer-core, which drives Chromium", err)
	}
	dir, err := filepath.Abs("js")
	if err != nil {
		t.Fatal(err)
	}
	npmtest.Install(t, dir, "puppeteer-core/package.json")
	return &browser{node: node, chromium: chromium, dir: dir}
}

// report is what drive.mjs prints.
type report struct {
	Browser        string   `json:"browser"`
	Pid            int      `json:"pid"`
	Outcome        outcome  `json:"outcome"`
	Console        []string `json:"console"`
	FailedRequests []struct {
		Method string `json:"method"`
		URL    string `json:"url"`
		Error  string `json:"error"`
	} `json:"failedRequests"`
	DriverError string         `json:"driverError"`
	Ms          map[string]int `json:"ms"`
}

// run loads page in a fresh Chromium with a profile of its own and returns
// the driver's report, failing the test if the driver did. Chromium is
// gone when run returns.
func (b *browser) run(t *testing.T, page string) report {
	t.Helper()
	start := time.Now()
	d := b.drive(t, page, driverTimeout)
	if d.err != nil {
		t.Fatalf("drive.mjs: %v (after %s)\nstdout:\n%s\nstderr:\n%s", d.err, time.Since(start).Round(time.Millisecond), d.stdout, d.stderr)
	}
	r := d.report
	t.Logf("%s loaded %s in %s (driver's milliseconds: %v)", r.Browser, page, time.Since(start).Round(time.Millisecond), r.Ms)
	if r.DriverError != "" {
		t.Fatalf("drive.mjs: %s\nconsole: %q\nstderr:\n%s", r.DriverError, r.Console, d.stderr)
	}
	for _, line := range r.Console {
		t.Logf("console: %s", line)
	}
	for _, f := range r.FailedRequests {
		t.Logf("failed request: %s %s: %s", f.Method, f.URL, f.Error)
	}
	return r
}

// driven is what one run of drive.mjs left: its report, its output, and
// its error (its exit, or a report that is not JSON).
type driven struct {
	report         report
	stdout, stderr string
	err            error
}

// drive runs drive.mjs with the given timeout, in a process group that is
// killed if it outlives the timeout by runTimeout-driverTimeout, and makes
// sure its Chromium is gone.
func (b *browser) drive(t *testing.T, page string, timeout time.Duration) driven {
	t.Helper()
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), timeout+runTimeout-driverTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.node, "drive.mjs", b.chromium, profile, page, strconv.Itoa(int(timeout/time.Millisecond)))
	cmd.Dir = b.dir
	// Chromium writes outside its profile too: crash reports under
	// $XDG_CONFIG_HOME/chromium, dconf's under $XDG_CACHE_HOME; both go to a
	// home of the run's own.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "NODE_ENV=production", "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r report
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if parseErr := json.Unmarshal([]byte(lines[len(lines)-1]), &r); parseErr != nil && err == nil {
		err = fmt.Errorf("its report is not JSON: %v", parseErr)
	}
	stopChromium(t, r.Pid, profile, home)
	return driven{report: r, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// stopChromium makes sure no process of this run's Chromium is left: the
// driver closes the browser, but a killed driver cannot. Its processes are
// those of the browser's process group (puppeteer starts it detached) and
// any that name its profile or its home (the crash handlers, started in
// groups of their own, name their database there). Any still running
// after a grace period are killed, and the test fails: every run must end
// its browser.
func stopChromium(t *testing.T, pid int, profile, home string) {
	t.Helper()
	const grace = 15 * time.Second // Chromium's processes end one by one, slowly on a loaded machine
	deadline := time.Now().Add(grace)
	for {
		left := chromiumProcesses(pid, profile, home)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.Errorf("chromium processes %v were still running %s after the driver ended; killed them", left, grace)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chromiumProcesses lists the live (not zombie) processes in process group
// pgid (if not 0) or whose command line names the profile or the home
// directory.
func chromiumProcesses(pgid int, profile, home string) []int {
	dirs, _ := os.ReadDir("/proc")
	var found []int
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything, so the
		// fields are counted from its last ')'.
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(stat[end+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		group, _ := strconv.Atoi(f[2])
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if (pgid != 0 && group == pgid) || bytes.Contains(cmdline, []byte(profile)) || bytes.Contains(cmdline, []byte(home)) {
			found = append(found, p)
		}
	}
	return found
}

// TestDriverUsage checks that drive.mjs names what it needs when an
// argument is missing, before it starts any browser.
func TestDriverUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("installs puppeteer-core with npm")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node not found on PATH: %v", err)
	}
	npmtest.Install(t, "js", "puppeteer-core/package.json")
	for _, args := range [][]string{
		{},
		{"/usr/bin/chromium", t.TempDir(), "http://127.0.0.1:1/"},
		{"/usr/bin/chromium", t.TempDir(), "http://127.0.0.1:1/", "soon"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, node, append([]string{"drive.mjs"}, args...)...)
		cmd.Dir = "js"
		out, err := cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "usage: node drive.mjs <chromium> <user-data-dir> <page URL> <timeout ms>") {
			t.Errorf("drive.mjs %q: %v, %q; want exit status 2 and the usage", args, err, out)
		}
	}
}
