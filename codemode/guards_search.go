package codemode

import (
	"reflect"

	"github.com/dop251/goja"
)

// String searches. goja searches a string that is not all ASCII for
// another by looking for the needle's bytes in the haystack's UTF-16
// bytes, and steps one byte on when a match falls between two code
// units: "\u4241".repeat(1<<21).indexOf("\u4142".repeat(1<<20)) matches
// at every odd byte and took minutes in one native call. indexOf,
// lastIndexOf, includes, split, replace and replaceAll with a string
// pattern search such strings here instead, with Knuth-Morris-Pratt over
// the code units: linear, positions in code units as JavaScript counts
// them, lone surrogates matched as code units. All-ASCII strings keep
// goja's search (strings.Index), and so does everything that is not a
// search for a string (regular expressions, an empty separator). The
// others (startsWith, endsWith, at) compare at one place only.
//
// replace, replaceAll and RegExp.prototype[Symbol.replace] also count what
// a replacer function returns, as guards_strings.go counts the expansions of a
// replacement string: a function that returns a long string for each of a
// million matches asked for terabytes in one native call.

// searchCheckStride is how many code units a search reads between two
// looks for a pending interrupt.
const searchCheckStride = 1 << 16

func (ex *execution) guardSearches(proto *goja.Object) {
	ex.replaceMethod(proto, "indexOf", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		s := ex.thisString(call, "String.prototype.indexOf")
		if asciiOnly(s) {
			return mustCall(prev, s, call.Arguments...)
		}
		t := ex.jsString(call.Argument(0))
		pos := clamp(call.Argument(1).ToNumber().ToInteger(), s.Length())
		return ex.vm.ToValue(ex.newSearcher(t).index(s, pos))
	})
	ex.replaceMethod(proto, "lastIndexOf", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		s := ex.thisString(call, "String.prototype.lastIndexOf")
		if asciiOnly(s) {
			return mustCall(prev, s, call.Arguments...)
		}
		t := ex.jsString(call.Argument(0))
		pos := s.Length()
		if p := call.Argument(1).ToNumber(); !isNaN(p) {
			pos = clamp(p.ToInteger(), s.Length())
		}
		return ex.vm.ToValue(ex.newSearcher(t).lastIndex(s, pos))
	})
	ex.replaceMethod(proto, "includes", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		s := ex.thisString(call, "String.prototype.includes")
		if asciiOnly(s) {
			return mustCall(prev, s, call.Arguments...)
		}
		if isRegexpValue(call.Argument(0)) {
			panic(ex.newError("TypeError", "First argument to String.prototype.includes must not be a regular expression"))
		}
		t := ex.jsString(call.Argument(0))
		pos := 0
		if p := call.Argument(1); !goja.IsUndefined(p) {
			pos = clamp(p.ToInteger(), s.Length())
		}
		return ex.vm.ToValue(ex.newSearcher(t).index(s, pos) >= 0)
	})
	ex.replaceMethod(proto, "split", 2, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		sep := call.Argument(0)
		if _, isObj := sep.(*goja.Object); isObj || goja.IsUndefined(sep) {
			return mustCall(prev, call.This, call.Arguments...)
		}
		s := ex.thisString(call, "String.prototype.split")
		if asciiOnly(s) {
			return mustCall(prev, s, call.Arguments...)
		}
		limit := math32
		if l := call.Argument(1); !goja.IsUndefined(l) {
			limit = toUint32(l.ToFloat())
		}
		t := ex.jsString(sep)
		if limit == 0 || t.Length() == 0 {
			return mustCall(prev, s, t, ex.vm.ToValue(limit))
		}
		return ex.splitString(s, t, limit)
	})
	for _, name := range []string{"replace", "replaceAll"} {
		what, all := "String.prototype."+name, name == "replaceAll"
		ex.replaceMethod(proto, name, 2, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
			pattern := call.Argument(0)
			if _, isObj := pattern.(*goja.Object); isObj {
				// A regular expression counts in its Symbol.replace.
				return mustCall(prev, call.This, call.Arguments...)
			}
			replacement := ex.countedReplacer(call.Argument(1), what)
			s := ex.thisString(call, what)
			if asciiOnly(s) {
				return mustCall(prev, s, pattern, replacement)
			}
			return ex.replaceString(s, ex.jsString(pattern), ex.substitution(replacement, what), all)
		})
	}
	regexpProto := ex.vm.GlobalObject().Get("RegExp").(*goja.Object).Get("prototype").(*goja.Object)
	if replace, ok := goja.AssertFunction(regexpProto.GetSymbol(goja.SymReplace)); ok {
		f := ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
			return mustCall(replace, call.This, call.Argument(0), ex.countedReplacer(call.Argument(1), "RegExp.prototype[Symbol.replace]"))
		}).(*goja.Object)
		_ = f.DefineDataProperty("name", ex.vm.ToValue("[Symbol.replace]"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		_ = f.DefineDataProperty("length", ex.vm.ToValue(2), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		_ = regexpProto.DefineDataPropertySymbol(goja.SymReplace, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

const math32 = 1<<32 - 1

// replaceMethod replaces obj[name] with a native method that gets the
// function it replaced.
func (ex *execution) replaceMethod(obj *goja.Object, name string, length int, fn func(prev goja.Callable, call goja.FunctionCall) goja.Value) {
	prev, ok := goja.AssertFunction(obj.Get(name))
	if !ok {
		return
	}
	_ = defineMethod(ex.vm, obj, name, length, func(call goja.FunctionCall) goja.Value { return fn(prev, call) })
}

// thisString is RequireObjectCoercible(this) and ToString(this).
func (ex *execution) thisString(call goja.FunctionCall, what string) goja.String {
	if goja.IsUndefined(call.This) || goja.IsNull(call.This) {
		panic(ex.newError("TypeError", what+" called on null or undefined"))
	}
	return ex.jsString(call.This)
}

// jsString is ECMAScript's ToString as a goja.String: goja's ToString
// leaves numbers, booleans, null and undefined as they are, and symbols.
func (ex *execution) jsString(v goja.Value) goja.String {
	switch p := v.ToString().(type) {
	case goja.String:
		return p
	case *goja.Symbol:
		panic(ex.newError("TypeError", "Cannot convert a Symbol value to a string"))
	default:
		return ex.vm.ToValue(p.String()).(goja.String)
	}
}

// asciiOnly reports whether goja holds s as ASCII: it keeps such strings
// as a Go string type, others as UTF-16 code units.
func asciiOnly(s goja.String) bool { return reflect.TypeOf(s).Kind() == reflect.String }

func isNaN(v goja.Value) bool { f := v.ToFloat(); return f != f }

// clamp is min(max(pos, 0), n).
func clamp(pos int64, n int) int { return int(min(max(pos, 0), int64(n))) }

// isRegexpValue is ECMAScript's IsRegExp: Symbol.match decides, if set.
func isRegexpValue(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	if !ok {
		return false
	}
	if m := o.GetSymbol(goja.SymMatch); m != nil && !goja.IsUndefined(m) {
		return m.ToBoolean()
	}
	return o.ClassName() == "RegExp"
}

// splitString splits s at each t, which is not empty, into at most limit
// parts.
func (ex *execution) splitString(s, t goja.String, limit int) goja.Value {
	sr := ex.newSearcher(t)
	bounded := min(limit, ex.limits.MaxArray+1)
	var parts []any
	p := 0
	for q := sr.index(s, 0); q >= 0 && len(parts) < bounded; q = sr.index(s, p) {
		parts = append(parts, s.Substring(p, q))
		p = q + t.Length()
		ex.step()
	}
	if len(parts) < bounded {
		parts = append(parts, s.Substring(p, s.Length()))
	}
	if len(parts) > ex.limits.MaxArray && limit > ex.limits.MaxArray {
		ex.checkLength(int64(len(parts)), "String.prototype.split")
	}
	return ex.vm.NewArray(parts...)
}

// replaceString replaces the first t in s, or every one, by what the
// replacer returns for it. As the specification does, every match is found
// before the replacer runs; an empty t matches at every position (goja's
// replaceAll looped forever on it, past the end of the string).
func (ex *execution) replaceString(s, t goja.String, replacer goja.Value, all bool) goja.Value {
	sr := ex.newSearcher(t)
	var found []int
	for q := sr.index(s, 0); q >= 0 && (len(found) == 0 || all); {
		found = append(found, q)
		ex.step()
		if next := q + max(1, t.Length()); next <= s.Length() {
			q = sr.index(s, next)
		} else {
			q = -1
		}
	}
	if len(found) == 0 {
		return s
	}
	fn, _ := goja.AssertFunction(replacer)
	var b goja.StringBuilder
	last := 0
	for _, q := range found {
		r := ex.jsString(mustCall(fn, goja.Undefined(), t, ex.vm.ToValue(q), s))
		b.WriteSubstring(s, last, q)
		b.WriteString(r)
		last = q + t.Length()
	}
	b.WriteSubstring(s, last, s.Length())
	return b.String()
}

// countedReplacer counts, against MaxString, what a replacer function
// returns; a replacement string is left to substitution.
func (ex *execution) countedReplacer(r goja.Value, what string) goja.Value {
	fn, ok := goja.AssertFunction(r)
	if !ok {
		return r
	}
	total := 0
	return ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		s := ex.jsString(mustCall(fn, goja.Undefined(), call.Arguments...))
		if total += s.Length(); total > ex.limits.MaxString {
			ex.checkString(float64(total), what)
		}
		return s
	})
}

// searcher finds one string in others: Knuth-Morris-Pratt over UTF-16
// code units, read from the haystack one at a time.
type searcher struct {
	ex      *execution
	needle  []uint16
	fail    []int32 // fail[i]: the longest proper border of needle[:i+1]
	reverse []uint16
	rfail   []int32
}

func (ex *execution) newSearcher(t goja.String) *searcher {
	n := make([]uint16, t.Length())
	for i := range n {
		n[i] = t.CharAt(i)
	}
	return &searcher{ex: ex, needle: n, fail: borders(n)}
}

func borders(p []uint16) []int32 {
	f := make([]int32, len(p))
	k := int32(0)
	for i := 1; i < len(p); i++ {
		for k > 0 && p[i] != p[k] {
			k = f[k-1]
		}
		if p[i] == p[k] {
			k++
		}
		f[i] = k
	}
	return f
}

// index is the first position at or after from (at most s.Length()) where
// the needle starts in s, or -1.
func (sr *searcher) index(s goja.String, from int) int {
	p, n, m := sr.needle, s.Length(), len(sr.needle)
	if m == 0 {
		return from
	}
	q := 0
	for i := from; i < n && n-i >= m-q; i++ {
		c := s.CharAt(i)
		for q > 0 && p[q] != c {
			q = int(sr.fail[q-1])
		}
		if p[q] == c {
			if q++; q == m {
				return i - m + 1
			}
		}
		if (i-from)%searchCheckStride == searchCheckStride-1 {
			sr.ex.checkpoint()
		}
	}
	return -1
}

// lastIndex is the last position at or before from (at most s.Length())
// where the needle starts in s, or -1: the search runs backwards with the
// needle reversed.
func (sr *searcher) lastIndex(s goja.String, from int) int {
	m, n := len(sr.needle), s.Length()
	if m == 0 {
		return from
	}
	if sr.reverse == nil {
		sr.reverse = make([]uint16, m)
		for i, c := range sr.needle {
			sr.reverse[m-1-i] = c
		}
		sr.rfail = borders(sr.reverse)
	}
	p, q := sr.reverse, 0
	start := min(from+m, n) - 1
	for j := start; j >= 0 && j+1 >= m-q; j-- {
		c := s.CharAt(j)
		for q > 0 && p[q] != c {
			q = int(sr.rfail[q-1])
		}
		if p[q] == c {
			if q++; q == m {
				return j
			}
		}
		if (start-j)%searchCheckStride == searchCheckStride-1 {
			sr.ex.checkpoint()
		}
	}
	return -1
}
