package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2/v2"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
	"github.com/caddy-mcp/caddy-mcp/internal/stack"
)

// Command is the first argument that makes this program a worker process
// (see Main).
const Command = "codemode-worker"

// Main serves as a worker and exits when the program was started as one
// (its first argument is Command); else it returns at once. A test binary
// calls it first thing in TestMain, so that a Pool can start the test
// binary itself as its worker.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != Command {
		return
	}
	if err := Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "codemode worker:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// maxFromCaddy bounds a frame Caddy sends: the code, a backend's answer.
const maxFromCaddy = 1 << 30

// Serve runs executions for Caddy, one at a time, each in a fresh
// runtime, reading frames from in and writing frames to out. It returns
// when in closes: Caddy is gone, and so is any reason to run on.
func Serve(in io.Reader, out io.Writer) error {
	if f, ok := in.(*os.File); ok {
		in = pollable(f)
	}
	pr := newPipeReader(in)
	c := &child{
		pipe:  pr,
		r:     newFrameReader(pr, maxFromCaddy),
		w:     newFrameWriter(out),
		calls: make(map[uint64]chan *message),
		tools: make(map[string]map[string]string),
	}
	hello, err := c.r.read()
	if err != nil {
		return fmt.Errorf("reading the hello: %v", err)
	}
	if hello.Type != msgHello || hello.MaxMemory <= 0 {
		return fmt.Errorf("the first message is %q, not a hello with max_memory", hello.Type)
	}
	unenforced := confine(hello.MaxMemory)
	// What the program's packages left at start, Caddy's among them, goes
	// back to the system before the first execution.
	debug.FreeOSMemory()
	if err := c.w.write(&message{Type: msgReady, Unenforced: unenforced}); err != nil {
		return err
	}
	for {
		m, err := c.r.read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch m.Type {
		case msgRun:
			if !c.busy.CompareAndSwap(false, true) {
				return errors.New("a run while an execution is running")
			}
			go c.run(m)
		case msgReturn:
			c.mu.Lock()
			ch := c.calls[m.Call]
			delete(c.calls, m.Call)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
				// The call's goroutine runs the code on from here, at
				// once; this one reads on where the runtime has room.
				runtime.Gosched()
			}
		case msgCancel:
			c.mu.Lock()
			if c.exec == m.Exec && c.cancel != nil {
				c.cancel()
			}
			c.mu.Unlock()
		default:
			return fmt.Errorf("an unexpected %q message", m.Type)
		}
	}
}

// confine applies the worker's limits to its own process: its threads,
// the collector's target, the stack bound, the address space, the Landlock
// domain and the system-call filter.
// It returns what it could not enforce.
func confine(maxMemory int64) []string {
	// Two threads of Go code: the code's and one to take the pipe while
	// it waits, and for the collector's share; with one, every binding
	// call waits for the worker's only thread to wake from sleep, which
	// doubled its cost.
	runtime.GOMAXPROCS(2)
	// The program's own packages leave some MiB of live heap that every
	// collection marks again: collect at three times it, not twice (a
	// few MiB more of idle memory for a fifth more executions a second),
	// and let the memory limit collect sooner when an execution needs room.
	debug.SetGCPercent(200)
	debug.SetMemoryLimit(maxMemory * 7 / 8)
	// Deep native recursion (a chain of bound functions or proxies) ends
	// at the stack bound, with a fatal error that Caddy reads as a stack
	// overflow: 64 MiB is far past what 2,048 script frames need, and
	// quick to reach.
	debug.SetMaxStack(int(min(max(maxMemory/8, 16<<20), 64<<20)))
	// goja's backtracking matches end at the timeout (see the sandbox's
	// builtins.go).
	regexp2.DefaultMatchTimeout = sandbox.MatchTimeout
	var unenforced []string
	if err := limitAddressSpace(maxMemory); err != nil {
		unenforced = append(unenforced, "address-space limit: "+err.Error())
	}
	if err := confineProcess(); err != nil {
		unenforced = append(unenforced, "process confinement: "+err.Error())
	}
	if err := restrictSyscalls(); err != nil {
		unenforced = append(unenforced, "system-call filter: "+err.Error())
	}
	return unenforced
}

