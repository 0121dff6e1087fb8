package upstream

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/itchyny/gojq"
)

// gojq's regular-expression built-ins (match, test, capture, scan,
// splits, sub, gsub) run as one native call that the filter's deadline
// cannot interrupt, and it is quadratic in the matches: each match's
// offset is counted from the start of the string again, and sub and
// gsub slice the whole string by characters once per match. gsub(","; ";")
// over 180 KB held a core for 15 s past a 2 s timeout. indices, index,
// rindex, contains and inside are quadratic natively too.
//
// So a filter runs with jqPrelude before it: definitions of the same
// names, which a filter's own definitions still shadow, whose work is
// done here. The matches of a regular expression are found one search
// at a time, with the deadline checked between searches and each search
// bounded (a string's length times the expression's size, within
// jqMaxRegexWork); offsets are counted as the matches go; sub and gsub
// build their results in Go as the matches go (jq's own joins strings
// with +=, a copy of the whole each time). The others run as gojq's own,
// once their inputs' sizes multiplied are within jqMaxWork. Results are
// gojq's, as a differential fuzz test holds.

// Bounds of the work one native call of a filter may do, so that it
// ends within a fraction of a second and the deadline is checked again.
const (
	// jqMaxRegexWork bounds one search: a string's bytes times its
	// regular expression's instructions (Go's matching is linear in
	// each).
	jqMaxRegexWork = 1 << 26
	// jqMaxWork bounds indices, index, rindex, contains and inside: the
	// sizes of their two inputs multiplied (values and string bytes).
	jqMaxWork = 1 << 24
	// jqMaxRegexps bounds the regular expressions a filter keeps
	// compiled (an expression may come from the answer).
	jqMaxRegexps = 256
)

// jqRunVar is the variable that carries a run's jqRun to the functions
// below.
const jqRunVar = "$__caddy_mcp_run"

// jqPrelude defines the built-ins above on the functions below. Each
// definition sees only those before it, so the _jq_ ones reach gojq's
// own.
const jqPrelude = `
def _jq_indices($i): indices($i);
def _jq_index($i): index($i);
def _jq_rindex($i): rindex($i);
def _jq_contains($b): contains($b);
def _jq_inside($b): inside($b);
def indices($i): _caddy_bound($i; "indices"; ` + jqRunVar + `) | _jq_indices($i);
def index($i): _caddy_bound($i; "index"; ` + jqRunVar + `) | _jq_index($i);
def rindex($i): _caddy_bound($i; "rindex"; ` + jqRunVar + `) | _jq_rindex($i);
def contains($b): _caddy_bound($b; "contains"; ` + jqRunVar + `) | _jq_contains($b);
def inside($b): _caddy_bound($b; "inside"; ` + jqRunVar + `) | _jq_inside($b);
def _match($re; $flags; $testing):
  if $testing == true then _caddy_test($re; $flags; ` + jqRunVar + `)
  else [_caddy_match($re; $flags; "match"; ` + jqRunVar + `)] end;
def match($re; $flags): _caddy_match($re; $flags; "match"; ` + jqRunVar + `);
def match($re): if $re | type == "array" then match($re[0]; $re[1]) else match($re; null) end;
def test($re; $flags): _caddy_test($re; $flags; ` + jqRunVar + `);
def test($re): if $re | type == "array" then test($re[0]; $re[1]) else test($re; null) end;
def capture($re; $flags): match($re; $flags) | .captures | _captures;
def capture($re): if $re | type == "array" then capture($re[0]; $re[1]) else capture($re; null) end;
def scan($re; $flags):
  match($re; $flags + "g") | if .captures == [] then .string else [.captures[].string] end;
def scan($re): scan($re; null);
def splits($re; $flags): . as $s |
  foreach (_caddy_match($re; $flags + "g"; "bytes"; ` + jqRunVar + `), null) as $m
    (null; {start: .next, end: $m.start, next: $m.end}) | _caddy_slice($s; .start; .end);
def splits($re): splits($re; null);
def split($re; $flags): [splits($re; $flags)];
def sub($re; str; $flags): . as $s |
  reduce _caddy_match($re; $flags; "bytes"; ` + jqRunVar + `) as $m
    (_caddy_splice("start"; $s);
      _caddy_splice("match"; $m.start)
      | reduce ($m.captures | _captures | str) as $x (.; _caddy_splice("add"; $x))
      | _caddy_splice("next"; $m.end))
  | _caddy_spliced;
def sub($re; str): sub($re; str; null);
def gsub($re; str; $flags): sub($re; str; $flags + "g");
def gsub($re; str): sub($re; str; "g");
`

