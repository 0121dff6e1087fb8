package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is a process the bench started: Caddy, the Node peer, or the
// upstream.
type server struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
}

// start runs a process in a group of its own, with its output in a log
// file, and waits until addr accepts connections.
func start(name, dir, logDir, addr string, env []string, prog string, args ...string) (*server, error) {
	logf, err := os.Create(filepath.Join(logDir, strings.ReplaceAll(name, " ", "_")+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	s := &server{name: name, cmd: cmd, log: logf}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			s.stop()
			return nil, fmt.Errorf("%s did not listen on %s; see %s", name, addr, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the process group: SIGTERM, then SIGKILL.
func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	s.log.Close()
}

// cpu is the process's user and system CPU time so far.
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields start after the ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// peakRSS is the process's peak resident set size, in bytes (VmHWM).
func (s *server) peakRSS() int64 { return statusKB(s.cmd.Process.Pid, "VmHWM:") * 1024 }

// rss is the process's resident set size now, in bytes.
func (s *server) rss() int64 { return statusKB(s.cmd.Process.Pid, "VmRSS:") * 1024 }

func statusKB(pid int, key string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), key) {
			f := strings.Fields(sc.Text())
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
