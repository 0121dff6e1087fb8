package fastpath

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// DecodeArgs decodes tool arguments keeping numbers as json.Number; nil
// when they are not an object.
//
// The arguments come out of a request body already checked as JSON, and
// may be most of it: 450,000 numbers in 900 KB. encoding/json grows every
// array by appending, 4 or 5 times its final size in garbage, and copies
// every number's text; argDecoder counts the items of every array and
// the members of every object first and makes each once at its size, and
// numbers and plain strings are parts of one copy of the text. What it
// gives is what encoding/json gives; anything it does not expect goes to
// encoding/json.
func DecodeArgs(raw json.RawMessage) map[string]any {
	// argDecoder trusts its text to be JSON; checking costs one pass and
	// no allocation, and keeps a caller that passes anything else from
	// getting values encoding/json would never make (a json.Number "0+").
	if !json.Valid(raw) {
		return nil
	}
	if args, ok := newArgDecoder(raw).object(); ok {
		return args
	}
	return decodeArgsJSON(raw)
}

// pooledArgsMax is the most members an arguments object may have for its
// map to go back into argMaps; a map keeps the room it once needed.
const pooledArgsMax = 8

// argMaps hold the argument maps of calls the fast path answered: nothing
// keeps a call's arguments once its answer is written.
var argMaps = sync.Pool{New: func() any { return make(map[string]any, pooledArgsMax) }}

// decodePooledArgs is decodeArgs with the outermost map from argMaps, for
// releaseArgs once the call is answered.
func decodePooledArgs(raw json.RawMessage) map[string]any {
	if !json.Valid(raw) {
		return nil
	}
	d := newArgDecoder(raw)
	d.top = argMaps.Get().(map[string]any)
	args, ok := d.object()
	if d.top != nil {
		argMaps.Put(d.top) // not taken: too many members
	}
	if ok {
		return args
	}
	return decodeArgsJSON(raw)
}

// releaseArgs empties the arguments of an answered call and gives their
// map back, unless it is large.
func releaseArgs(args map[string]any) {
	if args != nil && len(args) <= pooledArgsMax {
		clear(args)
		argMaps.Put(args)
	}
}

// decodeArgsJSON is decodeArgs by encoding/json alone.
func decodeArgsJSON(raw []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if dec.Decode(&args) != nil {
		return nil
	}
	return args
}

type argDecoder struct {
	src    string
	pos    int
	sizes  []int32 // the lengths of the arrays and objects, in order of their start
	next   int     // the next of sizes to use
	failed bool
	// top, if not nil, is an empty map for the outermost object.
	top map[string]any
}

func newArgDecoder(raw []byte) *argDecoder {
	d := &argDecoder{src: string(raw)}
	d.sizes = containerSizes(d.src)
	return d
}

// containerSizes counts the items of every array and the members of every
// object of src, in the order they start.
func containerSizes(src string) []int32 {
	var sizes []int32
	var open []int // the containers started and not ended, as indexes of sizes
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case ' ', '\t', '\r', '\n', ':', ']', '}':
			if c == ']' || c == '}' {
				if len(open) > 0 {
					open = open[:len(open)-1]
				}
			}
		case ',':
			if len(open) > 0 {
				sizes[open[len(open)-1]]++
			}
		default:
			if len(open) > 0 && sizes[open[len(open)-1]] == 0 {
				sizes[open[len(open)-1]] = 1
			}
			switch c {
			case '[', '{':
				open = append(open, len(sizes))
				sizes = append(sizes, 0)
			case '"':
				for i++; i < len(src) && src[i] != '"'; i++ {
					if src[i] == '\\' {
						i++
					}
				}
			}
		}
	}
	return sizes
}

// object decodes the whole text as an object; false when it is not one,
// or holds what the decoder does not expect.
func (d *argDecoder) object() (map[string]any, bool) {
	d.space()
	if d.pos >= len(d.src) || d.src[d.pos] != '{' {
		return nil, false
	}
	v, _ := d.value().(map[string]any)
	d.space()
	return v, !d.failed && v != nil && d.pos == len(d.src)
}

func (d *argDecoder) space() {
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return
		}
	}
}

// size is the size of the container starting now.
func (d *argDecoder) size() int {
	if d.next >= len(d.sizes) {
		d.failed = true
		return 0
	}
	n := d.sizes[d.next]
	d.next++
	return int(n)
}

// expect consumes c, after white space.
func (d *argDecoder) expect(c byte) bool {
	d.space()
	if d.pos < len(d.src) && d.src[d.pos] == c {
		d.pos++
		return true
	}
	d.failed = true
	return false
}

func (d *argDecoder) value() any {
	d.space()
	if d.failed || d.pos >= len(d.src) {
		d.failed = true
		return nil
	}
	switch c := d.src[d.pos]; {
	case c == '{':
		d.pos++
		n := d.size()
		var m map[string]any
		if d.top != nil && n <= pooledArgsMax {
			m, d.top = d.top, nil
		} else {
			m = make(map[string]any, n)
		}
		for i := 0; i < n && !d.failed; i++ {
			if i > 0 {
				d.expect(',')
			}
			d.space()
			k, ok := d.str()
			if !ok || !d.expect(':') {
				d.failed = true
				break
			}
			m[k] = d.value()
		}
		d.expect('}')
		return m
	case c == '[':
		d.pos++
		n := d.size()
		a := make([]any, n)
		for i := 0; i < n && !d.failed; i++ {
			if i > 0 {
				d.expect(',')
			}
			a[i] = d.value()
		}
		d.expect(']')
		return a
	case c == '"':
		s, ok := d.str()
		if !ok {
			d.failed = true
		}
		return s
	case c == '-' || c >= '0' && c <= '9':
		start := d.pos
		for d.pos < len(d.src) && numberByte(d.src[d.pos]) {
			d.pos++
		}
		return json.Number(d.src[start:d.pos])
	default:
		for _, lit := range [...]struct {
			text string
			v    any
		}{{"true", true}, {"false", false}, {"null", nil}} {
			if len(d.src)-d.pos >= len(lit.text) && d.src[d.pos:d.pos+len(lit.text)] == lit.text {
				d.pos += len(lit.text)
				return lit.v
			}
		}
		d.failed = true
		return nil
	}
}

func numberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// str decodes the string starting now: a part of the text when it has no
// escape and is valid UTF-8, else as encoding/json decodes it.
func (d *argDecoder) str() (string, bool) {
	if d.pos >= len(d.src) || d.src[d.pos] != '"' {
		return "", false
	}
	start, plain, ascii := d.pos, true, true
	i := start + 1
	for ; i < len(d.src) && d.src[i] != '"'; i++ {
		switch c := d.src[i]; {
		case c == '\\' || c < ' ':
			plain = false
			if c == '\\' {
				i++
			}
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if i >= len(d.src) {
		return "", false
	}
	d.pos = i + 1
	if s := d.src[start+1 : i]; plain && (ascii || utf8.ValidString(s)) {
		return s, true
	}
	var s string
	if json.Unmarshal([]byte(d.src[start:d.pos]), &s) != nil {
		return "", false
	}
	return s, true
}