// withPrelude puts jqPrelude's definitions before a filter's own, which
// shadow them.
func withPrelude(q *gojq.Query) *gojq.Query {
	prelude, err := gojq.Parse(jqPrelude + ".")
	if err != nil {
		panic("jq prelude: " + err.Error())
	}
	q.FuncDefs = append(prelude.FuncDefs, q.FuncDefs...)
	return q
}

// jqRun is what the functions of one run of a filter share: its context.
type jqRun struct{ ctx context.Context }

// runOf reads the run from a function's last argument.
func runOf(args []any) *jqRun {
	run, _ := args[len(args)-1].(*jqRun)
	if run == nil {
		return &jqRun{ctx: context.Background()}
	}
	return run
}

// jqRegexps compiles and keeps the regular expressions of one filter.
type jqRegexps struct {
	mu    sync.Mutex
	cache map[[2]string]*jqRegexp
}

// jqRegexp is one regular expression with what searching it needs.
type jqRegexp struct {
	re *regexp.Regexp
	// after finds a match that starts after a first character, which it
	// consumes: the search from a position with the character before it
	// as context (for ^, \b and the like), as Go's own next search would.
	after *regexp.Regexp
	// probe finds an empty match right after a character (gojq's rule:
	// jq reports an empty match that ends a non-empty one).
	probe *regexp.Regexp
	insts int // the size of the program, for the bound on work
}

// compile returns the expression re with jq's flags (g, i, m), as gojq
// reads them.
func (c *jqRegexps) compile(re, flags string) (*jqRegexp, error) {
	key := [2]string{re, flags}
	c.mu.Lock()
	r, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	if strings.ContainsFunc(flags, func(r rune) bool { return r != 'g' && r != 'i' && r != 'm' }) {
		return nil, fmt.Errorf("unsupported regular expression flag: %q", flags)
	}
	expr := re
	if strings.ContainsRune(flags, 'i') {
		expr = "(?i)" + expr
	}
	if strings.ContainsRune(flags, 'm') {
		expr = "(?s)" + expr
	}
	compiled, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %s", expr, err)
	}
	r = &jqRegexp{re: compiled, insts: programSize(expr)}
	// These wrap an expression that compiled; only one at the limit of
	// Go's program size fails to, and without after no search but the
	// first can be made.
	if r.after, err = regexp.Compile(`(?s:.)(?:` + expr + `)`); err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %s", expr, err)
	}
	r.probe, _ = regexp.Compile(`\A(?s:.)(?:` + expr + `)`)
	c.mu.Lock()
	if c.cache == nil || len(c.cache) >= jqMaxRegexps {
		c.cache = make(map[[2]string]*jqRegexp)
	}
	c.cache[key] = r
	c.mu.Unlock()
	return r, nil
}

// programSize is the number of instructions expr compiles to, as
// regexp.Compile makes them.
func programSize(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 1
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 1
	}
	return len(prog.Inst)
}

// costly is the error for a search of s past jqMaxRegexWork, or nil.
func (r *jqRegexp) costly(name string, s string) error {
	if (len(s)+1)*r.insts > jqMaxRegexWork {
		return fmt.Errorf("%s: searching %d bytes with a regular expression of %d instructions is more work than a filter may do in one step (%d)",
			name, len(s), r.insts, jqMaxRegexWork)
	}
	return nil
}

