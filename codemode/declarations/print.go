package declarations

import (
	"strings"
)

// tsIndentUnit is one level of indentation in the printed declarations.
const tsIndentUnit = "  "

// tsCollapsed is how an object whose members are not shown prints: any
// member may be read, as unknown.
const tsCollapsed = "{ [key: string]: unknown }"

// tsPrinter prints types. Levels count objects: the members of the type
// printed are on level 1, the members of an object among them on level 2,
// and so on; arrays and unions add no level.
type tsPrinter struct {
	b *strings.Builder
	// levels is how many levels are shown; the objects of deeper ones
	// print collapsed. 0 shows every level.
	levels int
	// extra are objects whose members are shown though their level is not.
	extra map[*tsType]bool
	// docs is how much of the members' comments is shown.
	docs docMode
	// once, if set, leaves out a property's comment printed before
	// (same name, same comment): the arguments a backend's tools share.
	once *docOnce
	// used, if set, is told each named type printed.
	used func(*declNamed)
}

// docOnce is the comments of properties already printed.
type docOnce struct {
	seen   map[string]bool
	record bool // false only to measure
}

// tsInline is a type on one line, every level shown.
func tsInline(t *tsType) string {
	var b strings.Builder
	p := tsPrinter{b: &b}
	p.write(t, -1, 1)
	return b.String()
}

// shown reports whether the members of t, an object on level, are
// printed.
func (p *tsPrinter) shown(t *tsType, level int) bool {
	return p.levels == 0 || level <= p.levels || p.extra[t]
}

// fitsInline reports whether an object type reads well on one line: short,
// and with no doc comment longer than a line.
func (p *tsPrinter) fitsInline(t *tsType, level int) bool {
	var b strings.Builder
	q := tsPrinter{b: &b, levels: p.levels, extra: p.extra, docs: p.docs}
	if p.once != nil {
		q.once = &docOnce{seen: p.once.seen}
	}
	if q.hasBlockDoc(t, level) {
		return false
	}
	q.write(t, -1, level)
	return b.Len() <= declInlineWidth
}

func (p *tsPrinter) hasBlockDoc(t *tsType, level int) bool {
	if p.docs != docsFull {
		return false // short comments are one line
	}
	switch t.kind {
	case tsObject:
		if !p.shown(t, level) {
			return false
		}
		for _, pr := range t.props {
			if len(p.propDoc(pr)) > 1 || p.hasBlockDoc(pr.typ, level+1) {
				return true
			}
		}
		return t.index != nil && p.hasBlockDoc(t.index, level+1)
	case tsRef:
		return false
	}
	for _, m := range t.members {
		if p.hasBlockDoc(m, level) {
			return true
		}
	}
	return t.elem != nil && p.hasBlockDoc(t.elem, level)
}

// propDoc is the comment shown above a property: none when it is the one
// written above the named type that is its value.
func (p *tsPrinter) propDoc(pr tsProp) []string {
	lines := pr.doc.in(p.docs)
	if len(lines) == 0 {
		return nil
	}
	if p.once != nil {
		key := pr.key + "\x00" + strings.Join(lines, "\n")
		if p.once.seen[key] {
			return nil
		}
		if p.once.record {
			p.once.seen[key] = true
		}
	}
	t := pr.typ
	if t.kind == tsUnion {
		var ref *tsType
		for _, m := range t.members {
			switch {
			case m.kind == tsRef && ref == nil:
				ref = m
			case m == tsNull:
			default:
				return lines
			}
		}
		if ref == nil {
			return lines
		}
		t = ref
	}
	if t.kind == tsRef && t.named.full && t.named.docKey != "" && t.named.docKey == strings.Join(pr.doc.lines, "\n") {
		return nil
	}
	return lines
}

