package upstream

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Cutting JSON to a size keeps it valid JSON a model can read: every key
// of every object that is shown, the first items of arrays, the start of
// long strings, and in place of a container too deep to show a short
// string saying what it held ("{12 keys}"). The budget goes top-down:
// small members are kept whole and the large ones share what is left
// (water-filling), so one long field does not crowd out the others.

// ellipsis ends a shortened string.
const ellipsis = "…"

// minString is the least a shortened string takes: its quotes and the
// ellipsis.
const minString = 2 + len(ellipsis)

// Cut records what cutting a result left out. Counts are exact; the
// lists hold the first maxCutRecords cuts of each kind, each with a path
// of at most maxCutPath bytes, JSONPath-like ($, $.items[3].body,
// $["a key"]), its middle left out past that ($.a.b…[0].c). So the
// record is at most MaxCutMeta bytes as JSON, whatever the answer's
// shape: a cut of an answer nested 10,000 deep would otherwise record
// thousands of paths each as long as the nesting.
type Cut struct {
	// Limit is the max_result_size applied; Size the bytes before, Kept
	// the bytes of what is left (of the JSON or text, without the note).
	Limit int64 `json:"limit"`
	Size  int   `json:"size"`
	Kept  int   `json:"kept"`
	// Arrays are the first arrays shortened from the end, of
	// ArraysShortened.
	Arrays          []CutArray `json:"arrays,omitempty"`
	ArraysShortened int        `json:"arrays_shortened,omitempty"`
	// Strings are the first strings shortened, of StringsShortened.
	Strings          []CutString `json:"strings,omitempty"`
	StringsShortened int         `json:"strings_shortened,omitempty"`
	// Summarized are the first values replaced by a summary such as
	// "{12 keys}", of ValuesSummarized.
	Summarized       []CutValue `json:"summarized,omitempty"`
	ValuesSummarized int        `json:"values_summarized,omitempty"`
	// ItemsDropped is the number of array items left out, over all the
	// arrays shortened.
	ItemsDropped int `json:"items_dropped,omitempty"`
	// Objects are the objects whose last members were left out: only the
	// root, which a summary would replace whole.
	Objects []CutArray `json:"objects,omitempty"`
	// KeysDropped is the number of members left out, over Objects.
	KeysDropped int `json:"keys_dropped,omitempty"`
	// Text is set when the result is text cut at a character boundary.
	Text bool `json:"text,omitempty"`
}

// CutArray is an array shortened to Kept of its Of items.
type CutArray struct {
	Path string `json:"path"`
	Kept int    `json:"kept"`
	Of   int    `json:"of"`
}

// CutString is a string shortened from Of to Kept bytes of JSON.
type CutString struct {
	Path string `json:"path"`
	Kept int    `json:"kept"`
	Of   int    `json:"of"`
}

// CutValue is a value of Of bytes shown as As.
type CutValue struct {
	Path string `json:"path"`
	As   string `json:"as"`
	Of   int    `json:"of"`
}

// Bounds of the Cut record.
const (
	// maxCutRecords is how many cuts of each kind the record lists.
	maxCutRecords = 4
	// maxCutPath bounds a path in the record, in bytes.
	maxCutPath = 100
	// MaxCutMeta bounds the record as JSON, what a cut adds to a
	// result's _meta: 4 lists of at most maxCutRecords, each path at
	// most twice maxCutPath once escaped, and the counts.
	MaxCutMeta = 4 << 10
)

// cutter renders one cut of a jsonTree.
type cutter struct {
	t   *jsonTree
	out []byte
	cut *Cut
	// steps is the path to the value being rendered, one step a level:
	// an object member's node, or an array index i as -i-1. A path is
	// written out only for a cut the record lists, so that cutting costs
	// memory in proportion to the answer, not to its depth squared.
	steps []int32
}

// cutJSON cuts compact JSON src to at most budget bytes; it returns src
// itself when it fits. budget must be at least floor of the root (a few
// dozen bytes at most, unless the root is a long number).
func cutJSON(src []byte, budget int, cut *Cut) []byte {
	if len(src) <= budget {
		return src
	}
	c := cutter{t: newJSONTree(src), out: make([]byte, 0, budget), cut: cut}
	c.render(0, budget)
	return c.out
}

// floor is the least node n can be shown in.
func (c *cutter) floor(n *jsonNode) int {
	size := n.size()
	switch n.kind {
	case '"':
		return min(size, minString)
	case '0':
		if size <= 24 {
			return size
		}
	}
	return min(size, len(n.summary())+2)
}

