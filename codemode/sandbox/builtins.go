package sandbox

import (
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// The sandbox runs goja's built-ins as they are. A built-in runs as native
// code: the interrupt that ends `while(true){}` is not seen until it
// returns, and an allocation past max_memory ends the process. Both are
// the worker process's to bear: Caddy kills a worker at its timeout and
// past its memory, reads why from what the Go runtime printed, and starts
// another (see the worker package's run.go). What this file changes gives
// a precise error, or a right answer, where goja gives a wrong one:
//
//   - a regular expression match that hits the match timeout, which goja
//     reports as no match, is reported as a limit error;
//   - replaceAll with an empty search string on a string that is not all
//     ASCII, which goja repeats past the end of the string forever, is
//     done as a global match of the empty pattern.

// MatchTimeout bounds one regular expression match that runs on regexp2,
// which backtracks: a worker process sets it as regexp2's default match
// timeout, which goja's regexp2 patterns take.
const MatchTimeout = time.Second

// checkStride is how many steps of native work go by between two looks
// for a pending interrupt.
const checkStride = 4096

// fixBuiltins changes the built-ins this file lists, in a fresh runtime.
func (ex *execution) fixBuiltins() {
	global := ex.vm.GlobalObject()
	regexpCtor := global.Get("RegExp").(*goja.Object)
	regexpProto := regexpCtor.Get("prototype").(*goja.Object)
	// match, matchAll, replace, search and split call exec once per
	// match, from native code: timing it (and test, which matches on its
	// own) times each match, not a whole replace, whose callbacks may
	// take their time.
	ex.timed(regexpProto, "exec")
	ex.timed(regexpProto, "test")

	stringProto := global.Get("String").(*goja.Object).Get("prototype").(*goja.Object)
	replaceAll, ok := goja.AssertFunction(stringProto.Get("replaceAll"))
	if !ok {
		return
	}
	_ = defineMethod(ex.vm, stringProto, "replaceAll", 2, func(call goja.FunctionCall) goja.Value {
		if p := call.Argument(0); goja.IsString(p) && p.String() == "" {
			// Every position, as a global match of the empty pattern
			// finds them; a replacer gets the same arguments.
			empty, err := ex.vm.New(regexpCtor, ex.vm.ToValue(""), ex.vm.ToValue("g"))
			if err != nil {
				panic(err)
			}
			call.Arguments = append([]goja.Value{empty}, call.Arguments[1:]...)
		}
		return mustCall(replaceAll, call.This, call.Arguments...)
	})
}

// timed wraps a RegExp.prototype method to report a match that ran into
// the match timeout, and to look for interrupts: other built-ins call it
// once per match, from native code.
func (ex *execution) timed(proto *goja.Object, name string) {
	orig, ok := goja.AssertFunction(proto.Get(name))
	if !ok {
		return
	}
	_ = proto.DefineDataProperty(name, ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		ex.step()
		start := time.Now()
		r := mustCall(orig, call.This, call.Arguments...)
		// regexp2 reads a coarse clock (100 ms steps): its timeout may end
		// a match a little before MatchTimeout of wall time.
		if time.Since(start) >= MatchTimeout*3/4 {
			ex.limit(fmt.Sprintf("a regular expression match ran for more than %s and was stopped (catastrophic backtracking?)", MatchTimeout))
		}
		return r
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// step counts a step of native work and looks for a pending interrupt
// every checkStride steps.
func (ex *execution) step() {
	if ex.steps++; ex.steps%checkStride == 0 {
		ex.checkpoint()
	}
}

func orUndefined(v goja.Value) goja.Value {
	if v == nil {
		return goja.Undefined()
	}
	return v
}

func isArray(o *goja.Object) bool { return o.ClassName() == "Array" }
