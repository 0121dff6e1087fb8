//go:build unix

package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
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

// pageTimeout bounds each of the driver's waits (the browser's start, the
// page's load, the client's outcome); runTimeout bounds the whole driver.
const (
	pageTimeout = 30 * time.Second
	runTimeout  = 60 * time.Second
)

// browser runs js/drive.mjs, which starts Chromium with puppeteer-core.
type browser struct {
	node, chromium, dir string
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
	// puppeteer-core downloads no browser; this keeps it so for any
	// version that would.
	t.Setenv("PUPPETEER_SKIP_DOWNLOAD", "1")
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
// the driver's report. Chromium is gone when run returns.
func (b *browser) run(t *testing.T, page string) report {
	t.Helper()
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.node, "drive.mjs", b.chromium, profile, page, strconv.Itoa(int(pageTimeout/time.Millisecond)))
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	var r report
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	parseErr := json.Unmarshal([]byte(lines[len(lines)-1]), &r)
	stopChromium(t, r.Pid, profile)
	if err != nil || parseErr != nil {
		t.Fatalf("drive.mjs: %v (after %s); its report: %v\nstdout:\n%s\nstderr:\n%s", err, time.Since(start).Round(time.Millisecond), parseErr, stdout.String(), stderr.String())
	}
	t.Logf("%s loaded %s in %s (driver's milliseconds: %v)", r.Browser, page, time.Since(start).Round(time.Millisecond), r.Ms)
	if r.DriverError != "" {
		t.Fatalf("drive.mjs: %s\nconsole: %q\nstderr:\n%s", r.DriverError, r.Console, stderr.String())
	}
	for _, line := range r.Console {
		t.Logf("console: %s", line)
	}
	for _, f := range r.FailedRequests {
		t.Logf("failed request: %s %s: %s", f.Method, f.URL, f.Error)
	}
	return r
}

// stopChromium makes sure no process of this run's Chromium is left: the
// driver closes the browser, but a killed driver cannot. Its processes are
// those of the browser's process group (puppeteer starts it detached) and
// any that name its profile. Any still running after a grace period are
// killed, and the test fails: every run must end its browser.
func stopChromium(t *testing.T, pid int, profile string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := chromiumProcesses(pid, profile)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.Errorf("chromium processes %v were still running 5s after the driver ended; killed them", left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chromiumProcesses lists the live (not zombie) processes in process group
// pgid (if not 0) or whose command line names the profile directory.
func chromiumProcesses(pgid int, profile string) []int {
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
		if (pgid != 0 && group == pgid) || bytes.Contains(cmdline, []byte("--user-data-dir="+profile)) {
			found = append(found, p)
		}
	}
	return found
}
