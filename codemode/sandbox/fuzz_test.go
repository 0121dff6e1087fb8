package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
	"github.com/caddy-mcp/caddy-mcp/internal/fuzzing"
)

// Run longer with, for example:
//
//	go test ./codemode -run '^$' -fuzz '^FuzzSandboxCode$' -fuzztime 5m

// fuzzBinding is an in-process backend: echo answers its arguments, fail
// throws a backend error, slow waits until the execution ends.
func fuzzBinding() codemode.Binding {
	return codemode.Binding{
		Name:  "api",
		Tools: map[string]string{"echo": "echo", "fail": "fail", "slow": "slow", "get_weather": "get-weather"},
		Call: func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
			switch tool {
			case "fail":
				return codemode.Answer{}, &codemode.ToolError{Message: "the backend says no"}
			case "slow":
				<-ctx.Done()
				return codemode.Answer{}, ctx.Err()
			}
			return codemode.Answer{Value: []byte(fmt.Sprintf(`{"tool":%q,"args":%s}`, tool, args))}, nil
		},
	}
}

// FuzzSandboxCode runs fuzzed code in the sandbox with a 200ms timeout.
// Invariants: no panic; Run returns within the timeout plus the grace it
// gives native code (sandbox.GraceAfterTimeout) plus a margin for a loaded
// machine, which covers parsing too; an error has one of the documented
// kinds; a returned value is JSON; the text stays within max_output plus a
// small fixed margin for its markers; and a normal execution works after.
func FuzzSandboxCode(f *testing.F) {
	seeds := []string{
		`return 1 + 1`,
		`const { orders } = await api.echo({status: "delivered"}); console.log("n", 1); return orders`,
		"```ts\ninterface X { a: number }\nconst x: X = { a: 1 };\nreturn x.a\n```",
		`async () => { const r = await Promise.all([1, 2, 3].map(i => api.echo({i}))); return r.map(x => x.args.i) }`,
		`async (): Promise<number> => 7`,
		`try { await api.fail({}) } catch (e) { return [e.message, e.backend, e.tool] }`,
		`await down.anything({})`,
		`await api.slow({})`,
		`return await api.get_weather({city: "Paris"})`,
		`const a = {}; a.self = a; await api.echo(a)`,
		`for (let i = 0; i < 50; i++) await api.echo({i})`,
		`while (true) {}`,
		`for (;;) { try { while (true) {} } catch (e) {} finally { continue } }`,
		`while (true) { await null }`,
		`await new Promise(r => setTimeout(r, 1e9))`,
		`for (let i = 0; ; i++) Promise.resolve(i).then(() => {})`,
		`for (let i = 0; i < 20000; i++) setTimeout(() => {}, 1000)`,
		`function f(n) { return f(n + 1) + 1 } f(0)`,
		`"x".repeat(2**40)`,
		`"x".padStart(2**40, "ab")`,
		`const s = "a".repeat(1 << 20); s.replaceAll("a", "b".repeat(1 << 20))`,
		`new ArrayBuffer(2**40)`,
		`new Float64Array(2**30)`,
		`new ([].constructor)(2**32 - 1)`,
		`const a = []; a.length = 2**32 - 1; a.sort()`,
		`Math.max.apply(null, {length: 2**32 - 1})`,
		`Reflect.apply(Math.max, null, {length: 2**32 - 1})`,
		`/^(?=(a+)+b)/.test("a".repeat(40))`,
		`let o = {}; for (let i = 0; i < 100000; i++) o = {o}; JSON.stringify(o)`,
		`JSON.parse("[".repeat(100000) + "]".repeat(100000))`,
		strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300),
		`eval("(".repeat(30000) + "1" + ")".repeat(30000))`,
		`new Function("return " + "[".repeat(30000) + "]".repeat(30000))`,
		"return 5;\n//# sourceMappingURL=file:///dev/zero",
		"return eval('6//# sourceMappingURL=file:///dev/zero')",
		`for (let i = 0; i < 100000; i++) console.log("line " + i + " " + "é".repeat(50))`,
		`console.log("x".repeat(1 << 20)); return "y".repeat(1 << 20)`,
		`return "\u2028\ud800" + String.fromCharCode(0xdc00)`,
		`return {toJSON() { throw new Error("no") }}`,
		`return {get x() { while (true) {} }}`,
		`throw {toString() { while (true) {} }}`,
		`throw Object.create(null)`,
		`Promise.reject(new Error("unhandled")); return 1`,
		`return constructor.constructor("return this")() === globalThis`,
		`return [typeof fetch, typeof require, typeof process, typeof Deno]`,
		`const fs = await import('fs')`,
		`foo(;`,
		`const a: number = ;`,
		`}`,
		"\x00\xff",
		``,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	limits := codemode.Limits{Timeout: 200 * time.Millisecond, MaxOutput: 4096, MaxToolCalls: 20}
	r := codemodetest.Runner(limits)
	healthRunner := codemodetest.Runner(codemode.Limits{Timeout: 5 * time.Second})
	bindings := []codemode.Binding{fuzzBinding(), {Name: "down", Tools: map[string]string{}, Unavailable: "connection refused",
		Call: func(context.Context, string, []byte) (codemode.Answer, error) {
			return codemode.Answer{}, fmt.Errorf("connection refused")
		}}}
	kinds := map[string]bool{codemode.KindSyntax: true, codemode.KindException: true, codemode.KindTimeout: true, codemode.KindLimit: true,
		codemode.KindMemory: true, codemode.KindStack: true, codemode.KindBusy: true}
	// Parsing is outside the timeout; on a loaded machine with the race
	// detector it takes a while for the largest inputs.
	const margin = 2 * time.Second
	deadline := limits.Timeout + sandbox.GraceAfterTimeout + margin

	f.Fuzz(func(t *testing.T, code string) {
		var res *codemode.Result
		start := time.Now()
		fuzzing.Within(t, deadline+10*time.Second, "Run", func() {
			res = r.Run(context.Background(), code, bindings)
		})
		if d := time.Since(start); d > deadline {
			t.Errorf("Run took %s, want at most %s", d, deadline)
		}
		if res.Err != nil && !kinds[res.Err.Kind] {
			t.Errorf("unknown error kind %q: %v", res.Err.Kind, res.Err)
		}
		if res.Err == nil && res.Value != nil && !json.Valid(res.Value) {
			t.Errorf("the value is not JSON: %q", res.Value)
		}
		if len(res.Text) > limits.MaxOutput+512 {
			t.Errorf("the text is %d bytes, max_output is %d", len(res.Text), limits.MaxOutput)
		}
		if res.ToolCalls > limits.MaxToolCalls {
			t.Errorf("%d tool calls, max_tool_calls is %d", res.ToolCalls, limits.MaxToolCalls)
		}
		healthy := healthRunner.Run(context.Background(), `return [1, 2, 3].map(x => x * 2).join("-")`, nil)
		if healthy.Err != nil || string(healthy.Value) != `"2-4-6"` {
			t.Fatalf("a normal execution fails after this one: %v %s", healthy.Err, healthy.Value)
		}
	})
}
