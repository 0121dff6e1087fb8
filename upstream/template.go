package upstream

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Replacer resolves placeholders in configuration text. *caddy.Replacer
// satisfies it; upstream itself knows nothing of Caddy.
type Replacer interface {
	ReplaceAll(input, empty string) string
}

// Template is a path template split once, at provision time, into literal
// text and argument slots. Only the literal parts ever reach a Replacer:
// argument values are inserted afterwards, escaped, so a value such as
// "{env.API_KEY}" stays literal text.
type Template struct {
	parts []templatePart
	slots []string
}

type templatePart struct {
	text string // literal text, or the argument name when slot is true
	slot bool
	// dynamic marks literal text holding a placeholder.
	dynamic bool
}

// ParseTemplate splits tmpl into literal parts and slots. {name} is a slot
// when isArg(name) reports true. Any other {...} is left in the literal text
// for the Replacer when it looks like a placeholder (it has a dot, as in
// {env.X} or {http.request.header.Y}); a bare {name} that names no argument
// is an error.
func ParseTemplate(tmpl string, isArg func(string) bool) (Template, error) {
	var t Template
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			s := lit.String()
			t.parts = append(t.parts, templatePart{text: s, dynamic: strings.Contains(s, "{")})
			lit.Reset()
		}
	}
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c == '\\' && i+1 < len(tmpl) && (tmpl[i+1] == '{' || tmpl[i+1] == '}') {
			lit.WriteByte(c)
			lit.WriteByte(tmpl[i+1])
			i++
			continue
		}
		if c != '{' {
			lit.WriteByte(c)
			continue
		}
		end := strings.IndexByte(tmpl[i:], '}')
		if end < 0 {
			return Template{}, fmt.Errorf("unclosed '{' in %q", tmpl)
		}
		name := tmpl[i+1 : i+end]
		switch {
		case name == "":
			return Template{}, fmt.Errorf("empty {} in %q", tmpl)
		case isArg(name):
			flush()
			t.parts = append(t.parts, templatePart{text: name, slot: true})
			t.slots = append(t.slots, name)
		case strings.Contains(name, "."):
			lit.WriteString(tmpl[i : i+end+1])
		default:
			return Template{}, fmt.Errorf("{%s} in %q names no argument", name, tmpl)
		}
		i += end
	}
	flush()
	return t, nil
}

// Slots returns the names of the arguments the template's slots take,
// in order.
func (t Template) Slots() []string { return t.slots }

// bound returns the template with each slot taking the argument argOf
// names for it. A slot names an argument's wire name, the name the API
// gives it; values are looked up, and faults reported, under the
// argument's own name, the one the model knows.
func (t Template) bound(argOf map[string]string) Template {
	out := Template{parts: slices.Clone(t.parts), slots: make([]string, len(t.slots))}
	for i := range out.parts {
		if out.parts[i].slot {
			out.parts[i].text = argOf[out.parts[i].text]
		}
	}
	for i, s := range t.slots {
		out.slots[i] = argOf[s]
	}
	return out
}

// HasSlot reports whether name is one of the template's slots.
func (t Template) HasSlot(name string) bool {
	for _, s := range t.slots {
		if s == name {
			return true
		}
	}
	return false
}

// ExpandPath returns the escaped path: literal parts through repl, slot
// values percent-encoded as one path segment each. A slot value of "." or
// "..", or one that is such a segment once normalized (NFKC: a fullwidth
// dot is a dot), is refused, since it would move the request to another
// resource; so is a value with a control character (C0, DEL, C1), which
// servers trim, cut at or read differently.
func (t Template) ExpandPath(args map[string]any, repl Replacer) (string, error) {
	path, _, err := t.expand(args, repl)
	return path, err
}

