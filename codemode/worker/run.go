package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// workerGrace is how long past the timeout Caddy waits for a worker's
// answer before it kills the worker: enough for an interrupt to end the
// code and for the worker to give up on a stuck built-in (sandbox.Serial).
const workerGrace = 500 * time.Millisecond

// callGrace is how long past the timeout a backend call may run.
const callGrace = 50 * time.Millisecond

// memoryCheckInterval is how often a busy worker's memory is read.
const memoryCheckInterval = 10 * time.Millisecond

// Runner runs each execution in a worker process of its pool, within its
// limits. It is safe for concurrent use.
type Runner struct {
	limits codemode.Limits
	slots  chan struct{}
	pool   *Pool
}

// NewRunner returns a Runner that runs each execution in a worker process
// of the pool: the worker is killed at the timeout (plus a short grace)
// and past the pool's max_memory, which replaces l.MaxMemory.
func NewRunner(l codemode.Limits, pool *Pool) *Runner {
	l = l.WithDefaults()
	l.MaxMemory = pool.Config().MaxMemory
	return &Runner{limits: l, slots: make(chan struct{}, l.MaxConcurrent), pool: pool}
}

// Limits returns the runner's limits, defaults filled in.
func (r *Runner) Limits() codemode.Limits { return r.limits }

// Run executes code with the bindings as globals. It returns when the code
// settles, fails, or runs out of time.
func (r *Runner) Run(ctx context.Context, code string, bindings []codemode.Binding) *codemode.Result {
	return r.RunWithSearch(ctx, code, bindings, nil)
}

// RunWithSearch is Run with the global tools, whose search method asks
// search: the worker's searches come back over the pipe, as binding calls
// do, and are answered here.
func (r *Runner) RunWithSearch(ctx context.Context, code string, bindings []codemode.Binding, search codemode.SearchFunc) *codemode.Result {
	start := time.Now()
	o := r.run(ctx, code, bindings, search)
	o.Duration = time.Since(start)
	o.Format(o.out, r.limits.MaxOutput)
	return o.Result
}

// outcome is an execution's result before it is formatted, with what the
// code printed.
type outcome struct {
	*codemode.Result
	out codemode.Output
}

func (r *Runner) run(ctx context.Context, code string, bindings []codemode.Binding, search codemode.SearchFunc) *outcome {
	if err := r.limits.Admit(code, r.slots); err != nil {
		return &outcome{Result: &codemode.Result{Err: err}}
	}
	var b *codemode.Binding
	if search != nil {
		sb := search.Binding()
		b = &sb
	}
	return r.runInWorker(ctx, code, bindings, b)
}

// runInWorker runs one execution in a worker of the pool. The caller holds
// a concurrency slot; runInWorker frees it once the worker is back in the
// pool or gone.
func (r *Runner) runInWorker(ctx context.Context, code string, bindings []codemode.Binding, search *codemode.Binding) *outcome {
	defer func() { <-r.slots }()
	w, err := r.pool.get(ctx)
	if err != nil {
		return &outcome{Result: &codemode.Result{Err: &codemode.Error{Kind: codemode.KindWorker, Message: "no sandbox worker process could be started: " + err.Error()}}}
	}
	w.execs++
	w.lastExec.Store(w.execs)
	x := &execution{r: r, w: w, exec: w.execs, bindings: bindings, search: search}
	res, healthy := x.run(ctx, code)
	if healthy {
		r.pool.put(w)
	} else {
		r.pool.discard(w)
		<-w.dead
	}
	return res
}

// execution is one execution in a worker, on Caddy's side.
type execution struct {
	r        *Runner
	w        *process
	exec     uint64
	bindings []codemode.Binding
	search   *codemode.Binding // answers the worker's searches; nil: it may make none
	lines    []string
	size     int
	calls    atomic.Int32
	// waiting counts the binding calls under way or cut by the deadline,
	// for the error of a worker stopped at the timeout.
	mu      sync.Mutex
	waiting map[toolCall]int
	// ctx bounds the backend calls; set before the worker gets the code.
	ctx context.Context
	// ended is closed when the execution is over: frames of it that come
	// later are dropped.
	ended chan struct{}
}

