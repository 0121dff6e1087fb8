package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// holder answers GET /hold/{ms} after ms milliseconds, or at once when
// the bench releases what it holds: the slow tool of both sandboxes, so
// that the bench knows when every held execution is live.
type holder struct {
	addr    string
	srv     *http.Server
	mu      sync.Mutex
	release chan struct{}
	count   atomic.Int64
}

func startHolder() (*holder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &holder{addr: ln.Addr().String(), release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hold/{ms}", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.PathValue("ms"))
		if err != nil || ms < 0 || ms > 60000 {
			http.Error(w, "ms must be a whole number of milliseconds up to 60000", http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		release := h.release
		h.mu.Unlock()
		h.count.Add(1)
		select {
		case <-release:
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"held":%d}`, ms)
	})
	h.srv = &http.Server{Handler: mux}
	go h.srv.Serve(ln)
	return h, nil
}

// arm counts arrivals from zero and returns the function that lets every
// held request go.
func (h *holder) arm() (release func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count.Store(0)
	ch := make(chan struct{})
	h.release = ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

func (h *holder) arrived() int { return int(h.count.Load()) }

func (h *holder) close() { h.srv.Close() }

// treePSS is the proportional set size of a process and all its
// descendants, in bytes: caddy-mcp's worker processes are children of
// Caddy in process groups of their own, and PSS shares the pages they
// have in common (the binary) among them instead of counting them in
// each.
func treePSS(root int) int64 {
	var total int64
	for _, pid := range tree(root) {
		total += rollupKB(pid, "Pss:") * 1024
	}
	return total
}

// tree is a process and all its descendants, root first.
func tree(root int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		pid, _ := strconv.Atoi(strings.Split(f, "/")[2])
		if fields := procStat(pid); len(fields) > 1 {
			ppid, _ := strconv.Atoi(fields[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	if procStat(root) == nil {
		return nil
	}
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// procStat is the fields of /proc/pid/stat after the command name (which
// may hold spaces): state first, then ppid; nil if there is no such
// process.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return nil
	}
	return strings.Fields(s[i+2:])
}

// rollupKB reads one field of /proc/pid/smaps_rollup, in KiB.
func rollupKB(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// treeCPU is the user and system CPU time of a process and its
// descendants so far, with the children it has already reaped (the
// worker processes caddy-mcp replaced).
func treeCPU(root int) time.Duration {
	var ticks int64
	for _, pid := range tree(root) {
		f := procStat(pid)
		if len(f) < 15 {
			continue
		}
		for _, i := range []int{11, 12} { // utime, stime
			n, _ := strconv.ParseInt(f[i], 10, 64)
			ticks += n
		}
		if pid == root {
			for _, i := range []int{13, 14} { // cutime, cstime
				n, _ := strconv.ParseInt(f[i], 10, 64)
				ticks += n
			}
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}
