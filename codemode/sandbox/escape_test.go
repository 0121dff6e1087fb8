package sandbox_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// The escape suite: model code that tries to reach the host or Go through
// every object the sandbox exposes, or to exhaust the process through
// them. TestLimits covers the design's list of exhaustion attacks; this
// file covers the objects themselves (bindings, console, promises, errors,
// timers, JSON, the globals the sandbox relies on) and the ways found to
// get past a guard. Each case must end within its limit with the
// documented error or succeed harmlessly; none may panic, hang, or show
// anything of Go, and a normal execution must work right after.

// escapeCase is one attack. The code must return want (its JSON), or fail
// with an error of kind whose text holds msg. With orWant, a success with
// that value is accepted too (an attack that may finish in time on a fast
// machine); with orKind, an error of that kind (recursion through native
// frames is slow to unwind on a loaded machine, and may meet the timeout
// before the stack limit; one regular expression step on a huge string may
// run past the match timeout there before the execution's timeout is seen).
type escapeCase struct {
	name   string
	limits codemode.Limits
	code   string
	want   string
	kind   string
	msg    string
	orWant string
	orKind string
}

// Limits for the suite: short for attacks that only a timeout stops, so
// that they end quickly, roomy for the others, so that a loaded machine
// does not time them out, and small sizes where a guard is the point, so
// that the work before it is cheap (also under -race).
var (
	escapeQuick = codemode.Limits{Timeout: 400 * time.Millisecond}
	escapeRoomy = codemode.Limits{Timeout: 5 * time.Second}
	escapeSmall = codemode.Limits{Timeout: 3 * time.Second, MaxString: 1 << 20, MaxArray: 1 << 16}
)

func runEscapes(t *testing.T, cases []escapeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.limits
			if l == (codemode.Limits{}) {
				l = escapeRoomy
				if tc.kind == codemode.KindTimeout {
					l = escapeQuick
				}
			}
			b := &codemodetest.Echo{}
			down := codemode.Binding{Name: "later", Unavailable: "connection refused", Call: func(context.Context, string, []byte) (codemode.Answer, error) {
				return codemode.Answer{}, errors.New("unavailable: connection refused")
			}}
			l.MaxConcurrent = 1
			r := codemodetest.Runner(l)
			start := time.Now()
			res := r.Run(context.Background(), tc.code, []codemode.Binding{b.Binding("api"), down})
			if took, bound := time.Since(start), r.Limits().Timeout+sandbox.GraceAfterTimeout; took > bound+3*time.Second {
				t.Errorf("Run took %s, past the timeout and its grace (%s)", took, bound)
			}
			// Never hang: the execution's goroutine gives its slot back,
			// even when it overran the timeout in native code.
			for deadline := time.Now().Add(20 * time.Second); r.Run(context.Background(), `return 1`, nil).Err != nil; {
				if time.Now().After(deadline) {
					t.Fatalf("the execution still holds its slot %s after it began", time.Since(start))
				}
				time.Sleep(10 * time.Millisecond)
			}
			noInternals(t, res)
			switch {
			case tc.orWant != "" && res.Err == nil:
				codemodetest.WantValue(t, res, tc.orWant)
			case tc.orKind != "" && res.Err != nil && res.Err.Kind == tc.orKind:
			case tc.kind != "":
				codemodetest.WantError(t, res, tc.kind, tc.msg)
			default:
				if res.Err != nil {
					t.Fatalf("unexpected error: %v\nlogs: %v", res.Err, res.Logs)
				}
				if tc.want != "" && string(res.Value) != tc.want {
					t.Fatalf("value %s, want %s", res.Value, tc.want)
				}
			}
			codemodetest.Healthy(t)
		})
	}
}

// noInternals fails when what the model reads shows the sandbox's own
// machinery: a Go panic, a Go source position, a Go type.
func noInternals(t *testing.T, res *codemode.Result) {
	t.Helper()
	for _, bad := range []string{"internal error", "runtime error", "goroutine", "github.com/", ".go:", "goja", "*codemode.", "reflect."} {
		if strings.Contains(res.Text, bad) {
			t.Errorf("the output shows %q:\n%s", bad, codemodetest.Shorten(res.Text, 2000))
		}
	}
}

