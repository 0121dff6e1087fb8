package upstream

import (
	"context"
	"encoding/json"
	"io"
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

func TestParseTemplate(t *testing.T) {
	isArg := func(n string) bool { return n == "owner" || n == "repo" }
	tests := []struct {
		tmpl    string
		slots   []string
		wantErr string
	}{
		{tmpl: "/repos/{owner}/{repo}", slots: []string{"owner", "repo"}},
		{tmpl: "/static"},
		{tmpl: "/t/{env.TENANT}/{owner}", slots: []string{"owner"}},
		{tmpl: "/x/{missing}", wantErr: "{missing}"},
		{tmpl: "/x/{owner", wantErr: "unclosed"},
		{tmpl: "/x/{}", wantErr: "empty"},
		{tmpl: `/x/\{literal\}`},
	}
	for _, tt := range tests {
		tpl, err := ParseTemplate(tt.tmpl, isArg)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", tt.tmpl, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.tmpl, err)
			continue
		}
		if strings.Join(tpl.Slots(), ",") != strings.Join(tt.slots, ",") {
			t.Errorf("%s: slots %v, want %v", tt.tmpl, tpl.Slots(), tt.slots)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"Bearer {env.TOKEN}", []string{"env.TOKEN"}},
		{"{env.A}:{file./run/b}{http.request.header.X}", []string{"env.A", "file./run/b", "http.request.header.X"}},
		{`\{env.A\} {env.B}`, []string{"env.B"}},
		{"plain", nil},
		{"{} {unclosed", nil},
	} {
		if got := Placeholders(tt.text); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestExpandPath(t *testing.T) {
	tpl, err := ParseTemplate("/t/{env.TENANT}/files/{path}", func(n string) bool { return n == "path" })
	if err != nil {
		t.Fatal(err)
	}
	repl := mapReplacer{"env.TENANT": "acme", "env.KEY": "s3cret"}
	tests := []struct {
		value   any
		want    string
		wantErr string
	}{
		{value: "readme.md", want: "/t/acme/files/readme.md"},
		{value: "docs/a b.md", want: "/t/acme/files/docs%2Fa%20b.md"},
		{value: "{env.KEY}", want: "/t/acme/files/%7Benv.KEY%7D"},
		{value: 42.0, want: "/t/acme/files/42"},
		{value: true, want: "/t/acme/files/true"},
		{value: "..", wantErr: "not allowed"},
		{value: ".", wantErr: "not allowed"},
		{value: "a/../../etc", wantErr: "not allowed"},
		{value: `a\..\b`, wantErr: "not allowed"},
		{value: "..\u0000", wantErr: "control character"},
		{value: "..\t", wantErr: "control character"},
		{value: "a\x7fb", wantErr: "control character"},
		{value: "a\u0085b", wantErr: "control character"},
		{value: "a\u009fb", wantErr: "control character"},
		{value: "a\xffb", wantErr: "not UTF-8"},
		{value: "\uff0e\uff0e", wantErr: "segment"},
		{value: "\uff0e", wantErr: "segment"},
		{value: ".\uff0e", wantErr: "segment"},
		{value: "\u2025", wantErr: "segment"},
		{value: "a\uff0f\uff0e\uff0e", wantErr: "segment"},
		{value: "a\uff3c\uff0e\uff0e\uff3cb", wantErr: "segment"},
		{value: "\uff0e\uff0e\uff0e", want: "/t/acme/files/%EF%BC%8E%EF%BC%8E%EF%BC%8E"},
		{value: "caf\u00e9 \ufffd", want: "/t/acme/files/caf%C3%A9%20%EF%BF%BD"},
		{value: "", wantErr: "empty"},
		{value: []any{"a"}, wantErr: "arrays and objects"},
		{value: nil, wantErr: "required"},
	}
	for _, tt := range tests {
		got, err := tpl.ExpandPath(map[string]any{"path": tt.value}, repl)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: error %v, want one containing %q", tt.value, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: got %q, %v; want %q", tt.value, got, err, tt.want)
		}
	}
}

