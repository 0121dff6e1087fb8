package codemode

import (
	"fmt"
	"os"
	"testing"
)

// testPool, when set (CODEMODE_ISOLATION=process), runs the package's
// executions in worker processes: this test binary, started again.
var testPool *Pool

func TestMain(m *testing.M) {
	WorkerMain()
	if os.Getenv("CODEMODE_ISOLATION") == "process" {
		// The heap ceiling of in-process mode's default, so that the
		// tests' expectations hold in both modes.
		p, err := NewPool(PoolConfig{Workers: 2, MaxMemory: DefaultMaxMemory * 4 / 3})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		testPool = p
		code := m.Run()
		p.Close()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// newRunner is the runner the package's tests use: in process, or in the
// test pool's workers when CODEMODE_ISOLATION=process.
func newRunner(l Limits) *Runner {
	if testPool != nil {
		return NewProcessRunner(l, testPool)
	}
	return NewRunner(l)
}