// render appends node idx in at most budget bytes; budget is at least its
// floor.
func (c *cutter) render(idx int32, budget int) {
	n := &c.t.nodes[idx]
	if n.size() <= budget {
		c.out = append(c.out, c.t.src[n.start:n.end]...)
		return
	}
	switch n.kind {
	case '"':
		c.shorten(n, budget)
		return
	case '[':
		if c.array(idx, budget) {
			return
		}
	case '{':
		if c.object(idx, budget) {
			return
		}
	}
	n = &c.t.nodes[idx] // array and object index children: t.nodes may have moved
	as := n.summary()
	c.out = strconv.AppendQuote(c.out, as)
	if c.cut.ValuesSummarized++; len(c.cut.Summarized) < maxCutRecords {
		c.cut.Summarized = append(c.cut.Summarized, CutValue{Path: c.path(), As: as, Of: n.size()})
	}
}

// child renders the child node idx, step of the path, in budget bytes.
func (c *cutter) child(step, idx int32, budget int) {
	c.steps = append(c.steps, step)
	c.render(idx, budget)
	c.steps = c.steps[:len(c.steps)-1]
}

// shorten appends the start of string n and an ellipsis, in budget bytes,
// never splitting a character or an escape (a surrogate pair is one).
func (c *cutter) shorten(n *jsonNode, budget int) {
	body := c.t.src[n.start+1 : n.end-1]
	room := budget - minString
	i := 0
	for i < len(body) {
		step := 1
		switch b := body[i]; {
		case b == '\\' && i+1 < len(body) && body[i+1] == 'u':
			step = 6
			if i+12 <= len(body) && isHighSurrogate(body[i+2:i+6]) && body[i+6] == '\\' && body[i+7] == 'u' {
				step = 12
			}
		case b == '\\':
			step = 2
		case b >= utf8.RuneSelf:
			_, step = utf8.DecodeRune(body[i:])
		}
		if i+step > room {
			break
		}
		i += step
	}
	c.out = append(c.out, '"')
	c.out = append(c.out, body[:i]...)
	c.out = append(c.out, ellipsis...)
	c.out = append(c.out, '"')
	if c.cut.StringsShortened++; len(c.cut.Strings) < maxCutRecords {
		c.cut.Strings = append(c.cut.Strings, CutString{Path: c.path(), Kept: i + minString, Of: n.size()})
	}
}

// isHighSurrogate reports whether the four hex digits of a \u escape are
// D800 to DBFF.
func isHighSurrogate(hex []byte) bool {
	v, err := strconv.ParseUint(string(hex), 16, 16)
	return err == nil && v >= 0xD800 && v <= 0xDBFF
}

// array appends the first items of array idx that fit in budget, the last
// of them perhaps cut, and reports false if not even one fits. It keeps
// as many items as fit when each large one gets at least an eighth of
// the budget, so a long list keeps whole items and a short list of
// large items keeps them all, cut.
func (c *cutter) array(idx int32, budget int) bool {
	share := max(budget/8, 64)
	var items []int32
	used := 2
	first := c.t.firstChild(idx)
	count := int(c.t.nodes[idx].count)
	for i := first; i >= 0; i = c.t.nodes[i].next {
		item := &c.t.nodes[i]
		need := max(c.floor(item), min(item.size(), share))
		if len(items) > 0 {
			need++ // the comma
		}
		if used+need > budget {
			break
		}
		used += need
		items = append(items, i)
	}
	if len(items) == 0 {
		if budget-2 < c.floor(&c.t.nodes[first]) {
			return false
		}
		items = append(items, first)
	}
	grants := c.share(items, budget-2-(len(items)-1))
	c.out = append(c.out, '[')
	for i, item := range items {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.child(-int32(i)-1, item, grants[i])
	}
	c.out = append(c.out, ']')
	if dropped := count - len(items); dropped > 0 {
		if c.cut.ArraysShortened++; len(c.cut.Arrays) < maxCutRecords {
			c.cut.Arrays = append(c.cut.Arrays, CutArray{Path: c.path(), Kept: len(items), Of: count})
		}
		c.cut.ItemsDropped += dropped
	}
	return true
}

