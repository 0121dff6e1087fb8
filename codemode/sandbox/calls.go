package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// maxArgsSize bounds the JSON arguments of one binding call.
const maxArgsSize = 4 << 20

// bindingCall is the function behind <backend>.<tool>(args): it queues the
// call and returns a promise that the execution's goroutine settles. The
// loop starts queued calls when the code is waiting (see startCalls).
func (ex *execution) bindingCall(b codemode.Binding, ident, tool string) func(goja.FunctionCall) goja.Value {
	label := b.Name + "." + ident
	return func(call goja.FunctionCall) goja.Value {
		ex.countCall()
		args := []byte("{}")
		if a := call.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			text, ok := ex.stringify(a, nil, nil)
			if !ok {
				panic(ex.newError("TypeError", label+": the argument cannot be turned into JSON"))
			}
			if len(text) > maxArgsSize {
				panic(ex.newError("RangeError", fmt.Sprintf("%s: the arguments are %d bytes of JSON; the limit is %d", label, len(text), maxArgsSize)))
			}
			args = []byte(text)
		}
		return ex.queueCall(b, ident, tool, args)
	}
}

// countCall counts one call against max_tool_calls, and ends the
// execution past it.
func (ex *execution) countCall() {
	if int(ex.calls.Load()) >= ex.limits.MaxToolCalls {
		ex.limit(fmt.Sprintf("more than %d tool calls (max_tool_calls)", ex.limits.MaxToolCalls))
	}
	ex.calls.Add(1)
}

// queueCall queues a call of b, counted already, and returns its promise.
func (ex *execution) queueCall(b codemode.Binding, ident, tool string, args []byte) goja.Value {
	promise, resolve, reject := ex.vm.NewPromise()
	ex.pending++
	ex.queued = append(ex.queued, &queuedCall{b: b, ident: ident, tool: tool, args: args, resolve: resolve, reject: reject})
	return ex.vm.ToValue(promise)
}

// aloneKey marks the context of a call the execution waits on with
// nothing else to do: no other call or timer is pending, and none can
// start before it returns.
type aloneKey struct{}

// CalledAlone reports whether ctx is that of a binding call the execution
// waits on with nothing else to do: its answer is wanted at once.
func CalledAlone(ctx context.Context) bool { return ctx.Value(aloneKey{}) != nil }

// queuedCall is a binding call the code made and the loop has not started.
type queuedCall struct {
	b               codemode.Binding
	ident, tool     string
	args            []byte
	resolve, reject func(any) error
}

// startCalls starts the queued calls, once the code waits. A single call,
// with nothing else pending, runs right here: the code has nothing to do
// until it answers, and two goroutine hand-offs per call are saved. Calls
// started together run on goroutines of their own, concurrently.
func (ex *execution) startCalls() error {
	queued := ex.queued
	ex.queued = nil
	for _, q := range queued {
		ex.noteCall(q.b.Name+"."+q.ident, 1)
	}
	if len(queued) == 1 && ex.inflight == 0 && len(ex.timers) == 0 {
		q := queued[0]
		ans, err := q.b.Call(context.WithValue(ex.ctx, aloneKey{}, true), q.tool, q.args)
		return ex.runJob(func() { ex.settle(q, ans, err) })
	}
	for _, q := range queued {
		q := q
		ex.inflight++
		go func() {
			var ans codemode.Answer
			var err error
			select {
			case ex.callSlot <- struct{}{}:
				ans, err = q.b.Call(ex.ctx, q.tool, q.args)
				<-ex.callSlot
			case <-ex.ctx.Done():
				err = ex.ctx.Err()
			}
			ex.post(func() {
				ex.inflight--
				ex.settle(q, ans, err)
			})
		}()
	}
	return nil
}

// settle resolves or rejects a call's promise with its answer. A value
// its backend cut is kept with the record, for tools.cut.
func (ex *execution) settle(q *queuedCall, ans codemode.Answer, err error) {
	ex.pending--
	if !errors.Is(err, context.DeadlineExceeded) {
		ex.noteCall(q.b.Name+"."+q.ident, -1)
	}
	if err != nil {
		mustSettle(q.reject(ex.callError(q.b.Name, q.ident, err)))
		return
	}
	v, perr := ex.parseJSON(ans.Value)
	if perr != nil {
		mustSettle(q.reject(ex.newError("Error", fmt.Sprintf("%s.%s: the answer is not usable: %v", q.b.Name, q.ident, perr))))
		return
	}
	if ans.Cut != nil {
		ex.noteCut(v, ans.Cut)
	}
	mustSettle(q.resolve(v))
}

// mustSettle passes on the uncatchable errors that settling a promise can
// return (an interrupt); runJob turns them into the execution's error.
func mustSettle(err error) {
	if err != nil {
		panic(err)
	}
}

// callError is the Error a failed binding call throws into the code.
func (ex *execution) callError(backend, ident string, err error) *goja.Object {
	var te *codemode.ToolError
	msg := fmt.Sprintf("%s.%s failed: %v", backend, ident, err)
	switch {
	case errors.As(err, &te):
		msg = fmt.Sprintf("%s.%s: %s", backend, ident, te.Message)
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("%s.%s: no answer before the time ran out", backend, ident)
	case errors.Is(err, context.Canceled):
		msg = fmt.Sprintf("%s.%s: canceled", backend, ident)
	}
	e := ex.newError("Error", msg)
	// Defined, not set: a setter the code put on Object.prototype must
	// not run inside the loop.
	_ = e.DefineDataProperty("backend", ex.vm.ToValue(backend), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	_ = e.DefineDataProperty("tool", ex.vm.ToValue(ident), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	return e
}