// regexArgs reads the string, the expression and the flags of a call of
// name, as gojq does.
func (c *jqRegexps) regexArgs(name string, v any, args []any) (string, *jqRegexp, string, error) {
	var flags string
	if args[1] != nil {
		f, ok := args[1].(string)
		if !ok {
			return "", nil, "", &jqTypeError{name, v, args[0], args[1]}
		}
		flags = f
	}
	s, ok := v.(string)
	if !ok {
		return "", nil, "", &jqTypeError{name, v, args[0], args[1]}
	}
	expr, ok := args[0].(string)
	if !ok {
		return "", nil, "", &jqTypeError{name, v, args[0], args[1]}
	}
	r, err := c.compile(expr, flags)
	if err != nil {
		return "", nil, "", err
	}
	return s, r, flags, r.costly(name, s)
}

// jqTypeError is gojq's error for a function of two arguments applied to
// values it does not take.
type jqTypeError struct {
	name    string
	v, w, x any
}

func (e *jqTypeError) Error() string {
	return e.name + "(" + gojq.Preview(e.w) + "; " + gojq.Preview(e.x) + ") cannot be applied to: " + typeErrorPreview(e.v)
}

func typeErrorPreview(v any) string {
	if v == nil {
		return "null"
	}
	return gojq.TypeOf(v) + " (" + gojq.Preview(v) + ")"
}

// test is _caddy_test(re; flags; run): whether the string matches.
func (c *jqRegexps) test(v any, args []any) any {
	if err := runOf(args).ctx.Err(); err != nil {
		return err
	}
	s, r, _, err := c.regexArgs("test", v, args)
	if err != nil {
		return err
	}
	return r.re.MatchString(s)
}

// match is _caddy_match(re; flags; mode; run): the matches, one at a
// time, as gojq's match objects (mode "match") or as byte offsets and
// captures (mode "bytes", for sub and splits).
func (c *jqRegexps) match(v any, args []any) gojq.Iter {
	run := runOf(args)
	if err := run.ctx.Err(); err != nil {
		return gojq.NewIter[any](err)
	}
	s, r, flags, err := c.regexArgs("match", v, args[:2])
	if err != nil {
		return gojq.NewIter[any](err)
	}
	limit := 1
	if strings.ContainsRune(flags, 'g') {
		limit = -1
	}
	return &jqMatches{run: run, r: r, s: s, limit: limit, bytes: args[2] == "bytes", prevEnd: -1}
}

// jqMatches iterates the matches of one call: Go's FindAll, one search
// at a time, with gojq's empty matches after non-empty ones.
type jqMatches struct {
	run   *jqRun
	r     *jqRegexp
	s     string
	limit int  // matches left to find; -1 for all
	bytes bool // offsets in bytes, for sub and splits

	pos, prevEnd int   // where the next search starts; the last match's end
	done         bool  // no more searches
	pending      []int // a match found and not yet given
	// ahead is the result of the search from aheadPos, made to look
	// ahead, which the next search reuses.
	ahead    []int
	aheadPos int
	// Character offsets are counted as the matches go: runes is the
	// number of characters before byte at.
	at, runes int
}

func (m *jqMatches) Next() (any, bool) {
	if err := m.run.ctx.Err(); err != nil {
		m.done, m.pending = true, nil
		return err, true
	}
	x := m.pending
	m.pending = nil
	if x == nil {
		x = m.search()
		if x == nil {
			return nil, false
		}
	}
	return m.value(x), true
}

// search finds the next match to give, nil at the end.
func (m *jqMatches) search() []int {
	for !m.done && m.limit != 0 && m.pos <= len(m.s) {
		x := m.ahead
		if x == nil || m.aheadPos != m.pos {
			x = m.find(m.pos)
		}
		m.ahead = nil
		if x == nil {
			m.done = true
			return nil
		}
		accept := true
		if x[1] == m.pos { // an empty match
			if x[0] == m.prevEnd {
				accept = false // none right after a match, as Go's FindAll
			}
			if _, w := utf8.DecodeRuneInString(m.s[m.pos:]); w > 0 {
				m.pos += w
			} else {
				m.pos = len(m.s) + 1
			}
		} else {
			m.pos = x[1]
		}
		m.prevEnd = x[1]
		if !accept {
			continue
		}
		if m.limit > 0 {
			m.limit--
		}
		if m.limit != 0 && x[0] != x[1] && m.r.probe != nil {
			// gojq's rule: an empty match where a non-empty one ends is
			// reported, unless the next match (a non-empty one: an
			// empty one there is not taken) starts there.
			next := m.find(x[1])
			m.ahead, m.aheadPos = next, x[1]
			if next == nil || next[0] != x[1] || next[0] == next[1] {
				m.pending = m.emptyAt(x[1])
			}
		}
		return x
	}
	return nil
}

