package sandbox

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// Models write modules out of habit: `import type { Issue } from "./api"`
// above the code, or the code as `export default async function main()`.
// The code is the body of an async function, where neither parses. What
// TypeScript only uses for types is blanked out (esbuild drops the rest of
// a type declaration); any other import or export gets an error that says
// what the code is instead.

// moduleKeyword reports whether text starts with the keyword of an import
// or export statement (not import(...) or import.meta).
func moduleKeyword(text string) bool {
	for _, kw := range []string{"import", "export"} {
		if rest, ok := strings.CutPrefix(text, kw); ok {
			return rest != "" && (rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' ||
				rest[0] == '{' || rest[0] == '*' || rest[0] == '"' || rest[0] == '\'')
		}
	}
	return false
}

const moduleSpecifier = `\s*from\s*(?:"[^"\n]*"|'[^'\n]*')`

var (
	// Whole statements that only name types.
	typeOnlyStatement = []*regexp.Regexp{
		// import type X from "m"; import type { A, B } from "m"; import type * as M from "m"
		regexp.MustCompile(`^import\s+type\s+[^;"'` + "`" + `]*?` + moduleSpecifier + `\s*;?`),
		// import { type A, type B as C } from "m"
		regexp.MustCompile(`^import\s*\{(?:\s*type\s+[\w$]+(?:\s+as\s+[\w$]+)?\s*,?)+\s*\}` + moduleSpecifier + `\s*;?`),
		// export type { A, B }; export type { A } from "m"
		regexp.MustCompile(`^export\s+type\s*\{[^}]*\}(?:` + moduleSpecifier + `)?\s*;?`),
		// export {};
		regexp.MustCompile(`^export\s*\{\s*\}\s*;?`),
	}
	// `import type from "m"` imports a value: the default export, named type.
	defaultNamedType = regexp.MustCompile(`^import\s+type` + moduleSpecifier)
	// An export of a declaration esbuild drops: only the keyword goes.
	typeDeclarationExport = regexp.MustCompile(`^export\s+(?:type\s+[\w$]+\s*[=<]|interface\s|declare\s)`)
)

// stripModuleSyntax blanks the type-only import and export statements
// starting at the given offsets, keeping every line and column where it
// was, or returns an error for the first statement that is not one.
func stripModuleSyntax(code string, statements []int) (string, error) {
	b := []byte(code)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
next:
	for _, at := range statements {
		rest := code[at:]
		for _, re := range typeOnlyStatement {
			if m := re.FindStringIndex(rest); m != nil && !defaultNamedType.MatchString(rest) {
				blank(at, at+m[1])
				continue next
			}
		}
		if typeDeclarationExport.MatchString(rest) {
			blank(at, at+len("export"))
			continue
		}
		line := strings.Count(code[:at], "\n") + 1
		kw := rest[:len("import")]
		return "", &codemode.Error{Kind: codemode.KindSyntax, Message: fmt.Sprintf(
			"%s is not available (line %d): the code is not a module but the body of an async function. "+
				"Reach the backends through their globals (await <backend>.<tool>({...})), and return the result instead of exporting it",
			kw, line)}
	}
	return string(b), nil
}
