package sandbox

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// decodeJSON builds the runtime value of JSON text in one pass over the
// bytes: objects and arrays are made as they are read, with no token
// stream and no Go map or slice in between. goja's JSON.parse reads
// encoding/json's tokens one at a time, which took most of the time of a
// tool answer of a few dozen kilobytes.
//
// It accepts exactly what goja's JSON.parse accepts and builds the same
// value: numbers through strconv.ParseFloat (a big integer becomes the
// nearest double), strings as encoding/json unquotes them (invalid UTF-8
// and lone surrogates become U+FFFD), keys in the order they come, a
// repeated key keeping its first place and its last value. It reports
// false for text it does not accept, or that nests deeper than
// maxJSONNesting; the caller then lets goja's JSON.parse say why, so that
// the errors are the ones the code always saw.
func decodeJSON(vm *goja.Runtime, text string) (goja.Value, bool) {
	d := jsonDecoder{vm: vm, s: text, proto: vm.NewObject().Prototype()}
	d.space()
	v, ok := d.value()
	if !ok {
		return nil, false
	}
	d.space()
	if d.i != len(d.s) {
		return nil, false
	}
	return v, true
}

type jsonDecoder struct {
	vm *goja.Runtime
	// proto is the runtime's own Object.prototype, whatever the code did
	// to the global Object.
	proto *goja.Object
	s     string
	i     int
	depth int
	// items holds the elements of the arrays being read, innermost last.
	items []any
	buf   []byte // for strings with escapes
	// sliced tells that the last string str read is a slice of the text.
	sliced bool
	// keys holds a copy of each key read, for the objects of a list that
	// repeat the same keys.
	keys map[string]string
}

// intern returns a copy of key, the same copy for the same key.
func (d *jsonDecoder) intern(key string) string {
	if k, ok := d.keys[key]; ok {
		return k
	}
	if d.keys == nil {
		d.keys = make(map[string]string)
	}
	k := strings.Clone(key)
	d.keys[k] = k
	return k
}

func (d *jsonDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonDecoder) value() (goja.Value, bool) {
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		if d.sliced {
			// A copy: a slice would keep the whole text alive as long as
			// the code keeps any one string of it.
			s = strings.Clone(s)
		}
		return d.vm.ToValue(s), true
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case d.literal("true"):
		return d.vm.ToValue(true), true
	case d.literal("false"):
		return d.vm.ToValue(false), true
	case d.literal("null"):
		return goja.Null(), true
	}
	return nil, false
}

func (d *jsonDecoder) literal(word string) bool {
	if len(d.s)-d.i >= len(word) && d.s[d.i:d.i+len(word)] == word {
		d.i += len(word)
		return true
	}
	return false
}

func (d *jsonDecoder) enter() bool {
	d.depth++
	d.i++ // the opening bracket
	return d.depth <= maxJSONNesting
}

func (d *jsonDecoder) object() (goja.Value, bool) {
	if !d.enter() {
		return nil, false
	}
	// Made without a prototype, and given Object.prototype when done:
	// a plain assignment then adds a property as JSON.parse defines it,
	// "__proto__" included, with no setter of Object.prototype in the way.
	// A key seen again keeps its place and takes the new value.
	obj := d.vm.CreateObject(nil)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return d.done(obj)
	}
	for {
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		key, ok := d.str()
		if !ok {
			return nil, false
		}
		if d.sliced {
			key = d.intern(key)
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.space()
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		if obj.Set(key, v) != nil {
			return nil, false
		}
		more, ok := d.more('}')
		if !ok {
			return nil, false
		}
		if !more {
			return d.done(obj)
		}
	}
}

// more reads what follows a member or an element: a comma, with more to
// come, or close, the end; anything else fails.
func (d *jsonDecoder) more(close byte) (more, ok bool) {
	d.space()
	if d.i >= len(d.s) {
		return false, false
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		d.space()
		return true, true
	case close:
		d.i++
		return false, true
	}
	return false, false
}

