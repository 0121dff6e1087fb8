package sandbox

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// maxNesting bounds how deeply brackets may nest in the code. goja's parser
// and compiler recurse per level, and 200,000 nested parentheses take
// seconds to compile; no real program comes near this bound.
const maxNesting = 256

// scriptName is the file name in stack traces and syntax errors.
const scriptName = "code"

// Wrappers: the code becomes the body of an async function, so top-level
// await and return work. Each wrapper puts the code on lines of its own,
// so columns are unchanged and lines shift by a constant.
var (
	bodyWrap  = wrapper{prefix: "(async () => {\n", suffix: "\n})()", lines: 1}
	arrowWrap = wrapper{prefix: "(async () => {\nreturn (\n", suffix: "\n)();\n})()", lines: 2}
)

type wrapper struct {
	prefix, suffix string
	lines          int
}

// script is the model's code, compiled and ready to run.
type script struct {
	program *goja.Program
	wrap    wrapper
	lines   int // lines of the model's code
	// sm maps positions of esbuild's output back to its input, after a
	// TypeScript transform; nil for plain JavaScript.
	sm *sourcemap.Consumer
}

// wholeArrow matches code that is, as a whole, an async arrow function.
var wholeArrow = regexp.MustCompile(`^async\s*(\([^)]*\)|[A-Za-z_$][\w$]*)\s*(:[^=]*)?=>`)

// prepare turns the model's code into a program. Plain JavaScript is
// parsed by goja directly; only code that does not parse goes through
// esbuild's TypeScript transform.
func prepare(code string) (*script, error) {
	code = stripFences(code)
	var statements []int
	if err := scanCode(code, func(i int) {
		if moduleKeyword(code[i:]) {
			statements = append(statements, i)
		}
	}); err != nil {
		return nil, err
	}
	s, err := compile(code)
	if err == nil || len(statements) == 0 {
		return s, err
	}
	// Module syntax cannot be in a function body. What TypeScript only
	// uses for types goes; anything else is explained.
	stripped, merr := stripModuleSyntax(code, statements)
	if merr != nil {
		return nil, merr
	}
	return compile(stripped)
}

