package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func boolPtr(b bool) *bool { return &b }

// TestStyledQuery writes arrays, objects and scalars in every query style
// and checks the exact query sent.
func TestStyledQuery(t *testing.T) {
	t.Parallel()
	colors := []any{"blue", "black", "brown"}
	rgb := map[string]any{"R": 100.0, "G": 200.0, "B": 150.0}
	tests := []struct {
		name    string
		arg     planArg
		value   any
		want    string
		extra   []planArg // beside the styled one
		args    map[string]any
		wantErr string
	}{
		{name: "no style repeats the key", arg: planArg{Type: "array"}, value: colors, want: "color=blue&color=black&color=brown"},
		{name: "form explodes by default", arg: planArg{Style: StyleForm}, value: colors, want: "color=blue&color=black&color=brown"},
		{name: "form without explode", arg: planArg{Style: StyleForm, explodeSet: boolPtr(false)}, value: colors, want: "color=blue,black,brown"},
		{name: "spaceDelimited", arg: planArg{Style: StyleSpaceDelimited}, value: colors, want: "color=blue%20black%20brown"},
		{name: "pipeDelimited", arg: planArg{Style: StylePipeDelimited}, value: colors, want: "color=blue%7Cblack%7Cbrown"},
		{name: "form object exploded", arg: planArg{Type: "object", Style: StyleForm}, value: rgb, want: "B=150&G=200&R=100"},
		{name: "form object without explode", arg: planArg{Type: "object", Style: StyleForm, explodeSet: boolPtr(false)}, value: rgb, want: "color=B,150,G,200,R,100"},
		{name: "spaceDelimited object", arg: planArg{Type: "object", Style: StyleSpaceDelimited}, value: rgb, want: "color=B%20150%20G%20200%20R%20100"},
		{name: "pipeDelimited object", arg: planArg{Type: "object", Style: StylePipeDelimited}, value: rgb, want: "color=B%7C150%7CG%7C200%7CR%7C100"},
		{name: "deepObject", arg: planArg{Type: "object", Style: StyleDeepObject}, value: rgb, want: "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=100"},
		{name: "a scalar in any style is one value", arg: planArg{Style: StylePipeDelimited}, value: "a|b c", want: "color=a%7Cb+c"},
		{name: "a scalar in deepObject", arg: planArg{Style: StyleDeepObject}, value: 5.0, want: "color=5"},
		{name: "separators and keys inside values stay inside", arg: planArg{Style: StyleForm, explodeSet: boolPtr(false)}, value: []any{"a,b", "c&fixed=2", "d=e"},
			want: "color=a%2Cb,c%26fixed%3D2,d%3De"},
		{name: "a pipe inside a pipeDelimited value", arg: planArg{Style: StylePipeDelimited}, value: []any{"a|b", "c"}, want: "color=a%7Cb%7Cc"},
		{name: "spaces inside a spaceDelimited value", arg: planArg{Style: StyleSpaceDelimited}, value: []any{"a b", "c"}, want: "color=a+b%20c"},
		{name: "an exploded property escapes its name and value", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"a&b": "c=d"}, want: "a%26b=c%3Dd"},
		{name: "a deepObject property escapes its value", arg: planArg{Type: "object", Style: StyleDeepObject}, value: map[string]any{"x": "1&fixed=2"}, want: "color%5Bx%5D=1%26fixed%3D2"},
		{name: "null properties are left out", arg: planArg{Type: "object", Style: StyleDeepObject}, value: map[string]any{"a": nil, "b": true}, want: "color%5Bb%5D=true"},
		{name: "an empty array sends nothing", arg: planArg{Style: StyleForm, explodeSet: boolPtr(false)}, value: []any{}, want: ""},
		{name: "an empty object sends nothing", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{}, want: ""},
		{name: "beside other arguments", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"status": "open"},
			extra: []planArg{{Name: "page"}}, args: map[string]any{"page": 2.0}, want: "page=2&status=open"},
		{name: "a property named like the argument itself", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"color": "red"}, want: "color=red"},

		{name: "a property over a query line", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"Key": "mine"},
			wantErr: `argument "color" would send the query parameter key, which is fixed by the configuration and cannot be sent`},
		{name: "a property over the upstream URL's query", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"fixed": "2"},
			wantErr: `argument "color" would send the query parameter fixed, which is fixed`},
		{name: "a deepObject property over a query line", arg: planArg{Type: "object", Style: StyleDeepObject}, value: map[string]any{"x": "2"},
			wantErr: `argument "color" would send the query parameter color[x], which is fixed`},
		{name: "a property over another argument", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"page": "3"},
			extra: []planArg{{Name: "page"}}, args: map[string]any{"page": 2.0}, wantErr: `arguments "color" and "page" would both send the query parameter page`},
		{name: "a property over an undeclared argument", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"extra": "3"},
			args: map[string]any{"extra": 2.0}, wantErr: `arguments "color" and "extra" would both send the query parameter extra`},
		{name: "two objects with one property", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"a": "1"},
			extra: []planArg{{Name: "other", Type: "object", Style: StyleForm}}, args: map[string]any{"other": map[string]any{"a": "2"}},
			wantErr: `arguments "color" and "other" would both send the query parameter a`},
		{name: "a nested object", arg: planArg{Type: "object", Style: StyleDeepObject}, value: map[string]any{"a": map[string]any{"b": 1.0}},
			wantErr: `argument "color": property "a": arrays and objects cannot go here (style deepObject writes one level)`},
		{name: "an array in an object", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"a": []any{1.0}}, wantErr: `property "a": arrays and objects cannot go here`},
		{name: "an array in an array", arg: planArg{Style: StylePipeDelimited}, value: []any{[]any{1.0}}, wantErr: `argument "color": item 0: arrays and objects cannot go here (style pipeDelimited writes one level)`},
		{name: "a deepObject property with brackets", arg: planArg{Type: "object", Style: StyleDeepObject}, value: map[string]any{"a][b": 1.0},
			wantErr: `property "a][b": a property name with [ or ] cannot be sent in style deepObject`},
		{name: "an array in deepObject", arg: planArg{Style: StyleDeepObject}, value: colors, wantErr: "style deepObject writes objects, not arrays"},
		{name: "a property without a name", arg: planArg{Type: "object", Style: StyleForm}, value: map[string]any{"": 1.0}, wantErr: "a property with an empty name"},
	}
	base := mustURL(t, "https://api.example.com/?fixed=1")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arg := tt.arg
			arg.Name, arg.In = "color", InQuery
			spec := planSpec{Method: "GET", Path: "/", Args: append([]planArg{arg}, tt.extra...)}
			if tt.wantErr != "" {
				spec.Query = []Field{{"key", "k"}, {"color[x]", "1"}}
			}
			plan, err := newRequestPlan(spec)
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"color": tt.value}
			for k, v := range tt.args {
				args[k] = v
			}
			req, _, err := plan.build(context.Background(), base, args, nil)
			if endsInError(t, err, tt.wantErr) {
				return
			}
			want := "fixed=1"
			if tt.want != "" {
				want = tt.want + "&fixed=1"
				if strings.Compare(tt.want, "fixed") > 0 {
					want = "fixed=1&" + tt.want
				}
			}
			if req.URL.RawQuery != want {
				t.Errorf("query %s, want %s", req.URL.RawQuery, want)
			}
		})
	}
}

