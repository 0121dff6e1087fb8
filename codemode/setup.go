package codemode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/dop251/goja"
)

// maxTimers bounds the timers one execution may have pending.
const maxTimers = 10000

// maxArgsSize bounds the JSON arguments of one binding call.
const maxArgsSize = 4 << 20

// setup prepares the fresh runtime: keeps the originals the sandbox relies
// on, bounds the built-ins that allocate what they are asked for, and adds
// console, setTimeout, clearTimeout and the backend globals. Nothing else
// is reachable: goja offers only ECMAScript built-ins, and every object
// added here is built from script values, never from Go values.
func (ex *execution) setup() error {
	vm := ex.vm
	global := vm.GlobalObject()
	noop, err := vm.RunString("(function(){})")
	if err != nil {
		return err
	}
	ex.noop, _ = goja.AssertFunction(noop)
	ex.errorCtor = global.Get("Error")
	ex.errorCtors = make(map[string]goja.Value)
	for _, name := range []string{"Error", "TypeError", "RangeError", "SyntaxError"} {
		ex.errorCtors[name] = global.Get(name)
	}
	jsonObj := global.Get("JSON").(*goja.Object)
	ex.jsonParse, _ = goja.AssertFunction(jsonObj.Get("parse"))

	if err := ex.guardBuiltins(); err != nil {
		return err
	}
	if err := ex.setupJSON(jsonObj); err != nil {
		return err
	}
	if err := ex.setupConsole(); err != nil {
		return err
	}
	if err := ex.setupTimers(); err != nil {
		return err
	}
	for _, b := range ex.bindings {
		if err := ex.setupBinding(b); err != nil {
			return err
		}
	}
	return nil
}

func (ex *execution) setupJSON(jsonObj *goja.Object) error {
	stringify := func(call goja.FunctionCall) goja.Value {
		text, ok := ex.stringify(call.Argument(0), call.Argument(1), call.Argument(2))
		if !ok {
			return goja.Undefined()
		}
		return ex.vm.ToValue(text)
	}
	parse := func(call goja.FunctionCall) goja.Value {
		text := call.Argument(0).String()
		if err := ex.checkJSON(text); err != nil {
			ex.limit("JSON.parse: " + err.Error())
		}
		v, err := ex.jsonParse(goja.Undefined(), ex.vm.ToValue(text), call.Argument(1))
		if err != nil {
			panic(err)
		}
		return v
	}
	if err := defineMethod(ex.vm, jsonObj, "stringify", 3, stringify); err != nil {
		return err
	}
	return defineMethod(ex.vm, jsonObj, "parse", 2, parse)
}

// parseJSON turns JSON text from Go into a value inside the runtime.
func (ex *execution) parseJSON(text []byte) (goja.Value, error) {
	if err := ex.checkJSON(string(text)); err != nil {
		return nil, err
	}
	return ex.jsonParse(goja.Undefined(), ex.vm.ToValue(string(text)))
}

// checkJSON refuses JSON text that nests too deeply or holds more values
// than the sandbox lets a built-in make at once (see jsonShape).
func (ex *execution) checkJSON(text string) error {
	depth, values := jsonShape(text)
	switch {
	case depth > maxJSONNesting:
		return fmt.Errorf("the text nests %d levels deep; the limit is %d", depth, maxJSONNesting)
	case values > ex.limits.MaxArray:
		return fmt.Errorf("the text holds about %d values; the limit is %d", values, ex.limits.MaxArray)
	}
	return nil
}

func (ex *execution) setupTimers() error {
	vm := ex.vm
	setTimeout := func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(ex.newError("TypeError", "setTimeout: the first argument must be a function"))
		}
		if len(ex.timers) >= maxTimers {
			ex.limit(fmt.Sprintf("more than %d timers are pending", maxTimers))
		}
		ms := call.Argument(1).ToFloat()
		if math.IsNaN(ms) || ms < 0 {
			ms = 0
		}
		if ms > float64(ex.limits.Timeout/time.Millisecond) {
			// It can only fire after the execution's timeout has ended it.
			ms = float64(ex.limits.Timeout/time.Millisecond) + 1000
		}
		var args []goja.Value
		if len(call.Arguments) > 2 {
			args = append(args, call.Arguments[2:]...)
		}
		ex.timerID++
		id := ex.timerID
		ex.pending++
		ex.timers[id] = time.AfterFunc(time.Duration(ms*float64(time.Millisecond)), func() {
			ex.post(func() {
				if _, live := ex.timers[id]; !live {
					return
				}
				delete(ex.timers, id)
				ex.pending--
				if _, err := fn(goja.Undefined(), args...); err != nil {
					panic(err)
				}
			})
		})
		return vm.ToValue(id)
	}
	clearTimeout := func(call goja.FunctionCall) goja.Value {
		id := call.Argument(0).ToInteger()
		if t, ok := ex.timers[id]; ok {
			t.Stop()
			delete(ex.timers, id)
			ex.pending--
		}
		return goja.Undefined()
	}
	if err := defineMethod(vm, vm.GlobalObject(), "setTimeout", 2, setTimeout); err != nil {
		return err
	}
	return defineMethod(vm, vm.GlobalObject(), "clearTimeout", 1, clearTimeout)
}