// child is a worker's side of the pipe.
type child struct {
	pipe *pipeReader // what r reads
	r    *frameReader
	w    *frameWriter

	busy     atomic.Bool
	nextCall atomic.Uint64

	mu    sync.Mutex
	calls map[uint64]chan *message // binding calls waiting for their return
	// tools is each binding's tools of the last execution, by name.
	tools map[string]map[string]string
	// sandbox runs the executions, with a runtime primed for the next.
	sandbox sandbox.Serial
	exec    uint64
	cancel  context.CancelFunc
	idle    *time.Timer // releaseWhenIdle's
}

// run runs one execution and sends its result.
func (c *child) run(m *message) {
	stack.Grow() // for the parser
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.mu.Lock()
	c.exec, c.cancel = m.Exec, cancel
	c.mu.Unlock()

	l := codemode.Limits{}
	if m.Limits != nil {
		l = *m.Limits
	}
	onLog := func(line string) { _ = c.w.write(&message{Type: msgLog, Exec: m.Exec, Line: line}) }
	bindings := make([]codemode.Binding, len(m.Bindings))
	for i, b := range m.Bindings {
		if b.Same {
			b.Tools = c.tools[b.Name]
		}
		c.tools[b.Name] = b.Tools
		bindings[i] = codemode.Binding{Name: b.Name, Tools: b.Tools, Hidden: b.Hidden, Unavailable: b.Unavailable, Call: c.caller(m.Exec, msgCall, i)}
	}
	var search *codemode.Binding
	if m.Search {
		search = &codemode.Binding{Name: codemode.SearchGlobal, Call: c.caller(m.Exec, msgSearch, 0)}
	}
	res, out, stuck := c.sandbox.Run(ctx, string(m.Payload), l, bindings, search, onLog)
	// A stuck execution's goroutine still runs in a built-in past its
	// timeout: Caddy then stops this worker.
	if !stuck {
		// Free before the answer: Caddy may send the next run at once.
		c.busy.Store(false)
		c.releaseWhenIdle()
	}
	_ = c.w.write(&message{Type: msgDone, Exec: m.Exec, Stuck: stuck, Payload: res.Value, Result: &wireResult{
		Lines: out.Lines, CutLines: out.Cut, Notes: out.Notes,
		Err: res.Err, ToolCalls: res.ToolCalls,
	}})
}

// caller is a binding's Call in a worker: a request to Caddy, which calls
// the backend (a message of type msgCall) or searches (msgSearch).
func (c *child) caller(exec uint64, typ string, backend int) func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
	return func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
		id := c.nextCall.Add(1)
		ch := make(chan *message, 1)
		c.mu.Lock()
		c.calls[id] = ch
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			delete(c.calls, id)
			c.mu.Unlock()
		}()
		if err := ctx.Err(); err != nil {
			return codemode.Answer{}, err // the execution is over: nothing to ask Caddy
		}
		alone := sandbox.CalledAlone(ctx)
		if alone {
			c.pipe.expect() // Caddy answers it at once, if the backend does
		}
		if err := c.w.write(&message{Type: typ, Exec: exec, Call: id, Backend: backend, Tool: tool, Payload: args,
			Alone: alone}); err != nil {
			return codemode.Answer{}, err
		}
		select {
		case r := <-ch:
			switch {
			case r.ToolFailed:
				return codemode.Answer{}, &codemode.ToolError{Message: r.Error}
			case r.ErrorKind == "deadline":
				return codemode.Answer{}, fmt.Errorf("%s: %w", r.Error, context.DeadlineExceeded)
			case r.ErrorKind == "canceled":
				return codemode.Answer{}, fmt.Errorf("%s: %w", r.Error, context.Canceled)
			case r.Error != "":
				return codemode.Answer{}, errors.New(r.Error)
			}
			return codemode.Answer{Value: r.Payload, Cut: r.Cut}, nil
		case <-ctx.Done():
			return codemode.Answer{}, ctx.Err()
		}
	}
}

// idleRelease is how long a worker waits for its next run before it
// hands the heap it no longer uses back to the system: after an execution
// that worked through large answers, tens of MiB; an idle worker then
// holds what the program keeps, about 10 MiB. A worker kept busy does not
// pay for the collection.
const idleRelease = 500 * time.Millisecond

// releaseWhenIdle hands the unused heap back once the worker has been
// idle for idleRelease.
func (c *child) releaseWhenIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle != nil {
		c.idle.Stop()
	}
	c.idle = time.AfterFunc(idleRelease, func() {
		if !c.busy.Load() {
			debug.FreeOSMemory()
		}
	})
}