// object appends every member of object idx, their values cut to share
// budget, or reports false if their keys and least values do not fit.
func (c *cutter) object(idx int32, budget int) bool {
	var members []int32
	fixed := 2 + int(c.t.nodes[idx].count) - 1 // braces and commas
	for i := c.t.firstChild(idx); i >= 0; i = c.t.nodes[i].next {
		m := &c.t.nodes[i]
		fixed += len(c.t.key(m)) + 1 // the key and its colon
		members = append(members, i)
	}
	floors := 0
	for _, m := range members {
		floors += c.floor(&c.t.nodes[m])
	}
	if fixed+floors > budget {
		if idx != 0 {
			return false
		}
		return c.objectPrefix(members, budget)
	}
	c.members(members, c.share(members, budget-fixed))
	return true
}

// objectPrefix appends the first members of the root object that fit in
// budget, and reports false if not even one fits: the root stays an
// object (structuredContent must be one), where a summary would leave
// nothing of it.
func (c *cutter) objectPrefix(members []int32, budget int) bool {
	var kept []int32
	used := 2
	for _, m := range members {
		node := &c.t.nodes[m]
		need := len(c.t.key(node)) + 1 + c.floor(node)
		if len(kept) > 0 {
			need++ // the comma
		}
		if used+need > budget {
			break
		}
		used += need
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		return false
	}
	fixed := 2 + len(kept) - 1
	for _, m := range kept {
		fixed += len(c.t.key(&c.t.nodes[m])) + 1
	}
	c.members(kept, c.share(kept, budget-fixed))
	c.cut.Objects = append(c.cut.Objects, CutArray{Path: "$", Kept: len(kept), Of: len(members)})
	c.cut.KeysDropped += len(members) - len(kept)
	return true
}

// members appends an object of members, each value cut to its grant.
func (c *cutter) members(members []int32, grants []int) {
	c.out = append(c.out, '{')
	for i, m := range members {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.t.key(&c.t.nodes[m])...)
		c.out = append(c.out, ':')
		c.child(m, m, grants[i])
	}
	c.out = append(c.out, '}')
}

// share divides budget among nodes: each gets its size, or if that is
// more than a common cap, the cap, but never less than its floor. The
// cap is the largest that fits; what rounding leaves goes to the first
// nodes that are cut. The floors fit in budget.
func (c *cutter) share(nodes []int32, budget int) []int {
	grants := make([]int, len(nodes))
	total := func(capped int) int {
		sum := 0
		for _, i := range nodes {
			n := &c.t.nodes[i]
			sum += min(n.size(), max(c.floor(n), capped))
		}
		return sum
	}
	lo, hi := 0, 0
	for _, i := range nodes {
		hi = max(hi, c.t.nodes[i].size())
	}
	for lo < hi { // the largest cap whose total fits
		mid := lo + (hi-lo+1)/2
		if total(mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	left := budget
	for k, i := range nodes {
		n := &c.t.nodes[i]
		grants[k] = min(n.size(), max(c.floor(n), lo))
		left -= grants[k]
	}
	for k, i := range nodes {
		if left <= 0 {
			break
		}
		if extra := min(left, c.t.nodes[i].size()-grants[k]); extra > 0 {
			grants[k] += extra
			left -= extra
		}
	}
	return grants
}

// keyPath is the path step of a quoted key: .name for a plain name, else
// ["the key"].
func keyPath(quoted []byte) string {
	var name string
	if err := json.Unmarshal(quoted, &name); err != nil {
		return "[" + string(quoted) + "]"
	}
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return "." + name
	}
	q, _ := json.Marshal(name)
	return "[" + string(q) + "]"
}

// path is the path of the value being rendered, at most maxCutPath
// bytes: whole when it fits, else its start and its end around an
// ellipsis. Only the steps shown are written out.
func (c *cutter) path() string {
	head := "$"
	i := 0
	for ; i < len(c.steps); i++ {
		step := c.step(i)
		if len(head)+len(step) > maxCutPath {
			head += step
			break
		}
		head += step
	}
	if i == len(c.steps) {
		return head
	}
	half := (maxCutPath - len(ellipsis)) / 2
	head = head[:utf8Prefix(head, half)]
	tail := ""
	for j := len(c.steps) - 1; j > i; j-- {
		step := c.step(j)
		if len(tail)+len(step) > half {
			tail = utf8Suffix(step, half-len(tail)) + tail
			break
		}
		tail = step + tail
	}
	return head + ellipsis + tail
}

// step is the text of step i of the path.
func (c *cutter) step(i int) string {
	if s := c.steps[i]; s < 0 {
		return "[" + strconv.Itoa(int(-s-1)) + "]"
	}
	return keyPath(c.t.key(&c.t.nodes[c.steps[i]]))
}

// utf8Suffix is the longest suffix of s of at most n bytes that starts
// at a character boundary.
func utf8Suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - max(n, 0)
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
