package search

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/openapi"
)

// The tool-retrieval evaluation of testdata/searcheval (see its README):
// MetaTool's and LiveMCPBench's dev queries against their catalogs, each
// catalog imported from its OpenAPI document and indexed as an mcp
// endpoint with discovery search indexes it, scored with the metrics of
// ../shared/search-eval/README.md, for the index and for the plain BM25
// baseline that README defines.

// evalTargets are the figures the index must reach on the dev split.
var evalTargets = evalFigures{ndcg5: 0.60, bothTop10: 0.60, recall5: 0.85}

// evalCatalog is one dataset's catalog and queries.
type evalCatalog struct {
	tools   []Tool            // as the endpoint indexes them, sorted by name
	dataset map[string]string // served name -> the dataset's name
	plain   []plainDoc        // the baseline's documents: served name + description
}

// evalData is the whole dev split.
type evalData struct {
	metatool, livemcpbench *evalCatalog
	single, multi          []evalQuery
	tasks                  []evalTask
}

type evalQuery struct {
	Query string   `json:"query"`
	Gold  []string `json:"gold"`
}

type evalTask struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Steps    []string `json:"steps"`
	Gold     []string `json:"gold"`
}

var evalOnce struct {
	sync.Once
	data *evalData
	err  error
}

// loadEval reads testdata/searcheval once per test binary.
func loadEval(tb testing.TB) *evalData {
	tb.Helper()
	evalOnce.Do(func() { evalOnce.data, evalOnce.err = readEval(filepath.Join("testdata", "searcheval")) })
	if evalOnce.err != nil {
		tb.Fatal(evalOnce.err)
	}
	return evalOnce.data
}

func readEval(dir string) (*evalData, error) {
	var d evalData
	var err error
	if d.metatool, err = readEvalCatalog(filepath.Join(dir, "metatool")); err != nil {
		return nil, err
	}
	if d.livemcpbench, err = readEvalCatalog(filepath.Join(dir, "livemcpbench")); err != nil {
		return nil, err
	}
	for file, v := range map[string]any{
		"metatool/dev-single.json":    &d.single,
		"metatool/dev-multi.json":     &d.multi,
		"livemcpbench/dev-tasks.json": &d.tasks,
	} {
		if err := readJSON(filepath.Join(dir, file), v); err != nil {
			return nil, err
		}
	}
	return &d, nil
}

func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

