package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terms splits text into lower-case words, also at the joins of camelCase
// and snake_case names (an upper-case run before a capitalized word ends
// a word too: HTTPServer is http and server).
func Terms(text string) []string {
	var terms []string
	split(text, func(word string) { terms = append(terms, strings.ToLower(word)) })
	return terms
}

// split calls fn with each word of text, as Terms cuts them, in its
// original case and without copying it.
func split(text string, fn func(word string)) {
	start := -1        // where the current word began, -1 outside one
	var prev rune = -1 // the rune before i
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				fn(text[start:i])
				start = -1
			}
			prev = r
			continue
		}
		// Chinese and Japanese write no spaces: each of their characters
		// is a word, and so is a run of other letters beside them
		// ("AI等" is ai and 等).
		if start >= 0 && (ideographic(r) || ideographic(prev)) {
			fn(text[start:i])
			start = i
		}
		if start >= 0 && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && unicode.IsLower(next) {
				fn(text[start:i])
				start = i
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// ideographic reports whether r is written without spaces between
// words: Han, Hiragana or Katakana.
func ideographic(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r))
}

// keys are the index terms of text: its Terms without stop words,
// stemmed.
func keys(text string) []string {
	var a analyzer
	var out []string
	a.each(text, func(k string) { out = append(out, k) })
	return out
}

// analyzer turns text into index terms, remembering the term of each
// word it has seen: the words of a large document repeat, and this
// spares lowering and stemming them again.
type analyzer struct {
	cache map[string]string // lower-case word -> its term, "" for a stop word
	buf   []byte
}

// each calls fn with the index terms of text. Link targets and bare URLs
// are dropped first: the words of an address
// (docs.github.com/rest/.../secondary-rate-limits) are not what the text
// says the tool does.
func (a *analyzer) each(text string, fn func(term string)) {
	if strings.Contains(text, "://") || strings.Contains(text, "](") {
		text = stripLinks(text)
	}
	if a.cache == nil {
		a.cache = map[string]string{}
	}
	split(text, func(word string) {
		lower := a.lower(word)
		term, ok := a.cache[string(lower)] // no copy for the lookup
		if !ok {
			w := string(lower)
			if !stopWords[w] {
				term = stem(w)
			}
			a.cache[w] = term
		}
		if term != "" {
			fn(term)
		}
	})
}

// lower is word in lower case, in a buffer reused for the next word.
func (a *analyzer) lower(word string) []byte {
	a.buf = a.buf[:0]
	for i := 0; i < len(word); i++ {
		c := word[i]
		if c >= utf8.RuneSelf {
			return append(a.buf[:0], strings.ToLower(word)...)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		a.buf = append(a.buf, c)
	}
	return a.buf
}

// stripLinks removes the targets of Markdown links, "[text](target)", and
// bare http(s) URLs, keeping the links' text.
func stripLinks(text string) string {
	var b strings.Builder
	for len(text) > 0 {
		link := strings.Index(text, "](")
		url := strings.Index(text, "://")
		switch {
		case link >= 0 && (url < 0 || link < url):
			b.WriteString(text[:link+1])
			rest := text[link+2:]
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return b.String()
			}
			text = rest[end+1:]
		case url >= 0:
			start := url
			for start > 0 && isURLRune(rune(text[start-1])) {
				start--
			}
			b.WriteString(text[:start])
			end := url + 3
			for end < len(text) && !unicode.IsSpace(rune(text[end])) && text[end] != ')' && text[end] != '"' {
				end++
			}
			text = text[end:]
		default:
			b.WriteString(text)
			text = ""
		}
	}
	return b.String()
}

func isURLRune(r rune) bool {
	return r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '+' || r == '-' || r == '.')
}

// stopWords are English function words and single letters: they occur in
// most texts and say nothing about which tool is meant. The list is
// the usual short one of search engines, with question words (a query
// is often a question) and pronouns.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a an the and or but nor not no yes if then else so than too very
of in on at to into onto from by for with without within about above below
over under between through during before after up down out off again
is are was were be been being am do does did doing done have has had having
can could will would shall should may might must
i me my mine myself we us our ours you your yours he him his she her hers
it its they them their theirs this that these those there here
who whom whose which what when where why how
all any both each few more most other some such only own same just also
as one many much
b c d e f g h j k l m n o p q r s t u v w x y z`) {
		m[w] = true
	}
	return m
}()

// weakTerms are the terms of the words of asking rather than of what is
// asked for: a request says it needs specific, detailed, current
// information, and a tool's description offers comprehensive, tailored
// help. In a query they weigh weakWeight (see wordWeights).
var weakTerms = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
please need want help like would know tell give provide information info
details detail detailed specific specifically particular current currently
latest recent recently various variety wide range comprehensive including
include best good great looking interested curious able possible way
option assist assistance offer offering tailored personalized quality
related regarding
hi hello hey thanks thank certainly sure kindly really also just
anything something everything things thing stuff lot lots`) {
		m[stem(w)] = true
	}
	return m
}()

const weakWeight = 0.3
