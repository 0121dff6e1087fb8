package suggest

import (
	"slices"
	"testing"
)

func TestNear(t *testing.T) {
	t.Parallel()
	ids := []string{"repos/get", "repos/list-commits", "issues/get", "pulls/get"}
	for _, tt := range []struct {
		s    string
		want []string
	}{
		{"repo/get", []string{"repos/get"}},
		{"REPOS/GET", []string{"repos/get"}},
		{"repos/*x", []string{"repos/get", "repos/list-commits"}},
		{"list-commits", []string{"repos/list-commits"}},
		{"deployments/create", nil},
	} {
		if got := Near(tt.s, ids, 3); !slices.Equal(got, tt.want) {
			t.Errorf("Near(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestRelated(t *testing.T) {
	t.Parallel()
	tools := []string{"issues_get", "issues_update", "issues_create", "pulls_get", "repos_get", "listCommits", "search_issues"}
	for _, tt := range []struct {
		s    string
		want []string
	}{
		// Shared words first (issue, close: one each), then the nearest.
		{"close_issue", []string{"search_issues", "issues_get", "issues_create"}},
		{"getPullRequest", []string{"pulls_get", "repos_get", "issues_get"}},
		{"list_commits", []string{"listCommits"}},
		{"update_issue", []string{"issues_update", "search_issues", "issues_get"}},
		{"send_mail", nil},
	} {
		if got := Related(tt.s, tools, 3); !slices.Equal(got, tt.want) {
			t.Errorf("Related(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		want []string
	}{
		{"getPullRequests", []string{"get", "pull", "request"}},
		{"issues/list-for-repo", []string{"issue", "list", "for", "repo"}},
		{"HTTPServer_a", []string{"httpserver"}},
	} {
		if got := words(tt.s); !slices.Equal(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestAnd(t *testing.T) {
	t.Parallel()
	for want, names := range map[string][]string{"": nil, "a": {"a"}, "a and b": {"a", "b"}, "a, b and c": {"a", "b", "c"}} {
		if got := And(names); got != want {
			t.Errorf("And(%q) = %q, want %q", names, got, want)
		}
	}
}
