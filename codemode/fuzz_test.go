package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/fuzzing"
	"github.com/evanw/esbuild/pkg/api"
)

// Run longer with, for example:
//
//	go test ./codemode -run '^$' -fuzz '^FuzzDeclarations$' -fuzztime 5m
//	go test ./codemode -run '^$' -fuzz '^FuzzSandboxCode$' -fuzztime 5m

// typeScriptProblems returns esbuild's errors and warnings for src as
// TypeScript, and any JavaScript it compiles to: declarations compile to
// nothing, so code that survives escaped a comment or a string.
func typeScriptProblems(src string) []string {
	res := api.Transform(src, api.TransformOptions{Loader: api.LoaderTS, LegalComments: api.LegalCommentsNone})
	var out []string
	for _, m := range append(res.Errors, res.Warnings...) {
		where := ""
		if m.Location != nil {
			where = fmt.Sprintf(" at %d:%d %q", m.Location.Line, m.Location.Column, m.Location.LineText)
		}
		out = append(out, m.Text+where)
	}
	if code := strings.TrimSpace(string(res.Code)); code != "" {
		out = append(out, "compiles to JavaScript: "+code)
	}
	return out
}

// FuzzDeclarations renders declarations from fuzzed schemas, tool names,
// backend names and descriptions. Invariants: no panic, no hang; the same
// input renders the same text; the output stays within a bound set by the
// limits in declare.go and the length of the names and descriptions; it is
// TypeScript that esbuild parses with no error or warning and that
// compiles to no JavaScript.
func FuzzDeclarations(f *testing.F) {
	seeds := []struct {
		input, output       string
		tool, backend, desc string
		rawIdent            bool
	}{
		{`{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. Paris"},"units":{"type":"string","enum":["metric","imperial"]}},"required":["city"]}`,
			`{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"]}`,
			"get_weather", "weather", "Current weather for a city.", false},
		{`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
			``, "write_file", "fs", "Create a new file or overwrite it.", false},
		{`{"type":"object","$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`,
			`{"$ref":"#"}`, "tree", "t", "", false},
		{`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer","minimum":0},{"const":null}]},"w":{"anyOf":[{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]},{"type":"boolean"}]},"x":{"allOf":[{"type":"object","properties":{"a":{}}},{"properties":{"b":{"type":"string"}}}]}}}`,
			`{"type":["object","null"],"patternProperties":{"^x":{"type":"string"}},"additionalProperties":{"type":"number"}}`,
			"get-x.y", "api", "multi\nline\r\ndescription", false},
		{`{"type":"object","description":"*/ globalThis.pwned = 1; /*","properties":{"*/ x":{"type":"string","description":"*/ pwned() //\u2028*/","format":"*/","pattern":"*/","default":"*/","enum":["*/","\u2029"]}}}`,
			`{"type":"object","properties":{"a":{"const":"*/ y"}}}`,
			"*/ globalThis.pwned = 1; /*", "bad name = 1; declare const z", "*/ x /*", false},
		{`{"type":"object"}`, `{"type":"object"}`, "x(): void; } ; globalThis.pwned = 1; declare const y: {", "svc", "", true},
		{`{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{},"":{},"0":{},"a-b":{},"$":{},"'\"":{}}}`, ``, "delete", "api", "", false},
		{`{"type":"object","properties":{"d":{"$ref":"#/definitions/a"}},"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}}}`, `{"$ref":"#/nope"}`, "loop", "api", "", false},
		{`{"type":"object","properties":{"n":{"type":"number","default":1e400,"examples":[1,2]},"s":{"type":"string","minLength":-1,"maxLength":1e9,"pattern":"[\\u0000-\\u001f]"}}}`, `true`, "n", "api", "", false},
		{`{"items":` + strings.Repeat(`{"items":`, 300) + `{}` + strings.Repeat(`}`, 301), `[` + strings.Repeat(`[`, 300) + strings.Repeat(`]`, 301), "deep", "api", "", false},
		{`not json`, `{"type":"object","properties":{"a"`, "", "", "", false},
		{``, ``, "", "", "", true},
		{`null`, `false`, "\xff\xfe", "\u00e9t\u00e9", "\x00", true},
	}
	for _, s := range seeds {
		f.Add([]byte(s.input), []byte(s.output), s.tool, s.backend, s.desc, s.rawIdent)
	}
	// Every tool of the golden inputs: schemas of real MCP servers.
	files, _ := filepath.Glob(filepath.Join("testdata", "declarations", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var in goldenInput
		if err := json.Unmarshal(data, &in); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		backend := strings.TrimSuffix(filepath.Base(file), ".json")
		for _, tool := range in.Tools {
			f.Add([]byte(tool.InputSchema), []byte(tool.OutputSchema), tool.Name, backend, tool.Description, false)
		}
		for _, b := range in.Backends {
			for _, tool := range b.Tools {
				f.Add([]byte(tool.InputSchema), []byte(tool.OutputSchema), tool.Name, b.Name, b.Description, false)
			}
		}
	}
	f.Fuzz(func(t *testing.T, input, output []byte, tool, backend, desc string, rawIdent bool) {
		idents, _ := AssignNames([]string{tool, tool + "-2", tool})
		first := ToolDecl{Name: tool, Ident: idents[0], Description: desc, InputSchema: input, OutputSchema: output}
		if rawIdent {
			// A caller that forgot to sanitize must not be able to inject.
			first.Ident = tool
		}
		backends := []BackendDecl{
			{Name: backend, Description: desc, Tools: []ToolDecl{
				first,
				// The same schemas swapped, and names that collide once
				// sanitized, so output type names must be kept apart.
				{Name: tool + "-2", Ident: idents[1], Description: desc, InputSchema: output, OutputSchema: input},
				{Name: tool, Ident: idents[2], InputSchema: input, OutputSchema: input},
			}},
			{Name: backend, Tools: []ToolDecl{{Name: tool, Ident: idents[0], InputSchema: output, OutputSchema: output}}},
		}
		var src, again string
		fuzzing.Within(t, 10*time.Second, "Declarations", func() {
			src = Declarations(backends)
			again = Declarations(backends)
		})
		if src != again {
			t.Fatal("Declarations is not deterministic")
		}
		// Four methods, each with an input type, an output type and
		// @param lines, each bounded; names and descriptions may be
		// escaped, at most six bytes for one.
		limit := 4*4*declMaxTypeSize + 6*(8*len(tool)+2*len(backend)+4*len(desc)) + 4096
		if len(src) > limit {
			t.Fatalf("declarations are %d bytes, want at most %d", len(src), limit)
		}
		if problems := typeScriptProblems(src); len(problems) > 0 {
			t.Fatalf("not clean TypeScript: %s\n%s", strings.Join(problems, "\n"), src)
		}
	})
}

// fuzzBinding is an in-process backend: echo answers its arguments, fail
// throws a backend error, slow waits until the execution ends.
func fuzzBinding() Binding {
	return Binding{
		Name:  "api",
		Tools: map[string]string{"echo": "echo", "fail": "fail", "slow": "slow", "get_weather": "get-weather"},
		Call: func(ctx context.Context, tool string, args []byte) (Answer, error) {
			switch tool {
			case "fail":
				return Answer{}, &ToolError{Message: "the backend says no"}
			case "slow":
				<-ctx.Done()
				return Answer{}, ctx.Err()
			}
			return Answer{Value: []byte(fmt.Sprintf(`{"tool":%q,"args":%s}`, tool, args))}, nil
		},
	}
}

// FuzzSandboxCode runs fuzzed code in the sandbox with a 200ms timeout.
// Invariants: no panic; Run returns within the timeout plus the grace it
// gives native code (graceAfterTimeout) plus a margin for a loaded
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
	limits := Limits{Timeout: 200 * time.Millisecond, MaxOutput: 4096, MaxToolCalls: 20}
	r := NewRunner(limits)
	healthRunner := NewRunner(Limits{Timeout: 5 * time.Second})
	bindings := []Binding{fuzzBinding(), {Name: "down", Tools: map[string]string{}, Unavailable: "connection refused",
		Call: func(context.Context, string, []byte) (Answer, error) {
			return Answer{}, fmt.Errorf("connection refused")
		}}}
	kinds := map[string]bool{KindSyntax: true, KindException: true, KindTimeout: true, KindLimit: true,
		KindMemory: true, KindStack: true, KindBusy: true}
	// Parsing is outside the timeout; on a loaded machine with the race
	// detector it takes a while for the largest inputs.
	const margin = 2 * time.Second
	deadline := limits.Timeout + graceAfterTimeout + margin

	f.Fuzz(func(t *testing.T, code string) {
		var res *Result
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
