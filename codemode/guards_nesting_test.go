package codemode

import (
	"fmt"
	"strings"
	"testing"
)

// TestNativeRecursion puts built-ins where other built-ins call back: as a
// toString, a getter, a then, a proxy trap, a bound function's target. No
// JavaScript frame is on the cycle, so the call stack limit never saw it;
// before the counting, each was a fatal Go stack overflow that took the
// process down, most from one line of code.
func TestNativeRecursion(t *testing.T) {
	const msg = "called each other more than 2048 deep (max_stack_depth)"
	cases := []struct{ name, code string }{
		{"toLocaleString as toString", `const o = {}; o.toString = Object.prototype.toLocaleString; String(o)`},
		{"Array.prototype.toString as join", `const o = {}; o.join = Array.prototype.toString; Array.prototype.toString.call(o)`},
		{"a String method as toString", `const o = {}; o.toString = String.prototype.trim; String(o)`},
		{"an Array method as the length getter", `const o = {}; Object.defineProperty(o, "length", {get: Array.prototype.pop}); Array.prototype.pop.call(o)`},
		{"RegExp.prototype.toString as the source getter", `const o = {}; Object.defineProperty(o, "source", {get: RegExp.prototype.toString}); RegExp.prototype.toString.call(o)`},
		{"the flags getter as the global getter", `
const o = {}; Object.defineProperty(o, "global", {get: Object.getOwnPropertyDescriptor(RegExp.prototype, "flags").get}); o.global`},
		{"catch as then", `const o = {}; o.then = Promise.prototype.catch; o.then()`},
		{"then as the constructor getter", `const p = Promise.resolve(1); Object.defineProperty(p, "constructor", {get: Promise.prototype.then}); p.then()`},
		{"Promise.all as Promise.resolve", `const a = []; a.push(a); Promise.resolve = Promise.all; Promise.all(a)`},
		{"Map.prototype.forEach on itself", `const m = new Map(); m.set(m, Map.prototype.forEach); m.forEach(Map.prototype.forEach, m)`},
		{"subarray as the constructor getter", `const t = new Uint8Array(4); Object.defineProperty(t, "constructor", {get: Uint8Array.prototype.subarray}); t.subarray()`},
		{"ArrayBuffer slice as the constructor getter", `const b = new ArrayBuffer(4); Object.defineProperty(b, "constructor", {get: ArrayBuffer.prototype.slice}); b.slice()`},
		{"toJSON as toISOString", `const d = {}; d.toISOString = Date.prototype.toJSON; Date.prototype.toJSON.call(d)`},
		{"a proxy that is its own apply trap", `const h = {}; const P = new Proxy(function () {}, h); h.apply = P; P()`},
		{"a proxy whose get trap reads through itself", `const h = {}; const P = new Proxy({}, h); h.get = Reflect.get.bind(null, P); P.x`},
		{"a bound String as its argument's toString", `const o = {}; const c = String.bind(null, o); o.toString = c; c()`},
		{"Function.prototype.apply on itself", `const a = Function.prototype.apply; const args = [a, null]; args[1] = args; a.apply(a, args)`},
		{"Reflect.apply on itself", `const a = [Reflect.apply, undefined, null]; a[2] = a; Reflect.apply(Reflect.apply, undefined, a)`},
	}
	var escapes []escapeCase
	for _, c := range cases {
		escapes = append(escapes, escapeCase{name: c.name, code: c.code, kind: KindLimit, msg: msg})
	}
	runEscapes(t, escapes)
}

// TestRecursionThroughBuiltinsStillWorks recurses deeply through built-ins
// that are counted: each level has a JavaScript frame, and deep recursion
// that the call stack allows stays allowed.
func TestRecursionThroughBuiltinsStillWorks(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "through map", code: `const f = n => n ? [n].map(x => f(x - 1))[0] + 1 : 0; return f(600)`, want: `600`},
		{name: "through a bound function", code: `function g(n) { return n ? gb(n - 1) + 1 : 0 } const gb = g.bind(null); return gb(900)`, want: `900`},
		{name: "through a proxy's apply trap", code: `
const p = new Proxy(function (n) { return n ? p(n - 1) + 1 : 0 }, {apply: (t, th, a) => Reflect.apply(t, th, a)}); return p(300)`,
			want: `300`},
		{name: "through getters and toString", code: `
const mk = n => ({toString() { return n ? String(mk(n - 1)) + "." : "" }}); return String(mk(500)).length`, want: `500`},
		{name: "deeper than the default, with a higher max_stack_depth", limits: Limits{Timeout: 10 * 1e9, MaxStackDepth: 6000},
			code: `const f = n => n ? [n].map(x => f(x - 1))[0] + 1 : 0; return f(1500)`, want: `1500`},
	})
}

// TestBuiltinNamesAndLengths compares the name, length and source text of
// every counted built-in, and of those guards.go wraps, with goja's own:
// the Go wrappers of guards.go were named after their Go symbols
// ("github.com/caddy-mcp/caddy-mcp/codemode.(*execution).wrap.func1"),
// and a counting proxy would show as "function () { [native code] }".
func TestBuiltinNamesAndLengths(t *testing.T) {
	methods, err := builtinMethods()
	if err != nil {
		t.Fatal(err)
	}
	r := newTwoRuntimes(t)
	paths := append(countedObjects[:len(countedObjects):len(countedObjects)], renamedOnly...)
	var exprs []string
	for _, m := range methods {
		obj := paths[m.object].path
		if strings.HasPrefix(obj, "%TypedArray%") {
			obj = strings.Replace(obj, "%TypedArray%", "Object.getPrototypeOf(Int8Array)", 1)
		}
		key := fmt.Sprintf("%q", m.key)
		if m.sym != nil {
			key = strings.Trim(m.keyName(), "[]")
		}
		f := fmt.Sprintf("%s[%s]", obj, key)
		exprs = append(exprs, fmt.Sprintf("[%s.name, %s.length, Function.prototype.toString.call(%s), typeof %s]", f, f, f, f))
	}
	if len(exprs) < 100 {
		t.Fatalf("only %d methods", len(exprs))
	}
	r.same(t, "["+strings.Join(exprs, ",\n")+"]")
	r.same(t, `[Object.getOwnPropertyDescriptor(RegExp.prototype, "flags").get.name, String(Object.getOwnPropertyDescriptor(RegExp.prototype, "flags").get),
		[].values === [][Symbol.iterator], Uint8Array.prototype.toString === Array.prototype.toString, "ab".match(/b/).index]`)
}
