package sandbox

import (
	"context"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/stack"
)

// Runner runs executions in this process within its limits. It is safe
// for concurrent use.
type Runner struct {
	limits codemode.Limits
	slots  chan struct{}
	// grace is how long run waits past the timeout for an execution stuck
	// in native code.
	grace time.Duration
	// spares keeps a runtime primed for the next execution (see
	// spare.go).
	spares *spares
}

// NewRunner returns a Runner that runs executions in this process, with
// the given limits.
func NewRunner(l codemode.Limits) *Runner {
	l = l.WithDefaults()
	return &Runner{limits: l, slots: make(chan struct{}, l.MaxConcurrent), grace: graceAfterTimeout, spares: &spares{}}
}

// Limits returns the runner's limits, defaults filled in.
func (r *Runner) Limits() codemode.Limits { return r.limits }

// graceAfterTimeout is how long run waits, past the timeout, for an
// execution stuck in native code before answering without it.
const graceAfterTimeout = time.Second

// Run executes code with the bindings as globals. It returns when the code
// settles, fails, or runs out of time. The execution's concurrency slot is
// held until its goroutine has exited, even if Run returned before.
func (r *Runner) Run(ctx context.Context, code string, bindings []codemode.Binding) *codemode.Result {
	return r.RunWithSearch(ctx, code, bindings, nil)
}

// RunWithSearch is Run with the global tools, whose search method asks
// search.
func (r *Runner) RunWithSearch(ctx context.Context, code string, bindings []codemode.Binding, search codemode.SearchFunc) *codemode.Result {
	start := time.Now()
	var b *codemode.Binding
	if search != nil {
		sb := search.Binding()
		b = &sb
	}
	o := r.run(ctx, code, bindings, b, nil)
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

// run is one execution, with search, when not nil, behind tools.search,
// and onLog, when set, hearing each console line kept, as it is printed.
func (r *Runner) run(ctx context.Context, code string, bindings []codemode.Binding, search *codemode.Binding, onLog func(string)) *outcome {
	if err := r.limits.Admit(code, r.slots); err != nil {
		return &outcome{Result: &codemode.Result{Err: err}}
	}
	s, err := safePrepare(code)
	if err != nil {
		<-r.slots
		e, ok := err.(*codemode.Error)
		if !ok {
			e = &codemode.Error{Kind: codemode.KindSyntax, Message: err.Error()}
		}
		return &outcome{Result: &codemode.Result{Err: e}}
	}

	ctx, cancel := context.WithTimeout(ctx, r.limits.Timeout)
	// Priming ahead helps an execution that would otherwise wait for its
	// setup; when others run too, the cores are busy anyway.
	ex := r.spares.take(r.limits, len(r.slots) <= 1)
	ex.begin(ctx, r.limits, s, bindings, search)
	ex.logs.onKeep = onLog
	done := make(chan *outcome, 1)
	go func() {
		stack.Grow() // for the interpreter
		o := ex.run()
		cancel()
		// Free before the answer: the caller may run again at once.
		<-r.slots
		done <- o
	}()
	select {
	case o := <-done:
		return o
	case <-time.After(r.limits.Timeout + r.grace):
		// Stuck in native code past the timeout; the interrupt is pending
		// and the goroutine keeps its slot until it exits.
		ex.interrupt(&codemode.Error{Kind: codemode.KindTimeout, Message: codemode.TimeoutMessage(r.limits.Timeout)})
		return ex.abandon()
	}
}

// safePrepare is prepare, with a panic of the compiler (folding a
// constant past what Go can allocate, say) as the error.
func safePrepare(code string) (s *script, err error) {
	defer func() {
		if p := recover(); p != nil {
			s, err = nil, panicError(p)
		}
	}()
	return prepare(code)
}

// Serial runs the executions of a worker process, one at a time, each
// under the limits it comes with, and keeps a runtime primed for the next
// between them.
type Serial struct {
	spares spares
}

// serialGrace is how long Serial waits, past the timeout, for an
// execution stuck in native code: the worker's parent waits longer and
// then kills the process.
const serialGrace = 200 * time.Millisecond

// Run runs code under l as Runner.Run does, with search, when not nil,
// behind tools.search, and onLog, when set, hearing each console line
// kept, as it is printed. It returns the result unformatted, and what the
// code printed, for the parent to format. stuck reports that the
// execution's goroutine still runs in a built-in past its timeout: the
// process cannot serve again.
func (s *Serial) Run(ctx context.Context, code string, l codemode.Limits, bindings []codemode.Binding, search *codemode.Binding, onLog func(string)) (res *codemode.Result, out codemode.Output, stuck bool) {
	inWorker.Store(true)
	l.MaxConcurrent = 1
	r := NewRunner(l)
	r.grace, r.spares = serialGrace, &s.spares
	o := r.run(ctx, code, bindings, search, onLog)
	// A slot still held is an execution's goroutine still running.
	stuck = len(r.slots) > 0
	if !stuck {
		releaseMemory(r.limits.MaxMemory)
	}
	return o.Result, o.out, stuck
}
