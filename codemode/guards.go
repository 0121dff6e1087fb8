package codemode

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// Guards bound, before any model code runs, the built-ins that allocate
// what they are asked for or loop over a length they are given. In goja
// such a built-in runs as native code: the interrupt that stops
// `while(true){}` is not looked at, and one huge allocation is a fatal Go
// out-of-memory error, not an exception. So each is checked first:
//
//   - strings: repeat, padStart, padEnd, concat, replace, replaceAll (the
//     result length), match, matchAll, search (the pattern);
//   - arrays: the Array constructor, and every Array.prototype method that
//     walks `length` (a sparse array's length may be 2**32-1 for free);
//     join is rebuilt to count its result as it goes;
//   - ArrayBuffer and the typed array constructors (the byte length);
//   - Function.prototype.apply, Reflect.apply, Reflect.construct (the
//     argument count);
//   - the compilers: eval, Function and its async and generator kin (goja
//     has no async generators), RegExp (nesting depth and size of the
//     source); and regular expression matches, which report a match that
//     hit the engine's timeout.
//
// The wrappers are native functions; the originals stay in Go closures,
// out of the code's reach. Building a wrapper costs about a microsecond,
// so the guards stay a small part of a fresh runtime.

// regexMatchTimeout bounds one regular expression match. goja runs
// patterns with lookaround or backreferences on regexp2, which backtracks:
// /^(?=(a+)+b)/ on 40 a's never ends without it. It is the package-wide
// default of regexp2, which nothing else in Caddy uses.
const regexMatchTimeout = time.Second

func init() {
	regexp2.DefaultMatchTimeout = regexMatchTimeout
}

// arrayWalkers are the Array.prototype methods that walk this.length.
var arrayWalkers = []string{
	"copyWithin", "entries", "every", "fill", "filter", "find", "findIndex", "findLast", "findLastIndex",
	"flat", "flatMap", "forEach", "includes", "indexOf", "keys", "lastIndexOf", "map", "reduce",
	"reduceRight", "reverse", "shift", "slice", "some", "sort", "splice", "toLocaleString",
	"toReversed", "toSorted", "toSpliced", "unshift", "values", "with",
}

