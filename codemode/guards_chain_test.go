package codemode

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// TestProxyAndBindChains builds chains of proxies and bound functions, each
// on the last. Using one was a level of Go recursion per link, which the
// call stack limit does not see: before the bound on their depth, the first
// three were each a fatal Go stack overflow that took the process down, and
// the bound functions first asked for 2 GB.
func TestProxyAndBindChains(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "proxies with Reflect.apply as their apply trap", code: `
let g = function () { return 1 }; const h = {apply: Reflect.apply};
for (let i = 0; i < 600000; i++) g = new Proxy(g, h);
return g()`,
			kind: KindLimit, msg: "new Proxy: a chain of 101 proxies and bound functions, each built on the last, is over the sandbox's limit of 100"},
		{name: "proxies with Reflect.get as their get trap", code: `
let p = {x: 1}; for (let i = 0; i < 600000; i++) p = new Proxy(p, {get: Reflect.get}); return p.x`,
			kind: KindLimit, msg: "new Proxy: a chain of 101"},
		{name: "bound forEach", code: `
let g = function () { return 1 }; for (let i = 0; i < 900000; i++) g = Array.prototype.forEach.bind([0], g); return g()`,
			kind: KindLimit, msg: "Function.prototype.bind: a chain of 101"},
		{name: "Proxy.revocable", code: `let p = {}; for (let i = 0; i < 1000; i++) p = Proxy.revocable(p, {}).proxy`,
			kind: KindLimit, msg: "Proxy.revocable: a chain of 101"},
		{name: "Reflect.construct of Proxy", code: `let p = {}; for (let i = 0; i < 1000; i++) p = Reflect.construct(Proxy, [p, {}])`,
			kind: KindLimit, msg: "new Proxy: a chain of 101"},
		{name: "a Proxy kept after the global is gone", code: `
const P = Proxy; delete globalThis.Proxy; let p = {}; for (let i = 0; i < 1000; i++) p = new P(p, {})`,
			kind: KindLimit, msg: "new Proxy: a chain of 101"},
		{name: "handlers that are proxies", code: `let h = {}; for (let i = 0; i < 1000; i++) h = new Proxy({}, h)`,
			kind: KindLimit, msg: "new Proxy: a chain of 101"},
		{name: "proxies and bound functions in turn", code: `
let f = function () {}; for (let i = 0; i < 1000; i++) f = i % 2 ? f.bind(null) : new Proxy(f, {})`,
			kind: KindLimit, msg: "a chain of 101"},
		{name: "bound arguments", code: `let f = function () {}; for (let i = 0; i < 1000; i++) f = Math.max.bind(null, 1, f)`,
			kind: KindLimit, msg: "Function.prototype.bind: a chain of 101"},
		{name: "a bound this", code: `let f = function () {}; for (let i = 0; i < 1000; i++) f = Function.prototype.call.bind(f)`,
			kind: KindLimit, msg: "Function.prototype.bind: a chain of 101"},
		{name: "chains of a hundred work", code: `
let p = {x: 1}; for (let i = 0; i < 100; i++) p = new Proxy(p, {});
let f = function (...a) { return a.length }; for (let i = 0; i < 100; i++) f = f.bind(null, i);
return [p.x, f(), f.name.length]`,
			want: `[1,100,601]`},
	})
}

