package search

import (
	"math"
	"slices"
	"strings"
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

// The fields of a tool, each with its weight and its BM25 b (how much
// the field's length, against the average, lowers a term's weight).
const (
	fieldName = iota
	fieldTitle
	fieldSummary
	fieldBody
	fieldArgName
	fieldArgDesc
	numFields
)

// The weights favour what says what a tool does (its name, title and
// first paragraph) over how it does it. The rest of a description weighs
// little and is fully length-normalized: in large documents it is long
// and mostly the same boilerplate (scopes, media types, rate limits), and
// weighing it more ranked worse on the quality queries.
var fields = [numFields]struct{ weight, b float64 }{
	fieldName:    {3, 0.75},
	fieldTitle:   {2, 0.75},
	fieldSummary: {2, 0.75},
	fieldBody:    {0.1, 1},
	fieldArgName: {1, 0.75},
	fieldArgDesc: {1, 0.75},
}

// primaryBoost scales the share of a query's words that a tool's name,
// title or summary hold: the words of what a tool does outrank the same
// words among its arguments.
var primaryBoost = 2.0

// nameBoost scales the share of a tool's name that the query's words
// hold, each name word weighing the square root of its IDF (nameIDFPower):
// a query that holds "stock" of get_stock_ohlcv holds more of it than
// one that holds "get".
var nameBoost = 3.0

const nameIDFPower = 0.5

// weakCut: a match whose score is less than weakCut times the best
// one's is left out of an answer and its total.
const weakCut = 0.05

// k1 is BM25's saturation of the summed field frequencies.
const k1 = 1.2

// prefixDiscount scales a match of a query word with an index word that
// only begins like it (or that it begins like); minPrefix is the
// shortest such shared beginning.
const (
	prefixDiscount = 0.3
	minPrefix      = 3
)

// Index is a BM25F index over tools, safe for concurrent queries.
type Index struct {
	postings map[string][]posting // term -> the tools holding it, by tool
	terms    []string             // the keys of postings, sorted
	n        int
	// nameWeight is the weight of each tool's name: the sum over its
	// distinct terms of IDF^nameIDFPower.
	nameWeight []float64
}

type posting struct {
	tool int
	tf   float64 // the term's weighted, length-normalized frequency
	// primary: the term is in the tool's name, title or summary, the
	// fields that say what it does.
	primary bool
	inName  bool // the term is in the tool's name
}

// New builds the index of tools.
func New(tools []Tool) *Index {
	ix := &Index{postings: map[string][]posting{}, n: len(tools), nameWeight: make([]float64, len(tools))}
	type termFreq struct {
		term string
		freq [numFields]uint32
	}
	type doc struct {
		terms []termFreq // in the order first seen: deterministic, and postings only need tool order
		len   [numFields]float64
	}
	docs := make([]doc, len(tools))
	var total [numFields]float64
	at := map[string]int{} // term -> its place in the current doc's terms
	var a analyzer
	for i, t := range tools {
		d := &docs[i]
		clear(at)
		add := func(text string, f int) {
			if fields[f].weight == 0 {
				return // nothing to score, and no posting to walk
			}
			a.each(text, func(k string) {
				j, ok := at[k]
				if !ok {
					j = len(d.terms)
					at[k] = j
					d.terms = append(d.terms, termFreq{term: k})
				}
				d.terms[j].freq[f]++
				d.len[f]++
			})
		}
		add(t.Name, fieldName)
		add(t.Title, fieldTitle)
		summary, body := splitSummary(t.Description)
		add(summary, fieldSummary)
		add(body, fieldBody)
		for _, a := range t.Args {
			add(a.Name, fieldArgName)
			add(a.Description, fieldArgDesc)
		}
		for f := range numFields {
			total[f] += d.len[f]
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		if len(tools) > 0 {
			avg[f] = total[f] / float64(len(tools))
		}
	}
	// Every posting list in one allocation, each cut to its length: a
	// large document has tens of thousands of postings.
	df := map[string]int{}
	count := 0
	for i := range docs {
		for _, e := range docs[i].terms {
			df[e.term]++
			count++
		}
	}
	slab := make([]posting, count)
	for i := range docs {
		for _, e := range docs[i].terms {
			if _, ok := ix.postings[e.term]; !ok {
				n := df[e.term]
				ix.postings[e.term], slab = slab[:0:n], slab[n:]
			}
		}
	}
	for i := range docs {
		d := &docs[i]
		var norm [numFields]float64
		for f := range numFields {
			norm[f] = 1 - fields[f].b
			if avg[f] > 0 {
				norm[f] += fields[f].b * d.len[f] / avg[f]
			}
		}
		for _, e := range d.terms {
			var tf float64
			for f, c := range e.freq {
				if c > 0 {
					tf += fields[f].weight * float64(c) / norm[f]
				}
			}
			primary := e.freq[fieldName]+e.freq[fieldTitle]+e.freq[fieldSummary] > 0
			if e.freq[fieldName] > 0 {
				ix.nameWeight[i] += math.Pow(idf(float64(len(tools)), df[e.term]), nameIDFPower)
			}
			ix.postings[e.term] = append(ix.postings[e.term], posting{tool: i, tf: tf, primary: primary, inName: e.freq[fieldName] > 0})
		}
	}
	ix.terms = sortedKeys(ix.postings)
	return ix
}

// splitSummary cuts a description at its first blank line: the first
// paragraph says what the tool does (OpenAPI's summary, when the
// document has one), the rest how.
func splitSummary(desc string) (summary, body string) {
	if i := strings.Index(desc, "\n\n"); i >= 0 {
		return desc[:i], desc[i+2:]
	}
	return desc, ""
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return ix.n }

// Search returns at most limit tools matching query, best first, and
// total, how many tools match it; keep, when not nil, says which tools
// may be returned and counted (those a caller may call). A tool that
// scores less than weakCut (a twentieth) of the best match's score does
// not match: it is neither returned nor counted. Ties keep the order the
// tools were given in.
func (ix *Index) Search(query string, limit int, keep func(int) bool) (matches []Match, total int) {
	if limit <= 0 || ix.n == 0 {
		return nil, 0
	}
	// What each tool holds of the query: its summed word scores, how many
	// of the query's words it matches, how many its name, title or
	// summary holds (a word found there through a synonym or prefix
	// counting at that variant's weight), and the weight of its name the
	// query holds. Every sum but the last is of query words at their
	// weight.
	type tally struct {
		score, matched, primary, named float64
	}
	tallies := make([]tally, ix.n)
	cur := make([]tally, ix.n) // one query word's best, per tool
	var touched, hit []int
	n := float64(ix.n)
	words := unique(keys(expandAcronyms(query)))
	weights, sum := wordWeights(words)
	for j, q := range words {
		hit = hit[:0]
		// A variant weighs at most what the word itself does: a rare
		// synonym or prefix ("display" for "get") must not outweigh the
		// common word that was asked for.
		ceiling := math.Inf(1)
		if list, ok := ix.postings[q]; ok {
			ceiling = idf(n, len(list))
		}
		for _, v := range ix.variants(q) {
			list := ix.postings[v.term]
			termIDF := idf(n, len(list))
			w := min(termIDF, ceiling)
			for _, p := range list {
				s := v.weight * w * p.tf * (k1 + 1) / (k1 + p.tf)
				if !(s > 0) {
					continue // cur and touched below take 0 for "not yet"
				}
				c := &cur[p.tool]
				if c.score == 0 {
					hit = append(hit, p.tool)
				}
				c.score = max(c.score, s)
				if p.primary {
					c.primary = max(c.primary, v.weight)
				}
				if p.inName {
					c.named = max(c.named, math.Pow(termIDF, nameIDFPower))
				}
			}
		}
		qw := weights[j]
		for _, i := range hit {
			t, c := &tallies[i], &cur[i]
			if t.score == 0 {
				touched = append(touched, i)
			}
			t.score += qw * c.score
			t.matched += qw
			t.primary += qw * c.primary
			t.named += c.named
			*c = tally{}
		}
	}
	matches = make([]Match, 0, min(len(touched), 4*limit))
	for _, i := range touched {
		if keep != nil && !keep(i) {
			continue
		}
		t := &tallies[i]
		// Scaled by the share of the query's words the tool matches
		// (Lucene's classic coordination factor): a tool that matches
		// every word beats one that matches one word many times.
		score := t.score * t.matched / sum * (1 + primaryBoost*t.primary/sum)
		// And by the share of the tool's name the query holds: asked for
		// "get a repository", repos_get is the whole answer and
		// repos_get-clones a part of another.
		if ix.nameWeight[i] > 0 {
			score *= 1 + nameBoost*min(t.named, ix.nameWeight[i])/ix.nameWeight[i]
		}
		matches = append(matches, Match{Index: i, Score: score})
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
	// Matches far weaker than the best are left out: they share a
	// common word or a distant synonym with the query, and would only
	// bury the answer.
	if len(matches) > 0 {
		floor := weakCut * matches[0].Score
		total, _ = slices.BinarySearchFunc(matches, floor, func(m Match, floor float64) int {
			if m.Score >= floor {
				return -1
			}
			return 1
		})
		matches = matches[:total]
	}
	if len(matches) > limit {
		matches = matches[:limit]
	}
	return matches, total
}

// wordWeights are the weights of a query's words and their sum: the
// words of asking (information, specific, latest: weakTerms) weigh
// weakWeight, the words of what is asked for 1; when the words of asking
// are all there is, they weigh 1 too.
func wordWeights(words []string) (weights []float64, sum float64) {
	weights = make([]float64, len(words))
	allWeak := true
	for _, q := range words {
		allWeak = allWeak && weakTerms[q]
	}
	for j, q := range words {
		weights[j] = 1
		if weakTerms[q] && !allWeak {
			weights[j] = weakWeight
		}
		sum += weights[j]
	}
	return weights, sum
}

// idf is BM25's inverse document frequency of a term in df of n tools.
func idf(n float64, df int) float64 {
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

type variant struct {
	term   string
	weight float64
}

// variants are the index terms a query term q matches: itself, the terms
// that are a prefix of it and the terms it is a prefix of (both at
// least minPrefix long), the last two at prefixDiscount.
func (ix *Index) variants(q string) []variant {
	var out []variant
	if _, ok := ix.postings[q]; ok {
		out = append(out, variant{q, 1})
	}
	if len(q) < minPrefix {
		return ix.synonyms(q, out)
	}
	for l := minPrefix; l < len(q); l++ {
		if _, ok := ix.postings[q[:l]]; ok {
			out = append(out, variant{q[:l], prefixDiscount})
		}
	}
	i, _ := slices.BinarySearch(ix.terms, q)
	for ; i < len(ix.terms) && strings.HasPrefix(ix.terms[i], q); i++ {
		if ix.terms[i] != q {
			out = append(out, variant{ix.terms[i], prefixDiscount})
		}
	}
	return ix.synonyms(q, out)
}

// synonyms adds to out the thesaurus's words for q that the index holds.
func (ix *Index) synonyms(q string, out []variant) []variant {
	for _, r := range thesaurus()[q] {
		if _, ok := ix.postings[r.term]; ok {
			out = append(out, variant{r.term, r.weight})
		}
	}
	return out
}

func unique(terms []string) []string {
	slices.Sort(terms)
	return slices.Compact(terms)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
