package declarations

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/caddy-mcp/caddy-mcp/internal/fuzzing"
)

// Run longer with, for example:
//
//	go test ./codemode/declarations -run '^$' -fuzz '^FuzzDeclarations$' -fuzztime 5m

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
// limits in declarations.go and the length of the names and descriptions; it is
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
		first := Tool{Name: tool, Ident: idents[0], Description: desc, InputSchema: input, OutputSchema: output}
		if rawIdent {
			// A caller that forgot to sanitize must not be able to inject.
			first.Ident = tool
		}
		backends := []Backend{
			{Name: backend, Description: desc, Tools: []Tool{
				first,
				// The same schemas swapped, and names that collide once
				// sanitized, so output type names must be kept apart.
				{Name: tool + "-2", Ident: idents[1], Description: desc, InputSchema: output, OutputSchema: input},
				{Name: tool, Ident: idents[2], InputSchema: input, OutputSchema: input},
			}},
			{Name: backend, Tools: []Tool{{Name: tool, Ident: idents[0], InputSchema: output, OutputSchema: output}}},
		}
		var src, again string
		fuzzing.Within(t, 10*time.Second, "Declarations", func() {
			src = Render(backends)
			again = Render(backends)
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
