package upstream

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// mapReplacer stands in for Caddy's replacer: {key} becomes its value.
type mapReplacer map[string]string

func (m mapReplacer) ReplaceAll(s, empty string) string {
	for k, v := range m {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRequestPlanRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    planSpec
		wantErr string
	}{
		{"method", planSpec{Method: "TRACE", Path: "/"}, "method"},
		{"relative path", planSpec{Method: "GET", Path: "items"}, "must start with /"},
		{"unknown slot", planSpec{Method: "GET", Path: "/items/{id}"}, "{id}"},
		{"in path without slot", planSpec{Method: "GET", Path: "/items", Args: []planArg{{Name: "id", In: InPath}}}, "has no {id}"},
		{"slot placed elsewhere", planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id", In: InQuery}}}, "placed in query"},
		{"array in path", planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id", Type: "array"}}}, "cannot go in the path"},
		{"object in header", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "h", Type: "object", In: InHeader}}}, "cannot go in the header"},
		{"header_name without header", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "h", HeaderName: "X-H"}}}, "header_name"},
		{"query argument over a query line", planSpec{Method: "GET", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []planArg{{Name: "tenant"}}}, `argument "tenant": the query parameter tenant is fixed by a query line`},
		{"query argument over a query line in another case", planSpec{Method: "GET", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []planArg{{Name: "Tenant", In: InQuery}}}, "the query parameter tenant is fixed"},
		{"body argument over a query line", planSpec{Method: "POST", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []planArg{{Name: "tenant"}}}, "the query parameter tenant is fixed"},
		{"form argument over a query line", planSpec{Method: "POST", Path: "/", Body: BodyForm, Query: []Field{{"tenant", "acme"}}, Args: []planArg{{Name: "tenant"}}}, "the query parameter tenant is fixed"},
		{"header argument over another", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a", In: InHeader, HeaderName: "X-Id"}, {Name: "b", In: InHeader, HeaderName: "x-id"}}}, `header X-Id is already set by argument "a"`},
		{"header over fixed", planSpec{Method: "GET", Path: "/", Header: []Field{{"Authorization", "k"}}, Args: []planArg{{Name: "auth", In: InHeader, HeaderName: "authorization"}}}, "already set"},
		{"forbidden header", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "h", In: InHeader, HeaderName: "Host"}}}, "cannot be set"},
		{"bad placement", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "x", In: "cookie"}}}, "unknown placement"},
		{"body arg missing", planSpec{Method: "POST", Path: "/", Body: BodyArg, BodyArg: "items"}, "names no argument"},
		{"body arg not in body", planSpec{Method: "POST", Path: "/", Body: BodyArg, BodyArg: "q", Args: []planArg{{Name: "q", In: InQuery}}}, "placed in the query"},
		{"body arg plus other body", planSpec{Method: "POST", Path: "/", Body: BodyArg, BodyArg: "a", Args: []planArg{{Name: "a"}, {Name: "b"}}}, "also placed in the body"},
		{"object in form", planSpec{Method: "POST", Path: "/", Body: BodyForm, Args: []planArg{{Name: "o", Type: "object"}}}, "form body"},
		{"unknown body", planSpec{Method: "POST", Path: "/", Body: "xml"}, "unknown body mode"},
		{"duplicate arg", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a"}, {Name: "a"}}}, "twice"},
		{"query in the path", planSpec{Method: "GET", Path: "/search?type=repo"}, "query lines"},
		{"fragment in the path", planSpec{Method: "GET", Path: "/a#b"}, "query lines"},
		{"object in the query", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "f", Type: "object"}}}, "only in the body"},
		{"objects in the query", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "f", Type: "array", Items: "object"}}}, "only in the body"},
		{"wire name and header_name", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "v", Wire: "X-A", In: InHeader, HeaderName: "X-B"}}}, `argument "v": name and header_name both name its header field`},
		{"wire name not a header field", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "v", Wire: "X Version", In: InHeader}}}, `argument "v": invalid header field name "X Version"`},
		{"wire name a forbidden header", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "v", Wire: "content-type", In: InHeader}}}, "header Content-Type cannot be set by an argument"},
		{"wire name over a fixed header", planSpec{Method: "GET", Path: "/", Header: []Field{{"Authorization", "k"}}, Args: []planArg{{Name: "auth", Wire: "authorization", In: InHeader}}}, "header Authorization is already set by a fixed header"},
		{"wire name over another header argument", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a", In: InHeader, HeaderName: "X-Id"}, {Name: "b", Wire: "x-id", In: InHeader}}}, `header X-Id is already set by argument "a"`},
		{"wire name with a control character", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "q", Wire: "a\nb"}}}, `argument "q": wire name "a\nb": a control character`},
		{"two arguments with one query key", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a", Wire: "perPage"}, {Name: "b", Wire: "perPage"}}}, `argument "b": argument "a" already goes in the query as perPage`},
		{"a wire name that is another argument's name", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a", Wire: "b"}, {Name: "b"}}}, `argument "b": argument "a" already goes in the query as b`},
		{"two arguments with one body key", planSpec{Method: "POST", Path: "/", Body: BodyForm, Args: []planArg{{Name: "a", Wire: "user[name]"}, {Name: "b", Wire: "user[name]"}}}, `argument "b": argument "a" already goes in the body as user[name]`},
		{"two arguments in one path slot", planSpec{Method: "GET", Path: "/i/{id}", Args: []planArg{{Name: "a", Wire: "id"}, {Name: "b", Wire: "id", In: InPath}}}, `argument "b": argument "a" already goes in the path as {id}`},
		{"wire name over a query line", planSpec{Method: "GET", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []planArg{{Name: "t", Wire: "Tenant"}}}, `argument "t": the query parameter tenant is fixed by a query line`},
		{"body wire name over a query line", planSpec{Method: "POST", Path: "/", Query: []Field{{"$top", "5"}}, Args: []planArg{{Name: "top", Wire: "$top"}}}, `argument "top": the query parameter $top is fixed`},
		{"a slot that names the argument, not its wire name", planSpec{Method: "GET", Path: "/items/{item_id}", Args: []planArg{{Name: "item_id", Wire: "itemId"}}},
			`argument "item_id" goes in the path as {itemId}, its wire name, but the path "/items/{item_id}" has {item_id}`},
		{"in path without a slot for the wire name", planSpec{Method: "GET", Path: "/items", Args: []planArg{{Name: "item_id", Wire: "itemId", In: InPath}}}, `the path "/items" has no {itemId}`},
		{"a wire name slot placed elsewhere", planSpec{Method: "GET", Path: "/items/{itemId}", Args: []planArg{{Name: "item_id", Wire: "itemId", In: InHeader}}}, "placed in header"},
		{"nullable in the path", planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id", Nullable: true}}}, `argument "id" is nullable, but a path cannot hold null`},
		{"nullable placed in the path", planSpec{Method: "GET", Path: "/items/{itemId}", Args: []planArg{{Name: "item_id", Wire: "itemId", In: InPath, Nullable: true}}}, "a path cannot hold null"},
	}
	for _, tt := range tests {
		_, err := newRequestPlan(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestCheckBase(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "https://api.example.com/v2?Region=eu")
	for _, tt := range []struct {
		spec    planSpec
		wantErr string
	}{
		{planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "q"}, {Name: "region"}}}, `argument "region": the query parameter Region is fixed by the upstream URL`},
		{planSpec{Method: "POST", Path: "/s", Args: []planArg{{Name: "region"}}}, `argument "region"`},
		{planSpec{Method: "GET", Path: "/r/{region}", Args: []planArg{{Name: "region"}}}, ""},
		{planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "region", In: InHeader}}}, ""},
		{planSpec{Method: "PUT", Path: "/s", Body: BodyArg, BodyArg: "region", Args: []planArg{{Name: "region"}}}, ""},
		{planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "area", Wire: "REGION"}}}, `argument "area": the query parameter Region is fixed by the upstream URL`},
		{planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "region", Wire: "zone"}}}, ""},
	} {
		tool, err := newRequestPlan(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		err = tool.checkBase(base)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s %s %v: error %v, want %q", tt.spec.Method, tt.spec.Path, tt.spec.Args, err, tt.wantErr)
		}
		if err := tool.checkBase(mustURL(t, "https://api.example.com/v2")); err != nil {
			t.Errorf("a base without a query: %v", err)
		}
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	tool, err := newRequestPlan(planSpec{Method: "get", Path: "/t/{env.TENANT}/items/{id}", Args: []planArg{{Name: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tool.label(map[string]any{"id": "a b"}); got != "GET /t/{env.TENANT}/items/a%20b" {
		t.Errorf("label %q", got)
	}
	if got := tool.label(map[string]any{"id": ".."}); got != "GET /t/{env.TENANT}/items/{id}" {
		t.Errorf("label of a refused value %q", got)
	}
}

func TestApplyDefaults(t *testing.T) {
	t.Parallel()
	tool, err := newRequestPlan(planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "limit", Default: 10.0}, {Name: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"q": "x"}
	out := tool.applyDefaults(in)
	if out["limit"] != 10.0 || out["q"] != "x" {
		t.Errorf("defaults not applied: %v", out)
	}
	if _, changed := in["limit"]; changed {
		t.Error("ApplyDefaults changed its input")
	}
	if got := tool.applyDefaults(map[string]any{"limit": 3.0}); got["limit"] != 3.0 {
		t.Errorf("a given value was replaced by the default: %v", got)
	}
}

// A fault of the path or of one argument says which, so that a
// configuration can point at its line; others say neither.
func TestRequestPlanNamesThePart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec planSpec
		arg  string // "" for the path
		part bool
	}{
		{"relative path", planSpec{Method: "GET", Path: "items"}, "", true},
		{"query in the path", planSpec{Method: "GET", Path: "/s?q=1"}, "", true},
		{"unknown slot", planSpec{Method: "GET", Path: "/items/{id}"}, "", true},
		{"in path without slot", planSpec{Method: "GET", Path: "/items", Args: []planArg{{Name: "id", In: InPath}}}, "id", true},
		{"slot placed elsewhere", planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id", In: InQuery}}}, "id", true},
		{"object in the query", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "f", Type: "object"}}}, "f", true},
		{"array in a header", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "h", Type: "array", In: InHeader}}}, "h", true},
		{"bad placement", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "x", In: "cookie"}}}, "x", true},
		{"method", planSpec{Method: "TRACE", Path: "/"}, "", false},
		{"duplicate arg", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a"}, {Name: "a"}}}, "", false},
		{"wire name and header_name", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "v", Wire: "X-A", In: InHeader, HeaderName: "X-B"}}}, "v", true},
		{"wire name not a header field", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "v", Wire: "X Version", In: InHeader}}}, "v", true},
		{"two arguments with one query key", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "a", Wire: "k"}, {Name: "b", Wire: "k"}}}, "b", true},
		{"a slot that names the argument, not its wire name", planSpec{Method: "GET", Path: "/items/{item_id}", Args: []planArg{{Name: "item_id", Wire: "itemId"}}}, "item_id", true},
		{"nullable in the path", planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id", Nullable: true}}}, "id", true},
		{"wire name over a fixed header", planSpec{Method: "GET", Path: "/", Header: []Field{{"Authorization", "k"}}, Args: []planArg{{Name: "auth", Wire: "authorization", In: InHeader}}}, "auth", true},
		{"wire name over a query line", planSpec{Method: "GET", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []planArg{{Name: "t", Wire: "Tenant"}}}, "t", true},
		{"header_name without header", planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "h", HeaderName: "X-H"}}}, "h", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newRequestPlan(tt.spec)
			var part *PartError
			switch {
			case err == nil:
				t.Fatal("accepted")
			case errors.As(err, &part) != tt.part:
				t.Fatalf("%v: a PartError %v, want %v", err, !tt.part, tt.part)
			case tt.part && part.Arg != tt.arg:
				t.Fatalf("%v: names argument %q, want %q", err, part.Arg, tt.arg)
			}
		})
	}
	_, err := newRequestPlan(planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "f", Type: "object"}}})
	if want := `(a GET sends its arguments in the query; say "in body")`; !strings.Contains(err.Error(), want) {
		t.Errorf("%v: no %s", err, want)
	}
}
