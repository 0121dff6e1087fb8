package codemode

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/dop251/goja"
)

// proxy replaces a constructor by a proxy that runs check on the
// arguments of every call and construction; name is its global, if any.
// check may replace arguments with the values it checked.
func (ex *execution) proxy(global *goja.Object, name string, target *goja.Object, check func([]goja.Value)) *goja.Object {
	call, _ := goja.AssertFunction(target)
	construct, _ := goja.AssertConstructor(target)
	var self *goja.Object
	p := ex.vm.NewProxy(target, &goja.ProxyTrapConfig{
		Apply: func(t *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			args = append([]goja.Value(nil), args...)
			check(args)
			v, err := call(this, args...)
			if err != nil {
				panic(err)
			}
			return v
		},
		Construct: func(t *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			args = append([]goja.Value(nil), args...)
			check(args)
			return constructFor(construct, self, t, newTarget, args)
		},
	})
	self = ex.vm.ToValue(p).(*goja.Object)
	if prototype, ok := target.Get("prototype").(*goja.Object); ok {
		_ = prototype.DefineDataProperty("constructor", self, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	if global != nil && name != "" {
		_ = global.DefineDataProperty(name, self, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	return self
}
func isUndefined(v goja.Value) bool { return v == nil || goja.IsUndefined(v) }

// wrap replaces obj[name] with a native function that runs check and then
// the original. check may replace the call's this and arguments by what
// it checked (see stable); a result that is the replaced this is given
// back as the original this.
func (ex *execution) wrap(obj *goja.Object, name string, check func(*goja.FunctionCall)) {
	orig, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return
	}
	_ = obj.DefineDataProperty(name, ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		this := call.This
		check(&call)
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		// this may be a string, which as a Go value cannot be compared.
		if pinned, ok := call.This.(*goja.Object); ok && this != goja.Value(pinned) {
			if r, ok := v.(*goja.Object); ok && r == pinned {
				return this
			}
		}
		return v
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// replaceArg sets argument i of a call to v, on a copy of the arguments
// (those a native function gets may be its caller's own).
func (ex *execution) replaceArg(call *goja.FunctionCall, i int, v goja.Value) {
	if i < len(call.Arguments) && call.Arguments[i].SameAs(v) {
		return
	}
	args := make([]goja.Value, max(len(call.Arguments), i+1))
	copy(args, call.Arguments)
	for j := len(call.Arguments); j < i; j++ {
		args[j] = goja.Undefined()
	}
	args[i] = v
	call.Arguments = args
}

// number converts argument i of a call to a number, once, and leaves the
// number in its place for the original.
func number(call goja.FunctionCall, i int) float64 {
	if i >= len(call.Arguments) {
		return math.NaN()
	}
	n := call.Arguments[i].ToNumber()
	call.Arguments[i] = n
	return n.ToFloat()
}

// wrapString is wrap for String.prototype methods: check sees this as a
// string, converted once, and the original runs on that string. check may
// change the arguments in place: they are a copy.
func (ex *execution) wrapString(proto *goja.Object, name string, check func(string, goja.FunctionCall)) {
	orig, ok := goja.AssertFunction(proto.Get(name))
	if !ok {
		return
	}
	_ = proto.DefineDataProperty(name, ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
			panic(ex.newError("TypeError", "String.prototype."+name+" called on null or undefined"))
		}
		this := call.This.ToString()
		call.Arguments = append([]goja.Value(nil), call.Arguments...)
		check(this.String(), call)
		v, err := orig(this, call.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
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
		ex.boundRegexp(call.This)
		start := time.Now()
		r, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		// regexp2 reads a coarse clock (100 ms steps): its timeout may end
		// a match a little before regexMatchTimeout of wall time.
		if time.Since(start) >= regexMatchTimeout*3/4 {
			ex.limit(fmt.Sprintf("a regular expression match ran for more than %s and was stopped (catastrophic backtracking?)", regexMatchTimeout))
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

// stable returns obj as a built-in may read it as often as it likes and
// get what the check saw: a genuine array as it is (reading its length
// runs no code), anything else behind a proxy that answers length with
// length and Symbol.iterator with iter, where those are not nil.
func (ex *execution) stable(obj *goja.Object, length, iter goja.Value) goja.Value {
	if isArray(obj) {
		return obj
	}
	return ex.vm.ToValue(ex.vm.NewProxy(obj, &goja.ProxyTrapConfig{
		Get: func(t *goja.Object, p string, _ goja.Value) goja.Value {
			if p == "length" && length != nil {
				return length
			}
			return orUndefined(t.Get(p))
		},
		GetSym: func(t *goja.Object, s *goja.Symbol, _ goja.Value) goja.Value {
			if s == goja.SymIterator && iter != nil {
				return iter
			}
			return orUndefined(t.GetSymbol(s))
		},
	}))
}

func orUndefined(v goja.Value) goja.Value {
	if v == nil {
		return goja.Undefined()
	}
	return v
}

// checked checks the length of an array-like and pins it (see stable).
func (ex *execution) checked(v goja.Value, what string) goja.Value {
	n := ex.lengthOf(v)
	ex.checkLength(n, what)
	if obj, ok := v.(*goja.Object); ok {
		return ex.stable(obj, ex.vm.ToValue(n), nil)
	}
	return v
}

// argList checks the argument list that is argument i of a call.
func (ex *execution) argList(call *goja.FunctionCall, i int, what string) {
	if _, ok := call.Argument(i).(*goja.Object); ok {
		ex.replaceArg(call, i, ex.checked(call.Argument(i), what))
	}
}

// items checks what Array.from, TypedArray.from and the typed array
// constructors read: an array-like's length, pinned; an iterable's
// iterator method, pinned too, so that a getter cannot turn an iterable
// (read step by step) into an array-like of an unchecked length.
func (ex *execution) items(v goja.Value, what string) goja.Value {
	obj, ok := v.(*goja.Object)
	switch {
	case goja.IsString(v):
		ex.checkLength(ex.lengthOf(v), what)
		return v
	case !ok || isTypedArray(obj) || obj.ClassName() == "ArrayBuffer":
		return v
	case isArray(obj):
		ex.checkLength(ex.lengthOf(obj), what)
		return v
	}
	if method, ok := goja.AssertFunction(obj.GetSymbol(goja.SymIterator)); ok {
		iter := ex.vm.ToValue(func(goja.FunctionCall) goja.Value { return mustCall(method, obj) })
		return ex.stable(obj, nil, iter)
	}
	n := ex.lengthOf(obj)
	ex.checkLength(n, what)
	return ex.stable(obj, ex.vm.ToValue(n), goja.Undefined())
}

// spreadable adds to n what concat adds for v, and returns v in a form
// whose spreading cannot change between the count and the concatenation:
// a genuine array as it is, a spreadable object with its length pinned,
// anything else inside an array of its own.
func (ex *execution) spreadable(v goja.Value, n *int64) goja.Value {
	obj, ok := v.(*goja.Object)
	if !ok {
		*n++
		return v
	}
	if isArray(obj) {
		*n += ex.lengthOf(obj)
		return v
	}
	if s := obj.GetSymbol(goja.SymIsConcatSpreadable); s != nil && s.ToBoolean() {
		l := ex.lengthOf(obj)
		*n += l
		return ex.stable(obj, ex.vm.ToValue(l), nil)
	}
	*n++
	own := ex.vm.NewArray(obj)
	_ = own.DefineDataPropertySymbol(goja.SymIsConcatSpreadable, ex.vm.ToValue(true), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	return own
}

// checkIndexes bounds the index keys a built-in lists at once for v, at
// a sixteenth of MaxArray (256Ki by default): each becomes a string key or
// a property, ten times an array element's weight. Object.assign of a
// string of 4Mi characters took seconds and 300MB in one native step.
func (ex *execution) checkIndexes(v goja.Value, what string) {
	if n, max := indexKeys(v), int64(ex.limits.MaxArray/16); n > max {
		ex.limit(fmt.Sprintf("%s: %d index keys (characters or elements) are over the sandbox's limit of %d", what, n, max))
	}
}

// indexKeys is how many index keys v has that no script made one by one:
// a string's characters, a String object's, a typed array's elements. It
// runs no code: a String object's length cannot be redefined, and a typed
// array's elements are counted, not asked for.
func indexKeys(v goja.Value) int64 {
	if s, ok := v.(goja.String); ok {
		return int64(s.Length())
	}
	obj, ok := v.(*goja.Object)
	switch {
	case !ok:
		return 0
	case obj.ClassName() == "String":
		return int64(obj.Get("length").ToInteger())
	case isTypedArray(obj):
		return int64(reflect.ValueOf(obj.Export()).Len())
	}
	return 0
}

// anySlice is what a genuine array exports as; a typed array exports as a
// slice of its element type.
var anySlice = reflect.TypeOf([]any(nil))

func isTypedArray(o *goja.Object) bool {
	t := o.ExportType()
	return t != nil && t.Kind() == reflect.Slice && t != anySlice
}

// lengthOf is ToLength(o.length), 0 for what has none.
func (ex *execution) lengthOf(v goja.Value) int64 {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		if s, ok := v.(goja.String); ok {
			return int64(s.Length())
		}
		return 0
	}
	l := obj.Get("length")
	if l == nil {
		return 0
	}
	f := l.ToFloat()
	if math.IsNaN(f) || f <= 0 {
		return 0
	}
	if f > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(f)
}

func (ex *execution) checkLength(n int64, what string) {
	if n > int64(ex.limits.MaxArray) {
		ex.limit(fmt.Sprintf("%s: a length of %d is over the sandbox's limit of %d", what, n, ex.limits.MaxArray))
	}
}

func (ex *execution) checkString(n float64, what string) {
	if n > float64(ex.limits.MaxString) {
		ex.limit(fmt.Sprintf("%s: a string of %.0f characters is over the sandbox's limit of %d", what, n, ex.limits.MaxString))
	}
}

// checkSource refuses source (for eval, Function, RegExp) that is too big
// or nests too deeply to compile quickly.
func (ex *execution) checkSource(src, what string) {
	if len(src) > ex.limits.MaxCodeSize {
		ex.limit(fmt.Sprintf("%s of %d bytes is over max_code_size (%d bytes)", what, len(src), ex.limits.MaxCodeSize))
	}
	if err := checkNesting(src); err != nil {
		ex.limit(what + ": " + err.(*Error).Message)
	}
}

func isArray(o *goja.Object) bool { return o.ClassName() == "Array" }
