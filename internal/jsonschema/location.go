package jsonschema

import (
	"strconv"
	"strings"
)

// v5 built the instance location of every value validated and the keyword
// location of every error as strings: a string per array item holding the
// whole path above it, and per error one holding the path of every schema
// above it. Under a long property name, or in an instance nested a
// thousand deep under a recursive schema, that is work and memory growing
// with the square, even the cube, of the instance. Here locations are
// lists of their last token, made into strings only for the errors kept,
// each sharing the string of the deepest location below it.

// instanceLoc is the location of a value in the instance: a token under
// its parent's location. The root's token is the whole location. An
// array item's token is its index, made into a string only if needed.
type instanceLoc struct {
	parent *instanceLoc
	token  string // an escaped JSON pointer token, when index < 0
	index  int    // an array item's index, or -1
	depth  int
}

// compareParts compares the last tokens of a and b as compareTokens does.
func compareParts(a, b *instanceLoc) int {
	if a.index >= 0 && b.index >= 0 {
		return a.index - b.index
	}
	return compareTokens(a.part(), b.part())
}

// compareLocations orders two locations of one validation as
// comparePointers orders their strings.
func compareLocations(a, b *instanceLoc) int {
	if a == b {
		return 0
	}
	// A location comes before the ones under it.
	shorter := 0
	for a.depth > b.depth {
		a, shorter = a.parent, 1
	}
	for b.depth > a.depth {
		b, shorter = b.parent, -1
	}
	// Below their first common location, compare token by token from the
	// top: two values may be validated at the same location through two
	// keywords, under two lists that are equal without being the same.
	var bufA, bufB [32]*instanceLoc
	pathA, pathB := bufA[:0], bufB[:0]
	for a != b {
		pathA, pathB = append(pathA, a), append(pathB, b)
		a, b = a.parent, b.parent
	}
	for i := len(pathA) - 1; i >= 0; i-- {
		if c := compareParts(pathA[i], pathB[i]); c != 0 {
			return c
		}
	}
	return shorter
}

// leafLess is LeafLess for errors not located yet.
func leafLess(a, b *ValidationError) bool {
	if a.instance == nil || b.instance == nil {
		return LeafLess(a, b)
	}
	if c := compareLocations(a.instance, b.instance); c != 0 {
		return c < 0
	}
	return a.Message < b.Message
}

// scopeNode is a schema applied in a validation, under the one that
// applied it: the scope, innermost first. The root's keyword location is
// "", and each schema under it adds "/" and its path.
type scopeNode struct {
	parent *scopeNode
	ref    schemaRef
	depth  int
}

// checkLoop fails when sref's schema is among the last count schemas of
// the scope, those applied to the same value: an infinite loop.
func (n *scopeNode) checkLoop(count int, sref schemaRef) error {
	var stack []schemaRef
	for m, i := n, 0; i < count; m, i = m.parent, i+1 {
		if m.ref.schema == sref.schema {
			for m, j := n, 0; j < count; m, j = m.parent, j+1 {
				stack = append(stack, m.ref)
			}
			for l, r := 0, len(stack)-1; l < r; l, r = l+1, r-1 {
				stack[l], stack[r] = stack[r], stack[l]
			}
			return infiniteLoopError(stack, sref)
		}
	}
	return nil
}

// locator makes the strings of the locations of the errors kept, each
// location's a part of the string of the deepest one below it, when that
// was made first.
type locator struct {
	instance map[*instanceLoc]string
	keyword  map[*scopeNode]string
}

func (lr *locator) instanceLocation(l *instanceLoc) string { return pathOf(lr.instance, l) }

func (lr *locator) keywordLocation(n *scopeNode) string { return pathOf(lr.keyword, n) }

// pathNode is a location as a list: instanceLoc and scopeNode.
type pathNode[N any] interface {
	comparable
	up() N        // the zero N for the root
	part() string // the root's is its whole string
}

func (l *instanceLoc) up() *instanceLoc { return l.parent }
func (n *scopeNode) up() *scopeNode     { return n.parent }
func (n *scopeNode) part() string       { return n.ref.path } // "" for the root

func (l *instanceLoc) part() string {
	if l.index >= 0 {
		return strconv.Itoa(l.index)
	}
	return l.token
}

// pathOf is n's string, its parent's and "/" and its part. Those of the
// nodes above n not in made yet are made as parts of it, into made.
func pathOf[N pathNode[N]](made map[N]string, n N) string {
	var root N
	var chain []N
	top := n
	base, ok := made[top]
	for ; !ok && top.up() != root; base, ok = made[top] {
		chain = append(chain, top)
		top = top.up()
	}
	if !ok {
		base = top.part()
		made[top] = base
	}
	if len(chain) == 0 {
		return base
	}
	var b strings.Builder
	b.WriteString(base)
	for i := len(chain) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(chain[i].part())
	}
	s := b.String()
	for _, c := range chain {
		made[c] = s
		s = s[:len(s)-1-len(c.part())]
	}
	return made[n]
}

// locate gives ve and the errors under it their KeywordLocation and
// InstanceLocation, the errors below first so that those above share
// their strings.
func (ve *ValidationError) locate() {
	lr := &locator{instance: map[*instanceLoc]string{}, keyword: map[*scopeNode]string{}}
	lr.locate(ve)
}

func (lr *locator) locate(ve *ValidationError) {
	for _, c := range ve.Causes {
		lr.locate(c)
	}
	if ve.instance != nil {
		ve.InstanceLocation = lr.instanceLocation(ve.instance)
	}
	if ve.frame != nil {
		ve.KeywordLocation = lr.errorLocation(ve)
		ve.AbsoluteKeywordLocation = joinPtr(ve.frame.ref.schema.Location, ve.keywordPath)
	}
	// The causes' frames served to find this one's location.
	for _, c := range ve.Causes {
		c.frame, c.instance = nil, nil
	}
}

func (lr *locator) errorLocation(ve *ValidationError) string {
	at := lr.keywordLocation(ve.frame)
	if ve.keywordPath == "" {
		return at
	}
	// The error of a keyword that applies schemas ($ref, allOf/0, anyOf)
	// is at, or above, the location of the schema its first cause is
	// under: a part of that string.
	if len(ve.Causes) > 0 {
		for n := ve.Causes[0].frame; n != nil && n.depth > ve.frame.depth; n = n.parent {
			if n.parent == ve.frame && (n.ref.path == ve.keywordPath || strings.HasPrefix(n.ref.path, ve.keywordPath+"/")) {
				return lr.keywordLocation(n)[:len(at)+1+len(ve.keywordPath)]
			}
		}
	}
	return at + "/" + ve.keywordPath
}