// TestEscapeThroughBindings goes at the backend globals and their methods.
func TestEscapeThroughBindings(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "constructor chain stays in the sandbox", code: `
const F = api.echo.constructor;
return [F === Function, api.constructor === Object, Object.getPrototypeOf(api) === Object.prototype,
	Object.getPrototypeOf(api.echo) === Function.prototype, F("return this")() === globalThis,
	F("return typeof require + typeof process + typeof fetch")()]`,
			want: `[true,true,true,true,true,"undefinedundefinedundefined"]`},
		{name: "Function.prototype.toString", code: `
return [Function.prototype.toString.call(api.echo), String(api.echo), String(api), String(console.log), String(setTimeout)]`,
			want: `["function echo() { [native code] }","function echo() { [native code] }","[backend api]","function log() { [native code] }","function setTimeout() { [native code] }"]`},
		{name: "not a constructor", code: `try { new api.echo({}) } catch (e) { return [e instanceof TypeError, e.message] }`,
			want: `[true,"Value is not a constructor"]`},
		{name: "call, apply, bind and Reflect.apply", code: `
const rs = await Promise.all([api.echo.call(null, {n: 1}), api.echo.apply(undefined, [{n: 2}]),
	api.echo.bind(api, {n: 3})(), Reflect.apply(api.echo, 7, [{n: 4}]), api.echo.call("x", {n: 5}, "ignored")]);
return rs.map(r => r.args.n)`,
			want: `[1,2,3,4,5]`},
		{name: "symbols", code: `
return [Object.getOwnPropertySymbols(api).length, Object.getOwnPropertySymbols(api.echo).length,
	api[Symbol.iterator], api[Symbol.toPrimitive], ` + "`${api}`" + `, Symbol.keyFor(Symbol.for("api")), api + ""]`,
			want: `[0,0,null,null,"[backend api]","api","[backend api]"]`},
		{name: "property descriptors", code: `
const d = Object.getOwnPropertyDescriptors(api);
return [Object.keys(d).sort(), Object.values(d).every(x => typeof x.value === "function" && x.writable && !x.enumerable && x.configurable),
	Object.getOwnPropertyDescriptors(api.echo), Object.getOwnPropertyDescriptor(globalThis, "api").writable,
	Object.getOwnPropertyDescriptor(globalThis, "api").configurable]`,
			want: `[["echo","fail","get_weather","toString"],true,{"length":{"value":1,"writable":false,"enumerable":false,"configurable":true},"name":{"value":"echo","writable":false,"enumerable":false,"configurable":true}},false,false]`},
		{name: "no enumerable keys", code: `return [Object.keys(api), Object.keys(api.echo), Object.keys(console.log), JSON.stringify(api), JSON.stringify(api.echo)]`,
			want: `[[],[],[],"{}",null]`},
		{name: "the global cannot be replaced", code: `
"use strict";
const errs = [];
try { globalThis.api = {} } catch (e) { errs.push(e.name) }
try { Object.defineProperty(globalThis, "api", {value: 1}) } catch (e) { errs.push(e.name) }
try { delete globalThis.api } catch (e) { errs.push(e.name) }
return [errs, typeof api.echo]`,
			want: `[["TypeError","TypeError","TypeError"],"function"]`},
		{name: "defineProperty on a backend object", code: `
const echo = api.echo;
Object.defineProperty(api, "echo", {get() { throw new Error("no echo") }});
let m; try { api.echo } catch (e) { m = e.message }
Object.defineProperty(api, "fail", {value: 5});
return [m, api.fail, (await echo({n: 1})).args]`,
			want: `["no echo",5,{"n":1}]`},
		{name: "frozen, prototype-less backend object", code: `
Object.setPrototypeOf(api, null); Object.freeze(api); Object.freeze(api.echo);
return [(await api.echo({ok: true})).args, Object.isFrozen(api)]`,
			want: `[{"ok":true},true]`},
		{name: "methods replaced before the call", code: `
const echo = api.echo;
api.echo = () => "mine"; api.toString = null; Function.prototype.call = () => { throw new Error("call") };
Function.prototype.apply = null; Function.prototype.bind = null;
return [api.echo(), (await echo({n: 1})).args.n, Reflect.apply(Object.prototype.toString, api, [])]`,
			want: `["mine",1,"[object Object]"]`},
		{name: "a Proxy around a backend and around a method", code: `
const p = new Proxy(api, {get(t, k) { return k === "echo" ? (a) => t.echo({...a, via: "proxy"}) : t[k] }});
const f = new Proxy(api.echo, {apply(t, self, args) { return t(...args) }});
return [(await p.echo({n: 1})).args, (await f({n: 2})).args, (await Reflect.apply(f, null, [{n: 3}])).args]`,
			want: `[{"n":1,"via":"proxy"},{"n":2},{"n":3}]`},
		{name: "arguments with a toJSON that changes the shape", code: `
let i = 0;
const a = {toJSON() { return i++ ? {second: true} : {first: [1, {toJSON: () => "inner"}]} }};
return [(await api.echo(a)).args, (await api.echo(a)).args]`,
			want: `[{"first":[1,"inner"]},{"second":true}]`},
		{name: "arguments with a getter that throws", code: `
try { await api.echo({get x() { throw new RangeError("getter") }}) } catch (e) { return [e.name, e.message] }`,
			want: `["RangeError","getter"]`},
		{name: "arguments with a getter that never ends", code: `await api.echo({get x() { for (;;) {} }})`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "arguments that are a Proxy whose traps throw", code: `
const p = new Proxy({}, {ownKeys() { throw new Error("ownKeys") }});
try { await api.echo(p) } catch (e) { return e.message }`,
			want: `"ownKeys"`},
		{name: "arguments that are a revoked Proxy", code: `
const {proxy, revoke} = Proxy.revocable({}, {}); revoke();
try { await api.echo(proxy) } catch (e) { return e.name }`,
			want: `"TypeError"`},
		{name: "arguments that are not JSON", code: `
const out = [];
for (const a of [() => 1, Symbol("s"), undefined, null]) {
	try { out.push((await api.echo(a)).args) } catch (e) { out.push(e.name) }
}
return out`,
			want: `["TypeError","TypeError",{},{}]`},
		{name: "arguments nested past the JSON depth", code: `
let o = {}; for (let i = 0; i < 10000; i++) o = {o};
await api.echo(o)`,
			kind: codemode.KindLimit, msg: "nests more than 512"},
		{name: "an answer with too many values", limits: escapeSmall, code: `
try { await api.echo({a: new Array(1 << 15).fill([0, 0, 0])}) } catch (e) {
	return [e instanceof Error, e.message.replace(/\d+/g, "N")]
}`,
			want: `[true,"api.echo: the answer is not usable: the text holds about N values; the limit is N"]`},
		{name: "a huge argument", limits: escapeSmall, code: `await api.echo({s: "x".repeat(1 << 20), t: "y"})`,
			kind: codemode.KindLimit, msg: "JSON.stringify would produce more than"},
		{name: "many arguments", code: `return (await api.echo({n: 1}, ...new Array(10000).fill({}))).args`,
			want: `{"n":1}`},
		{name: "a call flood", limits: codemode.Limits{Timeout: 2 * time.Second, MaxToolCalls: 50},
			code: `await Promise.all(Array.from({length: 100000}, (_, i) => api.echo({i})))`,
			kind: codemode.KindLimit, msg: "max_tool_calls"},
		{name: "an unavailable backend's proxy", code: `
return [typeof later, typeof later.then, typeof later.toJSON, typeof later[Symbol.iterator], JSON.stringify(later),
	Object.prototype.toString.call(later), Object.keys(later).length]`,
			want: `["object","undefined","undefined","undefined","{}","[object Object]",0]`},
	})
}

