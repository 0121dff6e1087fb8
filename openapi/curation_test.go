package openapi

import (
	"slices"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"repos/*", "repos/get", true},
		{"repos/*", "repos/get/x", true},
		{"repos/*", "issues/get", false},
		{"*", "", true},
		{"", "", true},
		{"", "a", false},
		{"?", "a", true},
		{"?", "ab", false},
		{"/repos/*/issues", "/repos/{owner}/{repo}/issues", true},
		{"/repos/*/issues", "/repos/{owner}/{repo}/issues/{n}", false},
		{"*get*", "repos/get-content", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{strings.Repeat("*a", 30) + "b", strings.Repeat("a", 200), false}, // no exponential backtracking
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

const curationDocument = `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
	"/repos/{owner}":{"parameters":[{"name":"owner","in":"path","required":true,"schema":{"type":"string"}}],
		"get":{"operationId":"repos/get","tags":["repos"],"summary":"Get a repository.","responses":{"200":{"description":"ok"}}},
		"delete":{"operationId":"repos/delete","tags":["repos","danger"],"responses":{"204":{"description":"ok"}}}},
	"/issues":{"get":{"operationId":"issues/list","tags":["issues"],"responses":{"200":{"description":"ok"}}},
		"post":{"operationId":"issues/create","tags":["issues"],"responses":{"201":{"description":"ok"}}}},
	"/untagged":{"get":{"responses":{"200":{"description":"ok"}}}}}}`

func TestCurationSelects(t *testing.T) {
	d, err := Load([]byte(curationDocument))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    Curation
		want []string
	}{
		{"everything", Curation{}, []string{"issues_list", "issues_create", "repos_get", "repos_delete", "get_untagged"}},
		{"operationId globs", Curation{Include: []string{"repos/*"}}, []string{"repos_get", "repos_delete"}},
		{"method and path globs", Curation{Include: []string{"GET /*"}}, []string{"issues_list", "repos_get", "get_untagged"}},
		{"lower-case method, any method", Curation{Include: []string{"delete /repos/*", "* /issues"}}, []string{"issues_list", "issues_create", "repos_delete"}},
		{"exclude after include", Curation{Include: []string{"repos/*", "issues/*"}, Exclude: []string{"*/delete", "POST /issues"}}, []string{"issues_list", "repos_get"}},
		{"tags", Curation{Tags: []string{"danger", "issues"}}, []string{"issues_list", "issues_create", "repos_delete"}},
		{"tags and include", Curation{Tags: []string{"repos"}, Include: []string{"GET *"}}, []string{"repos_get"}},
		{"an operation without operationId by path only", Curation{Include: []string{"*"}}, []string{"issues_list", "issues_create", "repos_get", "repos_delete"}},
		{"rename and describe", Curation{Include: []string{"repos/get"}, Rename: map[string]string{"repos/get": "get_repo", "issues/list": "issues"}, Describe: map[string]string{"repos/get": "Look a repository up."}}, []string{"get_repo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := d.Tools(tt.c, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range r.Tools {
				names = append(names, tl.Name)
				if tl.Name == "get_repo" && tl.Description != "Look a repository up." {
					t.Errorf("description %q, want the describe text", tl.Description)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("tools %q, want %q", names, tt.want)
			}
			if r.Operations != 5 || r.Selected != len(tt.want) {
				t.Errorf("%d operations, %d selected; want 5, %d", r.Operations, r.Selected, len(tt.want))
			}
		})
	}
}

