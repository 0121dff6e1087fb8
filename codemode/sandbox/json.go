package sandbox

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// maxJSONNesting bounds how deeply JSON.stringify and JSON.parse nest. goja's
// own stringify took 29 s on a 100,000-deep object, with no way to
// interrupt it; JSON data from a tool is never this deep.
const maxJSONNesting = 512

// stringifier is a JSON.stringify that cannot run away: it is written
// against goja's object API (getters, toJSON and the replacer still run as
// JavaScript), checks nesting depth and output size as it goes, and looks
// for a pending interrupt every few thousand values.
type stringifier struct {
	vm       *goja.Runtime
	replacer goja.Callable
	allow    map[string]bool // a replacer array's property names
	indent   string
	out      strings.Builder
	stack    []*goja.Object
	limit    int
	maxKeys  int
	checkIn  int
	// checkpoint runs script, so that a pending interrupt takes effect.
	checkpoint func()
	// fail ends the execution with a limit error; it does not return.
	fail func(msg string)
}

// stringify implements JSON.stringify(value, replacer, space). It panics
// with a JavaScript exception, as a native function does to throw. It
// reports false when there is nothing to serialize (undefined).
func (ex *execution) stringify(value, replacer, space goja.Value) (string, bool) {
	s := &stringifier{vm: ex.vm, limit: ex.limits.MaxString, maxKeys: ex.limits.MaxArray, fail: ex.limit, checkpoint: ex.checkpoint}
	if obj, ok := replacer.(*goja.Object); ok {
		if fn, ok := goja.AssertFunction(obj); ok {
			s.replacer = fn
		} else if isArray(obj) {
			s.allow = make(map[string]bool)
			n := arrayLength(obj)
			for i := int64(0); i < n && i < int64(ex.limits.MaxArray); i++ {
				item := obj.Get(strconv.FormatInt(i, 10))
				if goja.IsString(item) || goja.IsNumber(item) {
					s.allow[item.String()] = true
				} else if o, ok := item.(*goja.Object); ok && (o.ClassName() == "String" || o.ClassName() == "Number") {
					s.allow[o.String()] = true
				}
			}
		}
	}
	s.indent = indentOf(space)
	var holder *goja.Object
	if s.replacer != nil {
		// Only a replacer sees the holder.
		holder = ex.vm.NewObject()
		_ = holder.Set("", value)
	}
	v, ok := s.resolve(holder, "", value)
	if ok {
		s.serialize(v, "")
	}
	return s.out.String(), ok
}

func indentOf(space goja.Value) string {
	if space == nil || goja.IsUndefined(space) || goja.IsNull(space) {
		return ""
	}
	if o, ok := space.(*goja.Object); ok {
		switch o.ClassName() {
		case "Number":
			space = o.ToNumber()
		case "String":
			space = o.ToString()
		}
	}
	if goja.IsNumber(space) {
		n := space.ToInteger()
		if n > 10 {
			n = 10
		}
		if n < 1 {
			return ""
		}
		return strings.Repeat(" ", int(n))
	}
	if goja.IsString(space) {
		s := space.String()
		if utf8.RuneCountInString(s) > 10 {
			s = string([]rune(s)[:10])
		}
		return s
	}
	return ""
}

func (s *stringifier) throw(format string, args ...any) {
	panic(s.vm.NewTypeError(fmt.Sprintf(format, args...)))
}

func (s *stringifier) tick() {
	if s.checkIn--; s.checkIn > 0 {
		return
	}
	s.checkIn = 4096
	// Native code is not interrupted: calling into script lets a pending
	// interrupt (the timeout, the memory ceiling) take effect.
	s.checkpoint()
}

func (s *stringifier) write(str string) {
	if s.out.Len()+len(str) > s.limit {
		s.fail(fmt.Sprintf("JSON.stringify would produce more than %d bytes", s.limit))
	}
	s.out.WriteString(str)
}