// find is the first match that starts at pos or after, with the
// character before pos as its context, or nil.
func (m *jqMatches) find(pos int) []int {
	if pos == 0 {
		return m.r.re.FindStringSubmatchIndex(m.s)
	}
	if pos > len(m.s) {
		return nil
	}
	_, w := utf8.DecodeLastRuneInString(m.s[:pos])
	base := pos - w
	x := m.r.after.FindStringSubmatchIndex(m.s[base:])
	if x == nil {
		return nil
	}
	// The match of the expression starts after the character the
	// wrapper consumed first.
	_, first := utf8.DecodeRuneInString(m.s[base+x[0]:])
	x[0] += first
	for i := range x {
		if x[i] >= 0 {
			x[i] += base
		}
	}
	return x
}

// emptyAt is the empty match at offset, after a non-empty one, or nil.
func (m *jqMatches) emptyAt(offset int) []int {
	_, w := utf8.DecodeLastRuneInString(m.s[:offset])
	x := m.r.probe.FindStringSubmatchIndex(m.s[offset-w:])
	if x == nil || x[1] != w {
		return nil
	}
	y := make([]int, len(x))
	y[0], y[1] = offset, offset
	for i := 2; i < len(x); i++ {
		if x[i] < 0 {
			y[i] = -1
		} else {
			y[i] = x[i] + offset - w
		}
	}
	return y
}

// value is a match as jq gives it: offsets and lengths in characters, or
// in bytes for sub and splits.
func (m *jqMatches) value(x []int) any {
	at := m.offset(x[0]) // first: matches come in order, captures within them
	names := m.r.re.SubexpNames()
	captures := make([]any, 0, len(x)/2-1)
	for j := 1; j < len(x)/2; j++ {
		var name any
		if names[j] != "" {
			name = names[j]
		}
		if x[j*2] < 0 {
			captures = append(captures, map[string]any{"name": name, "offset": -1, "length": 0, "string": nil})
			continue
		}
		start, end := x[j*2], x[j*2+1]
		captures = append(captures, map[string]any{
			"name": name, "offset": at + m.length(x[0], start), "length": m.length(start, end), "string": m.s[start:end],
		})
	}
	if m.bytes {
		return map[string]any{"start": x[0], "end": x[1], "captures": captures}
	}
	return map[string]any{
		"offset": at, "length": m.length(x[0], x[1]), "string": m.s[x[0]:x[1]], "captures": captures,
	}
}

// offset is the character offset of byte i, counted on from the last
// one asked for: matches come in order.
func (m *jqMatches) offset(i int) int {
	if m.bytes {
		return i
	}
	if i < m.at { // not reached: matches come in order
		m.at, m.runes = 0, 0
	}
	m.runes += utf8.RuneCountInString(m.s[m.at:i])
	m.at = i
	return m.runes
}

func (m *jqMatches) length(start, end int) int {
	if m.bytes {
		return end - start
	}
	return utf8.RuneCountInString(m.s[start:end])
}

// slice is _caddy_slice(s; from; to): the bytes of s between two byte
// offsets (null for the start and the end), which matches in bytes give.
func jqSlice(_ any, args []any) any {
	s, _ := args[0].(string)
	from, to := 0, len(s)
	if i, ok := jqInt(args[1]); ok {
		from = min(max(i, 0), len(s))
	}
	if i, ok := jqInt(args[2]); ok {
		to = min(max(i, from), len(s))
	}
	return s[from:to]
}

func jqInt(v any) (int, bool) {
	switch v := v.(type) {
	case int:
		return v, true
	case float64:
		return int(v), true
	}
	return 0, false
}

