package worker

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// childTest, set in the environment, makes the test binary one that tests
// its own confinement, with no test pool: codemodetest.ChildTest, which
// this package's own tests cannot import.
const childTest = "CODEMODE_CHILD_TEST"

// BrokenWorker is the first argument that makes the test binary a worker
// that breaks the protocol in the way its second argument names
// (ServeBrokenly).
const BrokenWorker = "codemode-broken-worker"

// ServeBrokenly is a worker that gets ready as a worker does, then, given
// code to run, breaks the protocol.
func ServeBrokenly(how string) {
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
		_ = w.write(&message{Type: msgDone, Exec: run.Exec, Payload: []byte("1"), Result: &wireResult{}})
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

// What the tests of package worker_test reach inside the package.
const (
	StartTimeout = startTimeout
	Grace        = workerGrace
)

// PrivateMemory reads a process's private memory, as the pool does.
var PrivateMemory = privateMemory

// AfterFillStart is the pool's hook between a background start and the
// pool taking the worker in.
var AfterFillStart = &afterFillStart

// IdlePIDs are the process ids of the pool's idle workers.
func IdlePIDs(p *Pool) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	pids := make([]int, len(p.idle))
	for i, w := range p.idle {
		pids[i] = w.pid
	}
	return pids
}

// Starting is how many worker processes the pool is starting now.
func (p *Pool) Starting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starting
}

// MaxStarting is maxStarting.
const MaxStarting = maxStarting
