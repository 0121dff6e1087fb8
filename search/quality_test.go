package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

// qualityQuery is one entry of a query set in testdata.
type qualityQuery struct {
	Corpus string `json:"corpus"`
	Query  string `json:"query"`
	Want   string `json:"want"`
}

// querySets are the fixed query sets, each with how many of its 30
// queries must find their tool in the top 3.
//
// queries-model.json is phrased as a model phrases a call of search_tools
// (the task in a developer's words) and was written without sight of the
// ranking: it holds the target of 27. queries.json was written to avoid the
// tools' own words ("picture" for image, "signed in" for authenticated,
// "pushes" for webhook); the thesaurus bridges some of that, and its floor
// keeps the ranking from getting worse there.
var querySets = []struct {
	file string
	min  int
}{
	{"queries-model.json", 27},
	{"queries.json", 23},
}

// TestQuality runs the fixed query sets against the real tools they were
// written for, GitHub's imported document (all of it) and
// server-everything's tools, each its own index as each would be behind
// its own endpoint, and counts the queries whose tool is in the top 3.
func TestQuality(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("imports GitHub's whole document")
	}
	if racetest.Enabled {
		t.Skip("imports GitHub's whole document: minutes under the race detector, and no concurrency to check")
	}
	corpora := map[string][]Tool{"github": githubTools(t), "everything": everythingTools(t)}
	indexes := map[string]*Index{}
	for name, tools := range corpora {
		indexes[name] = New(tools)
		t.Logf("corpus %s: %d tools", name, len(tools))
	}
	for _, set := range querySets {
		t.Run(set.file, func(t *testing.T) {
			queries := readQueries(t, set.file)
			hits := 0
			for _, q := range queries {
				if hitTop3(t, corpora, indexes, q) {
					hits++
				}
			}
			t.Logf("search quality, %s: %d/%d in the top 3 (at least %d wanted)", set.file, hits, len(queries), set.min)
			if hits < set.min {
				t.Errorf("search quality, %s: %d/%d in the top 3, want at least %d", set.file, hits, len(queries), set.min)
			}
		})
	}
}

// hitTop3 reports whether q's tool is in its top 3, and logs a miss with
// the tool's rank and what ranked above it.
func hitTop3(t *testing.T, corpora map[string][]Tool, indexes map[string]*Index, q qualityQuery) bool {
	t.Helper()
	tools, ok := corpora[q.Corpus]
	if !ok {
		t.Fatalf("query %q: unknown corpus %q", q.Query, q.Corpus)
	}
	if !hasTool(tools, q.Want) {
		t.Fatalf("query %q: corpus %s has no tool %s; the query set names a tool that is gone", q.Query, q.Corpus, q.Want)
	}
	var names []string
	top, _ := indexes[q.Corpus].Search(q.Query, 3, nil)
	for _, m := range top {
		if tools[m.Index].Name == q.Want {
			return true
		}
		names = append(names, tools[m.Index].Name)
	}
	rank := rankOf(indexes[q.Corpus], tools, q.Query, q.Want)
	t.Logf("miss: %q wants %s (rank %s), top 3: %s", q.Query, q.Want, rank, strings.Join(names, ", "))
	return false
}

func readQueries(tb testing.TB, file string) []qualityQuery {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		tb.Fatal(err)
	}
	var set struct {
		Queries []qualityQuery `json:"queries"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		tb.Fatalf("testdata/%s: %v", file, err)
	}
	if len(set.Queries) != 30 {
		tb.Fatalf("testdata/%s holds %d queries, want 30", file, len(set.Queries))
	}
	return set.Queries
}

func hasTool(tools []Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// rankOf is the 1-based rank of the tool named want for query, or "none".
func rankOf(ix *Index, tools []Tool, query, want string) string {
	all, _ := ix.Search(query, ix.Len(), nil)
	for i, m := range all {
		if tools[m.Index].Name == want {
			return strconv.Itoa(i + 1)
		}
	}
	return "none"
}

// TestPlainRequests holds the plainest requests to their tool at the top:
// a rare synonym or a longer name must not push it down ("get a
// repository" once ranked repos_get-views first, by "display" in one of
// its argument's descriptions).
func TestPlainRequests(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("imports GitHub's whole document")
	}
	if racetest.Enabled {
		t.Skip("imports GitHub's whole document: minutes under the race detector, and no concurrency to check")
	}
	tools := githubTools(t)
	ix := New(tools)
	for query, want := range map[string]string{
		"get a repository":            "repos_get",
		"get a repo":                  "repos_get",
		"get a pull request":          "pulls_get",
		"get an issue":                "issues_get",
		"delete a repository":         "repos_delete",
		"list issues of a repository": "issues_list-for-repo",
	} {
		m, _ := ix.Search(query, 1, nil)
		if len(m) == 0 || tools[m[0].Index].Name != want {
			t.Errorf("%q: first is %v, want %s (rank %s)", query, names(tools, m), want, rankOf(ix, tools, query, want))
		}
	}
}

func names(tools []Tool, matches []Match) []string {
	var out []string
	for _, m := range matches {
		out = append(out, tools[m.Index].Name)
	}
	return out
}