// write prints t, whose members (if it is an object) are on level;
// objects that do not fit on a line are spread over lines indented one
// level deeper than indent. indent < 0 prints everything on one line.
func (p *tsPrinter) write(t *tsType, indent, level int) {
	b := p.b
	switch t.kind {
	case tsName:
		b.WriteString(t.text)
	case tsRef:
		if !t.named.full {
			// Not declared in full: the budget left no room for it.
			b.WriteString(tsCollapsed)
			return
		}
		b.WriteString(t.text)
		if p.used != nil {
			p.used(t.named)
		}
	case tsArray:
		p.writeOperand(t.elem, indent, level)
		b.WriteString("[]")
	case tsTuple:
		b.WriteByte('[')
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(", ")
			}
			if i >= t.minLen {
				p.writeOperand(m, indent, level)
				b.WriteByte('?')
			} else {
				p.write(m, indent, level)
			}
		}
		if t.elem != nil {
			if len(t.members) > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
			p.writeOperand(t.elem, indent, level)
			b.WriteString("[]")
		}
		b.WriteByte(']')
	case tsUnion:
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(" | ")
			}
			p.write(m, indent, level)
		}
	case tsIntersection:
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(" & ")
			}
			if m.kind == tsUnion {
				b.WriteByte('(')
				p.write(m, indent, level)
				b.WriteByte(')')
			} else {
				p.write(m, indent, level)
			}
		}
	case tsObject:
		p.writeObject(t, indent, level)
	}
}

// writeOperand prints t where a postfix [] or ? follows.
func (p *tsPrinter) writeOperand(t *tsType, indent, level int) {
	if t.kind == tsUnion || t.kind == tsIntersection {
		p.b.WriteByte('(')
		p.write(t, indent, level)
		p.b.WriteByte(')')
		return
	}
	p.write(t, indent, level)
}

func (p *tsPrinter) writeObject(t *tsType, indent, level int) {
	b := p.b
	if len(t.props) == 0 && t.index == nil {
		b.WriteString("{}")
		return
	}
	if !p.shown(t, level) {
		b.WriteString(tsCollapsed)
		return
	}
	if indent < 0 || p.fitsInline(t, level) {
		b.WriteString("{ ")
		for i, pr := range t.props {
			if i > 0 {
				b.WriteString("; ")
			}
			if lines := p.propDoc(pr); len(lines) > 0 {
				// Block docs never print inline; a one-line form only
				// measures them.
				b.WriteString("/** " + escapeComment(strings.Join(lines, " ")) + " */ ")
			}
			b.WriteString(tsPropertyKey(pr.key))
			if pr.optional {
				b.WriteByte('?')
			}
			b.WriteString(": ")
			p.write(pr.typ, -1, level+1)
		}
		if t.index != nil {
			if len(t.props) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("[key: string]: ")
			p.write(t.index, -1, level+1)
		}
		b.WriteString(" }")
		return
	}
	inner := strings.Repeat(tsIndentUnit, indent+1)
	b.WriteString("{\n")
	for _, pr := range t.props {
		writeDoc(b, inner, p.propDoc(pr))
		b.WriteString(inner + tsPropertyKey(pr.key))
		if pr.optional {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		p.write(pr.typ, indent+1, level+1)
		b.WriteString(";\n")
	}
	if t.index != nil {
		b.WriteString(inner + "[key: string]: ")
		p.write(t.index, indent+1, level+1)
		b.WriteString(";\n")
	}
	b.WriteString(strings.Repeat(tsIndentUnit, indent) + "}")
}

// tsLevels is how many levels of objects t has, not counting named types.
func tsLevels(t *tsType) int {
	n := 0
	switch t.kind {
	case tsObject:
		if len(t.props) == 0 && (t.index == nil || t == tsCut) {
			return 0
		}
		for _, pr := range t.props {
			n = max(n, tsLevels(pr.typ))
		}
		if t.index != nil {
			n = max(n, tsLevels(t.index))
		}
		return n + 1
	case tsRef:
		return 0
	}
	for _, m := range t.members {
		n = max(n, tsLevels(m))
	}
	if t.elem != nil {
		n = max(n, tsLevels(t.elem))
	}
	return n
}
