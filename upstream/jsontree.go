package upstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// A jsonTree indexes compact JSON text for cutting: every value's span,
// its kind and its children, without decoding any of it. Building one for
// a 1 MB answer takes a fraction of what decoding it would.
type jsonTree struct {
	src   []byte
	nodes []jsonNode
}

type jsonNode struct {
	start, end int32 // the value's span in src
	keyStart   int32 // an object member's key (quoted) is src[keyStart:start-1]; -1 else
	first      int32 // the first child; -1 for none
	next       int32 // the next sibling; -1 for none
	count      int32 // children
	kind       byte  // '{', '[', '"', or '0' for numbers, true, false and null
}

func (n *jsonNode) size() int { return int(n.end - n.start) }

// key is the quoted key of an object member.
func (t *jsonTree) key(n *jsonNode) []byte { return t.src[n.keyStart : n.start-1] }

// newJSONTree indexes src, which must be valid, compact JSON.
func newJSONTree(src []byte) *jsonTree {
	t := &jsonTree{src: src, nodes: make([]jsonNode, 0, len(src)/16+1)}
	t.value(0, -1)
	return t
}

// value indexes the value at i, an object member's when keyStart is not -1,
// and returns its node's index.
func (t *jsonTree) value(i int, keyStart int32) int32 {
	idx := int32(len(t.nodes))
	t.nodes = append(t.nodes, jsonNode{start: int32(i), keyStart: keyStart, first: -1, next: -1})
	kind := t.src[i]
	end := 0
	switch kind {
	case '"':
		end = stringEnd(t.src, i)
	case '{', '[':
		end = t.children(idx, i)
	default:
		kind = '0'
		end = i
		for end < len(t.src) {
			if c := t.src[end]; c == ',' || c == ']' || c == '}' {
				break
			}
			end++
		}
	}
	n := &t.nodes[idx]
	n.kind, n.end = kind, int32(end)
	return idx
}

// children indexes the members or items of the container at i and
// returns the end of the container.
func (t *jsonTree) children(idx int32, i int) int {
	closing := byte(']')
	if t.src[i] == '{' {
		closing = '}'
	}
	i++
	prev := int32(-1)
	var count int32
	for t.src[i] != closing {
		keyStart := int32(-1)
		if closing == '}' {
			keyStart = int32(i)
			i = stringEnd(t.src, i) + 1 // past the colon
		}
		child := t.value(i, keyStart)
		if prev < 0 {
			t.nodes[idx].first = child
		} else {
			t.nodes[prev].next = child
		}
		prev = child
		count++
		i = int(t.nodes[child].end)
		if t.src[i] == ',' {
			i++
		}
	}
	t.nodes[idx].count = count
	return i + 1
}

// stringEnd returns the end of the JSON string starting at src[i]: past
// the first quote that an even number of backslashes precedes.
func stringEnd(src []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(src[i:], '"')
		if j < 0 {
			return len(src) // not reached with valid JSON
		}
		i += j
		escapes := 0
		for k := i - 1; k >= 0 && src[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i + 1
		}
		i++
	}
}

// compactJSON returns valid JSON src without the whitespace between its
// tokens; src itself when it has none.
func compactJSON(src []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			i = stringEnd(src, i) - 1
		case ' ', '\t', '\n', '\r':
			if out == nil {
				out = make([]byte, 0, len(src))
			}
			out = append(out, src[last:i]...)
			for i+1 < len(src) && isJSONSpace(src[i+1]) {
				i++
			}
			last = i + 1
		}
	}
	if out == nil {
		return src
	}
	return append(out, src[last:]...)
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// summary is the short text a container or a long number is replaced by
// when not even its members fit: "{12 keys}", "[3 items]".
func (n *jsonNode) summary() string {
	switch n.kind {
	case '{':
		return countOf(int(n.count), "key", "keys", '{', '}')
	case '[':
		return countOf(int(n.count), "item", "items", '[', ']')
	}
	return "(a number of " + strconv.Itoa(n.size()) + " digits)"
}

func countOf(n int, one, many string, open, closing byte) string {
	word := many
	if n == 1 {
		word = one
	}
	return string(open) + strconv.Itoa(n) + " " + word + string(closing)
}

// decode returns the value of node idx as encoding/json decodes into an
// any with UseNumber, with each object's map made at its size: the tree
// already counted the members, which saves most of a decode's time.
func (t *jsonTree) decode(idx int32) any {
	n := &t.nodes[idx]
	switch n.kind {
	case '{':
		m := make(map[string]any, n.count)
		for i := n.first; i >= 0; i = t.nodes[i].next {
			m[unquote(t.key(&t.nodes[i]))] = t.decode(i)
		}
		return m
	case '[':
		a := make([]any, 0, n.count)
		for i := n.first; i >= 0; i = t.nodes[i].next {
			a = append(a, t.decode(i))
		}
		return a
	case '"':
		return unquote(t.src[n.start:n.end])
	}
	switch v := t.src[n.start:n.end]; v[0] {
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	default:
		return json.Number(v)
	}
}

// unquote is the text of a valid JSON string.
func unquote(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	_ = json.Unmarshal(quoted, &s) // valid: the tree is of valid JSON
	return s
}
