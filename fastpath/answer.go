package fastpath

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// appendAnswer appends the JSON-RPC answer to a tools/call: the bytes
// json.Marshal gives for mcp.JSONRPCResponse (the result's keys in order,
// <, > and & escaped as \u003c and so on), written directly for the
// results tools here make: text content, structured content as raw JSON,
// isError, and for 2026-07-28 resultType and the server's _meta. meta is
// that _meta marshalled, or nil for 2025 clients. It reports false for any
// other result, which mcp-go then writes (Path.answerThroughMCPGo). Marshalling
// through mcp-go's map-based encoders was a tenth of the CPU of a call.
func appendAnswer(dst []byte, rawID json.RawMessage, res *mcp.CallToolResult, meta []byte) ([]byte, bool) {
	if res.Meta != nil || len(res.InputRequests) > 0 || res.RequestState != "" {
		return dst, false
	}
	var structured json.RawMessage
	switch sc := res.StructuredContent; {
	case len(res.RawStructuredContent) > 0:
		structured = res.RawStructuredContent
	case sc == nil:
	default:
		raw, ok := sc.(json.RawMessage)
		if !ok || len(raw) == 0 {
			return dst, false
		}
		structured = raw
	}
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); !ok || t.Annotations != nil || t.Meta != nil {
			return dst, false
		}
	}

	if structured != nil && !json.Valid(structured) {
		return dst, false
	}

	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendRawJSON(dst, rawID)
	dst = append(dst, `,"result":{`...)
	if meta != nil {
		dst = append(dst, `"_meta":`...)
		dst = append(dst, meta...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[`...)
	for i, c := range res.Content {
		t := c.(mcp.TextContent)
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":`...)
		dst = appendString(dst, t.Type)
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, t.Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if res.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendString(dst, string(res.ResultType))
	}
	if structured != nil {
		dst = append(dst, `,"structuredContent":`...)
		dst = appendRawJSON(dst, structured)
	}
	return append(dst, "}}"...), true
}

// appendRawJSON appends valid JSON compacted and HTML-escaped, as
// json.Marshal does with a json.RawMessage.
func appendRawJSON(dst []byte, raw json.RawMessage) []byte {
	if plainJSON(raw) {
		return append(dst, raw...)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, raw) // valid: checked by the caller
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, compact.Bytes())
	return append(dst, escaped.Bytes()...)
}

// plainJSON reports whether raw has no byte that compacting or escaping
// changes: no whitespace, no <, > or &, and no 0xE2, which starts U+2028
// and U+2029.
func plainJSON(raw []byte) bool {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xE2:
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json writes
// it: HTML characters, U+2028 and U+2029 escaped, invalid UTF-8 replaced
// by U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
