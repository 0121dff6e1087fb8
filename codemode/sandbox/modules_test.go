package sandbox_test

import (
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

func TestModuleSyntax(t *testing.T) {
	const noModules = "the code is not a module but the body of an async function"
	for _, tt := range []struct {
		name, code string
		want       string   // the value, or
		wantErr    []string // what the SyntaxError says
	}{
		{name: "import type", code: "import type { Foo } from \"foo\"\nconst x: Foo = 1; return x", want: `1`},
		{name: "default and namespace type imports",
			code: "import type Foo from 'foo';\nimport type * as M from \"m\"\nconst f: Foo = 2; return f", want: `2`},
		{name: "inline type specifiers over lines",
			code: "import {\n  type A,\n  type B as C,\n} from \"m\";\nconst a: A | C = 3; return a", want: `3`},
		{name: "exported type declarations",
			code: "export type Item = { id: number };\nexport interface Page { items: Item[] }\nexport declare const v: number;\nconst p: Page = {items: [{id: 4}]}; return p.items[0].id",
			want: `4`},
		{name: "type-only export lists", code: "export type { Item } from './items';\nexport type { Page };\nexport {};\nreturn 5", want: `5`},
		{name: "a template holding an import line is not a module",
			code: "const s = `\nimport x from 'y'\n`; return s.trim()", want: `"import x from 'y'"`},
		{name: "positions stay where they were",
			code: "import type { A } from 'a'\nconst x: A = 1;\nreturn x + * 2", wantErr: []string{"(line 3, column 12)"}},
		{name: "export default function",
			code: "export default async function main() {\n  return 1\n}", wantErr: []string{"export is not available (line 1)", noModules}},
		{name: "value import", code: "import fs from 'fs'\nreturn fs.readFileSync('x')", wantErr: []string{"import is not available (line 1)", noModules}},
		{name: "value export after a line", code: "const a = 1;\nexport const b = 2;\nreturn a", wantErr: []string{"export is not available (line 2)"}},
		{name: "a value import of a default export named type",
			code: "import type from './api'\nreturn typeof type", wantErr: []string{"import is not available (line 1)", noModules}},
		{name: "value import after a type import",
			code: "import type { A } from 'a'\n// the file system\nimport { readFile } from 'fs'\nreturn 1", wantErr: []string{"import is not available (line 3)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := codemodetest.Run(t, codemode.Limits{}, tt.code)
			if tt.wantErr == nil {
				codemodetest.WantValue(t, res, tt.want)
				return
			}
			codemodetest.WantError(t, res, codemode.KindSyntax, tt.wantErr...)
		})
	}
}

// TestModuleKeyword: only the keywords of import and export statements
// count, not dynamic import or names that start with the keyword.
func TestModuleKeyword(t *testing.T) {
	for text, want := range map[string]bool{
		"import x from 'y'": true, "import{a}from'b'": true, "import 'side-effect'": true, "import * as m from 'm'": true,
		"export default 1": true, "export{}": true, "export *": true,
		"import('x')": false, "import.meta": false, "imported = 1": false, "exports.x = 1": false, "import": false,
	} {
		if got := sandbox.ModuleKeyword(text); got != want {
			t.Errorf("sandbox.ModuleKeyword(%q) = %v, want %v", text, got, want)
		}
	}
}
