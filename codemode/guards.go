package codemode

import (
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"

	"github.com/dop251/goja"
)

// guardScript bounds, before any model code runs, the built-ins that
// allocate what they are asked for or loop over a length they are given.
// In goja such a built-in runs as native code: the interrupt that stops
// `while(true){}` is not looked at, and one huge allocation is a fatal Go
// out-of-memory error, not an exception. So each is checked first:
//
//   - strings: repeat, padStart, padEnd, concat, replace, replaceAll
//     (the result length), match, matchAll, search (the pattern);
//   - arrays: the Array constructor, and every Array.prototype method that
//     walks `length` (a sparse array's length may be 2**32-1 for free);
//     join is rebuilt to count its result as it goes;
//   - ArrayBuffer and typed array constructors (the byte length);
//   - Function.prototype.apply, Reflect.apply, Reflect.construct (the
//     argument count);
//   - the compilers: eval, Function and its async and generator kin (goja
//     has no async generators),
//     RegExp (nesting depth and size of the source).
//
// The originals are kept in this closure only; the code cannot reach them.
// limit(msg) ends the execution with a limit error; checkSource(src) refuses
// source that nests too deeply; occurrences(s, p) counts p in s.
const guardScript = `(function (limit, checkSource, occurrences, MAXS, MAXN, MATCHMS) {
"use strict";
const apply = Reflect.apply, construct = Reflect.construct;
const defineProperty = Object.defineProperty, getOwnPropertyNames = Object.getOwnPropertyNames;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor, getPrototypeOf = Object.getPrototypeOf;
const isArray = Array.isArray, floor = Math.floor, toStr = String, OrigArray = Array;
const SymbolIterator = Symbol.iterator, SymbolSpreadable = Symbol.isConcatSpreadable;
const stringIndexOf = String.prototype.indexOf;
const G = globalThis;

function replace(obj, name, make) {
	const d = getOwnPropertyDescriptor(obj, name);
	if (!d || typeof d.value !== "function") return;
	const orig = d.value;
	const w = make(orig);
	defineProperty(w, "name", {value: orig.name, configurable: true});
	defineProperty(w, "length", {value: orig.length, configurable: true});
	defineProperty(obj, name, {value: w, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable});
}
function proxy(name, C, check) {
	const P = new Proxy(C, {
		apply(t, self, args) { check(args); return apply(t, self, args); },
		construct(t, args, nt) { check(args); return construct(t, args, nt === P ? t : nt); },
	});
	if (C.prototype) defineProperty(C.prototype, "constructor", {value: P, writable: true, configurable: true, enumerable: false});
	if (name) defineProperty(G, name, {value: P, writable: true, configurable: true, enumerable: false});
	return P;
}
function lengthOf(o) {
	if (o == null) return 0;
	const l = +o.length;
	return l > 0 ? floor(l) : 0;
}
function checkLength(n, what) {
	if (n > MAXN) limit(what + ": a length of " + n + " is over the sandbox's limit of " + MAXN);
}
function checkString(n, what) {
	if (n > MAXS) limit(what + ": a string of " + n + " characters is over the sandbox's limit of " + MAXS);
}
function thisString(v, what) {
	if (v == null) throw new TypeError("String.prototype." + what + " called on null or undefined");
	return toStr(v);
}

// Arrays.
const AP = Array.prototype;
const cheap = {constructor: 1, push: 1, pop: 1, at: 1, concat: 1, join: 1};
for (const name of getOwnPropertyNames(AP)) {
	if (cheap[name] === 1) continue;
	const what = "Array.prototype." + name;
	replace(AP, name, (orig) => function () { checkLength(lengthOf(this), what); return apply(orig, this, arguments); });
}
defineProperty(AP, SymbolIterator, {value: AP.values, writable: true, configurable: true, enumerable: false});
replace(AP, "concat", (orig) => function () {
	let n = isArray(this) ? lengthOf(this) : 1;
	for (let i = 0; i < arguments.length; i++) {
		const a = arguments[i];
		n += a != null && typeof a === "object" && (a[SymbolSpreadable] !== undefined ? a[SymbolSpreadable] : isArray(a)) ? lengthOf(a) : 1;
	}
	checkLength(n, "Array.prototype.concat");
	return apply(orig, this, arguments);
});
replace(AP, "join", (orig) => function (sep) {
	const n = lengthOf(this);
	checkLength(n, "Array.prototype.join");
	const s = sep === undefined ? "," : toStr(sep);
	let total = n > 1 ? (n - 1) * s.length : 0;
	checkString(total, "Array.prototype.join");
	const parts = new OrigArray(n);
	for (let i = 0; i < n; i++) {
		const e = this[i];
		const p = e == null ? "" : toStr(e);
		total += p.length;
		if (total > MAXS) checkString(total, "Array.prototype.join");
		parts[i] = p;
	}
	return apply(orig, parts, [s]);
});
const ArrayCheck = (args) => {
	if (args.length === 1 && typeof args[0] === "number") checkLength(args[0], "Array");
};
proxy("Array", OrigArray, ArrayCheck);
replace(OrigArray, "from", (orig) => function (items) {
	if (items != null && (typeof items === "string" || isArray(items) || typeof items[SymbolIterator] !== "function")) {
		checkLength(lengthOf(items), "Array.from");
	}
	return apply(orig, this, arguments);
});

// Strings.
const SP = String.prototype;
replace(SP, "repeat", (orig) => function (count) {
	const s = thisString(this, "repeat"), c = +count;
	if (c !== Infinity && s.length * c > MAXS) checkString(s.length * c, "String.prototype.repeat");
	return apply(orig, s, [count]);
});
for (const name of ["padStart", "padEnd"]) {
	replace(SP, name, (orig) => function (maxLength, fill) {
		const s = thisString(this, name), n = +maxLength;
		if (n > MAXS) checkString(n, "String.prototype." + name);
		return apply(orig, s, arguments);
	});
}
replace(SP, "concat", (orig) => function () {
	const s = thisString(this, "concat");
	const parts = new OrigArray(arguments.length);
	let n = s.length;
	for (let i = 0; i < arguments.length; i++) {
		parts[i] = toStr(arguments[i]);
		n += parts[i].length;
	}
	checkString(n, "String.prototype.concat");
	return apply(orig, s, parts);
});
for (const name of ["replace", "replaceAll"]) {
	replace(SP, name, (orig) => function (pattern, replacement) {
		const s = thisString(this, name);
		if (typeof replacement !== "function") {
			const r = toStr(replacement);
			let grow = r.length;
			for (let i = apply(stringIndexOf, r, ["$"]); i >= 0; i = apply(stringIndexOf, r, ["$", i + 1])) grow += s.length;
			let count = 1;
			const isRegExp = pattern != null && typeof pattern === "object";
			if (name === "replaceAll" || (isRegExp && pattern.global === true)) {
				count = isRegExp ? s.length + 1 : occurrences(s, toStr(pattern));
			}
			const n = s.length + count * grow;
			if (n > MAXS) checkString(n, "String.prototype." + name);
			return apply(orig, s, [pattern, r]);
		}
		return apply(orig, s, arguments);
	});
}
for (const name of ["match", "matchAll", "search"]) {
	replace(SP, name, (orig) => function (pattern) {
		if (typeof pattern === "string") checkSource(pattern, "a regular expression");
		return apply(orig, this, arguments);
	});
}

// Buffers and typed arrays.
if (typeof ArrayBuffer === "function") {
	proxy("ArrayBuffer", ArrayBuffer, (args) => {
		checkString(+args[0], "ArrayBuffer");
		const o = args[1];
		if (o != null && typeof o === "object" && o.maxByteLength !== undefined) checkString(+o.maxByteLength, "ArrayBuffer");
	});
}
const typedArrays = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
	"Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "Float16Array"];
for (const name of typedArrays) {
	const C = G[name];
	if (typeof C !== "function") continue;
	const bytes = C.BYTES_PER_ELEMENT;
	proxy(name, C, (args) => {
		const a = args[0];
		if (a == null || typeof a !== "object") checkString(+a * bytes, name);
		else if (!(a instanceof ArrayBuffer) && (isArray(a) || typeof a[SymbolIterator] !== "function")) checkLength(lengthOf(a), name);
	});
}
const TA = getPrototypeOf(Int8Array.prototype).constructor;
replace(TA, "from", (orig) => function (items) {
	if (items != null && (isArray(items) || typeof items[SymbolIterator] !== "function")) checkLength(lengthOf(items), "TypedArray.from");
	return apply(orig, this, arguments);
});

// Calls with an argument list.
replace(Function.prototype, "apply", (orig) => function (self, args) {
	if (args != null) checkLength(lengthOf(args), "Function.prototype.apply");
	return apply(orig, this, arguments);
});
replace(Reflect, "apply", (orig) => function (f, self, args) {
	if (args != null) checkLength(lengthOf(args), "Reflect.apply");
	return apply(orig, this, arguments);
});
replace(Reflect, "construct", (orig) => function (f, args) {
	if (args != null) checkLength(lengthOf(args), "Reflect.construct");
	return apply(orig, this, arguments);
});

// Compilers.
const sourceCheck = (args) => {
	for (let i = 0; i < args.length; i++) if (typeof args[i] === "string") checkSource(args[i], "source code");
};
proxy("Function", Function, sourceCheck);
proxy(null, getPrototypeOf(async function () {}).constructor, sourceCheck);
proxy(null, getPrototypeOf(function* () {}).constructor, sourceCheck);
proxy("eval", eval, sourceCheck);
proxy("RegExp", RegExp, (args) => { if (typeof args[0] === "string") checkSource(args[0], "a regular expression"); });

// A match that backtracks without end is stopped by the regular expression
// engine's match timeout, and goja then reports "no match". Tell the code.
const now = Date.now, RP = RegExp.prototype;
const timed = (what) => (orig) => function () {
	const start = now();
	const r = apply(orig, this, arguments);
	if (now() - start >= MATCHMS) limit("a regular expression " + what + " ran for more than " + MATCHMS + " ms and was stopped (catastrophic backtracking?)");
	return r;
};
for (const name of ["exec", "test"]) replace(RP, name, timed("match"));
for (const sym of [Symbol.match, Symbol.matchAll, Symbol.replace, Symbol.search, Symbol.split]) {
	const d = getOwnPropertyDescriptor(RP, sym);
	if (d && typeof d.value === "function") {
		const w = timed("match")(d.value);
		defineProperty(w, "name", {value: d.value.name, configurable: true});
		defineProperty(RP, sym, {value: w, writable: true, configurable: true, enumerable: false});
	}
}
})`

