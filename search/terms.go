package search

import (
	"strings"
	"unicode"
)

// Terms splits text into lower-case words, also at the joins of camelCase
// and snake_case names (an upper-case run before a capitalized word ends
// a word too: HTTPServer is http and server).
func Terms(text string) []string {
	var terms []string
	var word []rune
	flush := func() {
		if len(word) > 0 {
			terms = append(terms, strings.ToLower(string(word)))
			word = word[:0]
		}
	}
	runes := []rune(text)
	for i, r := range runes {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && len(word) > 0 && i > 0 {
				prev := runes[i-1]
				nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
					flush()
				}
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return terms
}

// keys are the index terms of text: its Terms without stop words,
// stemmed. Link targets and bare URLs are dropped first: the words of an
// address (docs.github.com/rest/.../secondary-rate-limits) are not what
// the text says the tool does.
func keys(text string) []string {
	if strings.Contains(text, "://") || strings.Contains(text, "](") {
		text = stripLinks(text)
	}
	terms := Terms(text)
	out := terms[:0]
	for _, t := range terms {
		if stopWords[t] {
			continue
		}
		out = append(out, stem(t))
	}
	return out
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