// endsInError fails t unless err is what wantErr says (nil for "", else
// an error containing it), and reports whether there is an error.
func endsInError(t *testing.T, err error, wantErr string) bool {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatal(err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Fatalf("error %v, want one containing %q", err, wantErr)
	}
	return err != nil
}

// TestStyledPathAndHeader writes arrays and objects in style simple.
func TestStyledPathAndHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		explode    *bool
		value      any
		wantPath   string
		wantHeader string
		wantErr    string
	}{
		{name: "array", value: []any{"blue", "black", 3.0}, wantPath: "/items/blue,black,3", wantHeader: "blue,black,3"},
		{name: "array exploded is the same", explode: boolPtr(true), value: []any{"a", "b"}, wantPath: "/items/a,b", wantHeader: "a,b"},
		{name: "object", value: map[string]any{"R": 100.0, "G": 200.0}, wantPath: "/items/G,200,R,100", wantHeader: "G,200,R,100"},
		{name: "object exploded", explode: boolPtr(true), value: map[string]any{"R": 100.0, "G": 200.0}, wantPath: "/items/G=200,R=100", wantHeader: "G=200,R=100"},
		{name: "a comma or slash inside an item is escaped in the path", value: []any{"a,b", "c/d", "e f"}, wantPath: "/items/a%2Cb,c%2Fd,e%20f", wantHeader: "a,b,c/d,e f"},
		{name: "a scalar", value: "x", wantPath: "/items/x", wantHeader: "x"},
		{name: "dot segments stay refused", value: []any{".."}, wantErr: "a . or .. segment"},
		{name: "an item that makes a dot segment once decoded", value: []any{"../..", "x"}, wantErr: "a . or .. segment"},
		{name: "an empty array in the path", value: []any{}, wantErr: "an empty value cannot go in the path"},
		{name: "nested", value: []any{[]any{"a"}}, wantErr: "item 0: arrays and objects cannot go here"},
	}
	base := mustURL(t, "https://api.example.com")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := newRequestPlan(planSpec{Method: "GET", Path: "/items/{id}", Args: []planArg{
				{Name: "id", Type: "array", Style: StyleSimple, explodeSet: tt.explode},
				{Name: "h", Type: "array", In: InHeader, HeaderName: "X-Colors", Style: StyleSimple, explodeSet: tt.explode},
			}})
			if err != nil {
				t.Fatal(err)
			}
			req, target, err := plan.build(context.Background(), base, map[string]any{"id": tt.value, "h": tt.value}, nil)
			if endsInError(t, err, tt.wantErr) {
				return
			}
			if got := req.URL.EscapedPath(); got != tt.wantPath {
				t.Errorf("path %s, want %s", got, tt.wantPath)
			}
			if target.Label != "GET "+tt.wantPath || plan.label(map[string]any{"id": tt.value}) != target.Label {
				t.Errorf("label %q, and %q without a request, want GET %s", target.Label, plan.label(map[string]any{"id": tt.value}), tt.wantPath)
			}
			if got := req.Header.Values("X-Colors"); len(got) != 1 || got[0] != tt.wantHeader {
				t.Errorf("header %q, want %q", got, tt.wantHeader)
			}
		})
	}

	plan, err := newRequestPlan(planSpec{Method: "GET", Path: "/", Args: []planArg{{Name: "h", Type: "array", In: InHeader, Style: StyleSimple}}})
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := plan.build(context.Background(), base, map[string]any{"h": []any{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, set := req.Header["H"]; set {
		t.Errorf("an empty array was sent as header %q", got)
	}
	if _, _, err := plan.build(context.Background(), base, map[string]any{"h": []any{"a", "b\r\nX-Injected: 1"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "characters not allowed in a header") {
		t.Errorf("a CR LF in an item: error %v", err)
	}
}

// TestStyleRefused: a style must fit the placement and the type.
func TestStyleRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		arg     planArg
		wantErr string
	}{
		{"unknown style", planArg{In: InQuery, Style: "matrix"}, `argument "a": unknown style "matrix"`},
		{"explode without a style", planArg{In: InQuery, explodeSet: boolPtr(false)}, "explode goes only with a style"},
		{"a query style in a header", planArg{In: InHeader, Style: StyleForm}, "style form goes only with the query, and the argument goes in the header"},
		{"a query style in the body", planArg{In: InBody, Style: StyleDeepObject}, "goes only with the query"},
		{"simple in the query", planArg{In: InQuery, Style: StyleSimple}, "style simple goes only with the path or a header"},
		{"deepObject for an array", planArg{In: InQuery, Type: "array", Style: StyleDeepObject}, "style deepObject writes objects, not arrays"},
		{"deepObject not exploded", planArg{In: InQuery, Type: "object", Style: StyleDeepObject, explodeSet: boolPtr(false)}, "always exploded"},
		{"pipeDelimited exploded", planArg{In: InQuery, Type: "array", Style: StylePipeDelimited, explodeSet: boolPtr(true)}, "never exploded"},
		{"an array of objects", planArg{In: InQuery, Type: "array", Items: "object", Style: StyleForm}, "writes arrays of scalars, not of objects"},
		{"an array in a header without a style", planArg{In: InHeader, Type: "array"}, "array arguments cannot go in the header"},
		{"an object in the query without a style", planArg{In: InQuery, Type: "object"}, "objects go only in the body, not in the query"},
	}
	for _, tt := range tests {
		arg := tt.arg
		arg.Name = "a"
		_, err := newRequestPlan(planSpec{Method: "POST", Path: "/", Args: []planArg{arg}})
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}

// TestOperationStyles: typed arg lines and args beside an input_schema
// both take a style.
func TestOperationStyles(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	base := mustURL(t, "https://api.example.com")
	for _, def := range []Definition{
		{Name: "typed", Method: "GET", Path: "/items/{ids}", Query: []Field{{"v", "1"}, {"filter[v]", "1"}}, Args: []Arg{
			{Name: "ids", Type: "integer[]", Style: StyleSimple},
			{Name: "filter", Type: "object", Style: StyleDeepObject},
			{Name: "tags", Type: "string[]", Style: StylePipeDelimited},
		}},
		{Name: "schema", Method: "GET", Path: "/items/{ids}", Query: []Field{{"v", "1"}, {"filter[v]", "1"}},
			InputSchema: raw(`{"type":"object","properties":{"ids":{"type":"array"},"filter":{"type":"object"},"tags":{"type":"array"}}}`),
			Args:        []Arg{{Name: "ids", Style: StyleSimple}, {Name: "filter", Style: StyleDeepObject}, {Name: "tags", Style: StylePipeDelimited, Explode: boolPtr(false)}}},
	} {
		op, err := NewOperation(def)
		if err != nil {
			t.Fatalf("%s: %v", def.Name, err)
		}
		args, err := op.Check(map[string]any{"ids": []any{json.Number("1"), json.Number("2")}, "filter": map[string]any{"state": "open"}, "tags": []any{"a", "b"}})
		if err != nil {
			t.Fatalf("%s: %v", def.Name, err)
		}
		req, _, err := op.Request(context.Background(), base, args, nil)
		if err != nil {
			t.Fatalf("%s: %v", def.Name, err)
		}
		if got, want := req.URL.String(), "https://api.example.com/items/1,2?filter%5Bstate%5D=open&filter%5Bv%5D=1&tags=a%7Cb&v=1"; got != want {
			t.Errorf("%s: URL %s, want %s", def.Name, got, want)
		}
		if _, _, err := op.Request(context.Background(), base, map[string]any{"ids": []any{"1"}, "filter": map[string]any{"v": "2"}}, nil); err == nil {
			t.Errorf("%s: a property over the query line was sent", def.Name)
		}
	}
}
