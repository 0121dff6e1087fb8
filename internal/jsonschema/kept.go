package jsonschema

import (
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// Kept is how many leaf violations a ValidationError keeps at most: the
// first in the order of [ValidationError.Leaves]. The others are counted,
// not kept, so that an instance failing a schema a million times costs a
// count, not a million errors.
const Kept = 20

// Leaves returns the leaf errors kept under ve (the errors without causes,
// which say what is wrong), one for each distinct instance location and
// message, ordered as [LeafLess] orders them, and how many other leaf
// violations were found. They are the first of all the leaf violations, as
// the whole error tree of jsonschema v5 would give them. The count is exact
// unless a violation with the same instance location and message was found
// through more than one keyword path: such a one may be counted once for
// each path.
func (ve *ValidationError) Leaves() ([]*ValidationError, int) {
	var leaves []*ValidationError
	more := 0
	var walk func(*ValidationError)
	walk = func(e *ValidationError) {
		more += e.omitted
		if len(e.Causes) == 0 {
			leaves = append(leaves, e)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(leaves, func(i, j int) bool { return LeafLess(leaves[i], leaves[j]) })
	return leaves, more
}

// LeafLess orders leaf errors by instance location, token by token, array
// indexes by number and before property names, then by message: the
// violations of /tags come as /tags/0, /tags/1, /tags/2.
func LeafLess(a, b *ValidationError) bool {
	if c := comparePointers(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c < 0
	}
	return a.Message < b.Message
}

func comparePointers(a, b string) int {
	for a != "" || b != "" {
		if a == "" {
			return -1
		}
		if b == "" {
			return 1
		}
		var ta, tb string
		ta, a = firstToken(a)
		tb, b = firstToken(b)
		if c := compareTokens(ta, tb); c != 0 {
			return c
		}
	}
	return 0
}

// firstToken splits "/a/b" into "a" and "/b".
func firstToken(p string) (token, rest string) {
	p = strings.TrimPrefix(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// compareTokens puts numbers first, smaller first, then the other tokens
// in byte order.
func compareTokens(a, b string) int {
	na, nb := isDigits(a), isDigits(b)
	switch {
	case na && nb:
		if len(a) != len(b) {
			return len(a) - len(b)
		}
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// errorSet gathers the errors of one schema, or of one keyword such as
// anyOf, against one value. Of the leaf violations under them it keeps the
// first keep distinct ones in LeafLess order and counts the others; since
// every set below kept its own first ones, these are the first of all. It
// never holds more than a few times keep errors.
type errorSet struct {
	keep    int
	arrived int                // errors added
	errs    []*ValidationError // the errors added, in order; some may be dropped
	dropped int                // errors of errs dropped since the last compact
	first   []*ValidationError // the kept leaves, in LeafLess order, at most keep
	omitted int                // leaf violations dropped here
}

func newErrorSet(keep int) *errorSet {
	return &errorSet{keep: keep}
}

// prunedLeaf is the error of a leaf violation not made, because the set
// it would have gone to first would have dropped it at once, counted (see
// frame.dropsLeaf): made, it would cost its message and an error for
// nothing, and an array of a million wrong items would make a million. It
// says that the validation failed, and stands for one violation omitted.
// Wrapping it (allOf, $ref) gives it back, as the wrapper would have been
// dropped with it.
var prunedLeaf = &ValidationError{Message: "pruned", omitted: 1}

// pruning turns prunedLeaf, and the reuse of location nodes, on; tests
// turn it off to compare.
var pruning = true

// add takes an error returned by a validation below (a *ValidationError).
func (s *errorSet) add(err error) {
	e := err.(*ValidationError)
	s.arrived++
	if e == prunedLeaf {
		// What rank and drop would have done with the leaf made.
		s.omitted += e.omitted
		return
	}
	s.errs = append(s.errs, e)
	if len(e.Causes) == 0 {
		s.rank(e)
	} else {
		for _, l := range e.leaves {
			s.rank(l)
		}
	}
	if s.dropped > s.keep {
		s.compact()
	}
}

// rank places leaf l among the first ones, or drops it: counted when it is
// not among them, not counted when it repeats one of them.
func (s *errorSet) rank(l *ValidationError) {
	i := sort.Search(len(s.first), func(i int) bool { return !leafLess(s.first[i], l) })
	if i < len(s.first) && !leafLess(l, s.first[i]) {
		s.drop(l) // the same location and message as one kept
		return
	}
	if i >= s.keep {
		s.omitted++
		s.drop(l)
		return
	}
	if len(s.first) == s.keep {
		last := s.first[len(s.first)-1]
		s.first = s.first[:len(s.first)-1]
		s.omitted++
		s.drop(last)
	}
	s.first = append(s.first, nil)
	copy(s.first[i+1:], s.first[i:])
	s.first[i] = l
}

// drop removes leaf l from the errors held, and the errors above it left
// with no cause; the omitted counts they held stay with what remains.
func (s *errorSet) drop(l *ValidationError) {
	e, lost := l, 0
	for {
		lost += e.omitted
		up := e.up
		if up == nil { // one of errs
			e.dropped = true
			s.dropped++
			s.omitted += lost
			return
		}
		i := slices.Index(up.Causes, e)
		up.Causes = slices.Delete(up.Causes, i, i+1)
		e.up = nil
		if len(up.Causes) > 0 {
			up.omitted += lost
			return
		}
		e = up
	}
}

// compact forgets the errors dropped.
func (s *errorSet) compact() {
	s.errs = slices.DeleteFunc(s.errs, func(e *ValidationError) bool { return e.dropped })
	s.dropped = 0
}

// err is what the gathered errors amount to: nil, the one error, or parent
// with the kept errors as its causes.
func (s *errorSet) err(parent func() *ValidationError) error {
	if s.arrived == 0 {
		return nil
	}
	s.compact()
	if s.arrived == 1 && len(s.errs) == 1 {
		e := s.errs[0]
		e.omitted += s.omitted
		if len(e.Causes) > 0 {
			e.leaves = s.first
		}
		return e
	}
	return s.into(parent())
}

// into makes the kept errors the causes of parent.
func (s *errorSet) into(parent *ValidationError) *ValidationError {
	s.compact()
	for _, e := range s.errs {
		parent.hold(e)
	}
	// The lists of the errors held may name leaves dropped since.
	parent.leaves = s.first
	parent.omitted += s.omitted
	return parent
}

// hold makes c a cause of ve.
func (ve *ValidationError) hold(c *ValidationError) {
	ve.Causes = append(ve.Causes, c)
	c.up = ve
	if len(c.Causes) == 0 {
		ve.leaves = append(ve.leaves, c)
	} else {
		ve.leaves = append(ve.leaves, c.leaves...)
	}
}

// itemSet is a set of array indexes: the items not yet evaluated. v5 kept
// them in a map, an allocation of tens of bytes per item for every schema
// applied to the array; a bit each is enough. The nil set is empty.
type itemSet []uint64

// allItems is the set of the n indexes of an array of length n.
func allItems(n int) itemSet {
	s := make(itemSet, (n+63)/64)
	for i := range s {
		s[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		s[len(s)-1] = 1<<r - 1
	}
	return s
}

func (s itemSet) delete(i int) {
	if i/64 < len(s) {
		s[i/64] &^= 1 << (i % 64)
	}
}

// keepOnly removes from s the indexes not in t.
func (s itemSet) keepOnly(t itemSet) {
	for w := range s {
		if w < len(t) {
			s[w] &= t[w]
		} else {
			s[w] = 0
		}
	}
}

// each calls f with the indexes in s, smallest first.
func (s itemSet) each(f func(i int)) {
	for w, word := range s {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			f(w*64 + b)
			word &^= 1 << b
		}
	}
}
