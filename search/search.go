// Package search ranks tools for a natural-language query with BM25, in
// process: the index is built once from the tools' names, titles,
// descriptions and argument names and descriptions, and a query reads it
// without locks. It knows nothing of MCP, HTTP or Caddy.
package search

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// Tool is what the index reads of one tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	Args        []Arg
}

// Arg is one argument of a Tool.
type Arg struct {
	Name        string
	Description string
}

// Match is one tool found: its position in the slice New was given and its
// score (higher is better).
type Match struct {
	Index int
	Score float64
}

// BM25's usual parameters.
const (
	k1 = 1.2
	b  = 0.75
)

// Field weights: a word in the name says more than one in an argument's
// description.
const (
	nameWeight  = 3
	titleWeight = 2
	descWeight  = 1
	argWeight   = 1
)

// Index is a BM25 index over tools, safe for concurrent queries.
type Index struct {
	postings map[string][]posting // term -> the tools holding it
	lengths  []float64            // weighted length of each tool
	avgLen   float64
}

type posting struct {
	tool int
	freq float64 // weighted term frequency
}

// New builds the index of tools.
func New(tools []Tool) *Index {
	ix := &Index{postings: map[string][]posting{}, lengths: make([]float64, len(tools))}
	var total float64
	for i, t := range tools {
		freq := map[string]float64{}
		add := func(text string, w float64) {
			for _, term := range Terms(text) {
				freq[term] += w
				ix.lengths[i] += w
			}
		}
		add(t.Name, nameWeight)
		add(t.Title, titleWeight)
		add(t.Description, descWeight)
		for _, a := range t.Args {
			add(a.Name, argWeight)
			add(a.Description, argWeight)
		}
		total += ix.lengths[i]
		for _, term := range sortedKeys(freq) {
			ix.postings[term] = append(ix.postings[term], posting{tool: i, freq: freq[term]})
		}
	}
	if len(tools) > 0 {
		ix.avgLen = total / float64(len(tools))
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.lengths) }

// Search returns at most limit tools matching query, best first; keep, when
// not nil, says which tools may be returned (those a caller may call). Ties
// keep the order the tools were given in.
func (ix *Index) Search(query string, limit int, keep func(int) bool) []Match {
	if limit <= 0 || len(ix.lengths) == 0 {
		return nil
	}
	scores := map[int]float64{}
	n := float64(len(ix.lengths))
	for _, term := range unique(Terms(query)) {
		list := ix.postings[term]
		if len(list) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(list))+0.5)/(float64(len(list))+0.5))
		for _, p := range list {
			if keep != nil && !keep(p.tool) {
				continue
			}
			norm := p.freq + k1*(1-b+b*ix.lengths[p.tool]/ix.avgLen)
			scores[p.tool] += idf * p.freq * (k1 + 1) / norm
		}
	}
	matches := make([]Match, 0, len(scores))
	for i, s := range scores {
		matches = append(matches, Match{Index: i, Score: s})
	}
	slices.SortFunc(matches, func(x, y Match) int {
		if x.Score != y.Score {
			if x.Score > y.Score {
				return -1
			}
			return 1
		}
		return x.Index - y.Index
	})
	if len(matches) > limit {
		matches = matches[:limit]
	}
	return matches
}

// Terms splits text into lower-case words, also at the joins of camelCase
// and snake_case names.
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
			if unicode.IsUpper(r) && len(word) > 0 && i > 0 && unicode.IsLower(runes[i-1]) {
				flush()
			}
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return terms
}

func unique(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
