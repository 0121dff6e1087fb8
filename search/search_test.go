package search

import (
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestSearchRanksByName(t *testing.T) {
	t.Parallel()
	ix := New([]Tool{
		{Name: "list_issues", Description: "List issues in a repository."},
		{Name: "get_repo", Description: "Get a repository.", Args: []Arg{{Name: "owner"}, {Name: "repo"}}},
		{Name: "echo", Description: "Echo the message back."},
	})
	got, _ := ix.Search("get a repository", 3, nil)
	if len(got) == 0 || got[0].Index != 1 {
		t.Fatalf("get a repository: %v, want get_repo first", got)
	}
	if got, _ := ix.Search("echo", 3, func(i int) bool { return i != 2 }); len(got) != 0 {
		t.Fatalf("echo with echo filtered out: %v, want nothing", got)
	}
	if got, _ := ix.Search("nothing matches this", 3, nil); len(got) != 0 {
		t.Fatalf("no match: %v", got)
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	got := Terms("listRepoIssues get_repo HTTP2 Émile")
	want := []string{"list", "repo", "issues", "get", "repo", "http2", "émile"}
	if !slices.Equal(got, want) {
		t.Fatalf("Terms = %q, want %q", got, want)
	}
}

func TestTermsUpperRun(t *testing.T) {
	t.Parallel()
	got := Terms("HTTPServer getURLPath v2Api")
	want := []string{"http", "server", "get", "url", "path", "v2", "api"}
	if !slices.Equal(got, want) {
		t.Fatalf("Terms = %q, want %q", got, want)
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"issues": "issu", "issue": "issu", "repositories": "repositori", "repository": "repositori",
		"starred": "star", "pushes": "push", "push": "push", "created": "creat", "create": "creat",
		"caresses": "caress", "status": "statu", "hopping": "hop", "filing": "file", "files": "file",
		"api": "api", "v2": "v2", "émile": "émile",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeysDropLinksAndStopWords(t *testing.T) {
	t.Parallel()
	got := keys("See [the docs](https://docs.github.com/rest/rate-limits) or https://example.com/a-b for the Issues.")
	want := []string{"see", "doc", "issu"}
	if !slices.Equal(got, want) {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	if got := keys("an unclosed [link](https://example.com/x"); !slices.Equal(got, []string{"unclos", "link"}) {
		t.Fatalf("keys of an unclosed link = %q", got)
	}
}

func TestSearchFieldsAndPrefixes(t *testing.T) {
	t.Parallel()
	ix := New([]Tool{
		// A long description naming issues many times does not beat a
		// tool whose name says it.
		{Name: "list_labels", Description: "Labels.\n\n" + strings.Repeat("issues issue ", 50)},
		{Name: "create_issue", Description: "Create an issue."},
		{Name: "get_repo", Description: "Get one."},
		{Name: "get_env", Description: "Returns the variables."},
	})
	if got, _ := ix.Search("open issues", 1, nil); len(got) != 1 || got[0].Index != 1 {
		t.Errorf("open issues: %v, want create_issue", got)
	}
	// Names abbreviate: "repository" finds repo, "environment" finds env.
	if got, _ := ix.Search("a repository", 1, nil); len(got) != 1 || got[0].Index != 2 {
		t.Errorf("a repository: %v, want get_repo", got)
	}
	if got, _ := ix.Search("environment", 1, nil); len(got) != 1 || got[0].Index != 3 {
		t.Errorf("environment: %v, want get_env", got)
	}
	// And a short query word finds the longer words it begins.
	if got, _ := ix.Search("var", 1, nil); len(got) != 1 || got[0].Index != 3 {
		t.Errorf("var: %v, want get_env", got)
	}
	if got, _ := ix.Search("the of and", 3, nil); len(got) != 0 {
		t.Errorf("stop words only: %v, want nothing", got)
	}
	if got, _ := New(nil).Search("x", 3, nil); got != nil {
		t.Errorf("empty index: %v", got)
	}
	if got, _ := ix.Search("issue", 0, nil); got != nil {
		t.Errorf("limit 0: %v", got)
	}
}

// TestSearchConcurrent: queries share the index and nothing else (run
// with -race).
func TestSearchConcurrent(t *testing.T) {
	t.Parallel()
	ix := New([]Tool{
		{Name: "list_issues", Description: "List issues in a repository."},
		{Name: "get_repo", Description: "Get a repository.", Args: []Arg{{Name: "owner"}, {Name: "repo"}}},
	})
	want, _ := ix.Search("repository issues", 2, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if got, _ := ix.Search("repository issues", 2, nil); !slices.Equal(got, want) {
					t.Errorf("concurrent query: %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSearchTotalAndWeakCut: total counts the matches keep allows, past
// the limit, and a match far weaker than the best is neither returned
// nor counted.
func TestSearchTotalAndWeakCut(t *testing.T) {
	t.Parallel()
	ix := New([]Tool{
		{Name: "get_weather", Description: "Get the weather forecast for a city."},
		{Name: "get_forecast", Description: "Get the weather forecast for a point."},
		{Name: "list_alerts", Description: "List weather alerts for a state."},
		{Name: "create_order", Description: "Create an order for a product, delivered to a city.",
			Args: []Arg{{Name: "city", Description: "Where to deliver."}}},
	})
	got, total := ix.Search("weather forecast", 1, nil)
	if len(got) != 1 || total != 3 {
		t.Errorf("weather forecast, limit 1: %v and total %d, want one match of 3", got, total)
	}
	if _, total := ix.Search("weather forecast", 5, func(i int) bool { return i != 1 }); total != 2 {
		t.Errorf("weather forecast without get_forecast: total %d, want 2", total)
	}
	// create_order shares "city" with the query, in an argument: far
	// weaker than get_weather, which holds every word in its name or
	// summary.
	got, total = ix.Search("get the weather for a city", 5, nil)
	if len(got) == 0 || got[0].Index != 0 || total != len(got) {
		t.Fatalf("weather for a city: %v, total %d", got, total)
	}
	for _, m := range got {
		if m.Index == 3 {
			t.Errorf("weather for a city: %v holds create_order, far weaker than the best", got)
		}
		if m.Score < weakCut*got[0].Score {
			t.Errorf("weather for a city: %v holds a match under the cut", got)
		}
	}
}

// TestSearchTopicWords: a query in the words of a tool's topic, not its
// own, still finds it ("temperature" for weather), and a query of only
// words of asking finds the tools that hold them.
func TestSearchTopicWords(t *testing.T) {
	t.Parallel()
	ix := New([]Tool{
		{Name: "WeatherTool", Description: "Provide you with the latest weather information."},
		{Name: "FinanceTool", Description: "Stay informed with the latest financial updates on stocks, cryptocurrencies and more."},
		{Name: "NewsTool", Description: "Up-to-date news around the world."},
	})
	for query, want := range map[string]int{
		"What is the temperature in Miami?":        0,
		"latest market data":                       1,
		"How much is Dogecoin worth?":              1,
		"What did the president say in the press?": 2,
	} {
		if got, _ := ix.Search(query, 3, nil); len(got) == 0 || got[0].Index != want {
			t.Errorf("%q: %v, want %d first", query, got, want)
		}
	}
	if got, _ := ix.Search("the latest information", 3, nil); len(got) < 2 {
		t.Errorf("words of asking only: %v, want the tools that hold them", got)
	}
}

func TestTermsIdeographic(t *testing.T) {
	t.Parallel()
	got := Terms("获取 InfoQ 技术资讯，AI等内容")
	want := []string{"获", "取", "info", "q", "技", "术", "资", "讯", "ai", "等", "内", "容"}
	if !slices.Equal(got, want) {
		t.Fatalf("Terms = %q, want %q", got, want)
	}
}
