package codemode

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitAddressSpace caps the worker's address space at what it has mapped
// now plus room for maxMemory: one allocation past it fails at once (a
// fatal out of memory of the worker alone) instead of growing the worker
// until the parent's watchdog sees it.
func limitAddressSpace(maxMemory int64) error {
	if raceEnabled {
		return errors.New("not under the race detector")
	}
	size, _, err := readStatm(os.Getpid())
	if err != nil {
		return err
	}
	limit := uint64(size + maxMemory + addressSlack)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

// addressSlack is the address space a worker may map beyond max_memory:
// the collector's and the allocator's own reservations.
const addressSlack = 512 << 20

// readStatm returns a process's mapped size and its resident memory that
// no file backs (its heap, stacks and other private memory), in bytes.
func readStatm(pid int) (size, private int64, err error) {
	text, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(text))
	if len(f) < 3 {
		return 0, 0, fmt.Errorf("/proc/%d/statm: %q", pid, text)
	}
	var n [3]int64
	for i := range n {
		if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/statm: %v", pid, err)
		}
	}
	page := int64(os.Getpagesize())
	return n[0] * page, (n[1] - n[2]) * page, nil
}

// privateMemory is what the parent's watchdog compares with max_memory.
func privateMemory(pid int) (int64, error) {
	_, private, err := readStatm(pid)
	return private, err
}

// workerAttr makes a worker die with its parent, even one killed outright.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// selfExecutable is the program this process runs, whatever is at its path
// now.
func selfExecutable() string { return "/proc/self/exe" }
