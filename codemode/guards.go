package codemode

import (
	"math"
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
