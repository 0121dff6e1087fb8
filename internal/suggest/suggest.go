package suggest

import (
	"slices"
	"strings"
	"unicode"
)

// Near returns up to n candidates nearest to s by edit distance, nearest
// first, ignoring case: a typo. A glob (with * or ?) is compared by what
// comes before its first wildcard, with a candidate's start of about that
// length; a candidate that holds s is near. None when nothing is near.
func Near(s string, candidates []string, n int) []string {
	target := strings.ToLower(strings.TrimSpace(s))
	literal, glob := target, false
	if i := strings.IndexAny(target, "*?"); i >= 0 {
		literal, glob = target[:i], true
	}
	var near []scored
	for _, c := range candidates {
		lower := strings.ToLower(c)
		d := EditDistance(literal, lower)
		if glob {
			for k := max(0, len(literal)-2); k <= min(len(lower), len(literal)+2); k++ {
				d = min(d, EditDistance(literal, lower[:k]))
			}
		}
		if literal != "" && strings.Contains(lower, literal) {
			d = min(d, 1) // a part of the name
		}
		if d <= max(2, len(literal)/3) {
			near = append(near, scored{c, d})
		}
	}
	return best(near, n)
}

// Related returns up to n candidates that share the most words with s
// (words split at _, -, ., /, spaces and lower-to-upper case changes; a
// plural counts as its singular), nearest by edit distance among equals:
// the name of another thing that does what s says (close_issue ->
// issues_update). None when no candidate shares a word.
func Related(s string, candidates []string, n int) []string {
	want := words(s)
	var related []scored
	for _, c := range candidates {
		shared := 0
		for _, w := range words(c) {
			if slices.Contains(want, w) {
				shared++
			}
		}
		if shared > 0 {
			// More words shared first, then the nearer name.
			related = append(related, scored{c, -shared*1000 + min(EditDistance(strings.ToLower(s), strings.ToLower(c)), 999)})
		}
	}
	return best(related, n)
}

// And writes names as a list: "a", "a and b", "a, b and c".
func And(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

type scored struct {
	name string
	d    int
}

func best(list []scored, n int) []string {
	slices.SortStableFunc(list, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var names []string
	for _, s := range list[:min(len(list), n)] {
		names = append(names, s.name)
	}
	return names
}

// words are the lower-case words of a name, each once, a plural's
// trailing s dropped.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		w := strings.TrimSuffix(string(cur), "s")
		if len(w) > 1 && !slices.Contains(out, w) {
			out = append(out, w)
		}
		cur = cur[:0]
	}
	prev := rune(0)
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, unicode.ToLower(r))
		default:
			cur = append(cur, unicode.ToLower(r))
		}
		prev = r
	}
	flush()
	return out
}

// EditDistance is the Levenshtein distance of a and b, in bytes, capped
// for long inputs: the names compared are short.
func EditDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
