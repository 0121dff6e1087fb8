package codemode

import (
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/text/unicode/norm"
)

// Strings that grow. The guards in guards.go bound the built-ins that make
// a string longer than their input (repeat, padStart, padEnd, concat,
// join, the replacements, String.raw); this file holds those written anew
// (String.raw, split, the replacements' expansion) and normalize. What
// none of them can see is the + operator, += and template literals: goja
// runs them in its interpreter loop (the _add and concatStrings
// instructions call String.Concat directly), on primitive strings that
// consult no prototype and no Symbol.toPrimitive, and goja.String has
// unexported methods, so no string of ours can stand in. A doubling loop
// (let s = "x"; for (;;) s += s) is seen only by the heap watcher, after
// the step that doubles; running executions in worker processes is what
// bounds it.

// normalizeForms are the forms String.prototype.normalize knows.
var normalizeForms = map[string]norm.Form{"NFC": norm.NFC, "NFD": norm.NFD, "NFKC": norm.NFKC, "NFKD": norm.NFKD}

// guardNormalize replaces String.prototype.normalize, which in goja
// normalizes the whole string in one native call: NFKD and NFKC expand a
// character up to 18 times ("\uFDFA" is 18 characters in NFKD), and ten
// million of them took more than 3 s and 800 MB before anything looked.
// This one feeds the string to golang.org/x/text/unicode/norm's streaming
// writer a chunk at a time, as goja's input (the string as UTF-8, a lone
// surrogate as U+FFFD) and to the same output, counts the result against
// MaxString as it grows, and looks for interrupts between chunks.
func (ex *execution) guardNormalize(proto *goja.Object) {
	ex.replaceMethod(proto, "normalize", 0, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		s := ex.thisString(call, "String.prototype.normalize")
		name := "NFC"
		if f := call.Argument(0); !goja.IsUndefined(f) {
			name = ex.jsString(f).String()
		}
		form, ok := normalizeForms[name]
		if !ok || asciiOnly(s) {
			return mustCall(prev, s, ex.vm.ToValue(name)) // a RangeError, or s itself
		}
		out := &boundedBuilder{ex: ex, what: "String.prototype.normalize"}
		w := form.Writer(out)
		for start, n := 0, s.Length(); start < n; {
			end := min(start+normalizeChunk, n)
			if c := s.CharAt(end - 1); end < n && c >= 0xD800 && c < 0xDC00 {
				end++ // keep a surrogate pair in one chunk
			}
			_, _ = w.Write([]byte(s.Substring(start, end).String()))
			ex.checkpoint()
			start = end
		}
		_ = w.Close()
		return ex.vm.ToValue(out.b.String())
	})
}

// normalizeChunk is how many code units normalize converts at a time.
const normalizeChunk = 1 << 15

// boundedBuilder collects a result, refusing to grow past MaxString.
type boundedBuilder struct {
	ex   *execution
	what string
	b    strings.Builder
}

func (w *boundedBuilder) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.ex.limits.MaxString {
		w.ex.checkString(float64(w.b.Len()+len(p)), w.what)
	}
	return w.b.Write(p)
}

// raw is String.raw, written here to check the length it is given.
func (ex *execution) raw(call goja.FunctionCall) goja.Value {
	if isUndefined(call.Argument(0)) || goja.IsNull(call.Argument(0)) {
		panic(ex.newError("TypeError", "String.raw: the template is null or undefined"))
	}
	r := call.Argument(0).ToObject(ex.vm).Get("raw")
	if isUndefined(r) || goja.IsNull(r) {
		panic(ex.newError("TypeError", "String.raw: the template has no raw strings"))
	}
	raw := r.ToObject(ex.vm)
	n := ex.lengthOf(raw)
	ex.checkLength(n, "String.raw")
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		b.WriteString(orUndefined(raw.Get(strconv.FormatInt(i, 10))).String())
		if i+1 < n && int(i+1) < len(call.Arguments) {
			b.WriteString(call.Arguments[i+1].String())
		}
		if b.Len() > ex.limits.MaxString {
			ex.checkString(float64(b.Len()), "String.raw")
		}
		if i%checkStride == checkStride-1 {
			ex.checkpoint()
		}
	}
	return ex.vm.ToValue(b.String())
}

