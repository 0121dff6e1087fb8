package jsonschema

import (
	"math/bits"
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
	errs    []*ValidationError // the kept ones, in the order they came
	first   []*ValidationError // the kept leaves, in LeafLess order, at most keep
	omitted int                // leaf violations dropped here
	evicted int                // leaves dropped from errs since the last prune
}

func newErrorSet(keep int) *errorSet {
	return &errorSet{keep: keep}
}

// add takes an error returned by a validation below (a *ValidationError).
func (s *errorSet) add(err error) {
	e := err.(*ValidationError)
	s.arrived++
	e.visitLeaves(s.rank)
	if ok, lost := e.prune(); ok {
		s.errs = append(s.errs, e)
	} else {
		s.omitted += lost
	}
	if s.evicted > s.keep {
		s.prune()
	}
}

// rank places leaf l among the first ones, or marks it dropped: counted
// when it is not among them, not counted when it repeats one of them.
func (s *errorSet) rank(l *ValidationError) {
	i := sort.Search(len(s.first), func(i int) bool { return !LeafLess(s.first[i], l) })
	if i < len(s.first) && !LeafLess(l, s.first[i]) {
		l.dropped = true // the same location and message as one kept
		return
	}
	if i >= s.keep {
		l.dropped = true
		s.omitted++
		return
	}
	if len(s.first) == s.keep {
		last := s.first[len(s.first)-1]
		last.dropped = true
		s.omitted++
		s.evicted++
		s.first = s.first[:len(s.first)-1]
	}
	s.first = append(s.first, nil)
	copy(s.first[i+1:], s.first[i:])
	s.first[i] = l
}

// prune drops the errors left with no kept leaf.
func (s *errorSet) prune() {
	var lost int
	s.errs, lost = pruneEach(s.errs)
	s.omitted += lost
	s.evicted = 0
}

// err is what the gathered errors amount to: nil, the one error, or parent
// with the kept errors as its causes.
func (s *errorSet) err(parent func() *ValidationError) error {
	if s.arrived == 0 {
		return nil
	}
	s.prune()
	if s.arrived == 1 && len(s.errs) == 1 {
		e := s.errs[0]
		e.omitted += s.omitted
		return e
	}
	return s.into(parent())
}

// into makes the kept errors the causes of parent.
func (s *errorSet) into(parent *ValidationError) *ValidationError {
	s.prune()
	parent.Causes = append(parent.Causes, s.errs...)
	parent.omitted += s.omitted
	return parent
}

func (e *ValidationError) visitLeaves(f func(*ValidationError)) {
	if len(e.Causes) == 0 {
		f(e)
		return
	}
	for _, c := range e.Causes {
		c.visitLeaves(f)
	}
}

// prune removes the dropped leaves under e and the errors left with no
// cause, and reports whether e stays. When it does not, lost is the count
// of omitted leaves it held, for the caller to hold.
func (e *ValidationError) prune() (stays bool, lost int) {
	if len(e.Causes) == 0 {
		if e.dropped {
			return false, e.omitted
		}
		return true, 0
	}
	var n int
	e.Causes, n = pruneEach(e.Causes)
	e.omitted += n
	if len(e.Causes) == 0 {
		return false, e.omitted
	}
	return true, 0
}

// pruneEach prunes the errors of list and returns those that stay, in
// list's array, and the omitted counts of those that do not.
func pruneEach(list []*ValidationError) (kept []*ValidationError, lost int) {
	kept = list[:0]
	for _, e := range list {
		if ok, n := e.prune(); ok {
			kept = append(kept, e)
		} else {
			lost += n
		}
	}
	clear(list[len(kept):])
	return kept, lost
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
