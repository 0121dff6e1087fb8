package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// execution is one run of the model's code in its own goja runtime. Once
// the runtime is primed (on whatever goroutine primed it, see spare.go),
// all use of it happens on the execution's goroutine; binding calls run on
// goroutines of their own and hand their results back as jobs.
type execution struct {
	ctx      context.Context
	limits   codemode.Limits
	script   *script
	bindings []codemode.Binding
	search   *codemode.Binding // behind tools.search; nil leaves it undefined
	vm       *goja.Runtime
	// cuts are the values their backends cut, with the records that
	// tools.cut gives.
	cuts map[*goja.Object]goja.Value

	// jobs carries work for the execution's goroutine: settling a binding
	// call's promise, running a timer. Senders give up once done is closed.
	jobs     chan func()
	done     chan struct{}
	pending  int // binding calls and timers not yet settled
	queued   []*queuedCall
	inflight int // binding calls running on goroutines

	calls    atomic.Int32 // binding calls made; read by abandon
	callSlot chan struct{}
	steps    int // native work counted by step
	timers   map[int64]*time.Timer
	timerID  int64

	mu      sync.Mutex // guards logs, stopped and calling, read by abandon
	logs    logBuffer
	stopped bool
	// calling counts the binding calls running, by backend.tool, and
	// counts those that failed for want of time as running still: a
	// timeout names what the code was waiting for.
	calling map[string]int

	// limited is the first limit a native function hit. The interrupt that ends the
	// code may never be seen, if no more script runs after the native function's
	// throw (in the last promise job, say); the result says it anyway.
	limited *codemode.Error
	// timedOut is the timeout's error, once it fired: the code may have
	// ended before it saw the interrupt, by a call failing for want of
	// time.
	timedOut atomic.Pointer[codemode.Error]

	// Originals of built-ins the code could replace.
	jsonParse  goja.Callable
	errorCtor  goja.Value
	errorCtors map[string]goja.Value
	noop       goja.Callable

	// primed says prime ran, primeErr what it returned (see spare.go).
	primed   bool
	primeErr error
}

func newExecution(ctx context.Context, l codemode.Limits, s *script, bindings []codemode.Binding) *execution {
	return &execution{
		ctx:      ctx,
		limits:   l,
		script:   s,
		bindings: bindings,
		// Made here, before the execution's goroutine starts: interrupt
		// reads it from other goroutines.
		vm:       goja.New(),
		jobs:     make(chan func(), 64),
		done:     make(chan struct{}),
		callSlot: make(chan struct{}, l.MaxParallelCalls),
		timers:   make(map[int64]*time.Timer),
		logs:     logBuffer{limit: l.MaxOutput},
	}
}

// run executes the script and waits for its promise to settle.
func (ex *execution) run() (res *outcome) {
	defer func() {
		if p := recover(); p != nil {
			res = ex.result(nil, panicError(p))
		}
		ex.stop()
	}()
	vm := ex.vm
	if err := ex.setup(); err != nil {
		return ex.result(nil, &codemode.Error{Kind: codemode.KindException, Message: "setting up the sandbox: " + err.Error()})
	}
	stopWatch := watchMemory(ex.limits.MaxMemory, ex.interrupt)
	defer stopWatch()
	deadline := time.AfterFunc(ex.limits.Timeout, func() {
		e := ex.timeoutError()
		ex.timedOut.Store(e)
		ex.interrupt(e)
	})
	defer deadline.Stop()
	stopCtx := context.AfterFunc(ex.ctx, func() {
		if errors.Is(ex.ctx.Err(), context.Canceled) {
			ex.interrupt(&codemode.Error{Kind: codemode.KindTimeout, Message: "the execution was canceled"})
		}
	})
	defer stopCtx()

	v, err := vm.RunProgram(ex.script.program)
	if err != nil {
		return ex.result(nil, ex.jsError(err))
	}
	promise, ok := v.Export().(*goja.Promise)
	if !ok {
		return ex.result(nil, &codemode.Error{Kind: codemode.KindException, Message: "internal error: the wrapped code did not return a promise"})
	}
	for promise.State() == goja.PromiseStatePending {
		// Jobs ready to run come first: the code may queue more calls.
		select {
		case job := <-ex.jobs:
			if err := ex.runJob(job); err != nil {
				return ex.result(nil, ex.jsError(err))
			}
			continue
		default:
		}
		if len(ex.queued) > 0 {
			if err := ex.startCalls(); err != nil {
				return ex.result(nil, ex.jsError(err))
			}
			continue
		}
		if ex.pending == 0 {
			return ex.result(nil, &codemode.Error{Kind: codemode.KindException, Message: "the code awaits a promise that nothing will ever settle (no tool call or timer is pending)"})
		}
		select {
		case job := <-ex.jobs:
			if err := ex.runJob(job); err != nil {
				return ex.result(nil, ex.jsError(err))
			}
		case <-ex.ctx.Done():
			// The interrupt is pending: let it surface through the runtime.
			if _, err := ex.noop(goja.Undefined()); err != nil {
				return ex.result(nil, ex.jsError(err))
			}
			return ex.result(nil, ex.timeoutError())
		}
	}
	if promise.State() == goja.PromiseStateRejected {
		return ex.result(nil, ex.thrown(promise.Result()))
	}
	return ex.returned(promise.Result())
}

