package upstream

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestNewRequest(t *testing.T) {
	t.Parallel()
	base := mustURL(t, "https://api.example.com/v2/?key={env.KEY}")
	base.RawQuery = "fixed=1"
	repl := mapReplacer{"env.KEY": "s3cret"}
	tests := []struct {
		name       string
		spec       planSpec
		args       map[string]any
		wantURL    string
		wantHeader map[string]string
		wantBody   string
		wantLabel  string
	}{
		{
			name:      "path query header",
			spec:      planSpec{Method: "get", Path: "/repos/{owner}/{repo}", Args: []planArg{{Name: "owner"}, {Name: "repo"}, {Name: "state"}, {Name: "trace", In: InHeader, HeaderName: "x-trace"}}},
			args:      map[string]any{"owner": "a b", "repo": "r", "state": "open", "trace": "t1"},
			wantURL:   "https://api.example.com/v2/repos/a%20b/r?fixed=1&state=open",
			wantLabel: "GET /repos/a%20b/r",
			wantHeader: map[string]string{
				"X-Trace": "t1", "User-Agent": "caddy-mcp",
			},
		},
		{
			name:    "arrays repeat the key",
			spec:    planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "tags", Type: "array"}}},
			args:    map[string]any{"tags": []any{"a", "b", 3.0}},
			wantURL: "https://api.example.com/v2/s?fixed=1&tags=a&tags=b&tags=3",
		},
		{
			name:       "fixed query and header resolve placeholders, arguments do not",
			spec:       planSpec{Method: "GET", Path: "/s", Query: []Field{{"api_key", "{env.KEY}"}}, Header: []Field{{"Authorization", "Bearer {env.KEY}"}}, Args: []planArg{{Name: "q"}}},
			args:       map[string]any{"q": "{env.KEY}"},
			wantURL:    "https://api.example.com/v2/s?api_key=s3cret&fixed=1&q=%7Benv.KEY%7D",
			wantHeader: map[string]string{"Authorization": "Bearer s3cret"},
		},
		{
			name:       "json body",
			spec:       planSpec{Method: "POST", Path: "/items", Args: []planArg{{Name: "name"}, {Name: "tags", Type: "array"}, {Name: "dry", In: InQuery}}},
			args:       map[string]any{"name": "x", "tags": []any{"a"}, "dry": true},
			wantURL:    "https://api.example.com/v2/items?dry=true&fixed=1",
			wantBody:   `{"name":"x","tags":["a"]}`,
			wantHeader: map[string]string{"Content-Type": "application/json"},
		},
		{
			name:     "json body with every body argument omitted",
			spec:     planSpec{Method: "POST", Path: "/items", Args: []planArg{{Name: "name"}}},
			args:     map[string]any{},
			wantURL:  "https://api.example.com/v2/items?fixed=1",
			wantBody: `{}`,
		},
		{
			name:       "form body",
			spec:       planSpec{Method: "POST", Path: "/f", Body: BodyForm, Args: []planArg{{Name: "a"}, {Name: "b", Type: "array"}}},
			args:       map[string]any{"a": "1 2", "b": []any{"x", "y"}},
			wantURL:    "https://api.example.com/v2/f?fixed=1",
			wantBody:   "a=1+2&b=x&b=y",
			wantHeader: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		},
		{
			name:     "whole body argument",
			spec:     planSpec{Method: "PUT", Path: "/list", Body: BodyArg, BodyArg: "items", Args: []planArg{{Name: "items", Type: "array"}}},
			args:     map[string]any{"items": []any{1.0, "two"}},
			wantURL:  "https://api.example.com/v2/list?fixed=1",
			wantBody: `[1,"two"]`,
		},
		{
			name:    "undeclared arguments of a free-form schema follow the default rule",
			spec:    planSpec{Method: "DELETE", Path: "/x/{id}", Args: []planArg{{Name: "id"}}},
			args:    map[string]any{"id": 7.0, "force": true},
			wantURL: "https://api.example.com/v2/x/7?fixed=1&force=true",
		},
		{
			name:       "a configured Content-Type and Host win",
			spec:       planSpec{Method: "PATCH", Path: "/o", Header: []Field{{"Content-Type", "application/merge-patch+json"}}, Args: []planArg{{Name: "a"}}},
			args:       map[string]any{"a": "x"},
			wantURL:    "https://api.example.com/v2/o?fixed=1",
			wantBody:   `{"a":"x"}`,
			wantHeader: map[string]string{"Content-Type": "application/merge-patch+json"},
		},
		{
			name:    "integers past 2**53 keep every digit",
			spec:    planSpec{Method: "GET", Path: "/n/{n}", Args: []planArg{{Name: "n", Type: "integer"}}},
			args:    map[string]any{"n": json.Number("9007199254740993")},
			wantURL: "https://api.example.com/v2/n/9007199254740993?fixed=1",
		},
		{
			name: "wire names in the path, the query and a header",
			spec: planSpec{Method: "GET", Path: "/items/{itemId}", Args: []planArg{
				{Name: "item_id", Wire: "itemId"}, {Name: "per_page", Wire: "perPage", Type: "integer"},
				{Name: "status", Wire: "filter[status]"}, {Name: "top", Wire: "$top"}, {Name: "odd", Wire: "a=b&c d"},
				{Name: "version", Wire: "x-api-version", In: InHeader},
			}},
			args:       map[string]any{"item_id": "a/b", "per_page": 10.0, "status": "open", "top": 5.0, "odd": "&", "version": "2024-01-01"},
			wantURL:    "https://api.example.com/v2/items/a%2Fb?%24top=5&a%3Db%26c+d=%26&filter%5Bstatus%5D=open&fixed=1&perPage=10",
			wantLabel:  "GET /items/a%2Fb",
			wantHeader: map[string]string{"X-Api-Version": "2024-01-01"},
		},
		{
			name:    "a path parameter and a query parameter of one name",
			spec:    planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id_query", Wire: "id", In: InQuery}, {Name: "id"}}},
			args:    map[string]any{"id": "7", "id_query": "x"},
			wantURL: "https://api.example.com/v2/items/7?fixed=1&id=x",
		},
		{
			name:    "a path slot named like another argument",
			spec:    planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{{Name: "id", Wire: "ref"}, {Name: "item", Wire: "id"}}},
			args:    map[string]any{"id": "q", "item": "p"},
			wantURL: "https://api.example.com/v2/items/p?fixed=1&ref=q",
		},
		{
			name:     "wire names in a JSON body",
			spec:     planSpec{Method: "POST", Path: "/users", Args: []planArg{{Name: "first_name", Wire: "firstName"}, {Name: "meta", Wire: "@meta", Type: "object"}}},
			args:     map[string]any{"first_name": "Ann", "meta": map[string]any{"k": 1.0}},
			wantURL:  "https://api.example.com/v2/users?fixed=1",
			wantBody: `{"@meta":{"k":1},"firstName":"Ann"}`,
		},
		{
			name:     "wire names in a form body",
			spec:     planSpec{Method: "POST", Path: "/users", Body: BodyForm, Args: []planArg{{Name: "name", Wire: "user[name]"}, {Name: "tags", Wire: "tags[]", Type: "array"}}},
			args:     map[string]any{"name": "Ann Lee", "tags": []any{"a", "b"}},
			wantURL:  "https://api.example.com/v2/users?fixed=1",
			wantBody: "tags%5B%5D=a&tags%5B%5D=b&user%5Bname%5D=Ann+Lee",
		},
		{
			name: "null is null in a JSON body",
			spec: planSpec{Method: "PATCH", Path: "/items/{id}", Args: []planArg{
				{Name: "id"}, {Name: "due_date", Wire: "dueDate", Nullable: true}, {Name: "note", Nullable: true}, {Name: "trace", Nullable: true, In: InQuery},
			}},
			args:     map[string]any{"id": "1", "due_date": nil, "note": "n", "trace": nil},
			wantURL:  "https://api.example.com/v2/items/1?fixed=1",
			wantBody: `{"dueDate":null,"note":"n"}`,
		},
		{
			name:       "null is left out of a query, a header and a form body",
			spec:       planSpec{Method: "PUT", Path: "/f", Body: BodyForm, Args: []planArg{{Name: "q", Wire: "Q", Nullable: true, In: InQuery}, {Name: "h", Wire: "X-H", Nullable: true, In: InHeader}, {Name: "b", Nullable: true}, {Name: "c"}}},
			args:       map[string]any{"q": nil, "h": nil, "b": nil, "c": "x"},
			wantURL:    "https://api.example.com/v2/f?fixed=1",
			wantBody:   "c=x",
			wantHeader: map[string]string{"X-H": ""},
		},
		{
			name:     "a null default is sent as null",
			spec:     planSpec{Method: "PATCH", Path: "/o", Args: []planArg{{Name: "note", Nullable: true, NullDefault: true}, {Name: "q", In: InQuery, Nullable: true, NullDefault: true}}},
			args:     map[string]any{},
			wantURL:  "https://api.example.com/v2/o?fixed=1",
			wantBody: `{"note":null}`,
		},
		{
			name:    "large numbers are not written with an exponent",
			spec:    planSpec{Method: "GET", Path: "/n", Args: []planArg{{Name: "n", Type: "integer"}}},
			args:    map[string]any{"n": 1e21},
			wantURL: "https://api.example.com/v2/n?fixed=1&n=1000000000000000000000",
		},
	}
	for _, tt := range tests {
		tool, err := newRequestPlan(tt.spec)
		if err != nil {
			t.Errorf("%s: New: %v", tt.name, err)
			continue
		}
		req, call, err := tool.build(context.Background(), base, tool.applyDefaults(tt.args), repl)
		if err != nil {
			t.Errorf("%s: NewRequest: %v", tt.name, err)
			continue
		}
		if got := req.URL.String(); got != tt.wantURL {
			t.Errorf("%s: URL %s, want %s", tt.name, got, tt.wantURL)
		}
		if tt.wantLabel != "" && call.Label != tt.wantLabel {
			t.Errorf("%s: label %q, want %q", tt.name, call.Label, tt.wantLabel)
		}
		for k, v := range tt.wantHeader {
			if got := req.Header.Values(k); v == "" && len(got) > 0 || v != "" && (len(got) != 1 || got[0] != v) {
				t.Errorf("%s: header %s = %q, want %q", tt.name, k, got, v)
			}
		}
		var body string
		if req.Body != nil {
			b, _ := io.ReadAll(req.Body)
			body = string(b)
		}
		if body != tt.wantBody {
			t.Errorf("%s: body %q, want %q", tt.name, body, tt.wantBody)
		}
	}
}

