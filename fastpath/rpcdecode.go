package fastpath

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Decode decodes a JSON-RPC message into m as json.Unmarshal does, and
// reports whether it decoded (json.Unmarshal's nil error). For a
// tools/call it decodes the params too, setting paramsDecoded.
//
// encoding/json allocates its decoder state and copies every raw member;
// a tools/call went through it twice per request, for a tenth of what a
// call allocates. The usual message, members spelled as declared, each
// once, strings without escapes, is read here in one walk, its raw
// members slices of body (which the caller never changes); anything else
// (a member in other letters, which encoding/json still matches, a
// repeated one, whose last value it keeps, an escape, a value of another
// type) goes to encoding/json, for the same result.
func (m *Message) Decode(body []byte) bool {
	if !json.Valid(body) {
		return false
	}
	if !quickRPC(body, m) {
		*m = Message{}
		if json.Unmarshal(body, m) != nil {
			return false
		}
	}
	if m.Method == string(mcp.MethodToolsCall) {
		if !quickParams(m.RawParams, &m.Params) {
			m.Params = CallParams{}
			m.paramsDecoded = json.Unmarshal(m.RawParams, &m.Params) == nil
		} else {
			m.paramsDecoded = true
		}
	}
	return true
}

// The member names of callMeta; those of Message and CallParams are
// messageMembers and paramsMembers, in the same order.
var callMetaNames = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities}

// quickRPC is Decode's own reading of the envelope of valid JSON; it
// reports false, having set fields or not, for a message it leaves to
// encoding/json.
func quickRPC(body []byte, info *Message) bool {
	s := shapeScan{src: body}
	return s.fields(messageMembers, func(i int, raw []byte) bool {
		switch i {
		case 0:
			info.JSONRPC, _ = plainString(raw, mcp.JSONRPC_VERSION)
			return info.JSONRPC != ""
		case 1:
			info.RawID = raw
		case 2:
			info.Method, _ = plainString(raw, string(mcp.MethodToolsCall), string(mcp.MethodToolsList))
			return info.Method != ""
		case 3:
			info.RawParams = raw
		}
		return true
	})
}

// quickParams reads the params of a tools/call as quickRPC reads the
// envelope.
func quickParams(raw []byte, p *CallParams) bool {
	s := shapeScan{src: raw}
	return s.fields(paramsMembers, func(i int, raw []byte) bool {
		switch i {
		case 0:
			var ok bool
			p.Name, ok = plainString(raw)
			return ok
		case 1:
			p.Arguments = raw
		case 2:
			m := shapeScan{src: raw}
			return m.fields(callMetaNames, func(j int, raw []byte) bool {
				if j == 1 {
					p.Meta.Capabilities = raw
					return true
				}
				var ok bool
				p.Meta.ProtocolVersion, ok = plainString(raw, mcp.LATEST_PROTOCOL_VERSION, "2025-11-25")
				return ok
			})
		}
		return true
	})
}

// fields walks an object of valid JSON, calling member with the index in
// names and the raw value of each member so named; other members are
// skipped. It reports false for anything not an object, a member name
// with an escape or other than ASCII, one that matches a name of names in
// other letters only (encoding/json matches it), a name twice, or a value
// it cannot skip, and when member does.
func (s *shapeScan) fields(names []string, member func(i int, raw []byte) bool) bool {
	var seen uint
	return s.members(func(name []byte) bool {
		i := 0
		for i < len(names) && names[i] != string(name) {
			i++
		}
		if i == len(names) {
			for _, n := range names {
				if asciiFold(n, name) {
					return false
				}
			}
			for _, c := range name {
				if c >= utf8.RuneSelf {
					return false
				}
			}
			return s.skip()
		}
		if seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		start := s.pos
		return s.skip() && member(i, s.src[start:s.pos])
	})
}

// skip walks one value of valid JSON, whatever its numbers.
func (s *shapeScan) skip() bool { return s.walk(false) }

// asciiFold reports whether name is n in other letters, ASCII only.
func asciiFold(n string, name []byte) bool {
	if len(n) != len(name) || n == string(name) {
		return false
	}
	for i := range len(n) {
		a, b := n[i], name[i]
		if a|0x20 != b|0x20 || (a|0x20 < 'a' || a|0x20 > 'z') && a != b {
			return false
		}
	}
	return true
}

// plainString is the value of a raw JSON string with no escape and valid
// UTF-8, which encoding/json decodes to its bytes; one of known is given
// instead of a copy. It reports false for anything else (null, which
// leaves a field as it was, is left to encoding/json too).
func plainString(raw []byte, known ...string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	text := raw[1 : len(raw)-1]
	for _, c := range text {
		if c == '\\' {
			return "", false
		}
	}
	for _, k := range known {
		if k == string(text) {
			return k, true
		}
	}
	if !utf8.Valid(text) {
		return "", false
	}
	return string(text), true
}
