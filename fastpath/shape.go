package fastpath

import (
	"bytes"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// The shape of a message the fast path takes: one scan of the body that
// says whether mcp-go and the fast path read it alike.

// The members of a message the fast path takes (see messageShape). The
// first two are also those Decode reads, of Message and CallParams, by
// their index.
var (
	messageMembers = []string{"jsonrpc", "id", "method", "params"}
	paramsMembers  = []string{"name", "arguments", "_meta"} // of a tools/call
	listMembers    = []string{"cursor", "_meta"}            // of a tools/list
	metaMembers    = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo, "traceparent", "tracestate"}
)

const paramsMember = 3 // index in messageMembers

// messageShape reports whether body, valid JSON, is a message that mcp-go
// and the fast path read alike, and returns its _meta (or nil). mcp-go
// reads a message into several structs and Meta's map; encoding/json
// matches struct fields whatever their case and takes the last of two
// members of one name, and a map keeps the case. So each member must be
// one the fast path reads, once, exactly so spelled (no escapes in names).
// mcp-go decodes the id, the arguments and _meta into an any, and answers
// a parse error for a number no float64 holds; so none may be in them.
// params are the members params may have (paramsMembers, listMembers),
// the last of them _meta.
func messageShape(body []byte, params []string) (meta []byte, ok bool) {
	s := shapeScan{src: body}
	ok = s.object(messageMembers, func(i int) bool {
		if i != paramsMember {
			return s.value()
		}
		return s.object(params, func(j int) bool {
			if j != len(params)-1 {
				return s.value()
			}
			start := s.pos
			if !s.object(metaMembers, func(int) bool { return s.value() }) {
				return false
			}
			meta = body[start:s.pos]
			return true
		})
	})
	return meta, ok
}

// shapeScan walks JSON text that encoding/json has already found valid.
type shapeScan struct {
	src []byte
	pos int
}

func (s *shapeScan) space() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		default:
			return
		}
	}
}

// next consumes c, after white space.
func (s *shapeScan) next(c byte) bool {
	s.space()
	if s.pos < len(s.src) && s.src[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// object walks an object whose member names are among names, each at most
// once; member is called at each value with its name's index, and walks it.
func (s *shapeScan) object(names []string, member func(i int) bool) bool {
	var seen uint
	return s.members(func(name []byte) bool {
		i := 0
		for i < len(names) && names[i] != string(name) {
			i++
		}
		if i == len(names) || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		return member(i)
	})
}

// members walks an object, calling member with each member's name (one
// without escapes) at its value, which member walks.
func (s *shapeScan) members(member func(name []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		s.space()
		name, ok := s.name()
		if !ok || !s.next(':') {
			return false
		}
		s.space()
		if !member(name) {
			return false
		}
		if s.next(',') {
			continue
		}
		return s.next('}')
	}
}

// name reads a member name with no escape in it.
func (s *shapeScan) name() ([]byte, bool) {
	if s.pos >= len(s.src) || s.src[s.pos] != '"' {
		return nil, false
	}
	end := bytes.IndexByte(s.src[s.pos+1:], '"')
	if end < 0 {
		return nil, false
	}
	name := s.src[s.pos+1 : s.pos+1+end]
	if bytes.IndexByte(name, '\\') >= 0 {
		return nil, false
	}
	s.pos += end + 2
	return name, true
}

// value walks one value, and reports false for a number no float64 holds.
func (s *shapeScan) value() bool { return s.walk(true) }

// walk walks one value; with numbers, it reports false for a number no
// float64 holds.
func (s *shapeScan) walk(numbers bool) bool {
	depth := 0
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == '"':
			s.pos++
			for s.pos < len(s.src) && s.src[s.pos] != '"' {
				if s.src[s.pos] == '\\' {
					s.pos++
				}
				s.pos++
			}
			s.pos++
		case c == '{' || c == '[':
			depth++
			s.pos++
		case c == '}' || c == ']':
			depth--
			s.pos++
		case c == '-' || c >= '0' && c <= '9':
			start, exponent := s.pos, false
			for ; s.pos < len(s.src) && numberByte(s.src[s.pos]); s.pos++ {
				exponent = exponent || s.src[s.pos]|0x20 == 'e'
			}
			if numbers && !floatHolds(s.src[start:s.pos], exponent) {
				return false
			}
		case c == 't' || c == 'n':
			s.pos += 4
		case c == 'f':
			s.pos += 5
		default: // white space, commas and colons inside a container
			s.pos++
			continue
		}
		if depth == 0 {
			return s.pos <= len(s.src)
		}
	}
	return false
}

// floatHolds reports whether encoding/json decodes a JSON number into a
// float64 without error. One of at most 308 characters without an
// exponent is below 1e308, so it is only parsed otherwise.
func floatHolds(num []byte, exponent bool) bool {
	if len(num) <= 308 && !exponent {
		return true
	}
	_, err := strconv.ParseFloat(string(num), 64)
	return err == nil
}