// run sends the code and serves the worker until it answers, dies or runs
// out of time. healthy reports that the worker may serve again.
func (x *execution) run(ctx context.Context, code string) (res *outcome, healthy bool) {
	l := x.r.limits
	wl := l
	wl.MaxMemory = x.r.pool.heapCeiling()
	wl.MaxConcurrent = 1
	// Calls end a little after the timeout: at the timeout the worker's
	// own interrupt ends the code, not a call failing first, and its
	// answer comes well before the kill.
	callCtx, cancel := context.WithTimeout(ctx, l.Timeout+callGrace)
	defer cancel()
	// The worker's reader starts the calls, one hand-off sooner than this
	// loop would.
	x.ctx = callCtx
	x.ended = make(chan struct{})
	x.w.current.Store(x)
	defer func() {
		x.w.current.Store(nil)
		close(x.ended)
	}()
	// The kill at the deadline runs on a timer of its own: a worker that
	// stops reading its pipe blocks the writes below, and the kill ends
	// them.
	timeout := time.AfterFunc(l.Timeout+workerGrace, func() {
		x.w.kill(&codemode.Error{Kind: codemode.KindTimeout, Message: codemode.TimeoutMessage(l.Timeout) + x.waitingFor() +
			" (it could not be interrupted; its worker process was stopped)"})
	})
	defer timeout.Stop()
	if err := x.w.w.write(&message{Type: msgRun, Exec: x.exec, Payload: []byte(code), Limits: &wl, Bindings: x.w.bindings(x.bindings),
		Search: x.search != nil}); err != nil {
		x.w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "the sandbox's worker process could not be sent the code: " + err.Error()})
		return x.died(), false
	}
	stopWatch := x.watchMemory()
	defer stopWatch()
	callerGone := ctx.Done()
	for {
		select {
		case m, ok := <-x.w.frames:
			if !ok {
				return x.died(), false
			}
			if res, done, ok := x.handle(m); !ok {
				return x.died(), false
			} else if done {
				return res, !m.Stuck && !passedLimit(res.Err) && x.fits()
			}
		case <-x.w.dead:
			return x.died(), false
		case <-callerGone:
			callerGone = nil
			timeout.Stop()
			canceled := time.AfterFunc(workerGrace, func() {
				x.w.kill(&codemode.Error{Kind: codemode.KindTimeout, Message: "the execution was canceled"})
			})
			defer canceled.Stop()
			go func() {
				if err := x.w.w.write(&message{Type: msgCancel, Exec: x.exec}); err != nil {
					x.w.kill(&codemode.Error{Kind: codemode.KindTimeout, Message: "the execution was canceled"})
				}
			}()
		}
	}
}

// handle takes one frame of the execution. done reports its end; ok false
// a worker that broke the protocol, now being killed.
func (x *execution) handle(m *message) (res *outcome, done, ok bool) {
	broken := func(what string) (*outcome, bool, bool) {
		x.w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "the sandbox's worker process " + what + "; it was stopped"})
		return nil, false, false
	}
	if m.Exec != x.exec {
		return broken(fmt.Sprintf("sent a %q message of another execution", m.Type))
	}
	switch m.Type {
	case msgLog:
		// The worker keeps to max_output; a worker that does not is cut.
		if x.size+len(m.Line)+1 <= x.r.limits.MaxOutput {
			x.lines = append(x.lines, m.Line)
			x.size += len(m.Line) + 1
		}
	case msgDone:
		if m.Result == nil {
			return broken("finished without a result")
		}
		if len(m.Payload) > 0 && !json.Valid(m.Payload) {
			return broken("returned a value that is not JSON")
		}
		wr := m.Result
		// What Caddy saw itself is what counts: the lines it was sent
		// (within max_output) and the calls it made.
		return &outcome{Result: &codemode.Result{Value: m.Payload, Err: knownKind(wr.Err), ToolCalls: int(x.calls.Load())},
			out: codemode.Output{Lines: x.lines, Cut: max(wr.CutLines, 0), Notes: boundNotes(wr.Notes)}}, true, true
	default:
		return broken(fmt.Sprintf("sent an unexpected %q message", m.Type))
	}
	return nil, false, true
}

// startCall checks a call the worker asks for and starts it; a call it
// may not make is why the worker is broken.
func (x *execution) startCall(m *message) (broken string) {
	if int(x.calls.Add(1)) > x.r.limits.MaxToolCalls {
		return "made more tool calls than max_tool_calls"
	}
	if m.Backend < 0 || m.Backend >= len(x.bindings) || !allows(x.bindings[m.Backend], m.Tool) {
		return fmt.Sprintf("called a tool it was not given (%q)", m.Tool)
	}
	if !json.Valid(m.Payload) {
		return "called a tool with arguments that are not JSON"
	}
	x.start(x.bindings[m.Backend], m)
	return ""
}

// startSearch checks a search the worker asks for (tools.search) and
// starts it; it counts as a tool call.
func (x *execution) startSearch(m *message) (broken string) {
	if int(x.calls.Add(1)) > x.r.limits.MaxToolCalls {
		return "made more tool calls than max_tool_calls"
	}
	if x.search == nil {
		return "searched without tools.search"
	}
	if !json.Valid(m.Payload) {
		return "searched with arguments that are not JSON"
	}
	x.start(*x.search, m)
	return ""
}

// start makes the call m asks for of b.
func (x *execution) start(b codemode.Binding, m *message) {
	if m.Alone {
		// Nothing else can come from the worker until it answers (or a
		// worker that lied waits for it): no goroutine to hand it to.
		x.call(x.ctx, b, m)
	} else {
		go x.call(x.ctx, b, m)
	}
}