var guardProgram = goja.MustCompile("sandbox-guards", guardScript, true)

// regexMatchTimeout bounds one regular expression match. goja runs
// patterns with lookaround or backreferences on regexp2, which backtracks:
// /^(?=(a+)+b)/ on 40 a's never ends without it. It is the package-wide
// default of regexp2, which nothing else in Caddy uses.
const regexMatchTimeout = time.Second

func init() {
	regexp2.DefaultMatchTimeout = regexMatchTimeout
}

// guardBuiltins runs guardScript in the fresh runtime.
func (ex *execution) guardBuiltins() error {
	fn, err := ex.vm.RunProgram(guardProgram)
	if err != nil {
		return err
	}
	install, _ := goja.AssertFunction(fn)
	limit := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		ex.limit(call.Argument(0).String())
		return goja.Undefined()
	})
	checkSource := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		src, what := call.Argument(0).String(), call.Argument(1).String()
		if len(src) > ex.limits.MaxCodeSize {
			ex.limit(fmt.Sprintf("%s of %d bytes is over max_code_size (%d bytes)", what, len(src), ex.limits.MaxCodeSize))
		}
		if err := checkNesting(src); err != nil {
			ex.limit(what + ": " + err.(*Error).Message)
		}
		return goja.Undefined()
	})
	occurrences := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		s, p := call.Argument(0).String(), call.Argument(1).String()
		if p == "" {
			return ex.vm.ToValue(len(s) + 1)
		}
		return ex.vm.ToValue(strings.Count(s, p))
	})
	_, err = install(goja.Undefined(), limit, checkSource, occurrences,
		ex.vm.ToValue(ex.limits.MaxString), ex.vm.ToValue(ex.limits.MaxArray),
		ex.vm.ToValue(regexMatchTimeout.Milliseconds()))
	return err
}
