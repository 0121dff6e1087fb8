//go:build linux

package loadtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
)

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// TestWorkersEndWithCaddy: however Caddy ends, with `caddy stop` or
// killed outright, its code mode workers end with it, also one stuck in
// an execution.
func TestWorkersEndWithCaddy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Caddy")
	}
	t.Parallel()
	for _, how := range []string{"caddy stop", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel() // each its own Caddy
			port := freePort(t)
			sites := fmt.Sprintf(`http://:%d {
	codemode /code {
		backend shop http://127.0.0.1:%d/mcp
		workers 2
		# caddy stop waits for requests in flight: this one ends at its
		# timeout.
		timeout 3s
	}
}
`, port, freePort(t))
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			p := startCaddy(t, "workers", sites, nil, addr)
			pid := p.cmd.Process.Pid
			var workers []int
			waitFor(t, "two workers", func() bool {
				workers = proctest.Children(pid)
				return len(workers) == 2
			})

			s, err := newMCPSession("http://"+addr+"/code", "2026-07-28")
			if err != nil {
				t.Fatal(err)
			}
			held, err := hold(addr, "stuck", s.toolCall("execute", map[string]string{"code": "for (;;) {}"}, false))
			if err != nil {
				t.Fatal(err)
			}
			go held.finish()
			waitFor(t, "the execution to start", func() bool {
				return len(proctest.Children(pid)) > 0 && busyWorker(workers)
			})

			switch how {
			case "caddy stop":
				out, err := exec.Command(caddyBinary(t), "stop", "--address", p.admin).CombinedOutput()
				if err != nil {
					t.Fatalf("caddy stop: %v\n%s", err, out)
				}
				select {
				case <-p.done:
				case <-time.After(15 * time.Second):
					t.Fatal("Caddy did not exit after caddy stop")
				}
			case "SIGKILL":
				// Caddy alone, not its process group: the workers must go
				// by themselves.
				_ = syscall.Kill(pid, syscall.SIGKILL)
				<-p.done
			}
			waitFor(t, "the workers to end", func() bool { return !slices.ContainsFunc(workers, proctest.Running) })
		})
	}
}

// busyWorker reports whether one of the workers uses CPU: the stuck
// execution runs.
func busyWorker(pids []int) bool {
	for _, pid := range pids {
		if st, ok := proctest.Read(pid); ok && st.UserTicks > 10 {
			return true
		}
	}
	return false
}

// TestWorkersAfterTheBinaryIsReplaced: a worker started after Caddy's
// program file was replaced (an upgrade waiting for a restart) or removed
// runs the program Caddy runs, not what is at its path now.
func TestWorkersAfterTheBinaryIsReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs Caddy")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "caddy")
	orig, err := os.ReadFile(caddyBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	admin := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	config, err := writeCaddyfile(dir, "replaced", admin, fmt.Sprintf(`http://:%d {
	codemode /code {
		backend shop http://127.0.0.1:%d/mcp
		workers 1
	}
}
`, port, freePort(t)))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", config, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("Caddy's log:\n%s", log.String())
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	execute := func(when string) {
		t.Helper()
		s, err := newMCPSession("http://"+addr+"/code", "2026-07-28")
		if err != nil {
			t.Fatal(err)
		}
		held, err := hold(addr, when, s.toolCall("execute", map[string]string{"code": "return 6 * 7"}, false))
		if err != nil {
			t.Fatal(err)
		}
		a, err := held.finish()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(a.body), `"result":42`) {
			t.Errorf("an execution %s: %s", when, a.body)
		}
	}
	waitFor(t, "Caddy", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	// Served by a worker that is ready, so that the kill below finds it.
	execute("before")
	var workers []int
	waitFor(t, "a worker", func() bool {
		workers = proctest.Children(cmd.Process.Pid)
		return len(workers) == 1
	})

	// The file now holds another program; the worker dies; its
	// replacement must still be Caddy's own.
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(workers[0], syscall.SIGKILL)
	waitFor(t, "a replacement worker", func() bool {
		kids := proctest.Children(cmd.Process.Pid)
		return len(kids) == 1 && kids[0] != workers[0]
	})
	execute("after the binary was replaced")
}