// jqSplice is what sub and gsub build, as gojq's sub does with its
// reduce: for each output i of the replacement, r[i] is the text before
// each match that has an i-th output, and that output. It passes through
// the filter as the reduce's state, changed in place: _caddy_splice
// returns it, and nothing else holds it.
type jqSplice struct {
	s     string
	r     [][]byte
	next  int // where the text after the last match starts
	start int // the start of the match whose outputs are being added
	i     int // the output being added
}

// jqSpliceStep is _caddy_splice(op; arg): "start" makes the state of
// the string arg; on the state, "match" starts a match at byte arg,
// "add" adds its next output arg, "next" ends it at byte arg.
func jqSpliceStep(v any, args []any) any {
	op, arg := args[0], args[1]
	if op == "start" {
		s, _ := arg.(string) // not a string: the match says so first
		return &jqSplice{s: s}
	}
	sp, ok := v.(*jqSplice)
	if !ok {
		return fmt.Errorf("_caddy_splice is internal to sub and gsub")
	}
	switch op {
	case "match":
		sp.start, _ = jqInt(arg)
		sp.i = 0
	case "next":
		sp.next, _ = jqInt(arg)
	case "add":
		before := sp.s[sp.next:sp.start]
		x, isString := arg.(string)
		if !isString && arg != nil {
			return fmt.Errorf("cannot add: %s and %s", typeErrorPreview(before), typeErrorPreview(arg))
		}
		if sp.i == len(sp.r) {
			sp.r = append(sp.r, nil)
		}
		sp.r[sp.i] = append(append(sp.r[sp.i], before...), x...)
		sp.i++
	}
	return sp
}

// jqSpliced is _caddy_spliced: the results of a sub, each with the text
// after the last match; the string itself when nothing was replaced.
func jqSpliced(v any, _ []any) gojq.Iter {
	sp, ok := v.(*jqSplice)
	if !ok {
		return gojq.NewIter[any](fmt.Errorf("_caddy_spliced is internal to sub and gsub"))
	}
	if len(sp.r) == 0 {
		return gojq.NewIter[any](sp.s)
	}
	out := make([]any, len(sp.r))
	for i := range sp.r {
		out[i] = string(sp.r[i]) + sp.s[sp.next:]
	}
	return gojq.NewIter(out...)
}

// bound is _caddy_bound(x; name; run): its input itself, when the work
// of name over it and x is within jqMaxWork.
func jqBound(v any, args []any) any {
	if err := runOf(args).ctx.Err(); err != nil {
		return err
	}
	a := jqSize(v, jqMaxWork)
	b := jqSize(args[0], jqMaxWork)
	if a > 0 && b > 0 && a > jqMaxWork/b {
		return fmt.Errorf("%s: over values of %d and %d items and bytes, more work than a filter may do in one step (%d)",
			args[1], a, b, jqMaxWork)
	}
	return v
}

// jqSize is the number of values and string bytes in v, counted up to
// past limit.
func jqSize(v any, limit int) int {
	switch v := v.(type) {
	case string:
		return len(v) + 1
	case []any:
		n := 1
		for _, e := range v {
			if n += jqSize(e, limit-n); n > limit {
				break
			}
		}
		return n
	case map[string]any:
		n := 1
		for k, e := range v {
			if n += len(k) + jqSize(e, limit-n); n > limit {
				break
			}
		}
		return n
	}
	return 1
}

// jqOptions are the compiler options the prelude's functions need.
func (c *jqRegexps) options() []gojq.CompilerOption {
	return []gojq.CompilerOption{
		gojq.WithVariables([]string{jqRunVar}),
		gojq.WithIterFunction("_caddy_match", 4, 4, c.match),
		gojq.WithFunction("_caddy_test", 3, 3, c.test),
		gojq.WithFunction("_caddy_slice", 3, 3, jqSlice),
		gojq.WithFunction("_caddy_splice", 2, 2, jqSpliceStep),
		gojq.WithIterFunction("_caddy_spliced", 0, 0, jqSpliced),
		gojq.WithFunction("_caddy_bound", 3, 3, jqBound),
	}
}