// readEvalCatalog imports dir/openapi.json as the openapi directive does
// (no curation) and makes each tool's index entry as caddymcp's
// searchEntry does: name, title (the operation's summary), description,
// and the names and descriptions of the input schema's top-level
// properties; the endpoint indexes its tools sorted by name.
func readEvalCatalog(dir string) (*evalCatalog, error) {
	data, err := os.ReadFile(filepath.Join(dir, "openapi.json"))
	if err != nil {
		return nil, err
	}
	doc, err := openapi.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	res, err := doc.Tools(openapi.Curation{}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	c := &evalCatalog{dataset: map[string]string{}}
	for _, t := range res.Tools {
		args, err := schemaArgs(t.Definition.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("%s: tool %s: %v", dir, t.Name, err)
		}
		c.tools = append(c.tools, Tool{Name: t.Name, Title: t.Title, Description: t.Description, Args: args})
	}
	slices.SortFunc(c.tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	var catalog []struct {
		Tool        string `json:"tool"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := readJSON(filepath.Join(dir, "tools.json"), &catalog); err != nil {
		return nil, err
	}
	for _, t := range catalog {
		c.dataset[t.Tool] = cmp.Or(t.Name, t.Tool)
		c.plain = append(c.plain, plainDoc{name: t.Tool, text: t.Description})
	}
	if len(c.tools) != len(catalog) {
		return nil, fmt.Errorf("%s: the document gave %d tools, the catalog holds %d", dir, len(c.tools), len(catalog))
	}
	return c, nil
}

// searcher answers a query with served tool names, best first.
type searcher func(query string, limit int) []string

// indexSearcher is search_tools over c: the index, with the endpoint's
// refusal of a query too long.
func indexSearcher(c *evalCatalog) searcher {
	ix := New(c.tools)
	return func(query string, limit int) []string {
		if checkQuery(query) != nil { // refused: the scorer counts it an empty answer
			return nil
		}
		matches, _ := ix.Search(query, limit, nil)
		out := make([]string, len(matches))
		for i, m := range matches {
			out[i] = c.tools[m.Index].Name
		}
		return out
	}
}

// evalFigures are the README's metrics.
type evalFigures struct {
	hit1, hit5, ndcg5    float64 // MetaTool single-tool
	singleEmpty          int
	bothTop10, anyTop10  float64 // MetaTool two-tool
	multiEmpty           int
	recall5, allFound    float64 // LiveMCPBench
	microRecall5         float64
	stepEmpty, stepCount int
}

func (f evalFigures) String() string {
	return fmt.Sprintf("MetaTool single-tool: hit@1 %.3f  hit@5 %.3f  nDCG@5 %.3f  [no result: %d]\n"+
		"MetaTool two-tool: both-in-top-10 %.3f  (at least one %.3f)  [no result: %d]\n"+
		"LiveMCPBench: recall@5 %.3f  all-gold-found %.3f  (micro %.3f)  [no result: %d of %d queries]",
		f.hit1, f.hit5, f.ndcg5, f.singleEmpty, f.bothTop10, f.anyTop10, f.multiEmpty,
		f.recall5, f.allFound, f.microRecall5, f.stepEmpty, f.stepCount)
}

// evalMiss is one query whose answer missed a gold tool.
type evalMiss struct {
	set, query string
	gold, top  []string
}

// evaluate scores the two searchers of a method on the dev split, as
// score.mjs does; miss, when not nil, is told of each miss.
func evaluate(d *evalData, mt, lm searcher, miss func(evalMiss)) evalFigures {
	var f evalFigures
	if miss == nil {
		miss = func(evalMiss) {}
	}
	for _, q := range d.single {
		top := ranked(mt(q.Query, 5), d.metatool.dataset, 5)
		if len(top) == 0 {
			f.singleEmpty++
		}
		var dcg, idcg float64
		rank := 0
		for i, n := range top {
			if slices.Contains(q.Gold, n) {
				dcg += 1 / math.Log2(float64(i+2))
				if rank == 0 {
					rank = i + 1
				}
			}
		}
		for i := range min(len(q.Gold), 5) {
			idcg += 1 / math.Log2(float64(i+2))
		}
		f.ndcg5 += dcg / idcg
		if rank == 1 {
			f.hit1++
		}
		if rank >= 1 {
			f.hit5++
		} else {
			miss(evalMiss{"single", q.Query, q.Gold, top})
		}
	}
	n := float64(len(d.single))
	f.hit1, f.hit5, f.ndcg5 = f.hit1/n, f.hit5/n, f.ndcg5/n
	for _, q := range d.multi {
		top := ranked(mt(q.Query, 10), d.metatool.dataset, 10)
		if len(top) == 0 {
			f.multiEmpty++
		}
		found := 0
		for _, g := range q.Gold {
			if slices.Contains(top, g) {
				found++
			}
		}
		if found == len(q.Gold) {
			f.bothTop10++
		} else {
			miss(evalMiss{"multi", q.Query, q.Gold, top})
		}
		if found > 0 {
			f.anyTop10++
		}
	}
	f.bothTop10 /= float64(len(d.multi))
	f.anyTop10 /= float64(len(d.multi))
	tasks, golds, hits := 0, 0, 0
	for _, t := range d.tasks {
		if len(t.Gold) == 0 {
			continue
		}
		tasks++
		found := map[string]bool{}
		for _, q := range append([]string{t.Question}, t.Steps...) {
			top := ranked(lm(q, 5), d.livemcpbench.dataset, 5)
			f.stepCount++
			if len(top) == 0 {
				f.stepEmpty++
			}
			for _, n := range top {
				found[n] = true
			}
		}
		hit := 0
		for _, g := range t.Gold {
			if found[g] {
				hit++
			}
		}
		if hit < len(t.Gold) {
			var got []string
			for n := range found {
				got = append(got, n)
			}
			slices.Sort(got)
			miss(evalMiss{"task", t.Question, t.Gold, got})
		} else {
			f.allFound++
		}
		f.recall5 += float64(hit) / float64(len(t.Gold))
		golds += len(t.Gold)
		hits += hit
	}
	f.recall5 /= float64(tasks)
	f.allFound /= float64(tasks)
	f.microRecall5 = float64(hits) / float64(golds)
	return f
}

// ranked maps served names to the dataset's, drops repeats and keeps the
// first k.
func ranked(names []string, dataset map[string]string, k int) []string {
	var out []string
	for _, n := range names {
		m, ok := dataset[n]
		if !ok || slices.Contains(out, m) {
			continue
		}
		out = append(out, m)
	}
	return out[:min(len(out), k)]
}

// evalBoth scores the index and plain BM25.
func evalBoth(d *evalData, miss func(evalMiss)) (index, bm25 evalFigures) {
	index = evaluate(d, indexSearcher(d.metatool), indexSearcher(d.livemcpbench), miss)
	bm25 = evaluate(d, newPlainBM25(d.metatool.plain).search, newPlainBM25(d.livemcpbench.plain).search, nil)
	return index, bm25
}

// TestSearchEval holds the index to its targets on the dev split, and
// the baseline to the README's figures (a check of this harness).
func TestSearchEval(t *testing.T) {
	t.Parallel()
	d := loadEval(t)
	var misses []evalMiss
	index, bm25 := evalBoth(d, func(m evalMiss) { misses = append(misses, m) })
	t.Logf("index:\n%v", index)
	t.Logf("plain BM25:\n%v", bm25)
	if os.Getenv("SEARCHEVAL_MISSES") != "" {
		for _, m := range misses {
			t.Logf("miss %s: %q\n\tgold %v\n\tgot  %v", m.set, m.query, m.gold, m.top)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"baseline MetaTool single-tool nDCG@5", bm25.ndcg5, 0.386},
		{"baseline MetaTool two-tool both-in-top-10", bm25.bothTop10, 0.286},
		{"baseline LiveMCPBench recall@5", bm25.recall5, 0.691},
	} {
		if math.Abs(c.got-c.want) > 0.0005 {
			t.Errorf("%s: %.4f, README says %.3f: the harness is not the scorer's", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"MetaTool single-tool nDCG@5", index.ndcg5, evalTargets.ndcg5},
		{"MetaTool two-tool both-in-top-10", index.bothTop10, evalTargets.bothTop10},
		{"LiveMCPBench recall@5", index.recall5, evalTargets.recall5},
	} {
		if c.got < c.want {
			t.Errorf("%s: %.3f, want at least %.2f", c.name, c.got, c.want)
		}
	}
}

// BenchmarkSearchEval runs every dev query against the index and the
// baseline, and reports the metrics of both side by side.
func BenchmarkSearchEval(b *testing.B) {
	d := loadEval(b)
	var index, bm25 evalFigures
	for b.Loop() {
		index, bm25 = evalBoth(d, nil)
	}
	b.Logf("%-34s %8s %8s", "dev split", "index", "BM25")
	for _, r := range []struct {
		name        string
		index, bm25 float64
	}{
		{"MetaTool single hit@1", index.hit1, bm25.hit1},
		{"MetaTool single hit@5", index.hit5, bm25.hit5},
		{"MetaTool single nDCG@5", index.ndcg5, bm25.ndcg5},
		{"MetaTool two-tool both-in-top-10", index.bothTop10, bm25.bothTop10},
		{"MetaTool two-tool one-in-top-10", index.anyTop10, bm25.anyTop10},
		{"LiveMCPBench recall@5", index.recall5, bm25.recall5},
		{"LiveMCPBench all-gold-found", index.allFound, bm25.allFound},
		{"LiveMCPBench micro recall@5", index.microRecall5, bm25.microRecall5},
	} {
		b.Logf("%-34s %8.3f %8.3f", r.name, r.index, r.bm25)
	}
	b.Logf("%-34s %8d %8d", "queries with no result", index.singleEmpty+index.multiEmpty+index.stepEmpty, bm25.singleEmpty+bm25.multiEmpty+bm25.stepEmpty)
	b.ReportMetric(index.ndcg5, "ndcg@5")
	b.ReportMetric(index.bothTop10, "both@10")
	b.ReportMetric(index.recall5, "recall@5")
	b.ReportMetric(bm25.ndcg5, "bm25-ndcg@5")
	b.ReportMetric(bm25.bothTop10, "bm25-both@10")
	b.ReportMetric(bm25.recall5, "bm25-recall@5")
}

// The plain BM25 baseline of the README (score.mjs's BM25Index): k1 1.2,
// b 0.75, one field (the served name and the description), tokens are
// Unicode letter/digit runs split at camelCase and lowered, no stemming
// or stop words, unique query terms, IDF ln(1 + (N - df + 0.5)/(df +
// 0.5)), only tools sharing a term returned, ties by name.

type plainDoc struct{ name, text string }

type plainBM25 struct {
	docs  []plainIndexed
	df    map[string]int
	avgdl float64
}

type plainIndexed struct {
	name string
	tf   map[string]int
	len  int
}

var (
	plainCamel1 = regexp.MustCompile(`(\p{Ll}|\p{N})(\p{Lu})`)
	plainCamel2 = regexp.MustCompile(`(\p{Lu})(\p{Lu}\p{Ll})`)
	plainWord   = regexp.MustCompile(`[\p{L}\p{N}]+`)
)

func plainTokens(text string) []string {
	text = plainCamel1.ReplaceAllString(text, "$1 $2")
	text = plainCamel2.ReplaceAllString(text, "$1 $2")
	return plainWord.FindAllString(strings.ToLower(text), -1)
}

func newPlainBM25(docs []plainDoc) *plainBM25 {
	ix := &plainBM25{df: map[string]int{}}
	total := 0
	for _, d := range docs {
		toks := plainTokens(d.name + " " + d.text)
		tf := map[string]int{}
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			ix.df[t]++
		}
		ix.docs = append(ix.docs, plainIndexed{name: d.name, tf: tf, len: len(toks)})
		total += len(toks)
	}
	ix.avgdl = float64(total) / float64(len(docs))
	return ix
}

func (ix *plainBM25) search(query string, limit int) []string {
	const k1, b = 1.2, 0.75
	var terms []string
	for _, t := range plainTokens(query) {
		if !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	n := float64(len(ix.docs))
	type scored struct {
		name string
		s    float64
	}
	var out []scored
	for _, d := range ix.docs {
		s := 0.0
		for _, t := range terms {
			f := float64(d.tf[t])
			if f == 0 {
				continue
			}
			df := float64(ix.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * (f * (k1 + 1)) / (f + k1*(1-b+b*float64(d.len)/ix.avgdl))
		}
		if s > 0 {
			out = append(out, scored{d.name, s})
		}
	}
	slices.SortFunc(out, func(x, y scored) int {
		if x.s != y.s {
			return cmp.Compare(y.s, x.s)
		}
		return strings.Compare(x.name, y.name)
	})
	names := make([]string, 0, min(limit, len(out)))
	for _, x := range out[:min(limit, len(out))] {
		names = append(names, x.name)
	}
	return names
}