// split guards String.prototype.split: it runs with a limit of one part
// more than the sandbox allows, and a result that reaches it is refused.
// (Without a limit, splitting a 32 MiB string into characters made 32
// million strings in one native call.)
func (ex *execution) split(proto *goja.Object) {
	orig, _ := goja.AssertFunction(proto.Get("split"))
	_ = defineMethod(ex.vm, proto, "split", 2, func(call goja.FunctionCall) goja.Value {
		if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
			panic(ex.newError("TypeError", "String.prototype.split called on null or undefined"))
		}
		limit := math.MaxUint32
		if l := call.Argument(1); !goja.IsUndefined(l) {
			limit = toUint32(l.ToFloat())
		}
		bounded := min(limit, ex.limits.MaxArray+1)
		v := mustCall(orig, call.This, call.Argument(0), ex.vm.ToValue(bounded))
		if n := ex.lengthOf(v); n > int64(ex.limits.MaxArray) && limit > ex.limits.MaxArray {
			ex.checkLength(n, "String.prototype.split")
		}
		return v
	})
}

// toUint32 is ECMAScript's ToUint32 of a number.
func toUint32(f float64) int {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int(uint32(int64(math.Mod(math.Trunc(f), 1<<32))))
}

// substitution turns a replacement string for replace, replaceAll and
// RegExp.prototype[Symbol.replace] into a native replacer function that
// expands $&, $1, $<name>, $` and $' itself and counts what it produces:
// a pattern that matches at every position with a replacement of $` makes
// a string quadratic in the input, and a regular expression can lie about
// being global. A replacer function is the code's own and runs as script.
func (ex *execution) substitution(r goja.Value, what string) goja.Value {
	if _, isFn := goja.AssertFunction(r); isFn {
		return r
	}
	tmpl := r.String()
	total := 0
	return ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		ex.step()
		out := expand(tmpl, call.Arguments)
		if total += len(out); total > ex.limits.MaxString {
			ex.checkString(float64(total), what)
		}
		return ex.vm.ToValue(out)
	})
}

// expand is GetSubstitution for a replacer function's arguments: the
// match, the captures, the position, the whole string and, when the
// pattern has named groups, the groups object. Positions count UTF-16
// code units, as JavaScript's do.
func expand(tmpl string, args []goja.Value) string {
	if !strings.Contains(tmpl, "$") || len(args) < 3 {
		return tmpl
	}
	var groups *goja.Object
	if g, ok := args[len(args)-1].(*goja.Object); ok && len(args) > 3 {
		groups, args = g, args[:len(args)-1]
	}
	str, _ := args[len(args)-1].(goja.String)
	pos := int(args[len(args)-2].ToInteger())
	matched := args[0]
	captures := args[1 : len(args)-2]
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '$' || i+1 == len(tmpl) {
			b.WriteByte(c)
			continue
		}
		switch next := tmpl[i+1]; {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '&':
			b.WriteString(matched.String())
			i++
		case next == '`' && str != nil:
			b.WriteString(str.Substring(0, min(max(pos, 0), str.Length())).String())
			i++
		case next == '\'' && str != nil:
			end := pos
			if m, ok := matched.(goja.String); ok {
				end += m.Length()
			}
			b.WriteString(str.Substring(min(max(end, 0), str.Length()), str.Length()).String())
			i++
		case next >= '0' && next <= '9':
			n, width := int(next-'0'), 1
			if i+2 < len(tmpl) && tmpl[i+2] >= '0' && tmpl[i+2] <= '9' {
				if nn := n*10 + int(tmpl[i+2]-'0'); nn >= 1 && nn <= len(captures) {
					n, width = nn, 2
				}
			}
			if n < 1 || n > len(captures) {
				b.WriteByte(c)
				continue
			}
			if v := captures[n-1]; !goja.IsUndefined(v) {
				b.WriteString(v.String())
			}
			i += width
		case next == '<' && groups != nil:
			end := strings.IndexByte(tmpl[i+2:], '>')
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			if v := groups.Get(tmpl[i+2 : i+2+end]); v != nil && !goja.IsUndefined(v) {
				b.WriteString(v.String())
			}
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