func (d *jsonDecoder) done(obj *goja.Object) (goja.Value, bool) {
	d.depth--
	if obj.SetPrototype(d.proto) != nil {
		return nil, false
	}
	return obj, true
}

func (d *jsonDecoder) array() (goja.Value, bool) {
	if !d.enter() {
		return nil, false
	}
	start := len(d.items)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		d.depth--
		return d.vm.NewArray(), true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		d.items = append(d.items, v)
		more, ok := d.more(']')
		if !ok {
			return nil, false
		}
		if !more {
			d.depth--
			// NewArray copies the elements: the stack is reused.
			arr := d.vm.NewArray(d.items[start:]...)
			clear(d.items[start:])
			d.items = d.items[:start]
			return arr, true
		}
	}
}

// number reads a number as JSON writes it, and converts it as
// encoding/json does, with strconv.ParseFloat; a number out of range is
// refused, as encoding/json refuses it.
func (d *jsonDecoder) number() (goja.Value, bool) {
	start := d.i
	if d.s[d.i] == '-' {
		d.i++
	}
	intStart := d.i
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case d.i < len(d.s) && d.s[d.i] >= '1' && d.s[d.i] <= '9':
		d.digits()
	default:
		return nil, false
	}
	integer := d.i - intStart
	plain := true
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return nil, false
		}
		plain = false
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, false
		}
		plain = false
	}
	if plain && integer <= 15 {
		// Exact in a double: no need for ParseFloat.
		var n int64
		for _, c := range []byte(d.s[intStart:d.i]) {
			n = n*10 + int64(c-'0')
		}
		f := float64(n)
		if intStart > start {
			f = -f // -0 stays -0, as ParseFloat has it
		}
		return d.vm.ToValue(f), true
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		return nil, false
	}
	return d.vm.ToValue(f), true
}

func (d *jsonDecoder) digits() int {
	start := d.i
	for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// str reads a string at the opening quote. A string of valid UTF-8 with
// no escapes is a slice of the text; others are unquoted as encoding/json
// unquotes them.
func (d *jsonDecoder) str() (string, bool) {
	d.i++
	start := d.i
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			d.sliced = true
			return d.s[start : d.i-1], true
		case c == '\\' || c < 0x20:
			return d.unquote(start)
		case c < utf8.RuneSelf:
			d.i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[d.i:])
			if r == utf8.RuneError && size == 1 {
				return d.unquote(start)
			}
			d.i += size
		}
	}
	return "", false
}

// unquote finishes a string begun at start, from d.i on, the way
// encoding/json's unquote does.
func (d *jsonDecoder) unquote(start int) (string, bool) {
	b := append(d.buf[:0], d.s[start:d.i]...)
	defer func() { d.buf = b[:0] }()
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch {
		case c == '"':
			d.i++
			d.sliced = false
			return string(b), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if d.i+1 >= len(d.s) {
				return "", false
			}
			e := d.s[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r := d.hex4(d.i)
				if r < 0 {
					return "", false
				}
				d.i += 4
				if utf16.IsSurrogate(r) {
					// A pair is one character; anything else is U+FFFD,
					// and what follows is read on its own.
					r1 := rune(-1)
					if d.i+1 < len(d.s) && d.s[d.i] == '\\' && d.s[d.i+1] == 'u' {
						r1 = d.hex4(d.i + 2)
					}
					if dec := utf16.DecodeRune(r, r1); dec != utf8.RuneError {
						d.i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			d.i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[d.i:])
			d.i += size
			b = utf8.AppendRune(b, r) // an invalid byte becomes U+FFFD
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape at i, or returns -1.
func (d *jsonDecoder) hex4(i int) rune {
	if i+4 > len(d.s) {
		return -1
	}
	var r rune
	for _, c := range []byte(d.s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
