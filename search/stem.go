package search

import "strings"

// stem reduces an English word to its stem with steps 1 and 5 of
// Porter's algorithm (M. F. Porter, "An algorithm for suffix stripping",
// 1980): plurals, -ed and -ing, a final -y and -e. The later steps fold
// derivational suffixes (-ation, -ness, ...), which merge more words
// than a tool's name and its description mean alike. w is lower case;
// words of three letters or less and words with anything but a-z are
// kept as they are.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	w = step1a(w)
	w = step1b(w)
	w = step1c(w)
	return step5(w)
}

func step1a(w string) string {
	switch {
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

func step1b(w string) string {
	if strings.HasSuffix(w, "eed") {
		if measure(w[:len(w)-3]) > 0 {
			return w[:len(w)-1]
		}
		return w
	}
	var base string
	switch {
	case strings.HasSuffix(w, "ed"):
		base = w[:len(w)-2]
	case strings.HasSuffix(w, "ing"):
		base = w[:len(w)-3]
	default:
		return w
	}
	if !hasVowel(base) {
		return w
	}
	switch {
	case strings.HasSuffix(base, "at"), strings.HasSuffix(base, "bl"), strings.HasSuffix(base, "iz"):
		return base + "e"
	case doubleConsonant(base) && !strings.HasSuffix(base, "l") && !strings.HasSuffix(base, "s") && !strings.HasSuffix(base, "z"):
		return base[:len(base)-1]
	case measure(base) == 1 && cvc(base):
		return base + "e"
	}
	return base
}

func step1c(w string) string {
	if strings.HasSuffix(w, "y") && hasVowel(w[:len(w)-1]) {
		return w[:len(w)-1] + "i"
	}
	return w
}

func step5(w string) string {
	if strings.HasSuffix(w, "e") {
		base := w[:len(w)-1]
		if m := measure(base); m > 1 || m == 1 && !cvc(base) {
			w = base
		}
	}
	if measure(w) > 1 && doubleConsonant(w) && strings.HasSuffix(w, "l") {
		w = w[:len(w)-1]
	}
	return w
}

// consonant reports whether w[i] is a consonant in Porter's sense: y is
// one after a vowel or at the start.
func consonant(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(w, i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V]: the number of vowel-consonant runs.
func measure(w string) int {
	m, i := 0, 0
	for i < len(w) && consonant(w, i) {
		i++
	}
	for i < len(w) {
		for i < len(w) && !consonant(w, i) {
			i++
		}
		if i == len(w) {
			break
		}
		for i < len(w) && consonant(w, i) {
			i++
		}
		m++
	}
	return m
}

func hasVowel(w string) bool {
	for i := range len(w) {
		if !consonant(w, i) {
			return true
		}
	}
	return false
}

func doubleConsonant(w string) bool {
	n := len(w)
	return n >= 2 && w[n-1] == w[n-2] && consonant(w, n-1)
}

// cvc: w ends consonant-vowel-consonant, the last not w, x or y.
func cvc(w string) bool {
	n := len(w)
	if n < 3 || !consonant(w, n-1) || consonant(w, n-2) || !consonant(w, n-3) {
		return false
	}
	c := w[n-1]
	return c != 'w' && c != 'x' && c != 'y'
}