// compile wraps the code and compiles it: as a whole async arrow
// function, if it looks like one, else as the body of one.
func compile(code string) (*script, error) {
	wraps := []wrapper{bodyWrap}
	if wholeArrow.MatchString(code) {
		wraps = []wrapper{arrowWrap, bodyWrap}
	}
	var err error
	for _, w := range wraps {
		var s *script
		if s, err = compileWrapped(code, w); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func compileWrapped(code string, w wrapper) (*script, error) {
	src := w.prefix + code + w.suffix
	s := &script{wrap: w, lines: strings.Count(code, "\n") + 1}
	ast, jsErr := parser.ParseFile(nil, scriptName, src, 0, parser.WithDisableSourceMaps)
	// What goja cannot parse (TypeScript, async generators) goes through
	// esbuild, which strips the types and lowers the rest.
	if jsErr != nil {
		res := api.Transform(src, api.TransformOptions{
			Loader:     api.LoaderTS,
			Sourcemap:  api.SourceMapExternal,
			Sourcefile: scriptName,
			Target:     api.ES2022,
			// goja has neither async generators nor for await.
			Supported: map[string]bool{"async-generator": false, "for-await": false},
			Format:    api.FormatDefault,
		})
		if len(res.Errors) > 0 {
			return nil, s.esbuildError(res.Errors[0])
		}
		sm, err := sourcemap.Parse(scriptName+".map", res.Map)
		if err != nil {
			return nil, &codemode.Error{Kind: codemode.KindSyntax, Message: "the TypeScript transform gave an unreadable source map: " + err.Error()}
		}
		s.sm = sm
		ast, jsErr = parser.ParseFile(nil, scriptName, string(res.Code), 0, parser.WithDisableSourceMaps)
		if jsErr != nil {
			return nil, s.parseError(jsErr)
		}
	}
	prog, err := goja.CompileAST(ast, false)
	if err != nil {
		return nil, s.parseError(err)
	}
	s.program = prog
	return s, nil
}

func (s *script) esbuildError(m api.Message) error {
	msg := m.Text
	if m.Location != nil {
		line, col := m.Location.Line-s.wrap.lines, m.Location.Column+1
		if line < 1 {
			line = 1
		}
		if line > 0 {
			msg = fmt.Sprintf("%s (line %d, column %d)", msg, line, col)
		}
	}
	return &codemode.Error{Kind: codemode.KindSyntax, Message: msg}
}

func (s *script) parseError(err error) error {
	var list parser.ErrorList
	var one *parser.Error
	var cse *goja.CompilerSyntaxError
	switch {
	case errors.As(err, &list) && len(list) > 0:
		one = list[0]
	case errors.As(err, &one):
	case errors.As(err, &cse):
		if cse.File == nil {
			return &codemode.Error{Kind: codemode.KindSyntax, Message: cse.Message}
		}
		pos := cse.File.Position(cse.Offset)
		line, col := s.position(pos.Line, pos.Column)
		return &codemode.Error{Kind: codemode.KindSyntax, Message: fmt.Sprintf("%s (line %d, column %d)", cse.Message, line, col)}
	default:
		return &codemode.Error{Kind: codemode.KindSyntax, Message: err.Error()}
	}
	line, col := s.position(one.Position.Line, one.Position.Column)
	msg := fmt.Sprintf("%s (line %d, column %d)", one.Message, line, col)
	if strings.Contains(one.Message, "reserved word") {
		msg += "; import and require are not available: the sandbox has no modules, only the backend globals"
	}
	return &codemode.Error{Kind: codemode.KindSyntax, Message: msg}
}

// position maps a 1-based line and column of the compiled program to the
// model's own code.
func (s *script) position(line, col int) (int, int) {
	if s.sm != nil {
		if _, _, l, c, ok := s.sm.Source(line, col-1); ok {
			line, col = l, c+1
		}
	}
	line -= s.wrap.lines
	if line < 1 {
		line, col = 1, 1
	}
	return line, col
}

// stackFrame matches a frame of a goja stack trace: "at name (code:3:5(12))"
// or "at code:3:5(12)".
var stackFrame = regexp.MustCompile(`^at (?:(.*) \()?` + scriptName + `:(\d+):(\d+)(?:\(\d+\))?\)?$`)

// mapStack rewrites the frames of a stack trace to positions in the model's
// code and drops the frames of the wrapper and of built-ins.
func (s *script) mapStack(stack string) string {
	var out []string
	for _, l := range strings.Split(stack, "\n") {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "at ") {
			if len(out) == 0 && t != "" {
				out = append(out, t) // the message line of an error's stack
			}
			continue
		}
		m := stackFrame.FindStringSubmatch(t)
		if m == nil {
			continue // a native function, or the sandbox's own script
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		if s.sm != nil {
			if _, _, l, c, ok := s.sm.Source(line, col-1); ok {
				line, col = l, c+1
			}
		}
		line -= s.wrap.lines
		if line < 1 || line > s.lines {
			continue // the wrapper around the code
		}
		name := m[1]
		if name == "" {
			out = append(out, fmt.Sprintf("    at line %d, column %d", line, col))
		} else {
			out = append(out, fmt.Sprintf("    at %s (line %d, column %d)", name, line, col))
		}
	}
	return strings.Join(out, "\n")
}

// stripFences removes a Markdown code fence around the whole code.
func stripFences(code string) string {
	t := strings.TrimSpace(code)
	if !strings.HasPrefix(t, "```") {
		return code
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return code
	}
	body := t[nl+1:]
	body = strings.TrimRight(body, " \t\r\n")
	body = strings.TrimSuffix(body, "```")
	return body
}

// checkNesting refuses code whose brackets nest deeper than maxNesting,
// skipping string literals, template text and comments. A template's ${...}
// counts as a level, and what is inside it is counted too.
func checkNesting(code string) error { return scanCode(code, nil) }

// scanCode is checkNesting that also calls lineStart, if not nil, with
// the index of each line's first character of code outside any bracket,
// string, template or comment: where a top-level statement may start.
func scanCode(code string, lineStart func(i int)) error {
	// stack holds, for each open bracket, whether it is a template's ${.
	var stack []bool
	line := 1
	atLineStart := true
	tooDeep := func() error {
		return &codemode.Error{Kind: codemode.KindLimit, Message: fmt.Sprintf("the code nests brackets more than %d levels deep (line %d)", maxNesting, line)}
	}
	// template scans template text from i (after a backtick or the } of a
	// ${...}) and returns the index of the closing backtick or of the $ of
	// a ${, and whether it found a ${.
	template := func(i int) (int, bool) {
		for ; i < len(code); i++ {
			switch code[i] {
			case '\\':
				i++
			case '\n':
				line++
			case '`':
				return i, false
			case '$':
				if i+1 < len(code) && code[i+1] == '{' {
					return i, true
				}
			}
		}
		return i, false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if atLineStart && c != '\n' && c != ' ' && c != '\t' && c != '\r' {
			atLineStart = false
			if lineStart != nil && len(stack) == 0 && c != '/' {
				lineStart(i)
			}
		}
		switch c {
		case '\n':
			line++
			atLineStart = true
		case '(', '[', '{':
			if stack = append(stack, false); len(stack) > maxNesting {
				return tooDeep()
			}
		case ')', ']', '}':
			if len(stack) == 0 {
				continue
			}
			inTemplate := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if inTemplate && c == '}' {
				var open bool
				if i, open = template(i + 1); open {
					i++ // at the {
					if stack = append(stack, true); len(stack) > maxNesting {
						return tooDeep()
					}
				}
			}
		case '`':
			var open bool
			if i, open = template(i + 1); open {
				i++
				if stack = append(stack, true); len(stack) > maxNesting {
					return tooDeep()
				}
			}
		case '"', '\'':
			for i++; i < len(code) && code[i] != c && code[i] != '\n'; i++ {
				if code[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(code) && code[i+1] == '/' {
				for i < len(code) && code[i] != '\n' {
					i++
				}
				line++
				atLineStart = true
			} else if i+1 < len(code) && code[i+1] == '*' {
				end := strings.Index(code[i+2:], "*/")
				if end < 0 {
					return nil
				}
				line += strings.Count(code[i:i+2+end], "\n")
				i += end + 3
			}
		}
	}
	return nil
}
