package search

import (
	"slices"
	"testing"
)

func TestSearchRanksByName(t *testing.T) {
	ix := New([]Tool{
		{Name: "list_issues", Description: "List issues in a repository."},
		{Name: "get_repo", Description: "Get a repository.", Args: []Arg{{Name: "owner"}, {Name: "repo"}}},
		{Name: "echo", Description: "Echo the message back."},
	})
	got := ix.Search("get a repository", 3, nil)
	if len(got) == 0 || got[0].Index != 1 {
		t.Fatalf("get a repository: %v, want get_repo first", got)
	}
	if got := ix.Search("echo", 3, func(i int) bool { return i != 2 }); len(got) != 0 {
		t.Fatalf("echo with echo filtered out: %v, want nothing", got)
	}
	if got := ix.Search("nothing matches this", 3, nil); len(got) != 0 {
		t.Fatalf("no match: %v", got)
	}
}

func TestTerms(t *testing.T) {
	got := Terms("listRepoIssues get_repo HTTP2 Émile")
	want := []string{"list", "repo", "issues", "get", "repo", "http2", "émile"}
	if !slices.Equal(got, want) {
		t.Fatalf("Terms = %q, want %q", got, want)
	}
}
