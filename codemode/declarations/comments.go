package declarations

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// docInfo is what a property's doc comment says, in raw lines; writeDoc
// and inline docs escape them. It is written once, above the property:
// a tool's arguments have no @param lines repeating it.
type docInfo struct {
	lines []string
	// short is the description's first sentence, on one line, for a type
	// that shows its members' comments short to fit its budget.
	short string
}

// docMode is how much of the members' comments a type shows.
type docMode uint8

const (
	docsFull docMode = iota
	docsShort
	docsNone
)

func (d docInfo) in(mode docMode) []string {
	switch {
	case mode == docsFull:
		return d.lines
	case mode == docsShort && d.short != "":
		return []string{d.short}
	}
	return nil
}

// firstSentence is text up to the end of its first sentence or line.
func firstSentence(text string) string {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			return text[:i]
		case '.':
			if i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n' {
				return text[:i+1]
			}
		}
	}
	return text
}

// noteKeywords are the validation keywords worth telling a model, in the
// order they are shown.
var noteKeywords = []string{
	"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
	"minLength", "maxLength", "minItems", "maxItems",
}

// doc describes a property schema: its description, format and bounds,
// default and deprecation. A property that is only a $ref takes them from
// the target.
func (r *schemaRenderer) doc(s *schemaNode) docInfo {
	if s == nil || s.kind != schemaObject {
		return docInfo{}
	}
	sources := []*schemaNode{s}
	for cur := s; len(sources) < 4; {
		ref := cur.get("$ref")
		if ref == nil || ref.kind != schemaString {
			break
		}
		if cur = r.resolve(ref.text); cur == nil || cur.kind != schemaObject {
			break
		}
		sources = append(sources, cur)
	}
	find := func(key string) *schemaNode {
		for _, src := range sources {
			if v := src.get(key); v != nil {
				return v
			}
		}
		return nil
	}

	var desc string
	if v := find("description"); v != nil && v.kind == schemaString {
		desc = v.text
	}
	var notes []string
	if v := find("format"); v != nil && v.kind == schemaString && !r.output {
		notes = append(notes, "format: "+docOneLine(v.text, declMaxNoteRunes))
	}
	for _, k := range noteKeywords {
		if v := find(k); v != nil && v.kind == schemaNumber {
			notes = append(notes, k+": "+v.text)
		}
	}
	if v := find("pattern"); v != nil && v.kind == schemaString {
		notes = append(notes, "pattern: "+docOneLine(v.text, declMaxNoteRunes))
	}
	var def string
	if v := find("default"); v != nil {
		def = truncateDoc(string(v.appendJSON(nil)), declMaxNoteRunes)
	}
	deprecated := false
	if v := find("deprecated"); v != nil && v.kind == schemaBool && v.boolean {
		deprecated = true
	}

	var d docInfo
	d.lines = splitDocLines(truncateDoc(cleanDocText(desc), declMaxPropDocRunes))
	d.short = docOneLine(firstSentence(cleanDocText(desc)), declMaxShortRunes)
	if deprecated {
		d.short = strings.TrimSpace(d.short + " (deprecated)")
	}
	if len(notes) > 0 {
		note := "(" + strings.Join(notes, ", ") + ")"
		if n := len(d.lines); n > 0 {
			d.lines[n-1] += " " + note
		} else {
			d.lines = append(d.lines, note)
		}
	}
	if def != "" {
		d.lines = append(d.lines, "@default "+def)
	}
	if deprecated {
		d.lines = append(d.lines, "@deprecated")
	}
	return d
}

// docLines turns a description into comment lines: printable text only,
// trimmed to declMaxDocRunes, lines kept, runs of blank lines collapsed.
func docLines(text string) []string {
	return splitDocLines(truncateDoc(cleanDocText(text), declMaxDocRunes))
}

// instructionLines turns a backend's instructions into comment lines, as
// docLines does, cut at declMaxInstructions bytes with a line saying so.
func instructionLines(text string) []string {
	text = cleanDocText(text)
	if len(text) <= declMaxInstructions {
		return splitDocLines(text)
	}
	shown := cutUTF8(text, declMaxInstructions)
	return append(splitDocLines(shown), fmt.Sprintf("[instructions cut: %d of %d bytes shown]", len(shown), len(text)))
}

// Summary is a tool description as a search answer lists it: cleaned and
// cut as the declarations cut it.
func Summary(description string) string {
	return truncateDoc(cleanDocText(description), declMaxDocRunes)
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// splitDocLines splits cleaned text into lines, runs of blank lines
// collapsed.
func splitDocLines(text string) []string {
	var lines []string
	blank := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" {
			blank = len(lines) > 0
			continue
		}
		if blank {
			lines = append(lines, "")
			blank = false
		}
		lines = append(lines, l)
	}
	return lines
}

// docOneLine is text as a single line of at most n runes.
func docOneLine(text string, n int) string {
	return truncateDoc(strings.Join(strings.Fields(cleanDocText(text)), " "), n)
}

var docNewlines = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n")

// cleanDocText keeps docNewlines and printable characters; every other control
// or bidi-control character becomes a space.
func cleanDocText(text string) string {
	text = docNewlines.Replace(strings.ToValidUTF8(text, "\uFFFD"))
	text = strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, text)
	return strings.TrimSpace(text)
}

// truncateToolDoc cuts a tool's description to declMaxToolDocRunes, at
// the end of a paragraph when one ends in the second half of what is
// kept: a sentence cut short tells little.
func truncateToolDoc(text string) string {
	cut := truncateDoc(text, declMaxToolDocRunes)
	if cut == text {
		return text
	}
	kept := strings.TrimSuffix(cut, "...")
	if i := strings.LastIndex(kept, "\n\n"); i > len(kept)/2 {
		return strings.TrimRight(kept[:i], " \n") + "\n\n..."
	}
	return cut
}

// truncateDoc cuts text to at most n runes plus "...", at a space when
// one is near the end.
func truncateDoc(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	cut := 0
	for i := range text {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	text = text[:cut]
	if sp := strings.LastIndexAny(text, " \n"); sp > len(text)*4/5 {
		text = text[:sp]
	}
	return strings.TrimRight(text, " \n") + "..."
}

// escapeComment makes text safe inside a /* */ comment: "*/" is the only
// sequence that ends one.
func escapeComment(text string) string {
	return strings.ReplaceAll(text, "*/", `*\/`)
}

func writeDoc(b *strings.Builder, indent string, lines []string) {
	switch len(lines) {
	case 0:
		return
	case 1:
		b.WriteString(indent + "/** " + escapeComment(lines[0]) + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		if l == "" {
			b.WriteString(indent + " *\n")
			continue
		}
		b.WriteString(indent + " * " + escapeComment(l) + "\n")
	}
	b.WriteString(indent + " */\n")
}
