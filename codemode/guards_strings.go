package codemode

import (
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/text/unicode/norm"
)

// Strings that grow. The guards in guards.go bound the built-ins that make
// a string longer than their input (repeat, padStart, padEnd, concat,
// join, the replacements, String.raw); this file adds normalize. What
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