// TestEscapeThroughConsole goes at console and what it formats.
func TestEscapeThroughConsole(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "methods with odd this and arguments", code: `
console.log.call(null, "a"); console.info.apply({}, ["b", 1]); const w = console.warn; w(Symbol("s"), undefined, null);
console.error.bind(null, "c")(); console.debug();
return [typeof console.log, Object.keys(console).length, Object.getOwnPropertyNames(console).sort()]`,
			want: `["function",0,["debug","error","info","log","warn"]]`},
		{name: "not a constructor", code: `try { new console.log("x") } catch (e) { return e.name }`,
			want: `"TypeError"`},
		{name: "values that throw when formatted", code: `
const {proxy, revoke} = Proxy.revocable({}, {}); revoke();
const out = [];
for (const v of [{toJSON() { throw new Error("toJSON") }}, {get a() { throw new Error("getter") }},
		new Proxy({}, {ownKeys() { throw new Error("trap") }}), proxy]) {
	try { console.log(v); out.push("ok") } catch (e) { out.push(e.message) }
}
return out`,
			want: `["ok","ok","ok","proxy has been revoked"]`},
		{name: "an error whose stack getter throws", code: `
const e = new Error("m"); Object.defineProperty(e, "stack", {get() { throw new Error("stack") }});
try { console.log(e) } catch (x) { return x.message }`,
			want: `"stack"`},
		{name: "a value that never finishes formatting", code: `console.log({get a() { for (;;) {} }})`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "cyclic values", code: `const o = {}; o.o = o; const a = [o]; a.push(a); console.log(o, a, [a]); return "ok"`,
			want: `"ok"`},
		{name: "a huge string", limits: escapeSmall, code: `console.log("x".repeat(1 << 20)); console.log("y".repeat(1 << 20) + "z"); return "ok"`,
			want: `"ok"`},
		{name: "a huge object", limits: escapeSmall, code: `console.log({s: "x".repeat(1 << 20)}); return "not reached"`,
			kind: codemode.KindLimit, msg: "JSON.stringify would produce more than"},
		{name: "a deep object", code: `let o = {}; for (let i = 0; i < 10000; i++) o = {o}; console.log(o)`,
			kind: codemode.KindLimit, msg: "nests more than 512"},
		{name: "a million arguments through apply", limits: codemode.Limits{Timeout: 3 * time.Second},
			code: `const a = []; a.length = 1e6; console.log.apply(console, a); return "ok"`,
			kind: codemode.KindTimeout, msg: "timeout", orWant: `"ok"`},
		{name: "a million arguments spread", code: `const a = []; a.length = 1e6; console.log(...a); return "ok"`,
			kind: codemode.KindTimeout, msg: "timeout", orWant: `"ok"`},
		{name: "a log storm", code: `for (;;) console.log("x".repeat(100), {a: [1, 2, 3]})`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "console replaced", code: `console.log = () => { throw new Error("mine") }; globalThis.console = null; return typeof console`,
			want: `"object"`},
	})
}

// TestEscapeThroughPromises goes at the promises bindings return and the
// promise machinery the sandbox's loop relies on.
func TestEscapeThroughPromises(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "then, catch and finally", code: `
const out = [];
await api.echo({n: 1}).then(r => out.push(r.args.n)).finally(() => out.push("finally"));
await api.fail({}).catch(e => out.push(e.message)).finally(() => out.push("finally"));
const p = api.echo({});
return [out, p instanceof Promise, Object.prototype.toString.call(p), p.constructor === Promise, typeof p.then, Object.keys(p).length, await p.then(() => 1)]`,
			want: `[[1,"finally","api.fail: the backend says no","finally"],true,"[object Promise]",true,"function",0,1]`},
		{name: "Promise.prototype.then replaced before the call", code: `
Promise.prototype.then = function () {}; return (await api.echo({n: 1})).args`,
			want: `{"n":1}`},
		{name: "Promise.prototype.then that throws", code: `
Object.defineProperty(Promise.prototype, "then", {get() { throw new Error("then") }});
return (await api.echo({n: 1})).args`,
			want: `{"n":1}`},
		{name: "Promise replaced", code: `
globalThis.Promise = function () { throw new Error("mine") }; Promise.resolve = null;
const r = await api.echo({n: 1}); return [r.args, Object.prototype.toString.call(api.echo({}))]`,
			want: `[{"n":1},"[object Promise]"]`},
		{name: "a subclass of Promise", code: `
class P extends Promise { then(a, b) { return super.then(a, b) } }
const rs = await P.all([api.echo({n: 1}), P.resolve(api.echo({n: 2}))]);
return [rs.map(r => r.args.n), P.resolve(api.echo({})) instanceof P]`,
			want: `[[1,2],true]`},
		{name: "a species that never settles", code: `
class P extends Promise { static get [Symbol.species]() { return function (r) { r(() => {}, () => {}) } } }
const p = P.resolve(1); p.then(() => 1); return "ok"`,
			want: `"ok"`},
		{name: "a thenable that throws", code: `try { await {then() { throw new Error("thenable") }} } catch (e) { return e.message }`,
			want: `"thenable"`},
		{name: "a thenable that never settles", code: `await {then() {}}`,
			kind: codemode.KindException, msg: "nothing will ever settle"},
		{name: "a thenable that settles twice", code: `return await {then(ok, no) { ok(1); ok(2); no(3) }}`,
			want: `1`},
		{name: "every object a thenable", code: `Object.prototype.then = function (ok) { ok(42) }; return await api.echo({})`,
			want: `42`},
		{name: "every object a thenable that never settles", code: `Object.prototype.then = function () {}; await api.echo({})`,
			kind: codemode.KindException, msg: "nothing will ever settle"},
		{name: "a rejection with a hostile reason", code: `
await Promise.reject(new Proxy({}, {get() { throw new Error("trap") }}))`,
			kind: codemode.KindException, msg: "properties throw"},
		{name: "a rejection reason that never finishes", code: `await Promise.reject({get message() { for (;;) {} }})`,
			kind: codemode.KindTimeout, msg: "timeout"},
	})
}

