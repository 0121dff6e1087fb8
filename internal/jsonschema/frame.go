package jsonschema

import "fmt"

// frame is one schema validating one value: what the closures of v5's
// validate held, in a value that can stay on the stack. v5 made three
// closures for every value validated, each an allocation, since the ones
// handed to extensions escape.
type frame struct {
	s      *Schema
	scope  *scopeNode // s, under the schemas that applied it
	vscope int        // how many of them applied to v itself
	v      interface{}
	vloc   *instanceLoc
	result validationResult
	run    *run
	// sink is the set the error of this validation goes to first, nil when
	// that is not known (the root, not, if, an extension).
	sink *errorSet
	// into is the sink of the validations this one applies: its own set,
	// the set of an anyOf, or nil.
	into *errorSet
}

// run is what the frames of one validation share.
type run struct {
	keep int
	// Nodes of locations no error holds, for the next values validated
	// (see release). Not when an extension is about: it may keep what it
	// is given.
	scopes []*scopeNode
	locs   []*instanceLoc
	noFree bool
	// Sets whose errors were taken: no error holds a set.
	sets []*errorSet
}

// newSet is an empty set, one released before if there is one.
func (r *run) newSet() *errorSet {
	if n := len(r.sets); n > 0 {
		s := r.sets[n-1]
		r.sets = r.sets[:n-1]
		return s
	}
	return newErrorSet(r.keep)
}

// releaseSet takes back s, whose errors were taken. The list of the first
// ones may be held by them: not the list of all.
func (r *run) releaseSet(s *errorSet) {
	clear(s.errs)
	*s = errorSet{keep: r.keep, errs: s.errs[:0]}
	r.sets = append(r.sets, s)
}

// validationError makes an error of f's schema. Its locations are made
// into strings only if it is kept (see ValidationError.locate).
func (f *frame) validationError(keywordPath string, format string, a ...interface{}) *ValidationError {
	return &ValidationError{
		Message:     fmt.Sprintf(format, a...),
		frame:       f.scope,
		keywordPath: keywordPath,
		instance:    f.vloc,
	}
}

// dropsLeaf reports whether a leaf violation of f's value would be dropped
// by f.sink as soon as it arrived, counted and not kept: the set keeps
// its number of violations already, all at locations before this one.
// Such a violation is not made: prunedLeaf stands for it.
func (f *frame) dropsLeaf() bool {
	set := f.sink
	if set == nil || !pruning || len(set.first) < set.keep {
		return false
	}
	last := set.first[len(set.first)-1].instance
	return last != nil && compareLocations(last, f.vloc) < 0
}

// validate validates v, at vpath under f's value, with sch.
func (f *frame) validate(sch *Schema, schPath string, v interface{}, vpath string) error {
	vloc := f.vloc
	if vpath != "" {
		vloc = f.run.child(vloc, vpath, -1)
	}
	return f.validateAt(sch, schPath, v, vloc)
}

// validateItem validates v, item i of f's array, with sch.
func (f *frame) validateItem(sch *Schema, schPath string, v interface{}, i int) error {
	return f.validateAt(sch, schPath, v, f.run.child(f.vloc, "", i))
}

func (f *frame) validateAt(sch *Schema, schPath string, v interface{}, vloc *instanceLoc) error {
	_, err := sch.validate(f.scope, 0, schPath, v, vloc, f.into, f.run)
	if vloc != f.vloc && unheld(err) {
		f.run.releaseLoc(vloc)
	}
	return err
}

// validateInplace validates f's value with sch too, which evaluates what
// sch evaluates.
func (f *frame) validateInplace(sch *Schema, schPath string) error {
	vr, err := sch.validate(f.scope, f.vscope, schPath, f.v, f.vloc, f.into, f.run)
	if err == nil {
		// update result
		for pname := range f.result.unevalProps {
			if _, ok := vr.unevalProps[pname]; !ok {
				delete(f.result.unevalProps, pname)
			}
		}
		f.result.unevalItems.keepOnly(vr.unevalItems)
	}
	return err
}

// unheld reports whether err, returned by a validation, holds none of the
// locations that validation made: nil or prunedLeaf.
func unheld(err error) bool {
	return err == nil || err == error(prunedLeaf)
}

// child is the location of the value at token (or array index i, when i
// is not negative) under l, a node released before if there is one.
func (r *run) child(l *instanceLoc, token string, i int) *instanceLoc {
	var c *instanceLoc
	if n := len(r.locs); n > 0 {
		c, r.locs = r.locs[n-1], r.locs[:n-1]
	} else {
		c = new(instanceLoc)
	}
	*c = instanceLoc{parent: l, token: token, index: i, depth: l.depth + 1}
	return c
}

func (r *run) releaseLoc(l *instanceLoc) {
	if !r.noFree && pruning {
		r.locs = append(r.locs, l)
	}
}

// push is the scope of sref under n, a node released before if there is
// one.
func (r *run) push(n *scopeNode, sref schemaRef) *scopeNode {
	var c *scopeNode
	if k := len(r.scopes); k > 0 {
		c, r.scopes = r.scopes[k-1], r.scopes[:k-1]
	} else {
		c = new(scopeNode)
	}
	*c = scopeNode{parent: n, ref: sref}
	if n != nil {
		c.depth = n.depth + 1
	}
	return c
}

func (r *run) releaseScope(n *scopeNode) {
	if !r.noFree && pruning {
		r.scopes = append(r.scopes, n)
	}
}
