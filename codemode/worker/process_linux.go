package worker

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
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	return parseStatm(f)
}

// parseStatm reads a statm file from its start: kept open, it is read
// again for each look at a busy worker.
func parseStatm(f *os.File) (size, private int64, err error) {
	var buf [128]byte
	n, err := f.ReadAt(buf[:], 0)
	if n == 0 {
		return 0, 0, fmt.Errorf("%s: %v", f.Name(), err)
	}
	fields := strings.Fields(string(buf[:n]))
	if len(fields) < 3 {
		return 0, 0, fmt.Errorf("%s: %q", f.Name(), buf[:n])
	}
	var v [3]int64
	for i := range v {
		if v[i], err = strconv.ParseInt(fields[i], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("%s: %v", f.Name(), err)
		}
	}
	page := int64(os.Getpagesize())
	return v[0] * page, (v[1] - v[2]) * page, nil
}

// privateMemory is what the parent's watchdog compares with max_memory.
func privateMemory(pid int) (int64, error) {
	_, private, err := readStatm(pid)
	return private, err
}

// memoryReader returns how to read a worker's private memory again and
// again, and how to stop.
func memoryReader(pid int) (read func() (int64, error), done func(), err error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return nil, nil, err
	}
	return func() (int64, error) {
		_, private, err := parseStatm(f)
		return private, err
	}, func() { f.Close() }, nil
}

// workerAttr makes a worker die with its parent, even one killed outright,
// and puts it in a process group of its own, which killProcess ends.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killProcess kills a worker and anything it started.
func killProcess(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill()
}

// selfExecutable is the program this process runs, whatever is at its path
// now.
func selfExecutable() string { return "/proc/self/exe" }