// TestEscapeThroughErrors goes at the errors bindings throw.
func TestEscapeThroughErrors(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "properties of a binding's error", code: `
try { await api.fail({}) } catch (e) {
	return [e instanceof Error, e.constructor === Error, Object.getPrototypeOf(e) === Error.prototype,
		Object.prototype.toString.call(e), Object.getOwnPropertyNames(e).sort(), typeof e.stack, e.stack.includes("github"),
		Object.getOwnPropertySymbols(e).length, String(e)]
}`,
			want: `[true,true,true,"[object Error]",["backend","message","stack","tool"],"string",false,0,"Error: api.fail: the backend says no"]`},
		{name: "Error replaced before the call", code: `
const E = Error; globalThis.Error = function () { throw new E("mine") }; Error.prototype = null;
try { await api.fail({}) } catch (e) { return [e instanceof E, e.message] }`,
			want: `[true,"api.fail: the backend says no"]`},
		{name: "Error.prototype tampered with", code: `
Object.defineProperty(Error.prototype, "message", {get() { throw new Error("message") }, set() { throw new Error("set") }});
Object.defineProperty(Error.prototype, "name", {get() { for (;;) {} }});
Error.prototype.toString = () => { throw new Error("toString") };
try { await api.fail({}) } catch (e) { return [e.message, e.backend, e.tool] }`,
			want: `["api.fail: the backend says no","api","fail"]`},
		{name: "setters on Object.prototype", code: `
for (const k of ["backend", "tool", "message", "stack", "args", "0", "then"])
	Object.defineProperty(Object.prototype, k, {set() { for (;;) {} }, configurable: true});
try { await api.fail({}) } catch (e) { return [e.backend, e.tool] }`,
			want: `["api","fail"]`},
		{name: "an uncaught binding error with a hostile prototype", code: `
Object.defineProperty(Error.prototype, "name", {get() { throw new Error("name") }});
await api.fail({})`,
			kind: codemode.KindException, msg: "api.fail: the backend says no"},
		{name: "a thrown object whose getters throw", code: `throw {get name() { throw 1 }, get message() { throw 2 }}`,
			kind: codemode.KindException, msg: "properties throw"},
		{name: "a thrown object whose getter throws itself", code: `const o = {get message() { throw o }}; throw o`,
			kind: codemode.KindException, msg: "properties throw"},
		{name: "a thrown object whose getter never ends", code: `throw {get message() { for (;;) {} }}`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a thrown Proxy", code: `throw new Proxy({}, {get() { return "boo" }})`,
			kind: codemode.KindException, msg: "boo: boo"},
		{name: "a thrown revoked Proxy", code: `const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); throw proxy`,
			kind: codemode.KindException, msg: "properties throw"},
		{name: "a thrown error with a huge message", limits: escapeSmall, code: `throw new Error("x".repeat(1 << 20))`,
			kind: codemode.KindException, msg: "Error: xxx"},
		{name: "a thrown primitive", code: `throw Symbol("s")`, kind: codemode.KindException, msg: "threw Symbol(s)"},
	})
}

// TestEscapeThroughTimers goes at setTimeout and clearTimeout.
func TestEscapeThroughTimers(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "a callback that throws", code: `setTimeout(() => { throw new Error("from a timer") }, 1); await new Promise(r => setTimeout(r, 50))`,
			kind: codemode.KindException, msg: "from a timer"},
		{name: "a huge delay", code: `await new Promise(r => setTimeout(r, 2 ** 53)); return "late"`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "odd delays", code: `
const out = [];
await Promise.all([-1, NaN, "10", {valueOf: () => 5}, Infinity, -Infinity, null].map((d, i) =>
	d === Infinity ? null : new Promise(r => setTimeout(() => { out.push(i); r() }, d))));
return out.sort()`,
			want: `[0,1,2,3,5,6]`},
		{name: "a delay whose valueOf never ends", code: `setTimeout(() => {}, {valueOf() { for (;;) {} }})`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "not a function", code: `
const out = [];
for (const f of ["return 1", 5, null, undefined, {}, Symbol()]) { try { setTimeout(f, 1) } catch (e) { out.push(e.name) } }
return out`,
			want: `["TypeError","TypeError","TypeError","TypeError","TypeError","TypeError"]`},
		{name: "timer ids", code: `
const a = setTimeout(() => {}, 1), b = setTimeout(() => {}, 1);
for (const id of [{}, "x", NaN, -1, 2 ** 60, null, undefined, a + 100, b]) clearTimeout(id);
let err; try { clearTimeout(Symbol()) } catch (e) { err = e.name }
clearTimeout(a);
return [typeof a, b - a, err]`,
			want: `["number",1,"TypeError"]`},
		{name: "clearTimeout inside its own callback, and twice", code: `
let id, n = 0;
await new Promise(r => { id = setTimeout(() => { clearTimeout(id); clearTimeout(id); n++; r() }, 1) });
clearTimeout(id);
return n`,
			want: `1`},
		{name: "a binding as the callback", code: `setTimeout(api.echo, 1, {n: 1}); await new Promise(r => setTimeout(r, 30)); return "ok"`,
			want: `"ok"`},
		{name: "timers that schedule timers", code: `let n = 0; const tick = () => { n++; setTimeout(tick, 0) }; tick(); await new Promise(() => {})`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a timer flood", limits: escapeRoomy, code: `for (let i = 0; ; i++) setTimeout(() => {}, 0)`,
			kind: codemode.KindLimit, msg: "timers"},
	})
}

