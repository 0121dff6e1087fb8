package codemode

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Guards bound, before any model code runs, the built-ins that allocate
// what they are asked for or loop over a length they are given. In goja
// such a built-in runs as native code: the interrupt that stops
// `while(true){}` is not looked at, and one huge allocation is a fatal Go
// out-of-memory error, not an exception. So each is checked first:
//
//   - strings: repeat, padStart, padEnd, concat (the result length),
//     replace, replaceAll and RegExp.prototype[Symbol.replace] (the
//     replacements, counted as they are made), split (the number of
//     parts), match, matchAll, search (the pattern), String.raw (rebuilt);
//   - arrays: the Array constructor, and every Array.prototype method that
//     walks `length` (a sparse array's length may be 2**32-1 for free);
//     join, toLocaleString, flat and flatMap are rebuilt to count their
//     result as they go, concat counts what it spreads;
//   - ArrayBuffer and the typed array constructors (the byte length);
//   - Function.prototype.apply, Reflect.apply, Reflect.construct (the
//     argument count);
//   - Object.keys and the other built-ins that list a string's or a typed
//     array's index keys all at once (their count);
//   - the compilers: eval, Function and its async and generator kin (goja
//     has no async generators), RegExp (nesting depth and size of the
//     source); and regular expression matches, which report a match that
//     hit the engine's timeout.
//
// A check reads each input once and hands the original the value it
// checked: a number converted, a length pinned (see stable). Otherwise a
// valueOf or a getter could answer the check small and the built-in huge.
// Native loops that the checks cannot bound ahead (the built-in
// iterators, regular expression matches) look for a pending interrupt
// every few thousand steps instead.
//
// BigInt is left out (see syntax.go): the BigInt global, the BigInt typed
// arrays and DataView's BigInt accessors are removed.
//
// The wrappers are native functions; the originals stay in Go closures,
// out of the code's reach. Building a wrapper costs about a microsecond,
// so the guards stay a small part of a fresh runtime.

// regexMatchTimeout bounds one regular expression match that runs on
// regexp2, which backtracks (see regexp.go).
const regexMatchTimeout = time.Second

// arrayWalkers are the Array.prototype methods that walk this.length.
var arrayWalkers = []string{
	"copyWithin", "entries", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex",
	"forEach", "includes", "indexOf", "keys", "lastIndexOf", "map", "reduce", "reduceRight", "reverse",
	"shift", "slice", "some", "sort", "splice", "toReversed", "toSorted", "toSpliced", "unshift", "values", "with",
}

// keyListers are the Object methods that list all of an object's own keys
// at once: for a string or a typed array, one per character or element.
var keyListers = []string{"keys", "values", "entries", "getOwnPropertyNames", "getOwnPropertyDescriptors",
	"freeze", "seal", "isFrozen", "isSealed"}

// checkStride is how many steps of native work go by between two looks
// for a pending interrupt.
const checkStride = 4096

