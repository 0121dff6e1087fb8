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
