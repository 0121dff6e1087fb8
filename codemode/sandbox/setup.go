package sandbox

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/suggest"
)

// maxTimers bounds the timers one execution may have pending.
const maxTimers = 10000

// setup prepares the fresh runtime: primes it, if that was not done ahead
// (see spare.go), and adds the backend globals and tools. Nothing else is
// reachable: goja offers only ECMAScript built-ins, and every object added
// here is built from script values, never from Go values.
func (ex *execution) setup() error {
	if !ex.primed {
		ex.primeErr = ex.prime()
	}
	if ex.primeErr != nil {
		return ex.primeErr
	}
	for _, b := range ex.bindings {
		if err := ex.setupBinding(b); err != nil {
			return err
		}
	}
	return ex.setupTools()
}

// prime does what setup does before the code and its bindings are known:
// keeps the originals the sandbox relies on, bounds the built-ins that
// allocate what they are asked for, and adds console, setTimeout and
// clearTimeout.
func (ex *execution) prime() error {
	ex.primed = true
	vm := ex.vm
	vm.SetMaxCallStackSize(ex.limits.MaxStackDepth)
	vm.SetParserOptions(parser.WithDisableSourceMaps)
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

	ex.fixBuiltins()
	if err := ex.setupJSON(jsonObj); err != nil {
		return err
	}
	if err := ex.setupConsole(); err != nil {
		return err
	}
	return ex.setupTimers()
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
		reviver := call.Argument(1)
		if goja.IsUndefined(reviver) {
			if v, ok := decodeJSON(ex.vm, text); ok {
				return v
			}
		}
		// A reviver, or text decodeJSON refuses: goja's own parse walks the
		// reviver, or says what is wrong with the text.
		v, err := ex.jsonParse(goja.Undefined(), ex.vm.ToValue(text), reviver)
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
func (ex *execution) parseJSON(answer []byte) (goja.Value, error) {
	text := string(answer)
	if err := ex.checkJSON(text); err != nil {
		return nil, err
	}
	if v, ok := decodeJSON(ex.vm, text); ok {
		return v, nil
	}
	// decodeJSON refuses it: goja's own parse says what is wrong.
	return ex.jsonParse(goja.Undefined(), ex.vm.ToValue(text))
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
func (ex *execution) setupBinding(b codemode.Binding) error {
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
	for _, ident := range slices.Sorted(maps.Keys(b.Tools)) {
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
	global := vm.NewProxy(obj, &goja.ProxyTrapConfig{
		Get: func(target *goja.Object, name string, receiver goja.Value) goja.Value {
			if v := target.Get(name); v != nil || lookedUpByJS[name] {
				return orUndefined(v)
			}
			return vm.ToValue(func(goja.FunctionCall) goja.Value {
				panic(vm.NewTypeError(noTool(b, name)))
			})
		},
	})
	return vm.GlobalObject().DefineDataProperty(b.Name, vm.ToValue(global), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// lookedUpByJS are names JavaScript itself looks up on an object
// (awaiting it, serializing it) that Object.prototype does not have: they
// are not taken for tools.
var lookedUpByJS = map[string]bool{"then": true, "toJSON": true}

// noTool says why the backend's global has no method name: a tool the
// caller may not call and why, or no such tool and the closest ones.
func noTool(b codemode.Binding, name string) string {
	if reason, ok := b.Hidden[name]; ok {
		return fmt.Sprintf("%s.%s is not callable here: %s", b.Name, name, reason)
	}
	idents := slices.Sorted(maps.Keys(b.Tools))
	names := suggest.Near(name, idents, 3)
	if len(names) == 0 {
		names = suggest.Related(name, idents, 3)
	}
	switch {
	case len(idents) == 0:
		return fmt.Sprintf("%s has no tool %s, and none this caller may call", b.Name, name)
	case len(names) == 0:
		return fmt.Sprintf("%s has no tool %s (its %d tools are declared in the execute tool's description)", b.Name, name, len(idents))
	case len(names) == 1:
		return fmt.Sprintf("%s has no tool %s; did you mean %s.%s?", b.Name, name, b.Name, names[0])
	}
	for i, n := range names {
		names[i] = b.Name + "." + n
	}
	return fmt.Sprintf("%s has no tool %s; the closest are %s", b.Name, name, suggest.And(names))
}

// defineMethod adds a non-enumerable native method, as built-ins are.
func defineMethod(vm *goja.Runtime, obj *goja.Object, name string, length int, fn func(goja.FunctionCall) goja.Value) error {
	f := vm.ToValue(fn).(*goja.Object)
	_ = f.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = f.DefineDataProperty("length", vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return obj.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}