func TestNewRequestRefusesBadValues(t *testing.T) {
	t.Parallel()
	tool, err := newRequestPlan(planSpec{Method: "GET", Path: "/f/{p}", Args: []planArg{{Name: "p"}, {Name: "h", In: InHeader}}})
	if err != nil {
		t.Fatal(err)
	}
	base := mustURL(t, "http://127.0.0.1/")
	for _, args := range []map[string]any{
		{"p": ".."},
		{"p": "ok", "h": "a\r\nX-Injected: 1"},
		{"p": "ok", "h": map[string]any{"a": 1.0}},
	} {
		if _, _, err := tool.build(context.Background(), base, args, nil); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestNewRequestKeepsFixedQuery: what a query line or the upstream URL's
// own query fixes, no argument adds to, whether it is declared or let
// through by a free-form schema, and wherever it would go (a server may
// merge the body with the query).
func TestNewRequestKeepsFixedQuery(t *testing.T) {
	t.Parallel()
	fixed := []Field{{"tenant", "acme"}, {"api_key", "{env.KEY}"}}
	repl := mapReplacer{"env.KEY": "s3cret"}
	tests := []struct {
		name    string
		spec    planSpec
		base    string
		args    map[string]any
		wantErr string // "" for a request
		wantURL string
	}{
		{
			name:    "undeclared arguments in a GET",
			spec:    planSpec{Method: "GET", Path: "/s", Query: fixed, Args: []planArg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "tenant": "globex", "api_key": "attacker"},
			wantErr: `arguments "api_key", "tenant" are fixed by the configuration and cannot be sent`,
		},
		{
			name:    "undeclared argument in another case",
			spec:    planSpec{Method: "GET", Path: "/s", Query: fixed, Args: []planArg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "TENANT": "globex"},
			wantErr: `argument "TENANT" is fixed by the configuration and cannot be sent`,
		},
		{
			name:    "undeclared null argument",
			spec:    planSpec{Method: "DELETE", Path: "/s", Query: fixed},
			args:    map[string]any{"tenant": nil},
			wantErr: `argument "tenant" is fixed`,
		},
		{
			name:    "undeclared argument in a JSON body",
			spec:    planSpec{Method: "POST", Path: "/s", Query: fixed, Args: []planArg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "tenant": "globex"},
			wantErr: `argument "tenant" is fixed`,
		},
		{
			name:    "undeclared argument in a form body",
			spec:    planSpec{Method: "PUT", Path: "/s", Body: BodyForm, Query: fixed},
			args:    map[string]any{"tenant": "globex"},
			wantErr: `argument "tenant" is fixed`,
		},
		{
			name:    "undeclared argument over the upstream URL's query",
			spec:    planSpec{Method: "GET", Path: "/s"},
			base:    "https://api.example.com/v2?region=eu",
			args:    map[string]any{"region": "us"},
			wantErr: `argument "region" is fixed`,
		},
		{
			name:    "declared argument over the query of an upstream URL known per call",
			spec:    planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "region"}}},
			base:    "https://api.example.com/v2?region=eu",
			args:    map[string]any{"region": "us"},
			wantErr: `argument "region" is fixed`,
		},
		{
			name:    "undeclared argument beside a whole body argument",
			spec:    planSpec{Method: "PUT", Path: "/list", Body: BodyArg, BodyArg: "items", Args: []planArg{{Name: "items", Type: "array"}}},
			args:    map[string]any{"items": []any{1.0}, "note": "replace the body"},
			wantErr: `argument "note" is not declared, and the body is the argument "items" alone`,
		},
		{
			name:    "undeclared argument under a declared one's query key",
			spec:    planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "per_page", Wire: "perPage"}}},
			args:    map[string]any{"per_page": 10.0, "perPage": 1000.0},
			wantErr: `argument "perPage" is not declared, and perPage is the query key of argument "per_page"`,
		},
		{
			name:    "undeclared argument under a declared one's body key",
			spec:    planSpec{Method: "POST", Path: "/s", Args: []planArg{{Name: "first_name", Wire: "firstName"}}},
			args:    map[string]any{"firstName": "Eve"},
			wantErr: `argument "firstName" is not declared, and firstName is the body key of argument "first_name"`,
		},
		{
			name:    "declared argument whose wire name is a query line's key",
			spec:    planSpec{Method: "GET", Path: "/s", Args: []planArg{{Name: "org", Wire: "tenant"}}},
			base:    "https://api.example.com/v2?Tenant=acme",
			args:    map[string]any{"org": "globex"},
			wantErr: `argument "org" is fixed by the configuration and cannot be sent`,
		},
		{
			name:    "declared argument named like a query line, with another wire name",
			spec:    planSpec{Method: "GET", Path: "/s", Query: fixed, Args: []planArg{{Name: "tenant", Wire: "sub_tenant"}}},
			args:    map[string]any{"tenant": "globex"},
			wantURL: "https://api.example.com/v2/s?api_key=s3cret&sub_tenant=globex&tenant=acme",
		},
		{
			name:    "other undeclared arguments still go where the default puts them",
			spec:    planSpec{Method: "GET", Path: "/s", Query: fixed, Args: []planArg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "page": 2.0},
			wantURL: "https://api.example.com/v2/s?api_key=s3cret&page=2&q=x&tenant=acme",
		},
		{
			name:    "a path argument named like a query line",
			spec:    planSpec{Method: "GET", Path: "/tenants/{tenant}", Query: fixed, Args: []planArg{{Name: "tenant"}}},
			args:    map[string]any{"tenant": "globex"},
			wantURL: "https://api.example.com/v2/tenants/globex?api_key=s3cret&tenant=acme",
		},
		{
			name:    "a header argument named like a query line",
			spec:    planSpec{Method: "POST", Path: "/s", Query: fixed, Args: []planArg{{Name: "tenant", In: InHeader, HeaderName: "X-Tenant"}}},
			args:    map[string]any{"tenant": "globex"},
			wantURL: "https://api.example.com/v2/s?api_key=s3cret&tenant=acme",
		},
	}
	for _, tt := range tests {
		tool, err := newRequestPlan(tt.spec)
		if err != nil {
			t.Errorf("%s: New: %v", tt.name, err)
			continue
		}
		if tt.base == "" {
			tt.base = "https://api.example.com/v2"
		}
		req, _, err := tool.build(context.Background(), mustURL(t, tt.base), tt.args, repl)
		if tt.wantErr != "" {
			if err == nil {
				t.Errorf("%s: sent %s, want the call refused", tt.name, req.URL)
			} else if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %q, want one containing %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
		} else if got := req.URL.String(); got != tt.wantURL {
			t.Errorf("%s: URL %s, want %s", tt.name, got, tt.wantURL)
		}
	}
}