// TestEscapeThroughJSON goes at the sandbox's own JSON.stringify and
// JSON.parse, which bindings use too.
func TestEscapeThroughJSON(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "a replacer that builds deeper and deeper", code: `JSON.stringify({}, function (k, v) { return {v: {}} })`,
			kind: codemode.KindLimit, msg: "nests more than"},
		{name: "a replacer that returns huge strings", limits: escapeSmall,
			code: `JSON.stringify([1, 2, 3], (k, v) => typeof v === "number" ? "x".repeat(1 << 19) : v)`,
			kind: codemode.KindLimit, msg: "would produce more than"},
		{name: "a replacer that throws", code: `try { JSON.stringify({a: 1}, () => { throw new Error("replacer") }) } catch (e) { return e.message }`,
			want: `"replacer"`},
		{name: "a replacer that never ends", code: `JSON.stringify({a: 1}, () => { for (;;) {} })`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a replacer array of odd things", code: `return JSON.stringify({a: 1, b: 2, 1: 3}, ["a", 1, {}, new String("b"), Symbol(), null])`,
			want: `"{\"1\":3,\"a\":1,\"b\":2}"`},
		{name: "a toJSON getter that changes the shape", code: `
let n = 0; const o = {get toJSON() { return n++ % 2 ? () => [1, 2] : () => ({k: n}) }};
return [JSON.stringify(o), JSON.stringify(o), JSON.stringify({o, p: o})]`,
			want: `["{\"k\":1}","[1,2]","{\"o\":{\"k\":3},\"p\":[1,2]}"]`},
		{name: "a getter that throws", code: `try { JSON.stringify({get a() { throw new Error("get") }}) } catch (e) { return e.message }`,
			want: `"get"`},
		{name: "an indent that is an object", code: `return JSON.stringify([1], null, {valueOf() { throw new Error("indent") }})`,
			want: `"[1]"`},
		{name: "a reviver that grows the value", code: `return JSON.parse("[1,2,3]", function (k, v) { if (Array.isArray(v)) v.push(v.slice()); return v })`,
			kind: codemode.KindTimeout, msg: "timeout", orWant: `[1,2,3,[1,2,3]]`},
		{name: "a reviver that never ends", code: `JSON.parse("[1]", () => { for (;;) {} })`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a reviver that throws", code: `try { JSON.parse("{\"a\": 1}", () => { throw new Error("reviver") }) } catch (e) { return e.message }`,
			want: `"reviver"`},
		{name: "a reviver that makes a cycle", code: `const o = JSON.parse("{\"a\": {}}", function (k, v) { if (k === "a") v.self = this; return v }); return o.a.self === o`,
			want: `true`},
		{name: "a text with millions of values", limits: escapeSmall, code: `JSON.parse("[" + "0,".repeat(1 << 17) + "0]")`,
			kind: codemode.KindLimit, msg: "JSON.parse: the text holds about"},
		{name: "a text with millions of values in strings is fine", limits: escapeSmall, code: `return JSON.parse(JSON.stringify([",".repeat(1 << 18), "[{".repeat(1 << 17)])).map(s => s.length)`,
			want: `[262144,262144]`},
		{name: "a text that is not a string", code: `return JSON.parse({toString() { return "[7]" }})`,
			want: `[7]`},
		{name: "JSON replaced before a call", code: `
JSON.stringify = () => { throw new Error("stringify") }; JSON.parse = () => { throw new Error("parse") }; globalThis.JSON = null;
return (await api.echo({n: [1, {m: 2}]})).args`,
			want: `{"n":[1,{"m":2}]}`},
	})
}

// TestEscapeThroughTamperedGlobals replaces what the sandbox's own
// machinery might use before calling a binding. The binding must still
// work or fail cleanly.
func TestEscapeThroughTamperedGlobals(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "Array.prototype methods replaced", code: `
for (const k of Object.getOwnPropertyNames(Array.prototype)) if (k !== "length") Array.prototype[k] = () => { throw new Error(k) };
Array.prototype[Symbol.iterator] = function* () { for (;;) yield 1 };
const r = await api.echo({a: [1, 2, [3]]});
return JSON.stringify(r)`,
			want: `"{\"tool\":\"echo\",\"args\":{\"a\":[1,2,[3]]}}"`},
		{name: "Object.prototype.toString and friends replaced", code: `
Object.prototype.toString = () => { throw new Error("toString") }; Object.prototype.valueOf = null;
Object.prototype.toJSON = undefined; Object.prototype.hasOwnProperty = () => false;
Symbol.prototype.toString = null; String.prototype.toString = () => "mine";
return (await api.echo({n: 1})).args`,
			want: `{"n":1}`},
		{name: "Object.prototype.toJSON that throws", code: `
Object.prototype.toJSON = () => { throw new Error("toJSON") };
try { await api.echo({}) } catch (e) { return e.message }`,
			want: `"toJSON"`},
		{name: "getters on Object.prototype for what answers hold", code: `
for (const k of ["tool", "args", "0", "length", "n"])
	Object.defineProperty(Object.prototype, k, {get() { throw new Error("get " + k) }, set() { throw new Error("set " + k) }, configurable: true});
const r = await api.echo({n: 5});
return Object.getOwnPropertyNames(r).sort()`,
			want: `["args","tool"]`},
		{name: "Symbol.iterator of arrays makes Promise.all spin", code: `
Array.prototype[Symbol.iterator] = function* () { for (;;) yield api.echo({}) };
await Promise.all([1])`,
			kind: codemode.KindLimit, msg: "max_tool_calls"},
		{name: "Function.prototype replaced", code: `
Object.setPrototypeOf(Function.prototype, null); Function.prototype.toString = null;
delete Function.prototype.call; delete Function.prototype.apply;
return (await api.echo({n: 1})).args`,
			want: `{"n":1}`},
		{name: "everything frozen", code: `
for (const k of Object.getOwnPropertyNames(globalThis)) { const v = globalThis[k]; if (v && typeof v === "object" || typeof v === "function") { Object.freeze(v); if (v.prototype) Object.freeze(v.prototype) } }
Object.freeze(globalThis);
return [(await api.echo({n: 1})).args, typeof new Uint8Array(2), String([1, [2]]), [[1], [2]].flat()]`,
			want: `[{"n":1},"object","1,2",[1,2]]`},
		{name: "what bindings return and throw, seen with the originals", code: `