// dynamicBackend makes the global of a backend whose tools are not known:
// any method called on it calls the tool of that name, except what
// JavaScript itself looks up on an object (turning it into a string,
// awaiting it, serializing it), which no tool call must answer.
var dynamicBackend = goja.MustCompile("sandbox-backend", `(function (name, call) {
	const text = "[backend " + name + "]";
	const toString = function toString() { return text; };
	return new Proxy({}, {
		get(target, prop) {
			if (prop === "toString") return toString;
			if (typeof prop !== "string" || prop === "then" || prop === "toJSON" || prop === "valueOf" ||
				prop === "constructor" || prop === "toLocaleString") return undefined;
			return function (args) { return call(prop, args); };
		},
	});
})`, true)

// setupBinding adds a backend global whose methods call the backend.
func (ex *execution) setupBinding(b Binding) error {
	vm := ex.vm
	if b.Unavailable != "" {
		maker, err := vm.RunProgram(dynamicBackend)
		if err != nil {
			return err
		}
		mk, _ := goja.AssertFunction(maker)
		call := vm.ToValue(func(call goja.FunctionCall) goja.Value {
			tool := call.Argument(0).String()
			return ex.bindingCall(b, tool, tool)(goja.FunctionCall{This: goja.Undefined(), Arguments: call.Arguments[1:]})
		})
		obj, err := mk(goja.Undefined(), vm.ToValue(b.Name), call)
		if err != nil {
			return err
		}
		return vm.GlobalObject().DefineDataProperty(b.Name, obj, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	obj := vm.NewObject()
	idents := make([]string, 0, len(b.Tools))
	for ident := range b.Tools {
		idents = append(idents, ident)
	}
	sort.Strings(idents)
	for _, ident := range idents {
		tool := b.Tools[ident]
		if err := defineMethod(vm, obj, ident, 1, ex.bindingCall(b, ident, tool)); err != nil {
			return err
		}
	}
	if err := defineMethod(vm, obj, "toString", 0, func(goja.FunctionCall) goja.Value {
		return vm.ToValue("[backend " + b.Name + "]")
	}); err != nil {
		return err
	}
	return vm.GlobalObject().DefineDataProperty(b.Name, obj, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// bindingCall is the function behind <backend>.<tool>(args): it queues the
// call and returns a promise that the execution's goroutine settles. The
// loop starts queued calls when the code is waiting (see startCalls).
func (ex *execution) bindingCall(b Binding, ident, tool string) func(goja.FunctionCall) goja.Value {
	label := b.Name + "." + ident
	return func(call goja.FunctionCall) goja.Value {
		if int(ex.calls.Load()) >= ex.limits.MaxToolCalls {
			ex.limit(fmt.Sprintf("more than %d tool calls (max_tool_calls)", ex.limits.MaxToolCalls))
		}
		ex.calls.Add(1)
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
		promise, resolve, reject := ex.vm.NewPromise()
		ex.pending++
		ex.queued = append(ex.queued, &queuedCall{b: b, ident: ident, tool: tool, args: args, resolve: resolve, reject: reject})
		return ex.vm.ToValue(promise)
	}
}

// aloneKey marks the context of a call the execution waits on with
// nothing else to do: no other call or timer is pending, and none can
// start before it returns.
type aloneKey struct{}

// queuedCall is a binding call the code made and the loop has not started.
type queuedCall struct {
	b               Binding
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
		out, err := q.b.Call(context.WithValue(ex.ctx, aloneKey{}, true), q.tool, q.args)
		return ex.runJob(func() { ex.settle(q, out, err) })
	}
	for _, q := range queued {
		q := q
		ex.inflight++
		go func() {
			var out []byte
			var err error
			select {
			case ex.callSlot <- struct{}{}:
				out, err = q.b.Call(ex.ctx, q.tool, q.args)
				<-ex.callSlot
			case <-ex.ctx.Done():
				err = ex.ctx.Err()
			}
			ex.post(func() {
				ex.inflight--
				ex.settle(q, out, err)
			})
		}()
	}
	return nil
}

// settle resolves or rejects a call's promise with its answer.
func (ex *execution) settle(q *queuedCall, out []byte, err error) {
	ex.pending--
	if !errors.Is(err, context.DeadlineExceeded) {
		ex.noteCall(q.b.Name+"."+q.ident, -1)
	}
	if err != nil {
		mustSettle(q.reject(ex.callError(q.b.Name, q.ident, err)))
		return
	}
	v, perr := ex.parseJSON(out)
	if perr != nil {
		mustSettle(q.reject(ex.newError("Error", fmt.Sprintf("%s.%s: the answer is not usable: %v", q.b.Name, q.ident, perr))))
		return
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
	var te *ToolError
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

// defineMethod adds a non-enumerable native method, as built-ins are.
func defineMethod(vm *goja.Runtime, obj *goja.Object, name string, length int, fn func(goja.FunctionCall) goja.Value) error {
	f := vm.ToValue(fn).(*goja.Object)
	_ = f.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = f.DefineDataProperty("length", vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return obj.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}
