package upstream

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A jsonTree indexes compact JSON text for cutting: a value's span, its
// kind, its number of children and, once asked for (firstChild), the
// children themselves. What a cut never looks into gets no node, so
// indexing a 1 MB answer cut to a few KiB makes few nodes; the ends of
// all containers are found first, in one pass, so that deep nesting does
// not make each level scan again what is inside it.
type jsonTree struct {
	src   []byte
	nodes []jsonNode
	spans []span // every container, in the order of their starts
}

// span is one container's extent and its number of children.
type span struct{ start, end, count int32 }

type jsonNode struct {
	start, end int32 // the value's span in src
	keyStart   int32 // an object member's key (quoted) is src[keyStart:start-1]; -1 else
	first      int32 // the first child; -1 for none, unbuilt while the children are not indexed
	next       int32 // the next sibling; -1 for none
	count      int32 // children
	kind       byte  // '{', '[', '"', or '0' for numbers, true, false and null
}

// unbuilt marks a container whose children are not indexed yet.
const unbuilt = -2

func (n *jsonNode) size() int { return int(n.end - n.start) }

// key is the quoted key of an object member.
func (t *jsonTree) key(n *jsonNode) []byte { return t.src[n.keyStart : n.start-1] }

// newJSONTree indexes src, which must be valid, compact JSON.
func newJSONTree(src []byte) *jsonTree {
	t := &jsonTree{src: src, nodes: make([]jsonNode, 0, 64), spans: containerSpans(src)}
	t.value(0, -1)
	return t
}

// value indexes the value at i, an object member's when keyStart is not
// -1, and returns its node's index. Pointers into t.nodes do not outlive
// a call that adds nodes (value, firstChild): indexes do.
func (t *jsonTree) value(i int, keyStart int32) int32 {
	idx := int32(len(t.nodes))
	n := jsonNode{start: int32(i), keyStart: keyStart, first: -1, next: -1, kind: t.src[i]}
	switch n.kind {
	case '"':
		n.end = int32(StringEnd(t.src, i))
	case '{', '[':
		sp := t.span(i)
		n.end, n.count = sp.end, sp.count
		if sp.count > 0 {
			n.first = unbuilt
		}
	default:
		n.kind = '0'
		end := i
		for end < len(t.src) {
			if c := t.src[end]; c == ',' || c == ']' || c == '}' {
				break
			}
			end++
		}
		n.end = int32(end)
	}
	t.nodes = append(t.nodes, n)
	return idx
}

// firstChild returns the first child of node idx, indexing its children
// if they are not yet; -1 for none.
func (t *jsonTree) firstChild(idx int32) int32 {
	if t.nodes[idx].first != unbuilt {
		return t.nodes[idx].first
	}
	closing := byte(']')
	if t.src[t.nodes[idx].start] == '{' {
		closing = '}'
	}
	i := int(t.nodes[idx].start) + 1
	prev := int32(-1)
	for t.src[i] != closing {
		keyStart := int32(-1)
		if closing == '}' {
			keyStart = int32(i)
			i = StringEnd(t.src, i) + 1 // past the colon
		}
		child := t.value(i, keyStart)
		if prev < 0 {
			t.nodes[idx].first = child
		} else {
			t.nodes[prev].next = child
		}
		prev = child
		i = int(t.nodes[child].end)
		if t.src[i] == ',' {
			i++
		}
	}
	return t.nodes[idx].first
}

// containerSpans finds every object and array of src in one pass: its
// end and its number of members or items.
func containerSpans(src []byte) []span {
	var spans []span
	var open []int // indexes into spans of the containers not yet closed
	for j := 0; j < len(src); j++ {
		switch src[j] {
		case '"':
			j = StringEnd(src, j) - 1
		case '{', '[':
			sp := span{start: int32(j), end: int32(len(src))}
			if j+1 < len(src) && src[j+1] != '}' && src[j+1] != ']' {
				sp.count = 1
			}
			open = append(open, len(spans))
			spans = append(spans, sp)
		case '}', ']':
			if len(open) > 0 {
				spans[open[len(open)-1]].end = int32(j + 1)
				open = open[:len(open)-1]
			}
		case ',':
			if len(open) > 0 {
				spans[open[len(open)-1]].count++
			}
		}
	}
	return spans
}

// span is the container that starts at src[i].
func (t *jsonTree) span(i int) span {
	k, _ := slices.BinarySearchFunc(t.spans, int32(i), func(sp span, start int32) int { return int(sp.start - start) })
	if k < len(t.spans) && t.spans[k].start == int32(i) {
		return t.spans[k]
	}
	return span{start: int32(i), end: int32(len(t.src))} // not reached with valid JSON
}

// StringEnd returns the end of the JSON string starting at src[i]: past
// the first quote that an even number of backslashes precedes.
func StringEnd(src []byte, i int) int {
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
			i = StringEnd(src, i) - 1
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
		for i := t.firstChild(idx); i >= 0; i = t.nodes[i].next {
			m[unquote(t.key(&t.nodes[i]))] = t.decode(i)
		}
		return m
	case '[':
		a := make([]any, 0, n.count)
		for i := t.firstChild(idx); i >= 0; i = t.nodes[i].next {
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
