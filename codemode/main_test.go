package codemode

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// testPool runs the package's executions in worker processes: this test
// binary, started again with testPoolWorker after WorkerCommand, so that
// tests counting their own pools' processes can tell the test pool's
// apart.
var testPool *Pool

// testPoolWorker marks the test pool's workers on their command line.
const testPoolWorker = "codemode-test-pool"

// brokenWorker is the first argument that makes this test binary a worker
// that breaks the protocol in the way its second argument names.
const brokenWorker = "codemode-broken-worker"

// childTest, set in the environment, makes this test binary one that
// tests its own confinement, with no test pool.
const childTest = "CODEMODE_CHILD_TEST"

func TestMain(m *testing.M) {
	WorkerMain()
	if len(os.Args) > 2 && os.Args[1] == brokenWorker {
		serveBrokenly(os.Args[2])
		os.Exit(0)
	}
	if os.Getenv(childTest) != "" {
		os.Exit(m.Run())
	}
	self, err := os.Executable()
	if err == nil {
		// The heap ceiling the tests' expectations were written for.
		testPool, err = NewPool(PoolConfig{Command: []string{self, WorkerCommand, testPoolWorker}, Workers: 2,
			MaxMemory: DefaultMaxMemory * 4 / 3})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	testPool.Close()
	os.Exit(code)
}

// serveBrokenly is a worker that gets ready as a worker does, then, given
// code to run, breaks the protocol.
func serveBrokenly(how string) {
	r := newFrameReader(os.Stdin, maxFromCaddy)
	w := newFrameWriter(os.Stdout)
	if how == "never-ready" {
		select {}
	}
	if _, err := r.read(); err != nil {
		os.Exit(1)
	}
	_ = w.write(&message{Type: msgReady})
	run, err := r.read()
	if err != nil {
		os.Exit(1)
	}
	switch how {
	case "deaf-after-one", "flood-after-one":
		_ = w.write(&message{Type: msgDone, Exec: run.Exec, Payload: []byte("1"), Result: &workerResult{}})
		if how == "flood-after-one" {
			for range 200 {
				_ = w.write(&message{Type: msgLog, Exec: run.Exec, Line: strings.Repeat("y", 1<<10)})
			}
		}
		select {} // reads nothing more
	case "silent": // reads on, answers nothing
		for {
			if _, err := r.read(); err != nil {
				os.Exit(0)
			}
		}
	case "garbage":
		out := bufio.NewWriter(os.Stdout)
		fmt.Fprint(out, "\x00\x00\x00\x10not json at all!")
		out.Flush()
	case "huge-frame":
		os.Stdout.Write([]byte{0x7f, 0xff, 0xff, 0xff})
	case "other-execution":
		_ = w.write(&message{Type: msgLog, Exec: run.Exec + 1, Line: "x"})
	case "forbidden-tool":
		_ = w.write(&message{Type: msgCall, Exec: run.Exec, Call: 1, Backend: 0, Tool: "not-given"})
	case "unasked-search": // a search the execution was not given
		_ = w.write(&message{Type: msgSearch, Exec: run.Exec, Call: 1, Payload: []byte(`{"query":"x","limit":1}`)})
	case "exit":
		os.Exit(3)
	case "hog": // grows without end, as a worker whose own limits failed
		var keep [][]byte
		for {
			b := make([]byte, 8<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
			time.Sleep(5 * time.Millisecond)
		}
	}
	select {}
}

// newRunner is the runner the package's tests use: executions in the test
// pool's workers, as every execution runs in Caddy.
func newRunner(l Limits) *Runner { return NewProcessRunner(l, testPool) }
