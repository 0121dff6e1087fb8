// Package proctest reads what tests need to know of processes from
// Linux's /proc: a process's state, parent and CPU time, and the children
// of a process.
package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Stat is a process's line of /proc/<pid>/stat, the fields tests use.
type Stat struct {
	Pid    int
	State  string // "R", "S", "Z" (a zombie: ended, not reaped), ...
	Parent int
	// UserTicks is the CPU time spent in user mode, in clock ticks.
	UserTicks int
}

// Available reports whether this system has /proc.
func Available() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// Read reads a process's stat; false when there is no such process.
func Read(pid int) (Stat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, false
	}
	return parse(string(b))
}

// parse reads "pid (comm) state ppid ...": comm may hold spaces and
// parentheses, so the fields after it are counted from its last ')'.
func parse(line string) (Stat, bool) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return Stat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:strings.IndexByte(line, '(')]))
	f := strings.Fields(line[end+1:])
	if err != nil || len(f) < 12 {
		return Stat{}, false
	}
	parent, _ := strconv.Atoi(f[1])
	utime, _ := strconv.Atoi(f[11]) // field 14 of the line
	return Stat{Pid: pid, State: f[0], Parent: parent, UserTicks: utime}, true
}

// Running reports whether pid is a process that has not ended.
func Running(pid int) bool {
	s, ok := Read(pid)
	return ok && s.State != "Z"
}

// Children lists the processes whose parent is pid and that have not
// ended, sorted.
func Children(pid int) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var kids []int
	for _, d := range dirs {
		n, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if s, ok := Read(n); ok && s.Parent == pid && s.State != "Z" {
			kids = append(kids, n)
		}
	}
	slices.Sort(kids)
	return kids
}
