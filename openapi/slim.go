package openapi

import (
	"bytes"
	"errors"
)

// slimJSON returns a JSON document without what no tool is made of: its
// examples (the example and examples members, components.examples) and
// its extensions (x- members), minified. A fifth of GitHub's document is
// examples and a tenth extensions, and kin-openapi builds a node for
// every value before it decodes any: left out, they cost nothing.
//
// A member is left out only where its key is a keyword: the members of
// maps whose keys are names (properties, paths, media types, status
// codes, schemes in a security requirement...) are all kept, whatever
// they are called, and default, enum and const values are copied as they
// are. An escaped key is kept. ok is false for anything but one JSON
// value, or one nested deeper than maxSlimDepth: the document is then
// loaded as it is.
func slimJSON(data []byte) (slim []byte, ok bool) {
	s := slimmer{in: data, out: make([]byte, 0, len(data)/2)}
	if err := s.value(keywords, 0); err != nil {
		return nil, false
	}
	s.space()
	if s.pos != len(s.in) {
		return nil, false
	}
	return s.out, true
}

// maxSlimDepth bounds the nesting slimJSON follows; documents nest a few
// dozen levels.
const maxSlimDepth = 1000

// kind is what an object's keys are.
type kind int

const (
	keywords kind = iota // OpenAPI or JSON Schema keywords, and x- members
	names                // names of the caller's choosing
)

// nameMaps are the keywords whose object value maps names to objects. An
// array value holds keyword objects (parameters), but for security's,
// whose security requirements map names.
var nameMaps = map[string]bool{
	"paths": true, "webhooks": true, "schemas": true, "responses": true,
	"parameters": true, "requestBodies": true, "headers": true,
	"securitySchemes": true, "links": true, "callbacks": true,
	"pathItems": true, "content": true, "encoding": true, "mapping": true,
	"variables": true, "scopes": true, "security": true,
	"properties": true, "patternProperties": true, "$defs": true,
	"definitions": true, "dependentSchemas": true, "dependencies": true,
}

// verbatim are the keywords whose value is data, copied as it is.
var verbatim = map[string]bool{"default": true, "enum": true, "const": true}

var errSlim = errors.New("not JSON that slimJSON follows")

type slimmer struct {
	in, out []byte
	pos     int
}

func (s *slimmer) space() {
	for s.pos < len(s.in) {
		switch s.in[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// value copies one value; an object's keys are of kind k, and so are the
// keys of objects that are items of an array value.
func (s *slimmer) value(k kind, depth int) error {
	s.space()
	if s.pos >= len(s.in) {
		return errSlim
	}
	if depth > maxSlimDepth {
		return errSlim
	}
	switch s.in[s.pos] {
	case '{':
		return s.object(k, depth)
	case '[':
		s.out = append(s.out, '[')
		s.pos++
		s.space()
		if s.pos < len(s.in) && s.in[s.pos] == ']' {
			s.out = append(s.out, ']')
			s.pos++
			return nil
		}
		for {
			if err := s.value(k, depth+1); err != nil {
				return err
			}
			s.space()
			if s.pos >= len(s.in) {
				return errSlim
			}
			c := s.in[s.pos]
			s.pos++
			s.out = append(s.out, c)
			if c == ']' {
				return nil
			}
			if c != ',' {
				return errSlim
			}
		}
	default:
		start := s.pos
		if err := s.skip(); err != nil {
			return err
		}
		s.out = append(s.out, s.in[start:s.pos]...)
		return nil
	}
}

func (s *slimmer) object(k kind, depth int) error {
	s.out = append(s.out, '{')
	s.pos++
	first := true
	s.space()
	if s.pos < len(s.in) && s.in[s.pos] == '}' {
		s.pos++
		s.out = append(s.out, '}')
		return nil
	}
	for {
		s.space()
		start := s.pos
		if err := s.str(); err != nil {
			return err
		}
		key := s.in[start+1 : s.pos-1]
		s.space()
		if s.pos >= len(s.in) || s.in[s.pos] != ':' {
			return errSlim
		}
		s.pos++
		keyword := k == keywords && bytes.IndexByte(key, '\\') < 0
		if keyword && leftOut(key) {
			if err := s.skip(); err != nil {
				return err
			}
		} else {
			if !first {
				s.out = append(s.out, ',')
			}
			first = false
			s.out = append(append(s.out, s.in[start:start+len(key)+2]...), ':')
			if err := s.member(key, keyword, depth); err != nil {
				return err
			}
		}
		s.space()
		if s.pos >= len(s.in) {
			return errSlim
		}
		switch s.in[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.out = append(s.out, '}')
			return nil
		default:
			return errSlim
		}
	}
}

// member copies the value of a member with the key, which is a keyword
// or a name.
func (s *slimmer) member(key []byte, keyword bool, depth int) error {
	switch {
	case keyword && verbatim[string(key)]:
		s.space()
		from := s.pos
		if err := s.skip(); err != nil {
			return err
		}
		s.out = append(s.out, s.in[from:s.pos]...)
		return nil
	case keyword && nameMaps[string(key)]:
		s.space()
		if s.pos < len(s.in) && s.in[s.pos] == '[' && string(key) != "security" {
			return s.value(keywords, depth+1) // parameters, say
		}
		return s.value(names, depth+1)
	default:
		return s.value(keywords, depth+1)
	}
}

// leftOut reports whether a keyword member is no part of a tool.
func leftOut(key []byte) bool {
	return bytes.HasPrefix(key, []byte("x-")) || string(key) == "example" || string(key) == "examples"
}

// str moves past one string.
func (s *slimmer) str() error {
	if s.pos >= len(s.in) || s.in[s.pos] != '"' {
		return errSlim
	}
	for i := s.pos + 1; i < len(s.in); i++ {
		switch s.in[i] {
		case '\\':
			i++
		case '"':
			s.pos = i + 1
			return nil
		}
	}
	return errSlim
}

// skip moves past one value, which it checks only for its brackets and
// strings: what it skips kin-openapi never reads, and what it copies
// kin-openapi checks.
func (s *slimmer) skip() error {
	s.space()
	depth := 0
	for s.pos < len(s.in) {
		switch c := s.in[s.pos]; c {
		case '"':
			if err := s.str(); err != nil {
				return err
			}
		case '{', '[':
			depth++
			s.pos++
		case '}', ']':
			if depth == 0 {
				return nil // the end of the value's container
			}
			depth--
			s.pos++
		case ',':
			if depth == 0 {
				return nil
			}
			s.pos++
		case ' ', '\t', '\r', '\n':
			if depth == 0 {
				return nil // after a number or a literal
			}
			s.pos++
		default:
			s.pos++
		}
		if depth == 0 && s.pos > 0 && (s.in[s.pos-1] == '"' || s.in[s.pos-1] == '}' || s.in[s.pos-1] == ']') {
			return nil
		}
	}
	if depth != 0 {
		return errSlim
	}
	return nil
}