const toStr = Object.prototype.toString, getProto = Object.getPrototypeOf;
const protos = [Object.prototype, Array.prototype, Error.prototype, Promise.prototype];
const describe = v => [typeof v, Reflect.apply(toStr, v, []), protos.indexOf(getProto(v))];
Array.prototype.map = null; Array.prototype.push = null; Array.prototype[Symbol.iterator] = null;
Object.prototype.toString = () => "[object Go]"; Symbol.prototype[Symbol.toPrimitive] = null;
globalThis.Error = null; globalThis.Promise = null; globalThis.JSON = null; globalThis.Object = null; globalThis.Array = null;
const p = api.echo({n: [1]}); const r = await p; let e; try { await api.fail({}) } catch (x) { e = x }
let u; try { await later.down({}) } catch (x) { u = x }
return [describe(p), describe(r), describe(r.args.n), describe(e), describe(u), typeof e.stack, e.message, u.message]`,
			want: `[["object","[object Promise]",3],["object","[object Object]",0],["object","[object Array]",1],["object","[object Error]",2],["object","[object Error]",2],"string","api.fail: the backend says no","later.down failed: unavailable: connection refused"]`},
		{name: "the global object's prototype replaced", code: `
Object.setPrototypeOf(globalThis, new Proxy({}, {get(t, k) { throw new Error("global " + String(k)) }}));
return (await api.echo({n: 1})).args`,
			want: `{"n":1}`},
	})
}

// TestEscapeThroughHugeValues sends huge strings and arrays into bindings,
// console and the built-ins.
func TestEscapeThroughHugeValues(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "a cyclic argument inside an array", code: `const a = [1]; a.push(a); try { await api.echo({a}) } catch (e) { return e.message }`,
			want: `"Converting circular structure to JSON"`},
		{name: "a sparse array as an argument", code: `const a = []; a.length = 2 ** 32 - 1; await api.echo({a})`,
			kind: codemode.KindLimit, msg: "too long"},
		{name: "a string built by doubling, to a binding", limits: codemode.Limits{Timeout: 2 * time.Second},
			code: `let s = "x"; for (let i = 0; i < 23; i++) s += s; await api.echo({s})`,
			kind: codemode.KindException, msg: "RangeError: api.echo: the arguments are"},
		{name: "split with a limit", limits: escapeSmall,
			code: `let s = "ab"; for (let i = 0; i < 20; i++) s += s; return [s.split("", 3), s.split("b", 2 ** 32 + 2).length, "a,b,c".split(",", -1)]`,
			want: `[["a","b","a"],2,["a","b","c"]]`},
		{name: "a global match on a huge string", code: `let s = "x"; for (let i = 0; i < 24; i++) s += s; s.match(/x/g)`,
			kind: codemode.KindTimeout, msg: "timeout", orKind: codemode.KindLimit},
		{name: "a global replace on a huge string", code: `let s = "x"; for (let i = 0; i < 24; i++) s += s; s.replace(/x/g, "yy")`,
			kind: codemode.KindTimeout, msg: "timeout", orKind: codemode.KindLimit},
		{name: "spreading a huge array into a call", code: `const a = []; a.length = 1 << 20; Math.max(...a)`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "spreading a huge string", code: `let s = "x"; for (let i = 0; i < 24; i++) s += s; [...s]`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "String.raw of a huge length", code: `String.raw({raw: {length: 2 ** 40}})`,
			kind: codemode.KindTimeout, msg: "timeout", orKind: codemode.KindMemory},
		{name: "String.raw still works", code: "return [String.raw`a\\n${1}b${2}`, String.raw({raw: [\"x\", \"y\"]}, 1, 2, 3), String.raw({raw: {length: 0}})]",
			want: `["a\\n1b2","x1y",""]`},
		{name: "concat of a spreadable array-like", code: `[].concat({length: 2 ** 32 - 1, [Symbol.isConcatSpreadable]: true})`,
			kind: codemode.KindTimeout, msg: "timeout", orKind: codemode.KindMemory},
		{name: "concat still works", code: `
const o = {a: 1}; const s = {length: 2, 0: "x", 1: "y", [Symbol.isConcatSpreadable]: true};
const r = [1].concat(o, [2, [3]], s, "z"); class A extends Array {}
return [r, r[1] === o, Array.prototype.concat.call(o, 1)[0] === o, A.from([1]).concat([2]) instanceof A]`,
			want: `[[1,{"a":1},2,[3],"x","y","z"],true,true,true]`},
		{name: "flat of a sparse inner array", code: `const a = []; a.length = 2 ** 32 - 1; [a].flat()`,
			kind: codemode.KindTimeout, msg: "timeout", orKind: codemode.KindMemory},
		{name: "flat and flatMap still work", code: `
class A extends Array {}
return [[1, [2, [3, [4]]]].flat(), [1, [2, [3, [4]]]].flat(Infinity), [, 1, [, 2]].flat(), A.from([[1]]).flat() instanceof A,
	[1, 2].flatMap((x, i, arr) => [x, i, arr.length]), [[1]].flatMap(x => x), Array.prototype.flat.call({length: 2, 0: [1], 1: 2})]`,
			want: `[[1,2,[3,[4]]],[1,2,3,4],[1,2],true,[1,0,2,2,1,2],[1],[1,2]]`},
		{name: "join of a cyclic array", code: `const a = [1]; a.push(a, 2); const b = [a]; a.push(b); return [String(a), a.join("-"), a.toLocaleString(), ` + "`${b}`" + `]`,
			want: `["1,,2,","1--2-","1,,2,","1,,2,"]`},
		{name: "replacements with a global flag from a getter", code: `
const re = /(?:)/; Object.defineProperty(re, "flags", {get: () => "g"});
"abc".replace(re, "y")`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a slow replacer callback is not a slow match", limits: escapeRoomy, code: `
return "ab".replace(/b/g, () => { const t = Date.now(); while (Date.now() - t < 1100) {} return "c" })`,
			want: `"ac"`},
		{name: "replacements still work", code: `
