package declarations

import (
	"strings"
)

// typeFit is how much of a type is shown.
type typeFit struct {
	t      *tsType // the type, its members trimmed if even they were too many
	levels int     // levels of objects shown (see tsPrinter); 0 for all
	extra  map[*tsType]bool
	docs   docMode
	size   int // bytes, as printed
}

func (f typeFit) printer(b *strings.Builder) tsPrinter {
	return tsPrinter{b: b, levels: f.levels, extra: f.extra, docs: f.docs}
}

// refs tells visit each named type f shows, and whether a chain of
// required members leads to it.
func (f typeFit) refs(visit func(info *declNamed, required bool)) {
	p := f.printer(nil)
	var walk func(t *tsType, level int, req bool)
	walk = func(t *tsType, level int, req bool) {
		switch t.kind {
		case tsRef:
			if t.named.full {
				visit(t.named, req)
			}
		case tsObject:
			if len(t.props) == 0 && t.index == nil || !p.shown(t, level) {
				return
			}
			for _, pr := range t.props {
				walk(pr.typ, level+1, req && !pr.optional)
			}
			if t.index != nil {
				walk(t.index, level+1, false)
			}
		default:
			for _, m := range t.members {
				walk(m, level, req)
			}
			if t.elem != nil {
				walk(t.elem, level, req)
			}
		}
	}
	walk(f.t, 1, true)
}

// declMaxExtra bounds the objects of the first level not shown that
// fitType tries to show one by one.
const declMaxExtra = 64

// fitType decides how much of t, printed at indent, to show within budget
// bytes, its comments at most as long as docs says. The deepest levels collapse first, one whole level at a time,
// so a level shown always has all its members; the members of t itself
// (level one) are always shown. Comments are cut to a sentence before a
// level goes. Room left on the last level shown goes to objects of the
// next one, those of required members first, each whole. If the members
// of t alone take more than budget, their comments are left out; if they
// take more than declMaxTypeSize even so, the optional members that do
// not fit go (an index signature says there may be more).
func fitType(t *tsType, indent, budget int, docs docMode) typeFit {
	measure := func(f typeFit) typeFit {
		var b strings.Builder
		p := f.printer(&b)
		p.write(f.t, indent, 1)
		f.size = b.Len()
		return f
	}
	deepest := tsLevels(t)
	if deepest == 0 {
		return measure(typeFit{t: t, docs: docs})
	}
	for levels := deepest; levels >= 1; levels-- {
		var best typeFit
		for _, docs := range []docMode{docs, max(docs, docsShort)} {
			f := measure(typeFit{t: t, levels: levels, docs: docs})
			if f.size > budget {
				continue
			}
			if levels < deepest {
				f = fitExtra(f, budget, measure)
			}
			// Shorter comments are worth more objects shown.
			if best.t == nil || len(f.extra) > len(best.extra) {
				best = f
			}
		}
		if best.t != nil {
			return best
		}
	}
	if f := measure(typeFit{t: t, levels: 1, docs: docsNone}); f.size <= max(budget, declMaxTypeSize) {
		return f
	}
	return measure(typeFit{t: trimMembers(t), levels: 1, docs: docsNone})
}

// fitExtra shows, as room is left, objects of the first level f does not
// show: those that are required members first, then the others, in order.
func fitExtra(f typeFit, budget int, measure func(typeFit) typeFit) typeFit {
	var required, optional []*tsType
	var find func(t *tsType, level int, req bool)
	find = func(t *tsType, level int, req bool) {
		if len(required)+len(optional) >= declMaxExtra {
			return
		}
		switch t.kind {
		case tsObject:
			if level > f.levels {
				if len(t.props) > 0 {
					if req {
						required = append(required, t)
					} else {
						optional = append(optional, t)
					}
				}
				return
			}
			for _, p := range t.props {
				find(p.typ, level+1, !p.optional)
			}
			if t.index != nil {
				find(t.index, level+1, false)
			}
		case tsRef:
		default:
			for _, m := range t.members {
				find(m, level, req)
			}
			if t.elem != nil {
				find(t.elem, level, req)
			}
		}
	}
	find(f.t, 1, true)
	for _, c := range append(required, optional...) {
		extra := make(map[*tsType]bool, len(f.extra)+1)
		for k := range f.extra {
			extra[k] = true
		}
		extra[c] = true
		g := f
		g.extra = extra
		if g = measure(g); g.size <= budget {
			f = g
		}
	}
	return f
}

// trimMembers keeps of an object's members the required ones and the
// optional ones that fit declMaxTypeSize, in order, and says there may be
// more. Even required members stop at twice that: a schema can list any
// number of them.
func trimMembers(t *tsType) *tsType {
	if t.kind != tsObject {
		return tsCut
	}
	trimmed := &tsType{kind: tsObject, index: tsUnknown}
	size := 0
	for _, p := range t.props {
		var b strings.Builder
		q := tsPrinter{b: &b, levels: 1, docs: docsNone}
		q.write(p.typ, -1, 2)
		n := len(p.key) + b.Len() + 8
		if (p.optional && size+n > declMaxTypeSize) || size+n > 2*declMaxTypeSize {
			continue
		}
		size += n
		p.doc = docInfo{}
		trimmed.props = append(trimmed.props, p)
	}
	return trimmed
}