// TestExpandPathWithTheTextBeside: a value that is harmless alone can make
// a dot segment with the template's own text once a server decodes the
// path; the template's own dot segments are left alone.
func TestExpandPathWithTheTextBeside(t *testing.T) {
	for _, tt := range []struct {
		tmpl, value, want string
	}{
		{"/files/.{name}", "\uff0e", ""},
		{"/files/\uff0e{name}/x", "\uff0e", ""},
		{"/files/{name}./meta", "x/", ""},
		{"/x/..{name}", "/", ""},
		{"/raw/%{code}", "2e", ""},
		{"/raw/%{code}", "41", "/raw/%41"},
		{"/archive/{name}.tar", "x", "/archive/x.tar"},
		{"/v1/../v2/{name}", "x", "/v1/../v2/x"},
		{"/v1/../v2/{name}.", "x/", ""},
		{"/raw/%{code}", "00", "control"},
		{"/raw/%{code}", "7f", "control"},
		{"/raw/%{code}", "85", "control"},
		{"/raw/%00/{name}", "x", "/raw/%00/x"},
	} {
		tpl, err := ParseTemplate(tt.tmpl, func(string) bool { return true })
		if err != nil {
			t.Fatal(err)
		}
		got, err := tpl.ExpandPath(map[string]any{"name": tt.value, "code": tt.value}, nil)
		switch {
		case tt.want == "" && (err == nil || !strings.Contains(err.Error(), "segment")):
			t.Errorf("%s with %q: %q, %v; want a dot segment refused", tt.tmpl, tt.value, got, err)
		case tt.want == "control" && (err == nil || !strings.Contains(err.Error(), "control character")):
			t.Errorf("%s with %q: %q, %v; want a control character refused", tt.tmpl, tt.value, got, err)
		case tt.want != "" && tt.want != "control" && (err != nil || got != tt.want):
			t.Errorf("%s with %q: %q, %v; want %q", tt.tmpl, tt.value, got, err, tt.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{"method", Spec{Method: "TRACE", Path: "/"}, "method"},
		{"relative path", Spec{Method: "GET", Path: "items"}, "must start with /"},
		{"unknown slot", Spec{Method: "GET", Path: "/items/{id}"}, "{id}"},
		{"in path without slot", Spec{Method: "GET", Path: "/items", Args: []Arg{{Name: "id", In: InPath}}}, "has no {id}"},
		{"slot placed elsewhere", Spec{Method: "GET", Path: "/items/{id}", Args: []Arg{{Name: "id", In: InQuery}}}, "placed in query"},
		{"array in path", Spec{Method: "GET", Path: "/items/{id}", Args: []Arg{{Name: "id", Type: "array"}}}, "cannot go in the path"},
		{"object in header", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "h", Type: "object", In: InHeader}}}, "cannot go in the header"},
		{"header_name without header", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "h", HeaderName: "X-H"}}}, "header_name"},
		{"query argument over a query line", Spec{Method: "GET", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []Arg{{Name: "tenant"}}}, `argument "tenant": the query parameter tenant is fixed by a query line`},
		{"query argument over a query line in another case", Spec{Method: "GET", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []Arg{{Name: "Tenant", In: InQuery}}}, "the query parameter tenant is fixed"},
		{"body argument over a query line", Spec{Method: "POST", Path: "/", Query: []Field{{"tenant", "acme"}}, Args: []Arg{{Name: "tenant"}}}, "the query parameter tenant is fixed"},
		{"form argument over a query line", Spec{Method: "POST", Path: "/", Body: BodyForm, Query: []Field{{"tenant", "acme"}}, Args: []Arg{{Name: "tenant"}}}, "the query parameter tenant is fixed"},
		{"header argument over another", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "a", In: InHeader, HeaderName: "X-Id"}, {Name: "b", In: InHeader, HeaderName: "x-id"}}}, `header X-Id is already set by argument "a"`},
		{"header over fixed", Spec{Method: "GET", Path: "/", Header: []Field{{"Authorization", "k"}}, Args: []Arg{{Name: "auth", In: InHeader, HeaderName: "authorization"}}}, "already set"},
		{"forbidden header", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "h", In: InHeader, HeaderName: "Host"}}}, "cannot be set"},
		{"bad placement", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "x", In: "cookie"}}}, "unknown placement"},
		{"body arg missing", Spec{Method: "POST", Path: "/", Body: BodyArg, BodyArg: "items"}, "names no argument"},
		{"body arg not in body", Spec{Method: "POST", Path: "/", Body: BodyArg, BodyArg: "q", Args: []Arg{{Name: "q", In: InQuery}}}, "placed in the query"},
		{"body arg plus other body", Spec{Method: "POST", Path: "/", Body: BodyArg, BodyArg: "a", Args: []Arg{{Name: "a"}, {Name: "b"}}}, "also placed in the body"},
		{"object in form", Spec{Method: "POST", Path: "/", Body: BodyForm, Args: []Arg{{Name: "o", Type: "object"}}}, "form body"},
		{"unknown body", Spec{Method: "POST", Path: "/", Body: "xml"}, "unknown body mode"},
		{"duplicate arg", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "a"}, {Name: "a"}}}, "twice"},
		{"query in the path", Spec{Method: "GET", Path: "/search?type=repo"}, "query lines"},
		{"fragment in the path", Spec{Method: "GET", Path: "/a#b"}, "query lines"},
		{"object in the query", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "f", Type: "object"}}}, "only in the body"},
		{"objects in the query", Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "f", Type: "array", Items: "object"}}}, "only in the body"},
	}
	for _, tt := range tests {
		_, err := New(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestNewRequest(t *testing.T) {
	base := mustURL(t, "https://api.example.com/v2/?key={env.KEY}")
	base.RawQuery = "fixed=1"
	repl := mapReplacer{"env.KEY": "s3cret"}
	tests := []struct {
		name       string
		spec       Spec
		args       map[string]any
		wantURL    string
		wantHeader map[string]string
		wantBody   string
		wantLabel  string
	}{
		{
			name:      "path query header",
			spec:      Spec{Method: "get", Path: "/repos/{owner}/{repo}", Args: []Arg{{Name: "owner"}, {Name: "repo"}, {Name: "state"}, {Name: "trace", In: InHeader, HeaderName: "x-trace"}}},
			args:      map[string]any{"owner": "a b", "repo": "r", "state": "open", "trace": "t1"},
			wantURL:   "https://api.example.com/v2/repos/a%20b/r?fixed=1&state=open",
			wantLabel: "GET /repos/a%20b/r",
			wantHeader: map[string]string{
				"X-Trace": "t1", "User-Agent": "caddy-mcp",
			},
		},
		{
			name:    "arrays repeat the key",
			spec:    Spec{Method: "GET", Path: "/s", Args: []Arg{{Name: "tags", Type: "array"}}},
			args:    map[string]any{"tags": []any{"a", "b", 3.0}},
			wantURL: "https://api.example.com/v2/s?fixed=1&tags=a&tags=b&tags=3",
		},
		{
			name:       "fixed query and header resolve placeholders, arguments do not",
			spec:       Spec{Method: "GET", Path: "/s", Query: []Field{{"api_key", "{env.KEY}"}}, Header: []Field{{"Authorization", "Bearer {env.KEY}"}}, Args: []Arg{{Name: "q"}}},
			args:       map[string]any{"q": "{env.KEY}"},
			wantURL:    "https://api.example.com/v2/s?api_key=s3cret&fixed=1&q=%7Benv.KEY%7D",
			wantHeader: map[string]string{"Authorization": "Bearer s3cret"},
		},
		{
			name:       "json body",
			spec:       Spec{Method: "POST", Path: "/items", Args: []Arg{{Name: "name"}, {Name: "tags", Type: "array"}, {Name: "dry", In: InQuery}}},
			args:       map[string]any{"name": "x", "tags": []any{"a"}, "dry": true},
			wantURL:    "https://api.example.com/v2/items?dry=true&fixed=1",
			wantBody:   `{"name":"x","tags":["a"]}`,
			wantHeader: map[string]string{"Content-Type": "application/json"},
		},
		{
			name:     "json body with every body argument omitted",
			spec:     Spec{Method: "POST", Path: "/items", Args: []Arg{{Name: "name"}}},
			args:     map[string]any{},
			wantURL:  "https://api.example.com/v2/items?fixed=1",
			wantBody: `{}`,
		},
		{
			name:       "form body",
			spec:       Spec{Method: "POST", Path: "/f", Body: BodyForm, Args: []Arg{{Name: "a"}, {Name: "b", Type: "array"}}},
			args:       map[string]any{"a": "1 2", "b": []any{"x", "y"}},
			wantURL:    "https://api.example.com/v2/f?fixed=1",
			wantBody:   "a=1+2&b=x&b=y",
			wantHeader: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		},
		{
			name:     "whole body argument",
			spec:     Spec{Method: "PUT", Path: "/list", Body: BodyArg, BodyArg: "items", Args: []Arg{{Name: "items", Type: "array"}}},
			args:     map[string]any{"items": []any{1.0, "two"}},
			wantURL:  "https://api.example.com/v2/list?fixed=1",
			wantBody: `[1,"two"]`,
		},
		{
			name:    "undeclared arguments of a free-form schema follow the default rule",
			spec:    Spec{Method: "DELETE", Path: "/x/{id}", Args: []Arg{{Name: "id"}}},
			args:    map[string]any{"id": 7.0, "force": true},
			wantURL: "https://api.example.com/v2/x/7?fixed=1&force=true",
		},
		{
			name:       "a configured Content-Type and Host win",
			spec:       Spec{Method: "PATCH", Path: "/o", Header: []Field{{"Content-Type", "application/merge-patch+json"}}, Args: []Arg{{Name: "a"}}},
			args:       map[string]any{"a": "x"},
			wantURL:    "https://api.example.com/v2/o?fixed=1",
			wantBody:   `{"a":"x"}`,
			wantHeader: map[string]string{"Content-Type": "application/merge-patch+json"},
		},
		{
			name:    "integers past 2**53 keep every digit",
			spec:    Spec{Method: "GET", Path: "/n/{n}", Args: []Arg{{Name: "n", Type: "integer"}}},
			args:    map[string]any{"n": json.Number("9007199254740993")},
			wantURL: "https://api.example.com/v2/n/9007199254740993?fixed=1",
		},
		{
			name:    "large numbers are not written with an exponent",
			spec:    Spec{Method: "GET", Path: "/n", Args: []Arg{{Name: "n", Type: "integer"}}},
			args:    map[string]any{"n": 1e21},
			wantURL: "https://api.example.com/v2/n?fixed=1&n=1000000000000000000000",
		},
	}
	for _, tt := range tests {
		tool, err := New(tt.spec)
		if err != nil {
			t.Errorf("%s: New: %v", tt.name, err)
			continue
		}
		req, call, err := tool.NewRequest(context.Background(), base, tt.args, repl)
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
			if got := req.Header.Get(k); got != v {
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
	tool, err := New(Spec{Method: "GET", Path: "/f/{p}", Args: []Arg{{Name: "p"}, {Name: "h", In: InHeader}}})
	if err != nil {
		t.Fatal(err)
	}
	base := mustURL(t, "http://127.0.0.1/")
	for _, args := range []map[string]any{
		{"p": ".."},
		{"p": "ok", "h": "a\r\nX-Injected: 1"},
		{"p": "ok", "h": map[string]any{"a": 1.0}},
	} {
		if _, _, err := tool.NewRequest(context.Background(), base, args, nil); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestNewRequestKeepsFixedQuery: what a query line or the upstream URL's
// own query fixes, no argument adds to, whether it is declared or let
// through by a free-form schema, and wherever it would go (a server may
// merge the body with the query).
func TestNewRequestKeepsFixedQuery(t *testing.T) {
	fixed := []Field{{"tenant", "acme"}, {"api_key", "{env.KEY}"}}
	repl := mapReplacer{"env.KEY": "s3cret"}
	tests := []struct {
		name    string
		spec    Spec
		base    string
		args    map[string]any
		wantErr string // "" for a request
		wantURL string
	}{
		{
			name:    "undeclared arguments in a GET",
			spec:    Spec{Method: "GET", Path: "/s", Query: fixed, Args: []Arg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "tenant": "globex", "api_key": "attacker"},
			wantErr: `arguments "api_key", "tenant" are fixed by the configuration and cannot be sent`,
		},
		{
			name:    "undeclared argument in another case",
			spec:    Spec{Method: "GET", Path: "/s", Query: fixed, Args: []Arg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "TENANT": "globex"},
			wantErr: `argument "TENANT" is fixed by the configuration and cannot be sent`,
		},
		{
			name:    "undeclared null argument",
			spec:    Spec{Method: "DELETE", Path: "/s", Query: fixed},
			args:    map[string]any{"tenant": nil},
			wantErr: `argument "tenant" is fixed`,
		},
		{
			name:    "undeclared argument in a JSON body",
			spec:    Spec{Method: "POST", Path: "/s", Query: fixed, Args: []Arg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "tenant": "globex"},
			wantErr: `argument "tenant" is fixed`,
		},
		{
			name:    "undeclared argument in a form body",
			spec:    Spec{Method: "PUT", Path: "/s", Body: BodyForm, Query: fixed},
			args:    map[string]any{"tenant": "globex"},
			wantErr: `argument "tenant" is fixed`,
		},
		{
			name:    "undeclared argument over the upstream URL's query",
			spec:    Spec{Method: "GET", Path: "/s"},
			base:    "https://api.example.com/v2?region=eu",
			args:    map[string]any{"region": "us"},
			wantErr: `argument "region" is fixed`,
		},
		{
			name:    "declared argument over the query of an upstream URL known per call",
			spec:    Spec{Method: "GET", Path: "/s", Args: []Arg{{Name: "region"}}},
			base:    "https://api.example.com/v2?region=eu",
			args:    map[string]any{"region": "us"},
			wantErr: `argument "region" is fixed`,
		},
		{
			name:    "undeclared argument beside a whole body argument",
			spec:    Spec{Method: "PUT", Path: "/list", Body: BodyArg, BodyArg: "items", Args: []Arg{{Name: "items", Type: "array"}}},
			args:    map[string]any{"items": []any{1.0}, "note": "replace the body"},
			wantErr: `argument "note" is not declared, and the body is the argument "items" alone`,
		},
		{
			name:    "other undeclared arguments still go where the default puts them",
			spec:    Spec{Method: "GET", Path: "/s", Query: fixed, Args: []Arg{{Name: "q"}}},
			args:    map[string]any{"q": "x", "page": 2.0},
			wantURL: "https://api.example.com/v2/s?api_key=s3cret&page=2&q=x&tenant=acme",
		},
		{
			name:    "a path argument named like a query line",
			spec:    Spec{Method: "GET", Path: "/tenants/{tenant}", Query: fixed, Args: []Arg{{Name: "tenant"}}},
			args:    map[string]any{"tenant": "globex"},
			wantURL: "https://api.example.com/v2/tenants/globex?api_key=s3cret&tenant=acme",
		},
		{
			name:    "a header argument named like a query line",
			spec:    Spec{Method: "POST", Path: "/s", Query: fixed, Args: []Arg{{Name: "tenant", In: InHeader, HeaderName: "X-Tenant"}}},
			args:    map[string]any{"tenant": "globex"},
			wantURL: "https://api.example.com/v2/s?api_key=s3cret&tenant=acme",
		},
	}
	for _, tt := range tests {
		tool, err := New(tt.spec)
		if err != nil {
			t.Errorf("%s: New: %v", tt.name, err)
			continue
		}
		if tt.base == "" {
			tt.base = "https://api.example.com/v2"
		}
		req, _, err := tool.NewRequest(context.Background(), mustURL(t, tt.base), tt.args, repl)
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

func TestCheckBase(t *testing.T) {
	base := mustURL(t, "https://api.example.com/v2?Region=eu")
	for _, tt := range []struct {
		spec    Spec
		wantErr string
	}{
		{Spec{Method: "GET", Path: "/s", Args: []Arg{{Name: "q"}, {Name: "region"}}}, `argument "region": the query parameter Region is fixed by the upstream URL`},
		{Spec{Method: "POST", Path: "/s", Args: []Arg{{Name: "region"}}}, `argument "region"`},
		{Spec{Method: "GET", Path: "/r/{region}", Args: []Arg{{Name: "region"}}}, ""},
		{Spec{Method: "GET", Path: "/s", Args: []Arg{{Name: "region", In: InHeader}}}, ""},
		{Spec{Method: "PUT", Path: "/s", Body: BodyArg, BodyArg: "region", Args: []Arg{{Name: "region"}}}, ""},
	} {
		tool, err := New(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		err = tool.CheckBase(base)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s %s %v: error %v, want %q", tt.spec.Method, tt.spec.Path, tt.spec.Args, err, tt.wantErr)
		}
		if err := tool.CheckBase(mustURL(t, "https://api.example.com/v2")); err != nil {
			t.Errorf("a base without a query: %v", err)
		}
	}
}

func TestLabel(t *testing.T) {
	tool, err := New(Spec{Method: "get", Path: "/t/{env.TENANT}/items/{id}", Args: []Arg{{Name: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tool.Label(map[string]any{"id": "a b"}); got != "GET /t/{env.TENANT}/items/a%20b" {
		t.Errorf("label %q", got)
	}
	if got := tool.Label(map[string]any{"id": ".."}); got != "GET /t/{env.TENANT}/items/{id}" {
		t.Errorf("label of a refused value %q", got)
	}
}

func TestApplyDefaults(t *testing.T) {
	tool, err := New(Spec{Method: "GET", Path: "/", Args: []Arg{{Name: "limit", Default: 10.0}, {Name: "q"}}})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"q": "x"}
	out := tool.ApplyDefaults(in)
	if out["limit"] != 10.0 || out["q"] != "x" {
		t.Errorf("defaults not applied: %v", out)
	}
	if _, changed := in["limit"]; changed {
		t.Error("ApplyDefaults changed its input")
	}
	if got := tool.ApplyDefaults(map[string]any{"limit": 3.0}); got["limit"] != 3.0 {
		t.Errorf("a given value was replaced by the default: %v", got)
	}
}

func TestHostHeader(t *testing.T) {
	tool, err := New(Spec{Method: "GET", Path: "/x", Header: []Field{{"Host", "api.internal"}}})
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := tool.NewRequest(context.Background(), mustURL(t, "http://127.0.0.1:9/"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.Host != "api.internal" || req.Header.Get("Host") != "" {
		t.Errorf("req.Host %q, header %q", req.Host, req.Header.Get("Host"))
	}
}

func TestLabelKeepsPlaceholders(t *testing.T) {
	tool, err := New(Spec{Method: "POST", Path: "/hooks/{env.TOKEN}/{id}", Args: []Arg{{Name: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	req, call, err := tool.NewRequest(context.Background(), mustURL(t, "http://127.0.0.1:9/"), map[string]any{"id": "a b"}, mapReplacer{"env.TOKEN": "s3cret"})
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
