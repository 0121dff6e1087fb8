//go:build unix

package search

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user and system): on a
// shared machine it says more of a benchmark's cost than wall time.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
