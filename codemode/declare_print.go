package codemode

import (
	"strings"
)

// tsIndentUnit is one level of indentation in the printed declarations.
const tsIndentUnit = "  "

// tsPrintedSize is the length of t as printed in a method signature.
func tsPrintedSize(t *tsType) int {
	var b strings.Builder
	writeTS(&b, t, 1)
	return b.Len()
}

// tsInline is a type on one line.
func tsInline(t *tsType) string {
	var b strings.Builder
	writeTS(&b, t, -1)
	return b.String()
}

// tsFitsInline reports whether an object type reads well on one line: short,
// and with no doc comment longer than a line.
func tsFitsInline(t *tsType) bool {
	return !tsHasBlockDoc(t) && len(tsInline(t)) <= declInlineWidth
}

func tsHasBlockDoc(t *tsType) bool {
	for _, p := range t.props {
		if len(p.doc.lines) > 1 || tsHasBlockDoc(p.typ) {
			return true
		}
	}
	for _, m := range t.members {
		if tsHasBlockDoc(m) {
			return true
		}
	}
	return (t.elem != nil && tsHasBlockDoc(t.elem)) || (t.index != nil && tsHasBlockDoc(t.index))
}

// writeTS prints t; objects that do not fit on a line are spread over
// lines indented one level deeper than indent. indent < 0 prints everything
// on one line.
func writeTS(b *strings.Builder, t *tsType, indent int) {
	switch t.kind {
	case tsName:
		b.WriteString(t.text)
	case tsArray:
		writeTSOperand(b, t.elem, indent)
		b.WriteString("[]")
	case tsTuple:
		b.WriteByte('[')
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(", ")
			}
			if i >= t.minLen {
				writeTSOperand(b, m, indent)
				b.WriteByte('?')
			} else {
				writeTS(b, m, indent)
			}
		}
		if t.elem != nil {
			if len(t.members) > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
			writeTSOperand(b, t.elem, indent)
			b.WriteString("[]")
		}
		b.WriteByte(']')
	case tsUnion:
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(" | ")
			}
			writeTS(b, m, indent)
		}
	case tsIntersection:
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(" & ")
			}
			if m.kind == tsUnion {
				b.WriteByte('(')
				writeTS(b, m, indent)
				b.WriteByte(')')
			} else {
				writeTS(b, m, indent)
			}
		}
	case tsObject:
		writeTSObject(b, t, indent)
	}
}

// writeTSOperand prints t where a postfix [] or ? follows.
func writeTSOperand(b *strings.Builder, t *tsType, indent int) {
	if t.kind == tsUnion || t.kind == tsIntersection {
		b.WriteByte('(')
		writeTS(b, t, indent)
		b.WriteByte(')')
		return
	}
	writeTS(b, t, indent)
}

func writeTSObject(b *strings.Builder, t *tsType, indent int) {
	if len(t.props) == 0 && t.index == nil {
		b.WriteString("{}")
		return
	}
	if indent < 0 || tsFitsInline(t) {
		b.WriteString("{ ")
		for i, p := range t.props {
			if i > 0 {
				b.WriteString("; ")
			}
			if len(p.doc.lines) > 0 {
				// Block docs never print inline; a one-line form only
				// measures them.
				b.WriteString("/** " + escapeComment(strings.Join(p.doc.lines, " ")) + " */ ")
			}
			b.WriteString(tsPropertyKey(p.key))
			if p.optional {
				b.WriteByte('?')
			}
			b.WriteString(": ")
			writeTS(b, p.typ, -1)
		}
		if t.index != nil {
			if len(t.props) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("[key: string]: ")
			writeTS(b, t.index, -1)
		}
		b.WriteString(" }")
		return
	}
	inner := strings.Repeat(tsIndentUnit, indent+1)
	b.WriteString("{\n")
	for _, p := range t.props {
		writeDoc(b, inner, p.doc.lines)
		b.WriteString(inner + tsPropertyKey(p.key))
		if p.optional {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		writeTS(b, p.typ, indent+1)
		b.WriteString(";\n")
	}
	if t.index != nil {
		b.WriteString(inner + "[key: string]: ")
		writeTS(b, t.index, indent+1)
		b.WriteString(";\n")
	}
	b.WriteString(strings.Repeat(tsIndentUnit, indent) + "}")
}