// guardBuiltins installs the guards in the fresh runtime.
func (ex *execution) guardBuiltins() error {
	vm := ex.vm
	global := vm.GlobalObject()
	proto := func(name string) *goja.Object {
		return global.Get(name).(*goja.Object).Get("prototype").(*goja.Object)
	}

	// Arrays.
	arrayProto := proto("Array")
	for _, name := range arrayWalkers {
		what := "Array.prototype." + name
		ex.wrap(arrayProto, name, func(call goja.FunctionCall) { ex.checkLength(ex.lengthOf(call.This), what) })
	}
	_ = arrayProto.DefineDataPropertySymbol(goja.SymIterator, arrayProto.Get("values"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	ex.wrap(arrayProto, "concat", func(call goja.FunctionCall) {
		n := int64(1)
		if isArrayValue(call.This) {
			n = ex.lengthOf(call.This)
		}
		for _, a := range call.Arguments {
			if isArrayValue(a) {
				n += ex.lengthOf(a)
			} else {
				n++
			}
		}
		ex.checkLength(n, "Array.prototype.concat")
	})
	_ = defineMethod(vm, arrayProto, "join", 1, ex.join)
	arrayCtor := global.Get("Array").(*goja.Object)
	ex.wrap(arrayCtor, "from", func(call goja.FunctionCall) {
		items, ok := call.Argument(0).(*goja.Object)
		if ok && (isArray(items) || isUndefined(items.GetSymbol(goja.SymIterator))) {
			ex.checkLength(ex.lengthOf(items), "Array.from")
		}
		if s := call.Argument(0); goja.IsString(s) {
			ex.checkLength(int64(len(s.String())), "Array.from")
		}
	})

	// Strings.
	stringProto := proto("String")
	ex.wrapString(stringProto, "repeat", func(s string, call goja.FunctionCall) {
		if c := call.Argument(0).ToFloat(); !math.IsInf(c, 1) && float64(len(s))*c > float64(ex.limits.MaxString) {
			ex.checkString(float64(len(s))*c, "String.prototype.repeat")
		}
	})
	for _, name := range []string{"padStart", "padEnd"} {
		what := "String.prototype." + name
		ex.wrapString(stringProto, name, func(_ string, call goja.FunctionCall) {
			ex.checkString(call.Argument(0).ToFloat(), what)
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
		all := name == "replaceAll"
		ex.wrapString(stringProto, name, func(s string, call goja.FunctionCall) {
			if _, isFn := goja.AssertFunction(call.Argument(1)); isFn {
				return // the callback is script: interruptible, and watched
			}
			r := call.Argument(1).ToString()
			call.Arguments = []goja.Value{call.Argument(0), r}
			grow := float64(len(r.String())) + float64(strings.Count(r.String(), "$"))*float64(len(s))
			count := 1.0
			pattern := call.Argument(0)
			if obj, isObj := pattern.(*goja.Object); isObj {
				if all || obj.Get("global").ToBoolean() {
					count = float64(len(s) + 1)
				}
			} else if all {
				p := pattern.String()
				if p == "" {
					count = float64(len(s) + 1)
				} else {
					count = float64(strings.Count(s, p))
				}
			}
			ex.checkString(float64(len(s))+count*grow, what)
		})
	}
	for _, name := range []string{"match", "matchAll", "search"} {
		ex.wrapString(stringProto, name, func(_ string, call goja.FunctionCall) {
			if p := call.Argument(0); goja.IsString(p) {
				ex.checkSource(p.String(), "a regular expression")
			}
		})
	}

	// Calls with an argument list.
	ex.wrap(proto("Function"), "apply", func(call goja.FunctionCall) {
		if a := call.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
			ex.checkLength(ex.lengthOf(a), "Function.prototype.apply")
		}
	})
	reflect := global.Get("Reflect").(*goja.Object)
	ex.wrap(reflect, "apply", func(call goja.FunctionCall) {
		ex.checkLength(ex.lengthOf(call.Argument(2)), "Reflect.apply")
	})
	ex.wrap(reflect, "construct", func(call goja.FunctionCall) {
		ex.checkLength(ex.lengthOf(call.Argument(1)), "Reflect.construct")
	})

	// Regular expressions: a match that hit the engine's timeout is
	// reported by goja as no match; tell the code instead.
	regexpProto := proto("RegExp")
	for _, name := range []string{"exec", "test"} {
		ex.timed(regexpProto, name, nil)
	}
	for _, sym := range []*goja.Symbol{goja.SymMatch, goja.SymMatchAll, goja.SymReplace, goja.SymSearch, goja.SymSplit} {
		ex.timed(regexpProto, "", sym)
	}

	// Constructors, through proxies: they keep their identity for
	// instanceof and subclassing while their arguments are checked.
	ex.proxy(global, "Array", global.Get("Array").(*goja.Object), func(args []goja.Value) {
		if len(args) == 1 && goja.IsNumber(args[0]) {
			ex.checkLength(int64(math.Min(args[0].ToFloat(), math.MaxInt64/2)), "Array")
		}
	})
	sourceCheck := func(args []goja.Value) {
		for _, a := range args {
			if goja.IsString(a) {
				ex.checkSource(a.String(), "source code")
			}
		}
	}
	fnProto := proto("Function")
	ex.proxy(global, "Function", fnProto.Get("constructor").(*goja.Object), sourceCheck)
	kin, err := vm.RunProgram(functionKin)
	if err != nil {
		return err
	}
	for _, i := range []string{"0", "1"} {
		p := kin.(*goja.Object).Get(i).(*goja.Object)
		ex.proxy(nil, "", p.Get("constructor").(*goja.Object), sourceCheck)
	}
	ex.proxy(global, "eval", global.Get("eval").(*goja.Object), sourceCheck)
	ex.proxy(global, "RegExp", global.Get("RegExp").(*goja.Object), func(args []goja.Value) {
		if len(args) > 0 && goja.IsString(args[0]) {
			ex.checkSource(args[0].String(), "a regular expression")
		}
	})
	ex.guardBuffersLazily(global)
	return nil
}

// proxy replaces a constructor by a proxy that runs check on the
// arguments of every call and construction; name is its global, if any.
func (ex *execution) proxy(global *goja.Object, name string, target *goja.Object, check func([]goja.Value)) *goja.Object {
	call, _ := goja.AssertFunction(target)
	construct, _ := goja.AssertConstructor(target)
	var self *goja.Object
	p := ex.vm.NewProxy(target, &goja.ProxyTrapConfig{
		Apply: func(t *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			check(args)
			v, err := call(this, args...)
			if err != nil {
				panic(err)
			}
			return v
		},
		Construct: func(t *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			check(args)
			if newTarget == self {
				newTarget = t
			}
			o, err := construct(newTarget, args...)
			if err != nil {
				panic(err)
			}
			return o
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

// functionKin reaches the AsyncFunction and GeneratorFunction prototypes,
// which have no global.
var functionKin = goja.MustCompile("sandbox-kin", "[Object.getPrototypeOf(async function () {}), Object.getPrototypeOf(function* () {})]", true)

// bufferGlobals are the constructors that allocate a byte length.
var bufferGlobals = []string{"ArrayBuffer", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "Float16Array"}

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
	installed := false
	install := func() {
		if installed {
			return
		}
		installed = true
		for _, name := range bufferGlobals {
			if o := originals[name]; o != nil {
				_ = global.DefineDataProperty(name, o, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
			}
		}
		ab := originals["ArrayBuffer"]
		ex.proxy(global, "ArrayBuffer", ab, func(args []goja.Value) {
			if len(args) > 0 {
				ex.checkString(args[0].ToFloat(), "ArrayBuffer")
			}
			if len(args) > 1 {
				if o, ok := args[1].(*goja.Object); ok {
					if m := o.Get("maxByteLength"); m != nil && !goja.IsUndefined(m) {
						ex.checkString(m.ToFloat(), "ArrayBuffer")
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
			ex.proxy(global, name, c, func(args []goja.Value) {
				if len(args) == 0 {
					return
				}
				a, ok := args[0].(*goja.Object)
				if !ok {
					ex.checkString(args[0].ToFloat()*bytes, what)
					return
				}
				if a.ClassName() != "ArrayBuffer" && (isArray(a) || isUndefined(a.GetSymbol(goja.SymIterator))) {
					ex.checkLength(ex.lengthOf(a), what)
				}
			})
		}
		if i8 := originals["Int8Array"]; i8 != nil {
			ta := i8.Prototype()
			ex.wrap(ta, "from", func(call goja.FunctionCall) {
				if items, ok := call.Argument(0).(*goja.Object); ok && (isArray(items) || isUndefined(items.GetSymbol(goja.SymIterator))) {
					ex.checkLength(ex.lengthOf(items), "TypedArray.from")
				}
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
			return global.Get(name)
		})
		set := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			install()
			_ = global.Set(name, call.Argument(0))
			return goja.Undefined()
		})
		_ = global.DefineAccessorProperty(name, get, set, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

func isUndefined(v goja.Value) bool { return v == nil || goja.IsUndefined(v) }

// wrap replaces obj[name] with a native function that runs check and then
// the original.
func (ex *execution) wrap(obj *goja.Object, name string, check func(goja.FunctionCall)) {
	orig, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return
	}
	_ = obj.DefineDataProperty(name, ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		check(call)
		v, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	}), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// wrapString is wrap for String.prototype methods: check sees this as a
// string, converted once, and the original runs on that string.
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

// timed wraps a RegExp.prototype method (by name, or by symbol) to report a
// match that ran into the match timeout.
func (ex *execution) timed(proto *goja.Object, name string, sym *goja.Symbol) {
	var v goja.Value
	if sym != nil {
		v = proto.GetSymbol(sym)
	} else {
		v = proto.Get(name)
	}
	orig, ok := goja.AssertFunction(v)
	if !ok {
		return
	}
	fn := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		start := time.Now()
		r, err := orig(call.This, call.Arguments...)
		if err != nil {
			panic(err)
		}
		if time.Since(start) >= regexMatchTimeout {
			ex.limit(fmt.Sprintf("a regular expression match ran for more than %s and was stopped (catastrophic backtracking?)", regexMatchTimeout))
		}
		return r
	})
	if sym != nil {
		_ = proto.DefineDataPropertySymbol(sym, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	} else {
		_ = proto.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

// join is Array.prototype.join, counting its result as it goes.
func (ex *execution) join(call goja.FunctionCall) goja.Value {
	this := call.This.ToObject(ex.vm)
	n := ex.lengthOf(this)
	ex.checkLength(n, "Array.prototype.join")
	sep := ","
	if s := call.Argument(0); !goja.IsUndefined(s) {
		sep = s.String()
	}
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		if e := this.Get(fmt.Sprint(i)); e != nil && !goja.IsUndefined(e) && !goja.IsNull(e) {
			b.WriteString(e.String())
		}
		if b.Len() > ex.limits.MaxString {
			ex.checkString(float64(b.Len()), "Array.prototype.join")
		}
		if i&4095 == 4095 {
			ex.checkpoint()
		}
	}
	return ex.vm.ToValue(b.String())
}

// lengthOf is ToLength(o.length), 0 for what has none.
func (ex *execution) lengthOf(v goja.Value) int64 {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return 0
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		if goja.IsString(v) {
			return int64(len(v.String()))
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

func isArrayValue(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && isArray(o)
}
