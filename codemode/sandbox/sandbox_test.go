package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

func TestLanguage(t *testing.T) {
	tests := []struct {
		name, code, want string
	}{
		{"expression return", `return 1 + 1`, `2`},
		{"no return", `const x = 1`, ``},
		{"top-level await", `const v = await Promise.resolve(41); return v + 1`, `42`},
		{"markdown fence", "```javascript\nreturn 'fenced'\n```", `"fenced"`},
		{"typescript fence", "```ts\nconst n: number = 3;\nreturn n\n```", `3`},
		{"async arrow as the whole input", `async () => { const a = await Promise.resolve(2); return a * 21 }`, `42`},
		{"typed async arrow", `async (): Promise<number> => { return 7 }`, `7`},
		{"arrow followed by a statement is plain code", "async () => 1;\nreturn 'plain'", `"plain"`},
		{"typescript interfaces, generics and enums", `
interface Item<T> { id: number; value: T }
enum Color { Red = "red", Green = "green" }
function first<T>(items: Item<T>[]): T | undefined { return items[0]?.value }
const items: Item<Color>[] = [{ id: 1, value: Color.Green }];
return first(items)`, `"green"`},
		{"class fields and optional chaining", `class A { x = 1; static y = 2 } const a = new A(); return [a.x, A.y, a?.z?.w ?? "none"]`, `[1,2,"none"]`},
		{"JSON round trip", `return JSON.parse(JSON.stringify({a: [1, "two", null, true], b: {c: 1.5}}))`, `{"a":[1,"two",null,true],"b":{"c":1.5}}`},
		{"stringify with indent and replacer", `return JSON.stringify({a: 1, b: [2]}, (k, v) => typeof v === "number" ? v * 10 : v, 1)`, `"{\n \"a\": 10,\n \"b\": [\n  20\n ]\n}"`},
		{"stringify drops what JSON drops", `return JSON.stringify({u: undefined, f() {}, s: Symbol("x"), d: new Date(0), n: NaN, arr: [undefined, () => 1]})`, `"{\"d\":\"1970-01-01T00:00:00.000Z\",\"n\":null,\"arr\":[null,null]}"`},
		{"stringify escapes what JSON must", `return JSON.stringify("a\"b\\c\n\t\u0001é€")`, `"\"a\\\"b\\\\c\\n\\t\\u0001é€\""`},
		{"setTimeout", `await new Promise(r => setTimeout(r, 20)); return "later"`, `"later"`},
		{"clearTimeout", `let fired = false; const id = setTimeout(() => { fired = true }, 10); clearTimeout(id); await new Promise(r => setTimeout(r, 30)); return fired`, `false`},
		{"no fetch, require, process", `return [typeof fetch, typeof require, typeof process, typeof module, typeof window]`, `["undefined","undefined","undefined","undefined","undefined"]`},
		{"the global is the sandbox's own", `return constructor.constructor("return this")() === globalThis`, `true`},
		{"a source map comment is not followed", "return 5;\n//# sourceMappingURL=file:///dev/zero", `5`},
		{"eval does not follow source map comments", "return eval('6//# sourceMappingURL=file:///dev/zero')", `6`},
		{"regular expressions still work", `return "a1b22c333".replace(/\d+/g, m => m.length) + /(?<=a)b/.test("ab")`, `"a1b2c3true"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codemodetest.WantValue(t, codemodetest.Run(t, codemode.Limits{}, tt.code), tt.want)
		})
	}
}

func TestSyntaxErrorsPointAtTheCode(t *testing.T) {
	tests := []struct {
		name, code, want string
	}{
		{"javascript", "const a = 1;\nconst b = 2;\nfoo(;\n", "line 3, column 5"},
		{"typescript", "const a: number = 1;\nconst b = 2;\nfoo(;\n", "line 3, column 5"},
		{"import", "const fs = await import('fs')", "no modules"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codemodetest.WantError(t, codemodetest.Run(t, codemode.Limits{}, tt.code), codemode.KindSyntax, tt.want)
		})
	}
}

func TestStackTracesPointAtTheCode(t *testing.T) {
	js := "function inner() {\n  throw new Error('deep')\n}\nfunction outer() { inner() }\nouter()"
	res := codemodetest.Run(t, codemode.Limits{}, js)
	codemodetest.WantError(t, res, codemode.KindException, "Error: deep", "at inner (line 2, column 9)", "at outer (line 4, column", "at line 5, column")

	ts := "interface X { a: number }\nconst x: X = { a: 1 };\nfunction boom(n: number): never {\n  throw new RangeError('n=' + n)\n}\nboom(x.a)"
	res = codemodetest.Run(t, codemode.Limits{}, ts)
	codemodetest.WantError(t, res, codemode.KindException, "RangeError: n=1", "at boom (line 4, column")
	if strings.Contains(res.Err.Stack, "line 7") || strings.Contains(res.Err.Stack, "line 0") {
		t.Errorf("frames outside the code: %s", res.Err.Stack)
	}
}

func TestBindings(t *testing.T) {
	t.Run("values cross as JSON", func(t *testing.T) {
		b := &codemodetest.Echo{}
		res := codemodetest.Run(t, codemode.Limits{}, `const r = await api.echo({n: 1, s: "x", a: [true, null]}); return r`, b.Binding("api"))
		codemodetest.WantValue(t, res, `{"tool":"echo","args":{"n":1,"s":"x","a":[true,null]}}`)
	})
	t.Run("sanitized names call the backend's tool", func(t *testing.T) {
		b := &codemodetest.Echo{}
		codemodetest.WantValue(t, codemodetest.Run(t, codemode.Limits{}, `return (await api.get_weather({city: "Paris"})).tool`, b.Binding("api")), `"get-weather"`)
	})
	t.Run("calls started together overlap", func(t *testing.T) {
		b := &codemodetest.Echo{Delay: 50 * time.Millisecond}
		res := codemodetest.Run(t, codemode.Limits{}, `const rs = await Promise.all(Array.from({length: 10}, (_, i) => api.echo({i}))); return rs.map(r => r.args.i)`, b.Binding("api"))
		codemodetest.WantValue(t, res, `[0,1,2,3,4,5,6,7,8,9]`)
		if got := b.MaxSeen.Load(); got < 10 {
			t.Errorf("at most %d calls ran at once, want 10", got)
		}
	})
	t.Run("a backend error is thrown as an Error", func(t *testing.T) {
		b := &codemodetest.Echo{}
		res := codemodetest.Run(t, codemode.Limits{}, `try { await api.fail({}) } catch (e) { return [e instanceof Error, e.message, e.backend, e.tool] }`, b.Binding("api"))
		codemodetest.WantValue(t, res, `[true,"api.fail: the backend says no","api","fail"]`)
	})
	t.Run("an uncaught backend error fails the execution", func(t *testing.T) {
		b := &codemodetest.Echo{}
		codemodetest.WantError(t, codemodetest.Run(t, codemode.Limits{}, `await api.fail({})`, b.Binding("api")), codemode.KindException, "the backend says no")
	})
	t.Run("cyclic arguments", func(t *testing.T) {
		b := &codemodetest.Echo{}
		res := codemodetest.Run(t, codemode.Limits{}, `const a = {}; a.self = a; try { await api.echo(a) } catch (e) { return e.message }`, b.Binding("api"))
		codemodetest.WantValue(t, res, `"Converting circular structure to JSON"`)
		if b.Calls.Load() != 0 {
			t.Error("a call with cyclic arguments reached the backend")
		}
	})
	t.Run("huge arguments", func(t *testing.T) {
		b := &codemodetest.Echo{}
		res := codemodetest.Run(t, codemode.Limits{}, `try { await api.echo({s: "x".repeat(5 * 1024 * 1024)}) } catch (e) { return e.name }`, b.Binding("api"))
		codemodetest.WantValue(t, res, `"RangeError"`)
	})
	t.Run("past max_tool_calls", func(t *testing.T) {
		b := &codemodetest.Echo{}
		res := codemodetest.Run(t, codemode.Limits{MaxToolCalls: 5}, `try { for (let i = 0; i < 100; i++) await api.echo({i}) } catch (e) { return "caught" }`, b.Binding("api"))
		codemodetest.WantError(t, res, codemode.KindLimit, "max_tool_calls")
		if res.ToolCalls != 5 || b.Calls.Load() != 5 {
			t.Errorf("%d calls counted, %d made; want 5", res.ToolCalls, b.Calls.Load())
		}
	})
	t.Run("unawaited calls are dropped and noted", func(t *testing.T) {
		b := &codemodetest.Echo{Delay: time.Second}
		res := codemodetest.Run(t, codemode.Limits{}, `api.echo({}); return "done"`, b.Binding("api"))
		codemodetest.WantValue(t, res, `"done"`)
		if !strings.Contains(strings.Join(res.Logs, "\n"), "await every call") {
			t.Errorf("no note about the dropped call: %v", res.Logs)
		}
	})
	t.Run("nothing Go is reachable", func(t *testing.T) {
		b := &codemodetest.Echo{}
		code := `
const own = (o) => Object.getOwnPropertyNames(o).sort().join(",");
const p = api.echo({});
await p;
let err; try { await api.fail({}) } catch (e) { err = e }
return {
	promise: p instanceof Promise && Object.getPrototypeOf(p) === Promise.prototype,
	backend: own(api),
	method: own(api.echo),
	console: own(console.log),
	error: own(err),
	errorProto: Object.getPrototypeOf(err) === Error.prototype,
	fnProto: Object.getPrototypeOf(api.echo) === Function.prototype,
}`
		res := codemodetest.Run(t, codemode.Limits{}, code, b.Binding("api"))
		codemodetest.WantValue(t, res, `{"promise":true,"backend":"echo,fail,get_weather,toString","method":"length,name","console":"length,name","error":"backend,message,stack,tool","errorProto":true,"fnProto":true}`)
	})
	t.Run("globals are only ECMAScript and the sandbox's own", func(t *testing.T) {
		b := &codemodetest.Echo{}
		res := codemodetest.Run(t, codemode.Limits{}, `return Object.getOwnPropertyNames(globalThis).filter(n => !/^[A-Z]/.test(n)).sort()`, b.Binding("api"))
		var names []string
		if err := json.Unmarshal(res.Value, &names); err != nil {
			t.Fatal(res.Text)
		}
		allowed := map[string]bool{"api": true, "tools": true, "console": true, "setTimeout": true, "clearTimeout": true, "globalThis": true,
			"decodeURI": true, "decodeURIComponent": true, "encodeURI": true, "encodeURIComponent": true, "escape": true,
			"unescape": true, "eval": true, "undefined": true, "isFinite": true, "isNaN": true, "parseFloat": true, "parseInt": true}
		for _, n := range names {
			if !allowed[n] {
				t.Errorf("unexpected global %q", n)
			}
		}
	})
}

func TestFreshRuntimePerExecution(t *testing.T) {
	r := codemodetest.Runner(codemode.Limits{})
	res := r.Run(context.Background(), `Object.prototype.polluted = "yes"; Array.prototype.map = null; globalThis.leftover = 1; JSON.stringify = () => "x"; return 1`, nil)
	codemodetest.WantValue(t, res, `1`)
	res = r.Run(context.Background(), `return [({}).polluted, typeof [].map, typeof leftover, JSON.stringify({a: 1})]`, nil)
	codemodetest.WantValue(t, res, `[null,"function","undefined","{\"a\":1}"]`)
}

// TestNothingLeftForTheNextExecution: what one execution does to its
// globals and built-ins is not there in the next, back to back or after a
// pause (when the next takes the runtime primed while the first ran).
func TestNothingLeftForTheNextExecution(t *testing.T) {
	r := codemodetest.Runner(codemode.Limits{})
	const spoil = `globalThis.left = 1; Array.prototype.left = 2; Object.prototype.extra = 3;
JSON.parse = () => 4; console.log = () => { throw new Error("spoiled") }; return 1`
	const look = `console.log("fine");
return [typeof left, [].left, ({}).extra, JSON.parse("[5]")[0]]`
	for _, pause := range []time.Duration{0, 50 * time.Millisecond} {
		for i := 0; i < 3; i++ {
			if res := r.Run(context.Background(), spoil, nil); res.Err != nil {
				t.Fatal(res.Err)
			}
			time.Sleep(pause)
			res := r.Run(context.Background(), look, nil)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := string(res.Value); got != `["undefined",null,null,5]` || len(res.Logs) != 1 || res.Logs[0] != "fine" {
				t.Fatalf("after a pause of %s: %s, logs %q", pause, got, res.Logs)
			}
			time.Sleep(pause)
		}
	}
}

// TestLimits runs each way to exhaust the process the design names. Each
// must end within its limit with its error, and the process stays healthy.
func TestLimits(t *testing.T) {
	t.Parallel()
	short := codemode.Limits{Timeout: 500 * time.Millisecond}
	// Native work that no interrupt reaches ends at its worker's kill, at
	// the timeout, or at the memory it asked for, whichever comes first:
	// the kill is reported as a timeout, the memory as max_memory.
	native := codemode.Limits{Timeout: 2 * time.Second}
	killed := []string{codemode.KindMemory, codemode.KindTimeout}
	tests := []struct {
		name   string
		limits codemode.Limits
		code   string
		kinds  []string // the first is the usual one, which msg is for
		msg    string
	}{
		{"endless loop", short, `while (true) {}`, []string{codemode.KindTimeout}, "timeout of 500ms"},
		{"endless loop inside try/finally", short, `for (;;) { try { while (true) {} } catch (e) {} finally { continue } }`, []string{codemode.KindTimeout}, "timeout"},
		{"endless async loop", short, `while (true) { await null }`, []string{codemode.KindTimeout}, "timeout"},
		{"timer past the timeout", short, `await new Promise(r => setTimeout(r, 1e9))`, []string{codemode.KindTimeout}, "timeout"},
		{"unbounded recursion", codemode.Limits{}, `function f(n) { return f(n + 1) + 1 } f(0)`, []string{codemode.KindStack}, "deeper than 2048"},
		{"repeat", native, `"x".repeat(2**40)`, []string{codemode.KindMemory}, "max_memory"},
		{"padEnd", native, `"x".padEnd(2**40)`, []string{codemode.KindMemory}, "max_memory"},
		{"padStart", native, `"x".padStart(2**40, "ab")`, []string{codemode.KindMemory}, "max_memory"},
		{"replaceAll blow-up", native, `const s = "a".repeat(1 << 20); s.replaceAll("a", "b".repeat(1 << 20))`, killed, "max_memory"},
		{"join blow-up", native, `new Array(1 << 20).fill("x".repeat(1 << 10)).join("")`, killed, "max_memory"},
		{"ArrayBuffer", native, `new ArrayBuffer(2**40)`, []string{codemode.KindMemory}, "max_memory"},
		{"Uint8Array", native, `new Uint8Array(2**40)`, []string{codemode.KindMemory}, "max_memory"},
		// Its 8 GiB are never touched: only the worker's cap on its
		// address space stops it, which a race-built worker cannot have.
		{"Float64Array", native, `new Float64Array(2**30)`, killed, "max_memory"},
		{"sparse length then fill", native, `const a = []; a.length = 2**32 - 1; a.fill(0)`, killed, "max_memory"},
		{"array-like fill", native, `Array.prototype.fill.call({length: 2**32 - 1}, 0)`, killed, "timeout"},
		{"Array.from array-like", native, `Array.from({length: 2**31})`, killed, "max_memory"},
		{"spread of a sparse array", native, `const a = []; a.length = 2**32 - 1; [...a]`, killed, "max_memory"},
		{"apply with a huge argument list", native, `Math.max.apply(null, {length: 2**32 - 1})`, killed, "max_memory"},
		{"sort of a sparse array", native, `const a = []; a.length = 2**32 - 1; a.sort()`, killed, "max_memory"},
		{"BigInt past memory", native, `return 1n << (1n << 40n)`, killed, "max_memory"},
		{"BigInt folded by the compiler", native, `return 1n << (1n << 62n)`, killed, "max_memory"},
		{"growing-array memory bomb", codemode.Limits{MaxMemory: 256 << 20}, `const a = []; while (true) a.push(new ArrayBuffer(1 << 24), "x".repeat(1 << 10) + a.length)`, []string{codemode.KindMemory}, "max_memory"},
		{"catastrophic regular expression", codemode.Limits{}, `/^(?=(a+)+b)/.test("a".repeat(40))`, []string{codemode.KindLimit}, "regular expression"},
		{"catastrophic regular expression through replace", codemode.Limits{}, `"a".repeat(40).replace(/^(?=(a+)+b)/, "x")`, []string{codemode.KindLimit}, "regular expression"},
		{"JSON.stringify of a deep object", codemode.Limits{}, `let o = {}; for (let i = 0; i < 100000; i++) o = {o}; JSON.stringify(o)`, []string{codemode.KindLimit}, "nests more than"},
		{"JSON.parse of deep text", codemode.Limits{}, `JSON.parse("[".repeat(100000) + "]".repeat(100000))`, []string{codemode.KindLimit}, "JSON.parse"},
		{"nested parentheses", codemode.Limits{MaxCodeSize: 1 << 20}, strings.Repeat("(", 200000) + "1" + strings.Repeat(")", 200000), []string{codemode.KindLimit}, "nests brackets"},
		{"nested parentheses in eval", native, `eval("(".repeat(1e6) + "1" + ")".repeat(1e6))`, []string{codemode.KindStack, codemode.KindTimeout, codemode.KindMemory}, "stack"},
		{"nested groups in a RegExp", native, `new RegExp("(".repeat(1e6) + ")".repeat(1e6))`, []string{codemode.KindException, codemode.KindStack, codemode.KindTimeout, codemode.KindMemory}, "Invalid regular expression"},
		{"code over max_code_size", codemode.Limits{MaxCodeSize: 100}, strings.Repeat("1;", 100), []string{codemode.KindLimit}, "max_code_size"},
		{"promise storm", short, `for (let i = 0; ; i++) Promise.resolve(i).then(() => {})`, []string{codemode.KindTimeout}, "timeout"},
		{"timer storm", codemode.Limits{}, `for (let i = 0; i < 20000; i++) setTimeout(() => {}, 1000)`, []string{codemode.KindLimit}, "timers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.name == "Float64Array" && racetest.Enabled {
				t.Skip("untouched pages past max_memory are stopped by the address-space cap, which a worker built with the race detector has not")
			}
			res := codemodetest.Run(t, tt.limits, tt.code)
			if res.Err == nil || !slices.Contains(tt.kinds, res.Err.Kind) {
				t.Fatalf("want one of %v, got %v (value %s)", tt.kinds, res.Err, res.Value)
			}
			if res.Err.Kind == tt.kinds[0] && !strings.Contains(res.Err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", res.Err.Error(), tt.msg)
			}
			codemodetest.Healthy(t)
		})
	}
}

func TestConsoleOutputIsCapped(t *testing.T) {
	res := codemodetest.Run(t, codemode.Limits{}, `for (let i = 0; i < 10000; i++) console.log("line", i); return "done"`)
	codemodetest.WantValue(t, res, `"done"`)
	if len(res.Text) > codemode.DefaultMaxOutput {
		t.Errorf("text is %d bytes, over max_output", len(res.Text))
	}
	if !strings.Contains(res.Text, "more console line(s)") || !strings.Contains(res.Text, `Result:`+"\n"+`"done"`) {
		t.Errorf("no cut marker or no result:\n%s", res.Text[len(res.Text)-400:])
	}
}

func TestLargeResultIsCut(t *testing.T) {
	res := codemodetest.Run(t, codemode.Limits{MaxOutput: 4096}, `return "x".repeat(100000)`)
	if res.Err != nil || len(res.Text) > 4096 || !strings.Contains(res.Text, "max_output") {
		t.Fatalf("%d bytes: %s", len(res.Text), res.Text[len(res.Text)-300:])
	}
}

func TestBusy(t *testing.T) {
	r := codemodetest.Runner(codemode.Limits{MaxConcurrent: 1, Timeout: 2 * time.Second})
	var wg sync.WaitGroup
	wg.Add(1)
	started := make(chan struct{})
	b := codemode.Binding{Name: "api", Tools: map[string]string{"wait": "wait"}, Call: func(ctx context.Context, _ string, _ []byte) (codemode.Answer, error) {
		close(started)
		time.Sleep(200 * time.Millisecond)
		return codemode.Answer{Value: []byte(`1`)}, nil
	}}
	go func() {
		defer wg.Done()
		r.Run(context.Background(), `return await api.wait()`, []codemode.Binding{b})
	}()
	<-started
	res := r.Run(context.Background(), `return 1`, nil)
	codemodetest.WantError(t, res, codemode.KindBusy, "max_concurrent")
	wg.Wait()
	codemodetest.WantValue(t, r.Run(context.Background(), `return 2`, nil), `2`)
}

func TestCanceledContextStopsTheExecution(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res := codemodetest.Runner(codemode.Limits{}).Run(ctx, `while (true) {}`, nil)
	codemodetest.WantError(t, res, codemode.KindTimeout, "canceled")
}

// workerProcess marks the goroutines that look after a worker process
// (its start, its pipes, its reaping): the test pool starts and replaces
// workers when it will, each with its own.
var workerProcess = []string{"codemode/worker.(*Pool).start", "codemode/worker.(*process)", "codemode/worker.startProcess", "os/exec.", "os.(*Process)"}

// TestNoLeaks runs many executions, some with calls left running, and
// checks that goroutines come back to where they started.
func TestNoLeaks(t *testing.T) {
	before := len(proctest.Working(workerProcess...))
	b := &codemodetest.Echo{Delay: 5 * time.Millisecond}
	r := codemodetest.Runner(codemode.Limits{})
	for i := 0; i < 200; i++ {
		r.Run(context.Background(), `api.echo({}); setTimeout(() => {}, 10000); return 1`, []codemode.Binding{b.Binding("api")})
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(proctest.Working(workerProcess...)) > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if working := proctest.Working(workerProcess...); len(working) > before+2 {
		t.Fatalf("%d goroutines before, %d after:\n%s", before, len(working), strings.Join(working, "\n\n"))
	}
}

func TestErrorIsAnError(t *testing.T) {
	var err error = &codemode.Error{Kind: codemode.KindLimit, Message: "m"}
	var e *codemode.Error
	if !errors.As(err, &e) || e.Error() != "LimitError: m" {
		t.Fatal(err)
	}
}

func TestUnavailableBackend(t *testing.T) {
	var got []string
	b := codemode.Binding{Name: "later", Unavailable: "connection refused", Call: func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
		got = append(got, tool+string(args))
		if tool == "up" {
			return codemode.Answer{Value: []byte(`"back"`)}, nil
		}
		return codemode.Answer{}, errors.New("unavailable: connection refused")
	}}
	// Turning it into a string, awaiting or logging it calls no tool.
	res := codemodetest.Run(t, codemode.Limits{}, `let m; try { await later.down({}) } catch (e) { m = e.message }
console.log(later); const same = await later;
return [await later.up({a: 1}), m, typeof later.then, String(later), `+"`${later}`"+`, same === later]`, b)
	codemodetest.WantValue(t, res, `["back","later.down failed: unavailable: connection refused","undefined","[backend later]","[backend later]",true]`)
	if strings.Join(got, " ") != `down{} up{"a":1}` {
		t.Errorf("calls %v", got)
	}
}