// knownKind is a worker's error with a kind Caddy knows; another is an
// exception.
func knownKind(e *codemode.Error) *codemode.Error {
	if e == nil {
		return nil
	}
	switch e.Kind {
	case codemode.KindSyntax, codemode.KindException, codemode.KindTimeout, codemode.KindLimit, codemode.KindMemory, codemode.KindStack, codemode.KindBusy, codemode.KindWorker:
		return e
	}
	return &codemode.Error{Kind: codemode.KindException, Message: e.Message, Stack: e.Stack}
}

// boundNotes keeps the sandbox's notes a worker sends to a few short
// lines: they are shown whatever max_output says.
func boundNotes(notes []string) []string {
	const maxNotes, maxNote = 4, 512
	notes = notes[:min(len(notes), maxNotes)]
	for i, n := range notes {
		notes[i] = codemode.CutUTF8(n, maxNote)
	}
	return notes
}

// allows reports whether the code may call tool of b.
func allows(b codemode.Binding, tool string) bool {
	if b.Unavailable != "" {
		return true
	}
	for _, t := range b.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// call calls a backend for the worker and sends the answer back.
func (x *execution) call(ctx context.Context, b codemode.Binding, m *message) {
	tc := toolCall{b.Name, m.Tool}
	x.noteWaiting(tc, 1)
	ans, err := b.Call(ctx, m.Tool, m.Payload)
	if !errors.Is(err, context.DeadlineExceeded) {
		// A call cut by the deadline had no answer before the time ran out.
		x.noteWaiting(tc, -1)
	}
	ret := &message{Type: msgReturn, Exec: x.exec, Call: m.Call}
	var te *codemode.ToolError
	switch {
	case errors.As(err, &te):
		ret.Error, ret.ToolFailed = te.Message, true
	case err != nil:
		ret.Error = err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			ret.ErrorKind = "deadline"
		} else if errors.Is(err, context.Canceled) {
			ret.ErrorKind = "canceled"
		}
	default:
		ret.Payload, ret.Cut = ans.Value, ans.Cut
	}
	if m.Alone {
		// The code runs on at once: its next call may come soon.
		x.w.pipe.expect()
	}
	// A worker that is gone or moved on drops it.
	_ = x.w.w.write(ret)
}

// died is the result of an execution whose worker ended under it.
func (x *execution) died() *outcome {
	<-x.w.dead
	e := x.w.deathError(x.r.pool.cfg.MaxMemory)
	if x.w.killed.Load() == nil || e.Kind == codemode.KindWorker {
		x.r.pool.notify("worker_died", x.w.pid, e.Message)
	}
	return &outcome{Result: &codemode.Result{Err: e, ToolCalls: int(x.calls.Load())}, out: codemode.Output{Lines: x.lines}}
}

// passedLimit reports whether an execution ended at one of its limits:
// its code took its worker to the edge of what the process may do (a
// built-in past the heap, the Go stack, a match cut off), so the worker
// is replaced rather than trusted with the next. The error names the
// limit.
func passedLimit(e *codemode.Error) bool {
	if e == nil {
		return false
	}
	switch e.Kind {
	case codemode.KindTimeout, codemode.KindMemory, codemode.KindStack, codemode.KindLimit:
		return true
	}
	return false
}

// fits reports whether the worker's memory after an execution leaves room
// for the next: a worker that kept much of a big execution is replaced.
func (x *execution) fits() bool {
	if x.w.memory == nil {
		return true
	}
	private, err := x.w.memory()
	return err != nil || private <= x.r.pool.cfg.MaxMemory/2
}

// watchMemory kills the worker once its private memory passes max_memory.
func (x *execution) watchMemory() (stop func()) {
	limit := x.r.pool.cfg.MaxMemory
	if x.w.memory == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(memoryCheckInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-x.w.dead:
				return
			case <-t.C:
				if private, err := x.w.memory(); err == nil && private > limit {
					x.w.kill(&codemode.Error{Kind: codemode.KindMemory, Message: fmt.Sprintf(
						"the execution used %d MiB, past its max_memory of %d MiB; its worker process was stopped", private>>20, limit>>20)})
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// toolCall is a tool of a backend, by their names.
type toolCall struct{ backend, tool string }

// label is how the code names a call of c: backend.ident. It is looked up
// only for an error: a backend may have thousands of tools.
func (x *execution) label(c toolCall) string {
	for _, b := range x.bindings {
		if b.Name != c.backend {
			continue
		}
		for ident, t := range b.Tools {
			if t == c.tool {
				return b.Name + "." + ident
			}
		}
	}
	return c.backend + "." + c.tool
}

// noteWaiting notes a binding call starting (+1) or answered (-1).
func (x *execution) noteWaiting(c toolCall, n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.waiting == nil {
		x.waiting = make(map[toolCall]int)
	}
	x.waiting[c] += n
}

// waitingFor says which binding calls the execution was waiting for.
func (x *execution) waitingFor() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var labels []string
	for c, n := range x.waiting {
		if n > 0 {
			labels = append(labels, x.label(c))
		}
	}
	return codemode.WaitingFor(labels)
}
