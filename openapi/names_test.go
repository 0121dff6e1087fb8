package openapi

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct{ id, method, path, want string }{
		{"repos/get", "GET", "/repos/{owner}/{repo}", "repos_get"},
		{"apps/get-authenticated", "GET", "/app", "apps_get-authenticated"},
		{"getPetById", "GET", "/pet/{petId}", "getPetById"},
		{"Pets.List v2", "GET", "/pets", "Pets_List_v2"},
		{"créer", "POST", "/x", "cr_er"},
		{"", "GET", "/repos/{owner}/{repo}/issues", "get_repos_owner_repo_issues"},
		{"", "DELETE", "/", "delete"},
		{"", "POST", "/v1/{name}:cancel", "post_v1_name_cancel"},
		{long, "GET", "/x", long[:55] + "_" + shortHash(long)},
	}
	for _, tt := range tests {
		got := toolName(tt.id, tt.method, tt.path)
		if got != tt.want {
			t.Errorf("toolName(%q, %s %s) = %q, want %q", tt.id, tt.method, tt.path, got, tt.want)
		}
		if !toolNameRule.MatchString(got) {
			t.Errorf("toolName(%q) = %q is not a valid tool name", tt.id, got)
		}
	}
}

func TestArgName(t *testing.T) {
	long := strings.Repeat("y", 70)
	tests := []struct{ wire, want string }{
		{"per_page", "per_page"},
		{"perPage", "perPage"},
		{"filter[status]", "filter_status"},
		{"$top", "top"},
		{"X-Api-Version", "X_Api_Version"},
		{"enterprise-team", "enterprise_team"},
		{"user.name", "user_name"},
		{"2fa", "p_2fa"},
		{"$", "p_"},
		{"ü", "p_"},
		{"_private", "_private"},
		{"a--b", "a_b"},
		{long, long[:55] + "_" + shortHash(long)},
	}
	for _, tt := range tests {
		got := argName(tt.wire)
		if got != tt.want {
			t.Errorf("argName(%q) = %q, want %q", tt.wire, got, tt.want)
		}
		if !argNameRule.MatchString(got) {
			t.Errorf("argName(%q) = %q is not a valid argument name", tt.wire, got)
		}
	}
}

// TestFitDescription: a description past MaxDescription is cut after its
// last sentence that fits, or at a word, and ends in an ellipsis; links
// keep their text.
func TestFitDescription(t *testing.T) {
	t.Parallel()
	sentence := "This sentence is forty-five bytes long, ok. "
	long := strings.Repeat(sentence, 100)
	got := fitDescription(long, 2048)
	if len(got) > 2048 || !strings.HasSuffix(got, "ok."+ellipsis) || !strings.HasPrefix(long, strings.TrimSuffix(got, ellipsis)) {
		t.Errorf("cut to %d bytes, ending %q", len(got), got[max(0, len(got)-20):])
	}
	words := strings.Repeat("word ", 1000)
	if got := fitDescription(words, 100); len(got) > 100 || !strings.HasSuffix(got, "word"+ellipsis) {
		t.Errorf("cut at a word: %q", got)
	}
	if got := fitDescription("short", 100); got != "short" {
		t.Errorf("a short text changed: %q", got)
	}
	if got := plainLinks("See [pagination](https://docs.github.com/rest/pagination) and [issues](/rest/issues)."); got != "See pagination and issues." {
		t.Errorf("links: %q", got)
	}
}