// resolve applies toJSON and the replacer to holder[key] and unboxes
// primitives. It reports false for what JSON.stringify leaves out:
// undefined, functions and symbols.
func (s *stringifier) resolve(holder *goja.Object, key string, value goja.Value) (goja.Value, bool) {
	s.tick()
	if obj, ok := value.(*goja.Object); ok {
		if toJSON, ok := goja.AssertFunction(obj.Get("toJSON")); ok {
			value = mustCall(toJSON, obj, s.vm.ToValue(key))
		}
	}
	if s.replacer != nil {
		value = mustCall(s.replacer, holder, s.vm.ToValue(key), value)
	}
	if obj, ok := value.(*goja.Object); ok {
		switch obj.ClassName() {
		case "Number":
			return obj.ToNumber(), true
		case "String":
			return obj.ToString(), true
		case "Boolean":
			return s.vm.ToValue(obj.ToBoolean()), true
		case "BigInt":
			s.throw("Do not know how to serialize a BigInt")
		}
		if _, callable := goja.AssertFunction(obj); callable {
			return nil, false
		}
		return value, true
	}
	switch {
	case value == nil || goja.IsUndefined(value):
		return nil, false
	case goja.IsBigInt(value):
		s.throw("Do not know how to serialize a BigInt")
	case goja.IsNull(value), goja.IsString(value), goja.IsNumber(value):
		return value, true
	}
	if _, isBool := value.Export().(bool); isBool {
		return value, true
	}
	return nil, false // a symbol
}

// serialize writes a value that resolve accepted.
func (s *stringifier) serialize(value goja.Value, indent string) {
	switch {
	case goja.IsNull(value):
		s.write("null")
	case goja.IsString(value):
		s.quote(value.String())
	case goja.IsNumber(value):
		f := value.ToFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			s.write("null")
		} else {
			s.write(value.String())
		}
	default:
		if obj, ok := value.(*goja.Object); ok {
			s.object(obj, indent)
			return
		}
		s.write(value.String()) // a boolean
	}
}

func (s *stringifier) object(obj *goja.Object, indent string) {
	for _, o := range s.stack {
		if o == obj {
			s.throw("Converting circular structure to JSON")
		}
	}
	if len(s.stack) >= maxJSONNesting {
		s.fail(fmt.Sprintf("JSON.stringify: the value nests more than %d levels deep", maxJSONNesting))
	}
	s.stack = append(s.stack, obj)
	defer func() { s.stack = s.stack[:len(s.stack)-1] }()
	inner := indent + s.indent
	sep, open := ",", "\n"+inner
	if s.indent == "" {
		open = ""
	} else {
		sep = ",\n" + inner
	}
	if isArray(obj) {
		n := arrayLength(obj)
		if n > int64(s.limit) {
			s.fail(fmt.Sprintf("JSON.stringify: an array of length %d is too long", n))
		}
		if n == 0 {
			s.write("[]")
			return
		}
		s.write("[" + open)
		for i := int64(0); i < n; i++ {
			if i > 0 {
				s.write(sep)
			}
			k := strconv.FormatInt(i, 10)
			if v, ok := s.resolve(obj, k, obj.Get(k)); ok {
				s.serialize(v, inner)
			} else {
				s.write("null")
			}
		}
		if s.indent != "" {
			s.write("\n" + indent)
		}
		s.write("]")
		return
	}
	wrote := false
	for _, k := range obj.Keys() {
		if s.allow != nil && !s.allow[k] {
			continue
		}
		v, ok := s.resolve(obj, k, obj.Get(k))
		if !ok {
			continue
		}
		if wrote {
			s.write(sep)
		} else {
			s.write("{" + open)
		}
		s.quote(k)
		if s.indent != "" {
			s.write(": ")
		} else {
			s.write(":")
		}
		s.serialize(v, inner)
		wrote = true
	}
	if !wrote {
		s.write("{}")
		return
	}
	if s.indent != "" {
		s.write("\n" + indent)
	}
	s.write("}")
}

func mustCall(fn goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := fn(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

func arrayLength(o *goja.Object) int64 {
	l := o.Get("length")
	if l == nil {
		return 0
	}
	return l.ToInteger()
}

// quote writes str as a JSON string, within the output limit.
func (s *stringifier) quote(str string) {
	if s.out.Len()+len(str)+2 > s.limit {
		s.fail(fmt.Sprintf("JSON.stringify would produce more than %d bytes", s.limit))
	}
	writeQuoted(&s.out, str)
}

// writeQuoted writes s as a JSON string the way JSON.stringify does: only
// ", \ and control characters are escaped.
func writeQuoted(b *strings.Builder, s string) {
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		start = i + 1
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			fmt.Fprintf(b, `\u%04x`, c)
		}
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// jsonShape returns how deeply JSON text nests arrays and objects, and
// about how many values it holds (one more than its commas and opening
// brackets), without parsing it: goja's parser cannot be interrupted, and
// runaway nesting or millions of values keep it busy for seconds (a 32 MiB
// text of 16 million numbers took 28 s and a gigabyte).
func jsonShape(text string) (depth, values int) {
	level := 0
	values = 1
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inString {
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ',':
			values++
		case '[', '{':
			values++
			if level++; level > depth {
				depth = level
			}
		case ']', '}':
			level--
		}
	}
	return depth, values
}