// guardBuiltins installs the guards in the fresh runtime.
func (ex *execution) guardBuiltins() error {
	vm := ex.vm
	fields, err := regexpFieldsOf()
	if err != nil {
		return err
	}
	ex.regexpFields = fields
	global := vm.GlobalObject()
	proto := func(name string) *goja.Object {
		return global.Get(name).(*goja.Object).Get("prototype").(*goja.Object)
	}
	v, err := vm.RunProgram(intrinsics)
	if err != nil {
		return err
	}
	hidden := func(i int) *goja.Object { return v.(*goja.Object).Get(strconv.Itoa(i)).(*goja.Object) }

	// Arrays.
	arrayProto := proto("Array")
	for _, name := range arrayWalkers {
		what := "Array.prototype." + name
		ex.wrap(arrayProto, name, func(call *goja.FunctionCall) { call.This = ex.checked(call.This, what) })
	}
	_ = arrayProto.DefineDataPropertySymbol(goja.SymIterator, arrayProto.Get("values"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	ex.wrap(arrayProto, "concat", func(call *goja.FunctionCall) {
		var n int64
		call.This = ex.spreadable(call.This, &n)
		args := make([]goja.Value, len(call.Arguments))
		for i, a := range call.Arguments {
			args[i] = ex.spreadable(a, &n)
		}
		call.Arguments = args
		ex.checkLength(n, "Array.prototype.concat")
	})
	_ = defineMethod(vm, arrayProto, "join", 1, func(call goja.FunctionCall) goja.Value {
		return ex.join(call.This, call.Argument(0), nil, "Array.prototype.join")
	})
	_ = defineMethod(vm, arrayProto, "toLocaleString", 0, func(call goja.FunctionCall) goja.Value {
		return ex.join(call.This, goja.Undefined(), ex.localeString, "Array.prototype.toLocaleString")
	})
	_ = defineMethod(vm, arrayProto, "flat", 0, ex.flat)
	_ = defineMethod(vm, arrayProto, "flatMap", 1, ex.flatMap)
	arrayCtor := global.Get("Array").(*goja.Object)
	ex.wrap(arrayCtor, "from", func(call *goja.FunctionCall) { ex.replaceArg(call, 0, ex.items(call.Argument(0), "Array.from")) })

	// Strings.
	stringProto := proto("String")
	ex.wrapString(stringProto, "repeat", func(s string, call goja.FunctionCall) {
		if c := number(call, 0); !math.IsInf(c, 1) && float64(len(s))*c > float64(ex.limits.MaxString) {
			ex.checkString(float64(len(s))*c, "String.prototype.repeat")
		}
	})
	for _, name := range []string{"padStart", "padEnd"} {
		what := "String.prototype." + name
		ex.wrapString(stringProto, name, func(_ string, call goja.FunctionCall) {
			ex.checkString(number(call, 0), what)
		})
	}
	ex.wrapString(stringProto, "concat", func(s string, call goja.FunctionCall) {
		n := float64(len(s))
		for i, a := range call.Arguments {
			str := a.ToString()
			call.Arguments[i] = str
			n += float64(len(str.String()))
		}
		ex.checkString(n, "String.prototype.concat")
	})
	for _, name := range []string{"replace", "replaceAll"} {
		what := "String.prototype." + name
		ex.wrapString(stringProto, name, func(_ string, call goja.FunctionCall) {
			if len(call.Arguments) > 1 {
				call.Arguments[1] = ex.substitution(call.Arguments[1], what)
			}
		})
	}
	ex.split(stringProto)
	for _, name := range []string{"match", "matchAll", "search"} {
		ex.wrapString(stringProto, name, func(_ string, call goja.FunctionCall) {
			if p := call.Argument(0); goja.IsString(p) {
				ex.checkSource(p.String(), "a regular expression")
			}
		})
	}
	_ = defineMethod(vm, global.Get("String").(*goja.Object), "raw", 1, ex.raw)

	// Calls with an argument list.
	ex.wrap(proto("Function"), "apply", func(call *goja.FunctionCall) { ex.argList(call, 1, "Function.prototype.apply") })
	reflectObj := global.Get("Reflect").(*goja.Object)
	ex.wrap(reflectObj, "apply", func(call *goja.FunctionCall) { ex.argList(call, 2, "Reflect.apply") })
	ex.wrap(reflectObj, "construct", func(call *goja.FunctionCall) { ex.argList(call, 1, "Reflect.construct") })

	// Key lists.
	objectCtor := global.Get("Object").(*goja.Object)
	for _, name := range keyListers {
		what := "Object." + name
		ex.wrap(objectCtor, name, func(call *goja.FunctionCall) { ex.checkIndexes(call.Argument(0), what) })
	}
	ex.wrap(objectCtor, "assign", func(call *goja.FunctionCall) {
		for _, a := range call.Arguments[min(1, len(call.Arguments)):] {
			ex.checkIndexes(a, "Object.assign")
		}
	})
	ex.wrap(reflectObj, "ownKeys", func(call *goja.FunctionCall) { ex.checkIndexes(call.Argument(0), "Reflect.ownKeys") })

	// Iterators: spreading one, or Array.from, new Set, Promise.all on
	// one, steps through it in native code. (Maps and sets hold only what
	// the code put in them, step by step or from an array.)
	for i := 2; i < 4; i++ {
		ex.wrap(hidden(i), "next", func(*goja.FunctionCall) { ex.step() })
	}

	// Regular expressions: a match that hit the engine's timeout is
	// reported by goja as no match; tell the code instead. Replacing exec
	// takes goja off its fast paths: match, matchAll, replace, search and
	// split call it, once per match, so timing it (and test, which matches
	// on its own) times each match, not a whole replace, whose callbacks
	// may take their time.
	regexpProto := proto("RegExp")
	ex.timed(regexpProto, "exec")
	ex.timed(regexpProto, "test")
	replace, _ := goja.AssertFunction(regexpProto.GetSymbol(goja.SymReplace))
	_ = regexpProto.DefineDataPropertySymbol(goja.SymReplace, ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		ex.replaceArg(&call, 1, ex.substitution(call.Argument(1), "RegExp.prototype[Symbol.replace]"))
		return mustCall(replace, call.This, call.Arguments...)
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)

	// Constructors, through proxies: they keep their identity for
	// instanceof and subclassing while their arguments are checked.
	ex.arrayCtor = ex.proxy(global, "Array", arrayCtor, func(args []goja.Value) {
		if len(args) == 1 && goja.IsNumber(args[0]) {
			ex.checkLength(int64(math.Min(args[0].ToFloat(), math.MaxInt64/2)), "Array")
		}
	})
	fnProto := proto("Function")
	ex.proxy(global, "Function", fnProto.Get("constructor").(*goja.Object), ex.functionCheck("(function anonymous("))
	ex.proxy(nil, "", hidden(0).Get("constructor").(*goja.Object), ex.functionCheck("(async function anonymous("))
	ex.proxy(nil, "", hidden(1).Get("constructor").(*goja.Object), ex.functionCheck("(function* anonymous("))
	ex.proxy(global, "eval", global.Get("eval").(*goja.Object), func(args []goja.Value) {
		if len(args) > 0 && goja.IsString(args[0]) {
			ex.checkCode(args[0].String(), "source code")
		}
	})
	ex.proxy(global, "RegExp", global.Get("RegExp").(*goja.Object), func(args []goja.Value) {
		if len(args) > 0 && goja.IsString(args[0]) {
			ex.checkSource(args[0].String(), "a regular expression")
		}
	})

	// BigInt, which the guards cannot bound.
	for _, name := range []string{"BigInt", "BigInt64Array", "BigUint64Array"} {
		_ = global.Delete(name)
	}
	dataView := proto("DataView")
	for _, name := range []string{"getBigInt64", "getBigUint64", "setBigInt64", "setBigUint64"} {
		_ = dataView.Delete(name)
	}
	ex.guardBuffersLazily(global)
	return ex.guardNativeWork(global)
}

// intrinsics reaches what has no global: the AsyncFunction and
// GeneratorFunction prototypes, and the prototypes of the array and
// string iterators.
var intrinsics = goja.MustCompile("sandbox-intrinsics", `[
	Object.getPrototypeOf(async function () {}), Object.getPrototypeOf(function* () {}),
	Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(""[Symbol.iterator]()),
]`, true)

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

// functionCheck checks the arguments of Function or one of its kin, whose
// source starts with prefix: each is made a string once, as the
// constructor would, so that a toString cannot pass the check with one
// source and compile another.
func (ex *execution) functionCheck(prefix string) func([]goja.Value) {
	return func(args []goja.Value) {
		parts := make([]string, len(args))
		for i, a := range args {
			args[i] = a.ToString()
			parts[i] = args[i].String()
			ex.checkSource(parts[i], "source code")
		}
		body := ""
		if len(parts) > 0 {
			body, parts = parts[len(parts)-1], parts[:len(parts)-1]
		}
		ex.checkCode(prefix+strings.Join(parts, ",")+"\n) {\n"+body+"\n})", "source code")
	}
}

// bufferGlobals are the constructors that allocate a byte length.
var bufferGlobals = []string{"ArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "Float16Array"}

// guardBuffersLazily guards ArrayBuffer and the typed arrays on first use,
// since most code never touches them: each global becomes an accessor
// that installs the guarded constructors of the whole group. Nothing else
// can create them: an ArrayBuffer or typed array is reached only through
// one of these globals.
func (ex *execution) guardBuffersLazily(global *goja.Object) {
	originals := make(map[string]*goja.Object, len(bufferGlobals))
	for _, name := range bufferGlobals {
		if o, ok := global.Get(name).(*goja.Object); ok {
			originals[name] = o
		}
	}
	// guarded holds the guarded constructors: the accessors answer from it,
	// not from the global, which they may still be (a frozen global object
	// keeps them).
	var guarded map[string]goja.Value
	install := func() {
		if guarded != nil {
			return
		}
		guarded = make(map[string]goja.Value, len(bufferGlobals))
		for _, name := range bufferGlobals {
			if o := originals[name]; o != nil {
				guarded[name] = o
				_ = global.DefineDataProperty(name, o, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
			}
		}
		ab := originals["ArrayBuffer"]
		guarded["ArrayBuffer"] = ex.proxy(global, "ArrayBuffer", ab, func(args []goja.Value) {
			if len(args) > 0 {
				args[0] = args[0].ToNumber()
				ex.checkString(args[0].ToFloat(), "ArrayBuffer")
			}
			if len(args) > 1 {
				if o, ok := args[1].(*goja.Object); ok {
					if m := o.Get("maxByteLength"); m != nil && !goja.IsUndefined(m) {
						m = m.ToNumber()
						ex.checkString(m.ToFloat(), "ArrayBuffer")
						options := ex.vm.NewObject()
						_ = options.Set("maxByteLength", m)
						args[1] = options
					}
				}
			}
		})
		for _, name := range bufferGlobals[1:] {
			c := originals[name]
			if c == nil {
				continue
			}
			what, bytes := name, c.Get("BYTES_PER_ELEMENT").ToFloat()
			guarded[name] = ex.proxy(global, name, c, func(args []goja.Value) {
				if len(args) == 0 {
					return
				}
				if _, ok := args[0].(*goja.Object); !ok {
					ex.checkString(args[0].ToFloat()*bytes, what)
					return
				}
				args[0] = ex.items(args[0], what)
			})
		}
		if i8 := originals["Int8Array"]; i8 != nil {
			typed := i8.Prototype()
			ex.wrap(typed, "from", func(call *goja.FunctionCall) {
				ex.replaceArg(call, 0, ex.items(call.Argument(0), "TypedArray.from"))
			})
			typedProto := typed.Get("prototype").(*goja.Object)
			_ = defineMethod(ex.vm, typedProto, "join", 1, func(call goja.FunctionCall) goja.Value {
				return ex.join(call.This, call.Argument(0), nil, "TypedArray.prototype.join")
			})
			_ = defineMethod(ex.vm, typedProto, "toLocaleString", 0, func(call goja.FunctionCall) goja.Value {
				return ex.join(call.This, goja.Undefined(), ex.localeString, "TypedArray.prototype.toLocaleString")
			})
		}
	}
	for _, name := range bufferGlobals {
		if originals[name] == nil {
			continue
		}
		name := name
		get := ex.vm.ToValue(func(goja.FunctionCall) goja.Value {
			install()
			return guarded[name]
		})
		set := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			install()
			guarded[name] = call.Argument(0)
			_ = global.DefineDataProperty(name, call.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
			return goja.Undefined()
		})
		_ = global.DefineAccessorProperty(name, get, set, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
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

// join is Array.prototype.join, or toLocaleString with item: written here
// to count its result as it goes. An array met again inside itself joins
// as "", as in other engines; nesting is bounded, since each level is a
// native call that the call stack limit does not see.
func (ex *execution) join(this, separator goja.Value, item func(goja.Value) string, what string) goja.Value {
	if goja.IsUndefined(this) || goja.IsNull(this) {
		panic(ex.newError("TypeError", what+" called on null or undefined"))
	}
	obj := this.ToObject(ex.vm)
	for _, o := range ex.joining {
		if o == obj {
			return ex.vm.ToValue("")
		}
	}
	if len(ex.joining) >= maxJSONNesting {
		ex.limit(fmt.Sprintf("%s: the arrays nest more than %d levels deep", what, maxJSONNesting))
	}
	ex.joining = append(ex.joining, obj)
	defer func() { ex.joining = ex.joining[:len(ex.joining)-1] }()
	n := ex.lengthOf(obj)
	ex.checkLength(n, what)
	sep := ","
	if !goja.IsUndefined(separator) {
		sep = separator.String()
	}
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		if e := obj.Get(strconv.FormatInt(i, 10)); e != nil && !goja.IsUndefined(e) && !goja.IsNull(e) {
			if item != nil {
				b.WriteString(item(e))
			} else {
				b.WriteString(e.String())
			}
		}
		if b.Len() > ex.limits.MaxString {
			ex.checkString(float64(b.Len()), what)
		}
		if i%checkStride == checkStride-1 {
			ex.checkpoint()
		}
	}
	return ex.vm.ToValue(b.String())
}

// localeString is e.toLocaleString(), as toLocaleString joins it.
func (ex *execution) localeString(e goja.Value) string {
	m, ok := goja.AssertFunction(e.ToObject(ex.vm).Get("toLocaleString"))
	if !ok {
		panic(ex.newError("TypeError", "toLocaleString is not a function"))
	}
	return mustCall(m, e).String()
}

// flat is Array.prototype.flat, written here (with flatMap) to count what
// it produces: nested arrays multiply a length checked at the top.
func (ex *execution) flat(call goja.FunctionCall) goja.Value {
	depth := 1.0
	if d := call.Argument(0); !goja.IsUndefined(d) {
		if depth = math.Trunc(d.ToFloat()); math.IsNaN(depth) {
			depth = 0
		}
	}
	return ex.flatten(call.This, depth, nil, nil, "Array.prototype.flat")
}

// flatMap is Array.prototype.flatMap (see flat).
func (ex *execution) flatMap(call goja.FunctionCall) goja.Value {
	return ex.flatten(call.This, 1, call.Argument(0), call.Argument(1), "Array.prototype.flatMap")
}

func (ex *execution) flatten(this goja.Value, depth float64, mapper, thisArg goja.Value, what string) goja.Value {
	if goja.IsUndefined(this) || goja.IsNull(this) {
		panic(ex.newError("TypeError", what+" called on null or undefined"))
	}
	src := this.ToObject(ex.vm)
	n := ex.lengthOf(src)
	ex.checkLength(n, what)
	var fn goja.Callable
	if mapper != nil {
		var ok bool
		if fn, ok = goja.AssertFunction(mapper); !ok {
			panic(ex.newError("TypeError", what+": the mapper is not a function"))
		}
	}
	out := ex.speciesCreate(src)
	var flat []any // when out is nil: a plain array, made at the end
	var count, steps int64
	var walk func(src *goja.Object, n int64, depth float64, level int)
	walk = func(src *goja.Object, n int64, depth float64, level int) {
		if level > maxJSONNesting {
			ex.limit(fmt.Sprintf("%s: the arrays nest more than %d levels deep", what, maxJSONNesting))
		}
		for i := int64(0); i < n; i++ {
			if steps++; steps%checkStride == 0 {
				ex.checkpoint()
			}
			e := src.Get(strconv.FormatInt(i, 10))
			if e == nil {
				continue // a hole
			}
			if fn != nil && level == 0 {
				e = mustCall(fn, thisArg, e, ex.vm.ToValue(i), src)
			}
			if inner, ok := e.(*goja.Object); ok && depth > 0 && isArray(inner) {
				m := ex.lengthOf(inner)
				ex.checkLength(m, what)
				walk(inner, m, depth-1, level+1)
				continue
			}
			count++
			ex.checkLength(count, what)
			if out == nil {
				flat = append(flat, e)
			} else if err := out.DefineDataProperty(strconv.FormatInt(count-1, 10), e, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
				panic(err)
			}
		}
	}
	walk(src, n, depth, 0)
	if out == nil {
		return ex.vm.NewArray(flat...)
	}
	return out
}

// speciesCreate is ArraySpeciesCreate(o, 0): the kind of array o's
// constructor asks for, so that subclasses of Array flatten to their kind;
// nil for a plain array.
func (ex *execution) speciesCreate(o *goja.Object) *goja.Object {
	if !isArray(o) {
		return nil
	}
	c := o.Get("constructor")
	if c == ex.arrayCtor {
		return nil
	}
	if ctor, ok := c.(*goja.Object); ok {
		if c = ctor.GetSymbol(goja.SymSpecies); c != nil && goja.IsNull(c) {
			c = nil
		}
	}
	if isUndefined(c) || c == ex.arrayCtor {
		return nil
	}
	ctor, ok := c.(*goja.Object)
	if !ok {
		panic(ex.newError("TypeError", "the array's constructor is not a constructor"))
	}
	a, err := ex.vm.New(ctor, ex.vm.ToValue(0))
	if err != nil {
		panic(err)
	}
	return a
}

// raw is String.raw, written here to check the length it is given.
func (ex *execution) raw(call goja.FunctionCall) goja.Value {
	if isUndefined(call.Argument(0)) || goja.IsNull(call.Argument(0)) {
		panic(ex.newError("TypeError", "String.raw: the template is null or undefined"))
	}
	r := call.Argument(0).ToObject(ex.vm).Get("raw")
	if isUndefined(r) || goja.IsNull(r) {
		panic(ex.newError("TypeError", "String.raw: the template has no raw strings"))
	}
	raw := r.ToObject(ex.vm)
	n := ex.lengthOf(raw)
	ex.checkLength(n, "String.raw")
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		b.WriteString(orUndefined(raw.Get(strconv.FormatInt(i, 10))).String())
		if i+1 < n && int(i+1) < len(call.Arguments) {
			b.WriteString(call.Arguments[i+1].String())
		}
		if b.Len() > ex.limits.MaxString {
			ex.checkString(float64(b.Len()), "String.raw")
		}
		if i%checkStride == checkStride-1 {
			ex.checkpoint()
		}
	}
	return ex.vm.ToValue(b.String())
}

// split guards String.prototype.split: it runs with a limit of one part
// more than the sandbox allows, and a result that reaches it is refused.
// (Without a limit, splitting a 32 MiB string into characters made 32
// million strings in one native call.)
func (ex *execution) split(proto *goja.Object) {
	orig, _ := goja.AssertFunction(proto.Get("split"))
	_ = defineMethod(ex.vm, proto, "split", 2, func(call goja.FunctionCall) goja.Value {
		if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
			panic(ex.newError("TypeError", "String.prototype.split called on null or undefined"))
		}
		limit := math.MaxUint32
		if l := call.Argument(1); !goja.IsUndefined(l) {
			limit = toUint32(l.ToFloat())
		}
		bounded := min(limit, ex.limits.MaxArray+1)
		v := mustCall(orig, call.This, call.Argument(0), ex.vm.ToValue(bounded))
		if n := ex.lengthOf(v); n > int64(ex.limits.MaxArray) && limit > ex.limits.MaxArray {
			ex.checkLength(n, "String.prototype.split")
		}
		return v
	})
}

// toUint32 is ECMAScript's ToUint32 of a number.
func toUint32(f float64) int {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int(uint32(int64(math.Mod(math.Trunc(f), 1<<32))))
}

// substitution turns a replacement string for replace, replaceAll and
// RegExp.prototype[Symbol.replace] into a native replacer function that
// expands $&, $1, $<name>, $` and $' itself and counts what it produces:
// a pattern that matches at every position with a replacement of $` makes
// a string quadratic in the input, and a regular expression can lie about
// being global. A replacer function is the code's own and runs as script.
func (ex *execution) substitution(r goja.Value, what string) goja.Value {
	if _, isFn := goja.AssertFunction(r); isFn {
		return r
	}
	tmpl := r.String()
	total := 0
	return ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		ex.step()
		out := expand(tmpl, call.Arguments)
		if total += len(out); total > ex.limits.MaxString {
			ex.checkString(float64(total), what)
		}
		return ex.vm.ToValue(out)
	})
}

// expand is GetSubstitution for a replacer function's arguments: the
// match, the captures, the position, the whole string and, when the
// pattern has named groups, the groups object. Positions count UTF-16
// code units, as JavaScript's do.
func expand(tmpl string, args []goja.Value) string {
	if !strings.Contains(tmpl, "$") || len(args) < 3 {
		return tmpl
	}
	var groups *goja.Object
	if g, ok := args[len(args)-1].(*goja.Object); ok && len(args) > 3 {
		groups, args = g, args[:len(args)-1]
	}
	str, _ := args[len(args)-1].(goja.String)
	pos := int(args[len(args)-2].ToInteger())
	matched := args[0]
	captures := args[1 : len(args)-2]
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '$' || i+1 == len(tmpl) {
			b.WriteByte(c)
			continue
		}
		switch next := tmpl[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '&':
			b.WriteString(matched.String())
			i++
		case next == '`' && str != nil:
			b.WriteString(str.Substring(0, min(max(pos, 0), str.Length())).String())
			i++
		case next == '\'' && str != nil:
			end := pos
			if m, ok := matched.(goja.String); ok {
				end += m.Length()
			}
			b.WriteString(str.Substring(min(max(end, 0), str.Length()), str.Length()).String())
			i++
		case next >= '0' && next <= '9':
			n, width := int(next-'0'), 1
			if i+2 < len(tmpl) && tmpl[i+2] >= '0' && tmpl[i+2] <= '9' {
				if nn := n*10 + int(tmpl[i+2]-'0'); nn >= 1 && nn <= len(captures) {
					n, width = nn, 2
				}
			}
			if n < 1 || n > len(captures) {
				b.WriteByte(c)
				continue
			}
			if v := captures[n-1]; !goja.IsUndefined(v) {
				b.WriteString(v.String())
			}
			i += width
		case next == '<' && groups != nil:
			end := strings.IndexByte(tmpl[i+2:], '>')
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			if v := groups.Get(tmpl[i+2 : i+2+end]); v != nil && !goja.IsUndefined(v) {
				b.WriteString(v.String())
			}
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
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