return ["ab ".repeat(3).replace(/\w+/g, "<$&>"), "2024-05-06".replace(/(\d+)-(\d+)-(\d+)/, "$3/$2/$1"),
	"abc".replace(/(?<x>b)/, "[$<x>|$` + "`" + `|$'|$$|$0|$9|$<y>]"), "abc".replace("b", "[$&$` + "`" + `$']"), "aaa".replaceAll("a", "$&$&"),
	"abcdefghijk".replace(/(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)/, "$11$10$1$01$12"), "x".replace(/x/, "$<y>"), "é€x".replace(/x/, "[$` + "`" + `]"),
	"abc".replace(/b/, () => "$&"), "abc".replace({[Symbol.replace]: (s, r) => typeof r}, "$&")]`,
			want: `["<ab> <ab> <ab> ","06/05/2024","a[b|a|c|$|$0|$9|]c","a[bac]c","aaaaaa","kjaaa2","$<y>","é€[é€]","a$&c","string"]`},
	})
}

// TestEscapeThroughPromiseStorms floods the event loop.
func TestEscapeThroughPromiseStorms(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "millions of pending promises", code: `const ps = []; for (;;) ps.push(new Promise(() => {}))`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "millions of pending promises, awaited", code: `await Promise.all(Array.from({length: 3e6}, () => new Promise(() => {})))`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a long then chain", code: `let p = Promise.resolve(0); for (let i = 0; i < 3e6; i++) p = p.then(x => x + 1); return await p`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "recursive microtasks", code: `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "recursive async functions", code: `const f = async () => { await null; return f() }; await f()`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a race that never settles", limits: escapeRoomy, code: `await Promise.race(Array.from({length: 10000}, () => new Promise(() => {})))`,
			kind: codemode.KindException, msg: "nothing will ever settle"},
		{name: "binding calls inside microtasks", limits: codemode.Limits{Timeout: time.Second, MaxToolCalls: 20},
			code: `const f = () => api.echo({}).then(f); await f()`,
			kind: codemode.KindLimit, msg: "max_tool_calls"},
		{name: "a rejection storm", code: `for (;;) Promise.reject(new Error("x")).catch(() => {})`,
			kind: codemode.KindTimeout, msg: "timeout"},
	})
}

// TestEscapeThroughDeepRecursion recurses through places the call stack
// limit must still see.
func TestEscapeThroughDeepRecursion(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "a getter", limits: escapeRoomy, code: `const o = {get x() { return this.x }}; o.x`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "a Proxy get trap", limits: escapeRoomy, code: `const p = new Proxy({}, {get(t, k, r) { return r[k] }}); p.x`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "a Proxy has trap", limits: escapeRoomy, code: `const p = new Proxy({}, {has(t, k) { return k in p }}); "x" in p`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "toString", limits: escapeRoomy, code: `const o = {toString() { return String(o) }}; String(o)`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "valueOf", limits: escapeRoomy, code: `const o = {valueOf() { return +o }}; +o`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "Symbol.toPrimitive", limits: escapeRoomy, code: `const o = {[Symbol.toPrimitive]() { return o + 1 }}; o + 1`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "toJSON", limits: escapeRoomy, code: `const o = {toJSON() { return JSON.stringify(o) }}; JSON.stringify(o)`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "a replacer", limits: escapeRoomy, code: `const f = (k, v) => JSON.stringify({}, f); JSON.stringify({}, f)`, kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "an array element's toString inside join", limits: escapeRoomy, code: `const o = {toString() { return [o].join() }}; String(o)`,
			kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "a getter inside console.log", limits: escapeRoomy, code: `const o = {get a() { console.log(o); return 1 }}; console.log(o)`,
			kind: codemode.KindStack, msg: "deeper than", orKind: codemode.KindTimeout},
		{name: "a thenable inside a thenable", code: `const t = {then(r) { r(t) }}; await t`,
			kind: codemode.KindTimeout, msg: "timeout"},
		{name: "a chain of a hundred thousand proxies", code: `let p = {x: 1}; for (let i = 0; i < 100000; i++) p = new Proxy(p, {}); return p.x`,
			want: `1`},
		{name: "a binding inside a getter inside a binding's arguments", code: `
const a = {get x() { return api.echo({}) }}; const r = await api.echo(a); return r.args`,
			want: `{"x":{}}`},
	})
}

// TestFrozenGlobalObject froze the global object before the lazily
// guarded typed arrays were first used: their accessors then called
// themselves until the Go stack overflowed, a fatal error.
func TestFrozenGlobalObject(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "freeze", code: `Object.freeze(globalThis); return [typeof Uint8Array, new Uint8Array(2).length, new ArrayBuffer(3).byteLength]`,
			want: `["function",2,3]`},
		{name: "seal", code: `Object.seal(globalThis); Float64Array = null; return [typeof Float64Array, new Int8Array(1).length]`,
			want: `["object",1]`},
	})
}

// TestBigInt: BigInt is JavaScript's, in the code, eval and Function;
// arithmetic past max_memory ends the execution at the limit (goja
// computes it in one native step), and the worker is replaced.
func TestBigInt(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "BigInt works", code: `
const x: bigint = 2n ** 64n; const a = new BigInt64Array(1); a[0] = -5n; const v = new DataView(new ArrayBuffer(8)); v.setBigUint64(0, 7n);
return [String(x), typeof 1n, String(a[0]), String(v.getBigUint64(0)), String(BigInt("123") * 2n), String(eval("3n ** 3n")), String(Function("return 2n * 21n")())]`,
			want: `["18446744073709551616","bigint","-5","7","246","27","42"]`},
		{name: "a shift past memory", limits: escapeQuick, code: `return 1n << (1n << 40n)`, kind: codemode.KindMemory, msg: "max_memory", orKind: codemode.KindTimeout},
		{name: "a power past memory in eval", limits: escapeQuick, code: `eval("2n ** (2n ** 40n)")`, kind: codemode.KindMemory, msg: "max_memory", orKind: codemode.KindTimeout},
		{name: "a power past memory in Function", limits: escapeQuick, code: `Function("a = 2n", "return a ** (2n ** 40n)")()`,
			kind: codemode.KindMemory, msg: "max_memory", orKind: codemode.KindTimeout},
		{name: "a constant the compiler folds", limits: escapeQuick, code: `return 1n << (1n << 62n)`, kind: codemode.KindMemory, msg: "max_memory", orKind: codemode.KindTimeout},
	})
}