// runJob runs one job on the execution's goroutine. Jobs call into the
// runtime (resolve, timer callbacks); uncatchable errors come back here.
func (ex *execution) runJob(job func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
				return
			}
			panic(p)
		}
	}()
	job()
	return nil
}

// returned turns the code's return value into the result.
func (ex *execution) returned(v goja.Value) (res *outcome) {
	if v == nil || goja.IsUndefined(v) {
		return ex.result(nil, nil)
	}
	var text string
	var ok bool
	if err := ex.guarded(func() { text, ok = ex.stringify(v, nil, nil) }); err != nil {
		e := ex.jsError(err)
		if e.Kind == codemode.KindException {
			e.Message = "the returned value cannot be turned into JSON: " + e.Message
		}
		return ex.result(nil, e)
	}
	if !ok {
		return ex.result(nil, nil)
	}
	return ex.result([]byte(text), nil)
}

// guarded runs fn as a native function called from script: what the
// code's getters, proxy traps and toJSON methods throw while fn reads its
// values comes back as an error, as does an interrupt, instead of a panic.
func (ex *execution) guarded(fn func()) error {
	call, _ := goja.AssertFunction(ex.vm.ToValue(func(goja.FunctionCall) goja.Value {
		fn()
		return goja.Undefined()
	}))
	_, err := call(goja.Undefined())
	return err
}