func TestHostHeader(t *testing.T) {
	t.Parallel()
	tool, err := newRequestPlan(planSpec{Method: "GET", Path: "/x", Header: []Field{{"Host", "api.internal"}}})
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := tool.build(context.Background(), mustURL(t, "http://127.0.0.1:9/"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Host != "api.internal" || req.Header.Get("Host") != "" {
		t.Errorf("req.Host %q, header %q", req.Host, req.Header.Get("Host"))
	}
}

func TestLabelKeepsPlaceholders(t *testing.T) {
	t.Parallel()
	tool, err := newRequestPlan(planSpec{Method: "POST", Path: "/hooks/{env.TOKEN}/{id}", Args: []planArg{{Name: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	req, call, err := tool.build(context.Background(), mustURL(t, "http://127.0.0.1:9/"), map[string]any{"id": "a b"}, mapReplacer{"env.TOKEN": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.Path != "/hooks/s3cret/a b" {
		t.Errorf("path %q", req.URL.Path)
	}
	if call.Label != "POST /hooks/{env.TOKEN}/a%20b" {
		t.Errorf("label %q", call.Label)
	}
}

// TestBodyFields: body_field fixes members of a JSON body that no
// argument sets, with or without body arguments; a definition that would
// let an argument set one, or put one where there is no JSON body, is
// refused, and so is a call whose undeclared argument would.
func TestBodyFields(t *testing.T) {
	t.Parallel()
	closed := []BodyField{{Key: "state", Value: json.RawMessage(`"closed"`)}, {Key: "lock", Value: json.RawMessage(` {"reason": null} `)}}
	for _, tt := range []struct {
		name string
		def  Definition
		args map[string]any
		want string // the body, or the error
	}{
		{"alone", Definition{Method: "PATCH", Path: "/issues/{n}", Args: []Arg{{Name: "n", Type: "integer"}}, BodyFields: closed},
			map[string]any{"n": 3}, `{"lock":{"reason":null},"state":"closed"}`},
		{"beside arguments", Definition{Method: "PATCH", Path: "/issues/{n}", Args: []Arg{{Name: "n", Type: "integer"}, {Name: "title"}}, BodyFields: closed},
			map[string]any{"n": 3, "title": "t"}, `{"lock":{"reason":null},"state":"closed","title":"t"}`},
		{"an undeclared argument may not set one", Definition{Method: "POST", Path: "/x", InputSchema: json.RawMessage(`{"type":"object"}`), BodyFields: closed},
			map[string]any{"state": "open"}, `error: argument "state" is fixed by the configuration and cannot be sent`},
		{"a declared argument may not either", Definition{Method: "POST", Path: "/x", Args: []Arg{{Name: "s", WireName: "state"}}, BodyFields: closed},
			nil, `error: argument "s": the body member state is fixed by body_field`},
		{"not in a GET", Definition{Method: "GET", Path: "/x", BodyFields: closed},
			nil, `error: body_field: a GET request has no body`},
		{"not in a form", Definition{Method: "POST", Path: "/x", Body: BodyForm, BodyFields: closed},
			nil, `error: body_field: fixed members go in a JSON body, and this one is body form`},
		{"not JSON", Definition{Method: "POST", Path: "/x", BodyFields: []BodyField{{Key: "state", Value: json.RawMessage(`closed`)}}},
			nil, `error: body_field state: the value is not JSON`},
		{"twice", Definition{Method: "POST", Path: "/x", BodyFields: append(closed, closed[0])},
			nil, `error: body_field state is set twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.def.Name = "tool"
			op, err := NewOperation(tt.def)
			if err != nil {
				if !strings.HasPrefix("error: "+err.Error(), tt.want) {
					t.Fatalf("got %v, want %s", err, tt.want)
				}
				return
			}
			req, _, err := op.Request(context.Background(), mustURL(t, "https://api.example.com"), tt.args, mapReplacer{})
			if err != nil {
				if !strings.HasSuffix(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("got %v, want %s", err, tt.want)
				}
				return
			}
			body, _ := io.ReadAll(req.Body)
			if string(body) != tt.want || req.Header.Get("Content-Type") != "application/json" {
				t.Errorf("body %s (%s), want %s", body, req.Header.Get("Content-Type"), tt.want)
			}
		})
	}
}