// TestObjectSpread: object spread and rest are JavaScript's, in the code,
// eval and Function; a spread of millions of properties is native work
// that ends at the timeout.
func TestObjectSpread(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "spreading a huge string into an object", limits: escapeQuick, code: `const s = "x".repeat(1 << 22); return Object.keys({...s}).length`,
			kind: codemode.KindTimeout, msg: "timeout", orKind: codemode.KindMemory},
		{name: "spread works", code: `
const a = {x: 1, y: {z: 2}, [Symbol("s")]: 5}; const {x, ...rest} = a;
return [{...a, x: 3}, rest, {..."ab"}, {...null}, {...[1, 2]}, Object.getOwnPropertySymbols({...a}).length, x]`,
			want: `[{"x":3,"y":{"z":2}},{"y":{"z":2}},{"0":"a","1":"b"},{},{"0":1,"1":2},1,1]`},
		{name: "eval", code: `return eval("({...{a: 1}, b: 2})")`, want: `{"a":1,"b":2}`},
		{name: "Function", code: `return Function("s", "const {a, ...r} = s; return r")({a: 1, b: 2})`, want: `{"b":2}`},
	})
	codemodetest.Healthy(t)
}

// TestNoGoValues collects everything the code can reach through the
// sandbox's own objects, the values they return and the errors they
// throw, and looks at each from Go: none may be a Go value in disguise.
func TestNoGoValues(t *testing.T) {
	code := `
const seen = [];
const keep = (...vs) => { for (const v of vs) seen.push(v) };
const tryKeep = (f) => { try { keep(f()) } catch (e) { keep(e) } };
keep(api, api.echo, api.fail, api.toString, later, console, console.log, setTimeout, clearTimeout, globalThis,
	Array, Function, eval, RegExp, ArrayBuffer, Uint8Array, (async () => {}).constructor, (function* () {}).constructor,
	Object.getOwnPropertyDescriptor(globalThis, "Int16Array"));
for (const o of [api, api.echo, console, console.log, setTimeout])
	keep(Object.getOwnPropertyDescriptors(o), Object.getPrototypeOf(o), o.constructor);
const p = api.echo({n: 1}); keep(p, p.then(() => {}), p.finally(() => {}), await p);
try { await api.fail({}) } catch (e) { keep(e, Object.getOwnPropertyDescriptors(e)) }
try { await later.anything({}) } catch (e) { keep(e) }
keep(setTimeout(() => {}, 1), later.anything);
tryKeep(() => String.prototype.repeat.call(null));
tryKeep(() => JSON.stringify((() => { const o = {}; o.o = o; return o })()));
tryKeep(() => { const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); console.log(proxy) });
Array.prototype.map.call({length: 2, 0: 1}, (v, i, arr) => keep(arr));
"abc".replace({[Symbol.replace]: (s, r) => keep(r)}, "$&");
keep(Array.from({length: 2}), Array.from({[Symbol.iterator]: function* () { yield 1 }}), [1, [2]].flat(), [1].concat({}),
	new Uint8Array({length: 2}), String.raw({raw: ["a"]}), "a,b".split(","), Object.keys("ab"));
globalThis.seen = seen;
return seen.length`
	b := &codemodetest.Echo{}
	down := codemode.Binding{Name: "later", Unavailable: "down", Call: func(context.Context, string, []byte) (codemode.Answer, error) {
		return codemode.Answer{}, &codemode.ToolError{Message: "down"}
	}}
	l := codemode.Limits{Timeout: 5 * time.Second}.WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	defer cancel()
	res, vm, ex, err := sandbox.Fresh(ctx, code, l, []codemode.Binding{b.Binding("api"), down})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatalf("%v\n%v", res.Err, res.Logs)
	}
	noInternals(t, res)
	vm.ClearInterrupt()
	walkForGo(t, vm, vm.GlobalObject())
	if !isGoType(reflect.TypeOf(ex)) || !isGoType(reflect.TypeOf(ctx)) || isGoType(reflect.TypeOf(map[string]any{})) || isGoType(reflect.TypeOf(&goja.Promise{})) {
		t.Error("isGoType does not tell Go values from goja's")
	}
}

// walkForGo walks the objects reachable from root (own properties, their
// getters' values, prototypes) and fails on any whose exported type is a
// Go type of this program: a Go struct, a context, a channel.
func walkForGo(t *testing.T, vm *goja.Runtime, root *goja.Object) {
	t.Helper()
	seen := map[*goja.Object]bool{}
	queue := []*goja.Object{root}
	visit := func(v goja.Value) {
		if o, ok := v.(*goja.Object); ok && !seen[o] {
			seen[o] = true
			queue = append(queue, o)
		}
	}
	get := func(f func() goja.Value) (v goja.Value) {
		defer func() { _ = recover() }() // a getter that throws
		return f()
	}
	for len(queue) > 0 && len(seen) < 50000 {
		o := queue[0]
		queue = queue[1:]
		if typ := o.ExportType(); isGoType(typ) {
			t.Errorf("a Go value is reachable: %v (%s)", typ, o.ClassName())
		}
		if p := o.Prototype(); p != nil {
			visit(p)
		}
		for _, k := range get(func() goja.Value { return vm.ToValue(o.GetOwnPropertyNames()) }).Export().([]string) {
			visit(get(func() goja.Value { return o.Get(k) }))
		}
		for _, s := range o.Symbols() {
			visit(get(func() goja.Value { return o.GetSymbol(s) }))
		}
	}
	if len(seen) < 100 {
		t.Errorf("walked only %d objects", len(seen))
	}
}

// isGoType reports whether an exported type comes from Go code other than
// goja's own value types and the standard types they export as.
func isGoType(typ reflect.Type) bool {
	for typ != nil && (typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map) {
		if typ.Kind() == reflect.Map {
			typ = typ.Elem()
			continue
		}
		typ = typ.Elem()
	}
	if typ == nil {
		return false
	}
	switch typ.PkgPath() {
	case "", "github.com/dop251/goja", "time":
		return typ.Kind() == reflect.Chan || typ.Kind() == reflect.Interface && typ.Name() == "Context"
	}
	return true
}
