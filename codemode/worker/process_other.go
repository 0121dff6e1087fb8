//go:build !linux

package worker

import (
	"errors"
	"os"
	"syscall"
)

var errNotHere = errors.New("not available on this system")

// limitAddressSpace is Linux only: elsewhere the parent's watchdog alone
// enforces max_memory, and only where it can read a worker's memory.
func limitAddressSpace(int64) error { return errNotHere }

// privateMemory is Linux only (see limitAddressSpace).
func privateMemory(int) (int64, error) { return 0, errNotHere }

// workerAttr is Linux only: elsewhere a worker learns of its parent's
// death from its pipe closing.
func workerAttr() *syscall.SysProcAttr { return nil }

// selfExecutable is empty: Command's first element is used.
func selfExecutable() string { return "" }

// memoryReader is Linux only (see limitAddressSpace).
func memoryReader(int) (func() (int64, error), func(), error) { return nil, nil, errNotHere }

// killProcess kills a worker.
func killProcess(p *os.Process) { _ = p.Kill() }
