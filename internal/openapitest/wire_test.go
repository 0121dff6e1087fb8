//go:build unix

package openapitest

import (
	"encoding/json"
	"net/url"
	"reflect"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
)

// wireForms calls tools with chosen arguments and checks the request on
// the wire beside Prism's verdict: the form of each query style (Prism
// reads a space-delimited array as one item, so it cannot tell), headers,
// and null left out of a query and a form but sent in a JSON body.
func wireForms(t *testing.T, e *env) {
	c := e.client(t, "/wire")
	tests := []struct {
		name, tool string
		args       map[string]any
		check      func(t *testing.T, r prismtest.Request)
	}{
		{"path and headers", "getItem",
			map[string]any{"itemId": 7, "X_Request_Id": "0b6d3c1e-2f4a-4b5c-8d9e-0f1a2b3c4d5e", "X_Trace_Depth": 2},
			func(t *testing.T, r prismtest.Request) {
				wantEqual(t, "path", r.Path, "/items/7")
				wantEqual(t, "X-Request-Id", r.Header.Get("X-Request-Id"), "0b6d3c1e-2f4a-4b5c-8d9e-0f1a2b3c4d5e")
				wantEqual(t, "X-Trace-Depth", r.Header.Get("X-Trace-Depth"), "2")
			}},
		{"form exploded, and a null query parameter left out", "searchForm",
			map[string]any{"colors": []any{"red", "blue"}, "note": nil},
			func(t *testing.T, r prismtest.Request) {
				wantQuery(t, r, url.Values{"colors": {"red", "blue"}, "limit": {"10"}})
			}},
		{"form not exploded", "searchComma", map[string]any{"colors": []any{"red", "blue"}},
			func(t *testing.T, r prismtest.Request) { wantQuery(t, r, url.Values{"colors": {"red,blue"}}) }},
		{"spaceDelimited", "searchSpace", map[string]any{"words": []any{"green", "tea"}},
			func(t *testing.T, r prismtest.Request) { wantQuery(t, r, url.Values{"words": {"green tea"}}) }},
		{"pipeDelimited", "searchPipe", map[string]any{"sizes": []any{1, 2, 3}},
			func(t *testing.T, r prismtest.Request) { wantQuery(t, r, url.Values{"sizes": {"1|2|3"}}) }},
		{"deepObject", "searchDeep", map[string]any{"filter": map[string]any{"color": "green", "size": 2}},
			func(t *testing.T, r prismtest.Request) {
				wantQuery(t, r, url.Values{"filter[color]": {"green"}, "filter[size]": {"2"}})
			}},
		{"objects in form style, exploded and not", "searchObject",
			map[string]any{"point": map[string]any{"x": 3, "y": 4}, "range": map[string]any{"min": 1, "max": 9}},
			func(t *testing.T, r prismtest.Request) {
				wantQuery(t, r, url.Values{"x": {"3"}, "y": {"4"}, "range": {"max,9,min,1"}})
			}},
		{"an array in a header, simple", "getTags",
			map[string]any{"name": "tea", "X_Tag_Ids": []any{7, 8}},
			func(t *testing.T, r prismtest.Request) {
				wantEqual(t, "path", r.Path, "/tags/tea")
				wantEqual(t, "X-Tag-Ids", r.Header.Get("X-Tag-Ids"), "7,8")
			}},
		{"JSON body with null properties", "createNote",
			map[string]any{"title": "Tea", "text": nil, "priority": nil, "tags": []any{"a", "b"}},
			func(t *testing.T, r prismtest.Request) {
				wantEqual(t, "Content-Type", r.Header.Get("Content-Type"), "application/json")
				var body any
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatalf("body %q: %v", r.Body, err)
				}
				want := map[string]any{"title": "Tea", "text": nil, "priority": nil, "tags": []any{"a", "b"}}
				if !reflect.DeepEqual(body, want) {
					t.Errorf("body %s, want %v", r.Body, want)
				}
			}},
		{"form body, a null field left out", "updateNoteForm",
			map[string]any{"noteId": "n-1", "title": "Tea & mugs", "done": false, "count": 0, "text": nil},
			func(t *testing.T, r prismtest.Request) {
				wantEqual(t, "Content-Type", r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
				form, err := url.ParseQuery(string(r.Body))
				if err != nil {
					t.Fatalf("body %q: %v", r.Body, err)
				}
				if want := (url.Values{"title": {"Tea & mugs"}, "done": {"false"}, "count": {"0"}}); !reflect.DeepEqual(form, want) {
					t.Errorf("form %v, want %v", form, want)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := e.call(t, "wire", c, tt.tool, tt.args)
			if r.Method != "" {
				tt.check(t, r)
			}
		})
	}
}

// githubNulls sends null for nullable body properties of GitHub's
// operations: Prism must take them, and they must be on the wire.
func githubNulls(t *testing.T, e *env) {
	c := e.client(t, "/github")
	tests := []struct {
		tool string
		args map[string]any
		key  string
	}{
		{"teams_update-in-org", map[string]any{"org": "octo-org", "team_slug": "justice-league", "name": "Justice League", "parent_team_id": nil}, "parent_team_id"},
		{"issues_update", map[string]any{"owner": "octocat", "repo": "hello-world", "issue_number": 1, "milestone": nil, "title": "Found a bug"}, "milestone"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			_, r := e.call(t, "github", c, tt.tool, tt.args)
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("body %q: %v", r.Body, err)
			}
			if v, ok := body[tt.key]; !ok || v != nil {
				t.Errorf("body %s: want %s null", r.Body, tt.key)
			}
		})
	}
}

func wantEqual(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s %q, want %q", what, got, want)
	}
}

func wantQuery(t *testing.T, r prismtest.Request, want url.Values) {
	t.Helper()
	got, err := url.ParseQuery(r.RawQuery)
	if err != nil {
		t.Fatalf("query %q: %v", r.RawQuery, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("query %q is %v, want %v", r.RawQuery, got, want)
	}
}