func (ex *execution) result(value []byte, err *codemode.Error) *outcome {
	if ex.limited != nil && (err == nil || err.Kind == codemode.KindException) {
		value, err = nil, ex.limited
	}
	if err != nil && err.Kind == codemode.KindException {
		if e := ex.timedOut.Load(); e != nil {
			err = e
		} else if errors.Is(ex.ctx.Err(), context.DeadlineExceeded) {
			err = ex.timeoutError()
		}
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if err == nil && ex.pending > 0 {
		ex.logs.note(fmt.Sprintf("[%d tool call(s) or timer(s) still running when the code finished were dropped; await every call]", ex.pending))
	}
	return &outcome{Result: &codemode.Result{Value: value, Err: err, ToolCalls: int(ex.calls.Load())}, out: ex.logs.output()}
}

// abandon is the result of an execution that did not come back in time:
// the logs so far and a timeout error.
func (ex *execution) abandon() *outcome {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return &outcome{Result: &codemode.Result{ToolCalls: int(ex.calls.Load()),
		Err: &codemode.Error{Kind: codemode.KindTimeout, Message: codemode.TimeoutMessage(ex.limits.Timeout) + " (it was stuck in a built-in function)"}},
		out: ex.logs.output()}
}

// stop ends the execution: pending binding calls and timers are dropped.
func (ex *execution) stop() {
	ex.mu.Lock()
	ex.stopped = true
	ex.mu.Unlock()
	close(ex.done)
	for _, t := range ex.timers {
		t.Stop()
	}
}

// interrupt stops the running code with e; safe from any goroutine.
func (ex *execution) interrupt(e *codemode.Error) { ex.vm.Interrupt(e) }

// limit ends the execution with a limit error, from a native function: the
// interrupt cannot be caught, and the throw stops the built-in at once.
func (ex *execution) limit(msg string) {
	e := &codemode.Error{Kind: codemode.KindLimit, Message: msg}
	if ex.limited == nil {
		ex.limited = e
	}
	ex.vm.Interrupt(e)
	panic(ex.newError("RangeError", msg))
}

// checkpoint lets a pending interrupt take effect from native code.
func (ex *execution) checkpoint() {
	if _, err := ex.noop(goja.Undefined()); err != nil {
		panic(err)
	}
}

// post hands a job to the execution's goroutine, or drops it once the
// execution has ended. It never blocks after the end.
func (ex *execution) post(job func()) {
	select {
	case ex.jobs <- job:
	case <-ex.done:
	}
}

// newError makes an error of a built-in class (Error, TypeError, ...) with
// the original constructors, whatever the code did to the globals.
func (ex *execution) newError(class, msg string) *goja.Object {
	ctor, ok := ex.errorCtors[class]
	if !ok {
		ctor = ex.errorCtor
	}
	obj, err := ex.vm.New(ctor, ex.vm.ToValue(msg))
	if err != nil {
		return ex.vm.NewTypeError(msg)
	}
	return obj
}

// jsError turns an error out of the runtime into the model's error.
func (ex *execution) jsError(err error) *codemode.Error {
	var interrupted *goja.InterruptedError
	var stack *goja.StackOverflowError
	var exc *goja.Exception
	switch {
	case errors.As(err, &interrupted):
		if e, ok := interrupted.Value().(*codemode.Error); ok {
			return &codemode.Error{Kind: e.Kind, Message: e.Message}
		}
		return &codemode.Error{Kind: codemode.KindTimeout, Message: fmt.Sprint(interrupted.Value())}
	case errors.As(err, &stack):
		return &codemode.Error{Kind: codemode.KindStack, Message: fmt.Sprintf("the call stack is deeper than %d frames (unbounded recursion?)", ex.limits.MaxStackDepth)}
	case errors.As(err, &exc):
		return ex.thrown(exc.Value())
	}
	if e := allocationError(err); e != nil {
		return e
	}
	return &codemode.Error{Kind: codemode.KindException, Message: err.Error()}
}

// panicError is the error of a panic out of the runtime: a built-in asked
// for more memory than Go can give at once (a Go runtime error, which
// goja passes on), or a bug of the sandbox's, reported, not fatal.
func panicError(p any) *codemode.Error {
	if err, ok := p.(error); ok {
		if e := allocationError(err); e != nil {
			return e
		}
	}
	return &codemode.Error{Kind: codemode.KindException, Message: fmt.Sprintf("internal error in the sandbox: %v", p)}
}

// allocationError is a memory limit error for a Go runtime error that a
// built-in's allocation raised (a length past what Go can make), else
// nil.
func allocationError(err error) *codemode.Error {
	var re runtime.Error
	if !errors.As(err, &re) || !AllocationFailed(re.Error()) {
		return nil
	}
	return &codemode.Error{Kind: codemode.KindMemory, Message: "a built-in was asked for more memory than max_memory allows"}
}

// AllocationFailed reports whether text, a Go runtime error or what a
// worker process printed as it died, is an allocation too large to make.
func AllocationFailed(text string) bool {
	for _, s := range []string{"makeslice: len out of range", "makeslice: cap out of range", "growslice: len out of range",
		"makemap: size out of range", "length overflow", "out of memory"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// thrown describes a thrown value: an Error's message and stack, or the
// value itself. Reading those may run the code's getters and proxy traps,
// which may throw or never end: they run guarded.
func (ex *execution) thrown(v goja.Value) *codemode.Error {
	e := &codemode.Error{Kind: codemode.KindException}
	obj, ok := v.(*goja.Object)
	if !ok || obj == nil {
		e.Message = "the code threw " + safeString(v)
		return e
	}
	// Each is read on its own: an Error whose name getter throws still
	// has its message.
	var name, msg, st goja.Value
	for _, p := range []struct {
		key string
		v   *goja.Value
	}{{"message", &msg}, {"name", &name}, {"stack", &st}} {
		err := ex.guarded(func() { *p.v = obj.Get(p.key) })
		var exc *goja.Exception
		switch {
		case err == nil:
		case !errors.As(err, &exc):
			return ex.jsError(err) // an interrupt or a stack overflow, not the code's exception
		case p.key == "message":
			e.Message = "the code threw an object whose properties throw when read"
			return e
		}
	}
	if msg != nil && !goja.IsUndefined(msg) {
		e.Message = safeString(msg)
		if name != nil && !goja.IsUndefined(name) {
			e.Message = safeString(name) + ": " + e.Message
		}
	} else {
		e.Message = "the code threw " + safeString(v)
	}
	if st != nil && goja.IsString(st) {
		frames := strings.SplitN(ex.script.mapStack(st.String()), "\n", 2)
		if len(frames) == 2 {
			e.Stack = frames[1]
		}
	}
	return e
}

// safeString converts a value to a string without running the code's own
// toString, which may throw or never end.
func safeString(v goja.Value) string {
	if v == nil {
		return "undefined"
	}
	switch v.(type) {
	case *goja.Object:
		return "an object"
	case *goja.Symbol:
		return "Symbol(" + v.String() + ")"
	}
	return v.String()
}

func (ex *execution) expired() bool { return ex.ctx.Err() != nil }

// timeoutError is the error of an execution whose time ran out, naming
// the binding calls it was waiting for, if any.
func (ex *execution) timeoutError() *codemode.Error {
	msg := codemode.TimeoutMessage(ex.limits.Timeout)
	ex.mu.Lock()
	labels := make([]string, 0, len(ex.calling))
	for label, n := range ex.calling {
		if n > 0 {
			labels = append(labels, label)
		}
	}
	ex.mu.Unlock()
	return &codemode.Error{Kind: codemode.KindTimeout, Message: msg + codemode.WaitingFor(labels)}
}

// calls notes a binding call starting (+1) or settled (-1).
func (ex *execution) noteCall(label string, n int) {
	ex.mu.Lock()
	if ex.calling == nil {
		ex.calling = make(map[string]int)
	}
	ex.calling[label] += n
	ex.mu.Unlock()
}