// TestProxiesAndBoundFunctionsBehave compares proxies and bound functions
// with goja's own: the guards give goja a handler of their own and bind a
// counting proxy of the target, and none of it may show.
func TestProxiesAndBoundFunctionsBehave(t *testing.T) {
	r := newTwoRuntimes(t)
	for _, c := range []string{
		`function F(a, b) { this.s = a + b } const B = F.bind(null, 1); const o = new B(2);
		[o.s, o instanceof F, o instanceof B, B.name, B.length, typeof B, B.prototype, Object.getPrototypeOf(B) === Function.prototype]`,
		`class A { constructor(x) { this.x = x; this.t = new.target === A } } const B = A.bind(null, 5); const a = new B();
		[a.x, a.t, a instanceof A, Object.getPrototypeOf(a) === A.prototype]`,
		`function F() { this.p = Object.getPrototypeOf(this) } function T() {} const r = Reflect.construct(F.bind(null), [], T);
		[Object.getPrototypeOf(r) === T.prototype, r.p === T.prototype]`,
		`class C extends (function () { this.b = 1 }).bind(null) {} [new C().b, new C() instanceof C]`,
		`function F() {} Object.defineProperty(F, Symbol.hasInstance, {value: v => v === 1}); const B = F.bind(null); [1 instanceof B, 2 instanceof B]`,
		`function F() {} const B = F.bind(null).bind(null); [new F() instanceof B, new B() instanceof F, {} instanceof B]`,
		`[Math.max.bind(null, 3)(1, 5), Math.max.bind(null).name, Math.max.bind(null, 1, 2).length, String(Math.max.bind(null))]`,
		`const o = {k: 7, f() { return this.k }}; const g = o.f.bind({k: 8}); [g(), g.call({k: 9}), g.bind({k: 10})(), new (function () { return {k: this.k} }).bind({k: 1})().k]`,
		`Function.prototype.bind.call(1)`,
		`Function.prototype.bind.call({})`,
		`(() => this).bind(1)() === undefined`,
		`const h = {get(t, k, r) { return this === h ? k : "another this" }}; new Proxy({}, h).foo`,
		`const h = {}; const p = new Proxy({a: 1}, h); const x = p.a; h.get = () => 2; [x, p.a]`,
		`let n = 0; const h = {get get() { n++; return (t, k) => k } }; const p = new Proxy({}, h); [p.a, p.b, n]`,
		`const log = []; const h = new Proxy({}, {get(t, k) { log.push(String(k)); return undefined }});
		const p = new Proxy({x: 1}, h); p.x; "x" in p; Object.keys(p); p.y = 2; delete p.y; Object.getPrototypeOf(p);
		Object.isExtensible(p); Object.getOwnPropertyDescriptor(p, "x"); Object.defineProperty(p, "z", {value: 1}); log.join()`,
		`const {proxy, revoke} = Proxy.revocable({a: 1}, {}); const a = proxy.a; revoke(); let e; try { proxy.a } catch (x) { e = x.constructor.name }
		[a, e, typeof revoke, revoke.length]`,
		`[typeof Proxy, Proxy.name, Proxy.length, Proxy.prototype, Object.getOwnPropertyNames(Proxy).sort().join(), Proxy.revocable.name, Proxy.revocable.length,
		Function.prototype.toString.call(Proxy)]`,
		`Proxy({}, {})`, `new Proxy(1, {})`, `new Proxy({}, 1)`, `new Proxy({})`, `Proxy.revocable({}, null)`,
		`const p = new Proxy(function f(a) { return a * 2 }, {}); [p(2), typeof p, p.name, p.length, new (new Proxy(class K { constructor(v) { this.v = v } }, {}))(3).v]`,
		`const h = {apply(t, th, a) { return [this === h, th, a.length, t.name] }}; new Proxy(function q() {}, h).call(5, 1, 2)`,
		`const h = {construct(t, a, nt) { return {n: a[0], same: nt === P, self: this === h} }}; const P = new Proxy(function () {}, h); const o = new P(5); [o.n, o.same, o.self]`,
		`const P = new Proxy(function () {}, {}); class D extends P {} [new D() instanceof D, new D() instanceof P]`,
		`const p = new Proxy([1, 2, 3], {}); [Array.isArray(p), p.length, p.map(x => x * 2).join()]`,
		`const t = {}; const p = new Proxy(t, {set(o, k, v, r) { o[k] = v * 2; return true }}); p.a = 2; [t.a, Reflect.set(p, "b", 3), t.b]`,
		`const h = {ownKeys: () => ["b", "a"], getOwnPropertyDescriptor: () => ({value: 1, enumerable: true, configurable: true})};
		Object.keys(new Proxy({}, h)).join()`,
		`const f = Object.freeze({get: (t, k) => k + "!"}); new Proxy({}, f).x`,
	} {
		r.same(t, c)
	}
}

// twoRuntimes runs code in a runtime guarded as an execution's is and in a
// plain goja runtime, to compare what each gives.
type twoRuntimes struct {
	guarded, plain *goja.Runtime
}

// describe is a value as a string that tells apart all that the tests
// compare: the code units of strings, -0, NaN, holes.
const describe = `(function describe(v) {
	if (typeof v === "string") { let o = "s"; for (let i = 0; i < v.length; i++) o += "," + v.charCodeAt(i); return o }
	if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
	if (Array.isArray(v)) { let o = "["; for (let i = 0; i < v.length; i++) o += (i in v ? describe(v[i]) : "hole") + ";"; return o + "]" }
	if (ArrayBuffer.isView(v)) {
		const d = new DataView(v.buffer, v.byteOffset, v.byteLength); let o = v.constructor.name + "(";
		for (let i = 0; i < d.byteLength; i++) o += d.getUint8(i) + ",";
		return o + ")";
	}
	return typeof v + " " + String(v);
})`

func newTwoRuntimes(t *testing.T) *twoRuntimes {
	t.Helper()
	ex := newExecution(context.Background(), Limits{Timeout: time.Minute}.withDefaults(), nil, nil)
	if err := ex.setup(); err != nil {
		t.Fatal(err)
	}
	return &twoRuntimes{guarded: ex.vm, plain: goja.New()}
}

func (r *twoRuntimes) same(t *testing.T, code string) {
	t.Helper()
	if g, p := evaluate(r.guarded, code), evaluate(r.plain, code); g != p {
		t.Errorf("%s\nguarded: %s\n   goja: %s", code, g, p)
	}
}

// evaluate runs code and describes its value, or names what it threw.
func evaluate(vm *goja.Runtime, code string) string {
	v, err := vm.RunString(`(() => { const describe = ` + describe + `; return describe(eval(` + quoteJS(code) + `)) })()`)
	var exc *goja.Exception
	switch {
	case errors.As(err, &exc):
		if o, ok := exc.Value().(*goja.Object); ok {
			return "throws " + o.Get("name").String()
		}
		return "throws " + exc.Value().String()
	case err != nil:
		return "error " + err.Error()
	}
	return v.String()
}

func quoteJS(s string) string {
	return "`" + strings.NewReplacer("\\", "\\\\", "`", "\\`", "${", "\\${").Replace(s) + "`"
}