func TestCurationRefuses(t *testing.T) {
	d, err := Load([]byte(curationDocument))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		c    Curation
		want string
	}{
		{"rename of an operationId not in the document", Curation{Rename: map[string]string{"repos/gett": "x"}}, "rename repos/gett: the document has no operation with that operationId"},
		{"describe of an operationId not in the document", Curation{Describe: map[string]string{"nope": "x"}}, "describe nope: the document has no operation with that operationId"},
		{"rename to an invalid name", Curation{Rename: map[string]string{"repos/get": "get repo"}}, `rename repos/get: tool name "get repo": use 1 to 128 letters`},
		{"two renames to one name", Curation{Rename: map[string]string{"repos/get": "x", "issues/list": "x"}}, `rename repos/get: tool name "x" is already given to issues/list`},
		{"an empty describe", Curation{Describe: map[string]string{"repos/get": "  "}}, "describe repos/get: the description is empty"},
		{"an empty pattern", Curation{Exclude: []string{" "}}, "an empty pattern matches no operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Tools(tt.c, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}

func TestCurationRenameTakesPrecedence(t *testing.T) {
	d, err := Load([]byte(curationDocument))
	if err != nil {
		t.Fatal(err)
	}
	// issues/create is renamed to the name issues/list would be given:
	// the generated name gives way.
	r, err := d.Tools(Curation{Include: []string{"issues/*"}, Rename: map[string]string{"issues/create": "issues_list"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"issues_list_" + shortHash("GET /issues"), "issues_list"}; !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}
}

func TestCurationRenameOfADuplicateOperationID(t *testing.T) {
	// Two operations with one operationId, which a valid document does not
	// have: the rename goes to the first, the second keeps apart.
	d, err := Load([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
		"/a":{"get":{"operationId":"dup","responses":{"200":{"description":"ok"}}}},
		"/b":{"get":{"operationId":"dup","responses":{"200":{"description":"ok"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Tools(Curation{Rename: map[string]string{"dup": "one"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	if want := []string{"one", "one_" + shortHash("GET /b")}; !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}
}

// TestCurationMatchesNothing: a pattern, tag, rename, describe or
// operation that matches no operation is an error naming the closest the
// document has: a typo would otherwise import nothing, silently.
func TestCurationMatchesNothing(t *testing.T) {
	t.Parallel()
	ops := `"/repos/{o}/{r}":{"get":{"operationId":"repos/get","tags":["repos"],"parameters":[{"name":"o","in":"path","required":true,"schema":{"type":"string"}},{"name":"r","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}},
		"/repos":{"get":{"operationId":"repos/list","tags":["repos"],"responses":{"200":{"description":"ok"}}}},
		"/issues":{"get":{"operationId":"issues/list","tags":["issues"],"responses":{"200":{"description":"ok"}}},
			"post":{"operationId":"issues/create","tags":["issues"],"responses":{"200":{"description":"ok"}}}}`
	d, err := Load([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{` + ops + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		c    Curation
		want string
	}{
		{"include", Curation{Include: []string{"repo/get"}}, `include "repo/get" matches no operationId; did you mean the operationId repos/get?`},
		{"include glob", Curation{Include: []string{"isues/*"}}, `include "isues/*" matches no operationId; the closest operationIds are issues/create and issues/list`},
		{"exclude", Curation{Exclude: []string{"issues/delete"}}, `exclude "issues/delete" matches no operationId; did you mean the operationId issues/create?`},
		{"method and path", Curation{Include: []string{"GET /repo"}}, `include "GET /repo" matches no operation; the closest method and paths are GET /repos and GET /repos/{o}/{r}`},
		{"tags", Curation{Tags: []string{"isues"}}, `tags "isues": no operation has that tag; did you mean the tag issues?`},
		{"rename", Curation{Rename: map[string]string{"repo/get": "get_repo"}}, `rename repo/get: the document has no operation with that operationId; did you mean the operationId repos/get?`},
		{"describe", Curation{Describe: map[string]string{"repos/lst": "x"}}, `describe repos/lst: the document has no operation with that operationId; the closest operationIds are repos/list and repos/get`},
		{"operation", Curation{Tune: map[string]*Tuning{"issue/create": {}}}, `operation issue/create: the document has no operation with that operationId; did you mean the operationId issues/create?`},
		{"nothing near", Curation{Include: []string{"zzzzzz"}}, `include "zzzzzz" matches no operationId`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Tools(tt.c, nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
	if res, err := d.Tools(Curation{Include: []string{"repos/*"}, Exclude: []string{"* /repos"}, Tags: []string{"repos"}}, nil); err != nil || len(res.Tools) != 1 {
		t.Errorf("a curation that matches: %v, %+v", err, res)
	}
}
