package search

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkNew builds the index of GitHub's whole imported document
// (about 1,200 tools), as a load does. Issue 15's target: under 100 ms.
func BenchmarkNew(b *testing.B) {
	tools := githubTools(b)
	b.ReportAllocs()
	start, ok := cpuTime()
	for b.Loop() {
		New(tools)
	}
	reportCPU(b, start, ok)
	b.ReportMetric(float64(len(tools)), "tools")
}

// reportCPU adds the CPU time per iteration since start (cpu-ns/op).
func reportCPU(b *testing.B, start time.Duration, ok bool) {
	if end, ok2 := cpuTime(); ok && ok2 && b.N > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkSearch runs one query of the quality set per iteration over
// GitHub's tools. Issue 15's target: under 1 ms.
func BenchmarkSearch(b *testing.B) {
	tools := githubTools(b)
	ix := New(tools)
	var queries []string
	for _, q := range readQueries(b, "queries-model.json") {
		if q.Corpus == "github" {
			queries = append(queries, q.Query)
		}
	}
	b.ReportAllocs()
	start, ok := cpuTime()
	i := 0
	for b.Loop() {
		ix.Search(queries[i%len(queries)], 10, nil)
		i++
	}
	reportCPU(b, start, ok)
}

// FuzzSearch: any tools and query give at most limit matches, best
// first, with indexes in range and only tools keep allows, and the same
// answer twice.
func FuzzSearch(f *testing.F) {
	f.Add("list_issues", "List issues.\n\nIn a [repo](https://x.y/z).", "owner", "get the issues", uint8(3), uint8(2))
	f.Add("getRepo", "", "", "repo", uint8(1), uint8(0))
	f.Add("", "the of", "a", "the of a", uint8(0), uint8(1))
	f.Add("HTTPServer2", "ÉMILE Straße ﬁ", "x_y", "émile straße", uint8(10), uint8(3))
	f.Fuzz(func(t *testing.T, name, desc, arg, query string, limit, drop uint8) {
		// Several tools from the inputs, shifted so that they differ.
		var tools []Tool
		for i := range 5 {
			tools = append(tools, Tool{
				Name:        name[min(i, len(name)):],
				Title:       strings.Repeat(arg, i),
				Description: desc[:len(desc)-min(i, len(desc))],
				Args:        []Arg{{Name: arg, Description: name}},
			})
		}
		ix := New(tools)
		keep := func(i int) bool { return drop == 0 || i%int(drop) != 0 }
		got, total := ix.Search(query, int(limit), keep)
		if len(got) > int(limit) {
			t.Fatalf("%d matches, limit %d", len(got), limit)
		}
		seen := map[int]bool{}
		for j, m := range got {
			if m.Index < 0 || m.Index >= len(tools) {
				t.Fatalf("match %d: index %d out of range", j, m.Index)
			}
			if !keep(m.Index) {
				t.Fatalf("match %d: tool %d, which keep refuses", j, m.Index)
			}
			if seen[m.Index] {
				t.Fatalf("tool %d twice", m.Index)
			}
			seen[m.Index] = true
			if j > 0 && (m.Score > got[j-1].Score || m.Score == got[j-1].Score && m.Index < got[j-1].Index) {
				t.Fatalf("not sorted: %v", got)
			}
		}
		if again, total2 := ix.Search(query, int(limit), keep); !slices.Equal(again, got) || total2 != total {
			t.Fatalf("two answers: %v then %v", got, again)
		}
	})
}