// expand returns the path and its label: the same path with the literal
// parts as configured, placeholders unresolved, so that a secret in a path
// template never reaches a message or a log.
func (t Template) expand(args map[string]any, repl Replacer) (path, label string, err error) {
	var b, l, plain strings.Builder
	for _, p := range t.parts {
		if !p.slot {
			lit := expandLiteral(p, repl)
			b.WriteString(lit)
			plain.WriteString(lit)
			l.WriteString(p.text)
			continue
		}
		plain.WriteString("x")
		v, ok := args[p.text]
		if !ok || v == nil {
			return "", "", fmt.Errorf("argument %q is required in the path", p.text)
		}
		var s, esc string
		if list, ok := v.(pathList); ok {
			s, esc = list.raw(), list.escaped()
		} else if s, err = scalarString(v); err != nil {
			return "", "", fmt.Errorf("argument %q: %w", p.text, err)
		} else {
			esc = url.PathEscape(s)
		}
		if s == "" {
			return "", "", fmt.Errorf("argument %q: an empty value cannot go in the path", p.text)
		}
		if controls(s) > 0 {
			return "", "", fmt.Errorf("argument %q: %q is not allowed as a path value (a control character or a byte that is not UTF-8)", p.text, s)
		}
		if dotSegment(s) || dotSegment(norm.NFKC.String(s)) {
			return "", "", fmt.Errorf("argument %q: %q is not allowed as a path value (a . or .. segment)", p.text, s)
		}
		b.WriteString(esc)
		l.WriteString(esc)
	}
	// Each value is checked alone above, but with the text beside it a
	// value can still make a dot segment once the path is decoded: "x/" in
	// "/files/{name}." gives "/files/x%2F.", read as "/files/x/." by a
	// server that decodes %2F; "2e" in "/raw/%{code}" gives "%2e", and "00"
	// gives a NUL.
	if len(t.slots) > 0 {
		got, want := decodeEscapes(b.String()), decodeEscapes(plain.String())
		if dotSegments(norm.NFKC.String(got)) > dotSegments(norm.NFKC.String(want)) {
			return "", "", fmt.Errorf("the arguments make a . or .. segment in the path %s once it is decoded", l.String())
		}
		if controls(got) > controls(want) {
			return "", "", fmt.Errorf("the arguments make a control character in the path %s once it is decoded", l.String())
		}
	}
	return b.String(), l.String(), nil
}

// dotSegment reports whether s is, or has a segment that is, "." or "..".
// The value is escaped as one segment, but many servers decode %2F before
// resolving the path, so a ".." inside is refused too.
func dotSegment(s string) bool { return dotSegments(s) > 0 }

// dotSegments counts the "." and ".." segments of s, split at / and at \,
// which some servers take as a separator too.
func dotSegments(s string) int {
	n := 0
	for s != "" {
		seg := s
		if i := strings.IndexAny(s, `/\`); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		if seg == "." || seg == ".." {
			n++
		}
	}
	return n
}

// controls counts the control characters of s: C0, DEL and C1, and the
// bytes that are not UTF-8 (a server reading Latin-1 takes 0x85 for NEL).
func controls(s string) int {
	n := 0
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if unicode.IsControl(r) || r == utf8.RuneError && size == 1 {
			n++
		}
		s = s[size:]
	}
	return n
}

// decodeEscapes decodes the %XX escapes of s once and keeps any other %,
// as a lenient server reads a path.
func decodeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func expandLiteral(p templatePart, repl Replacer) string {
	if !p.dynamic || repl == nil {
		return p.text
	}
	return repl.ReplaceAll(p.text, "")
}

// Placeholders returns the keys of the placeholders in configuration text
// s, in order: "env.API_KEY" for {env.API_KEY}. Braces escaped with a
// backslash are text, as the Replacer reads them.
func Placeholders(s string) []string {
	var keys []string
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '}') {
			i++
			continue
		}
		if s[i] != '{' {
			continue
		}
		end := strings.IndexByte(s[i+1:], '}')
		if end < 0 {
			break
		}
		if key := s[i+1 : i+1+end]; key != "" {
			keys = append(keys, key)
		}
		i += end + 1
	}
	return keys
}

// Text is configuration text that may hold placeholders, such as a fixed
// header or query value. It is resolved through the Replacer on each call.
type Text struct {
	raw     string
	dynamic bool
}

// NewText prepares s for resolution.
func NewText(s string) Text { return Text{raw: s, dynamic: strings.Contains(s, "{")} }

// Resolve returns the text with placeholders replaced.
func (t Text) Resolve(repl Replacer) string {
	if !t.dynamic || repl == nil {
		return t.raw
	}
	return repl.ReplaceAll(t.raw, "")
}
