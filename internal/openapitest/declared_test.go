//go:build unix

package openapitest

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
)

// declared is what a document declares of its operations' query keys and
// X- headers: the part of a request Prism does not check, since OpenAPI
// lets a client send query parameters and headers the operation does not
// name. The gateway must not: an argument that went to the query instead
// of the body would pass Prism unseen where the body's schema allows it
// to be absent.
type declared struct {
	ops []declaredOp
}

type declaredOp struct {
	method  string
	path    *regexp.Regexp
	slots   int             // path parameters: fewer is the more specific route
	query   map[string]bool // names, and an exploded form object's properties
	prefix  []string        // deepObject names, whose keys are name[...]
	headers map[string]bool // canonical header names
}

// readDeclared reads the parameters of every operation of the document
// at path (JSON or YAML, OpenAPI 3 or Swagger 2.0).
func readDeclared(t *testing.T, path string) *declared {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		for range 8 {
			ref, ok := m["$ref"].(string)
			if !ok {
				break
			}
			var cur any = doc
			for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
				part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
				next, _ := cur.(map[string]any)
				cur = next[part]
			}
			m, _ = cur.(map[string]any)
		}
		return m
	}
	d := &declared{}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		item, _ := item.(map[string]any)
		shared, _ := item["parameters"].([]any)
		for method, op := range item {
			op, ok := op.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			o := declaredOp{
				method:  strings.ToUpper(method),
				path:    regexp.MustCompile("^" + quotedSlot.ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`) + "$"),
				slots:   len(slot.FindAllString(p, -1)),
				query:   map[string]bool{},
				headers: map[string]bool{},
			}
			own, _ := op["parameters"].([]any)
			for _, param := range append(slices.Clone(shared), own...) {
				param := resolve(param)
				name, _ := param["name"].(string)
				switch param["in"] {
				case "query":
					o.query[name] = true
					schema := resolve(param["schema"])
					switch style, _ := param["style"].(string); {
					case style == "deepObject":
						o.prefix = append(o.prefix, name+"[")
					case (style == "" || style == "form") && param["explode"] != false && schema["type"] == "object":
						props, _ := schema["properties"].(map[string]any)
						for p := range props {
							o.query[p] = true // an exploded object's keys are its properties
						}
					}
				case "header":
					o.headers[http.CanonicalHeaderKey(name)] = true
				}
			}
			d.ops = append(d.ops, o)
		}
	}
	return d
}

// check fails the test for each query key or X- header of the request
// that its operation does not declare.
func (d *declared) check(t *testing.T, what string, r prismtest.Request) {
	t.Helper()
	for _, p := range d.undeclared(r) {
		t.Errorf("%s: %s", what, p)
	}
}

// undeclared lists what of the request its operation does not declare.
func (d *declared) undeclared(r prismtest.Request) []string {
	op, err := d.route(r)
	if err != nil {
		return []string{err.Error()}
	}
	query, err := url.ParseQuery(r.RawQuery)
	if err != nil {
		return []string{fmt.Sprintf("query %q: %v", r.RawQuery, err)}
	}
	var out []string
	for _, key := range slices.Sorted(maps.Keys(query)) {
		if !op.query[key] && !slices.ContainsFunc(op.prefix, func(p string) bool { return strings.HasPrefix(key, p) }) {
			out = append(out, fmt.Sprintf("the query key %q of %s %s is no parameter of the operation", key, r.Method, r.URI()))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Header)) {
		if strings.HasPrefix(name, "X-") && !op.headers[name] {
			out = append(out, fmt.Sprintf("the header %s of %s %s is no parameter of the operation", name, r.Method, r.URI()))
		}
	}
	return out
}

// route is the operation the request is for: of the matching paths, the
// one with the fewest parameters (/pet/findByStatus before /pet/{petId}).
func (d *declared) route(r prismtest.Request) (declaredOp, error) {
	best := -1
	for i, op := range d.ops {
		if op.method == r.Method && op.path.MatchString(r.Path) && (best < 0 || op.slots < d.ops[best].slots) {
			best = i
		}
	}
	if best < 0 {
		return declaredOp{}, fmt.Errorf("no operation of the document is %s %s", r.Method, r.Path)
	}
	return d.ops[best], nil
}

// slot is a path template's parameter; quotedSlot is one after
// regexp.QuoteMeta.
var (
	slot       = regexp.MustCompile(`\{[^}]+\}`)
	quotedSlot = regexp.MustCompile(`\\\{[^}]+\\\}`)
)

// TestDeclared checks the check: keys and headers the operation names
// pass, others are reported, and a path is routed to its most specific
// operation.
func TestDeclared(t *testing.T) {
	d := readDeclared(t, "testdata/wire.yaml")
	header := func(kv ...string) http.Header {
		h := http.Header{"Accept": {"application/json"}, "User-Agent": {"caddy"}}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name string
		req  prismtest.Request
		want []string
	}{
		{"declared keys", prismtest.Request{Method: "GET", Path: "/search/form", RawQuery: "colors=red&colors=blue&limit=3", Header: header()}, nil},
		{"deepObject keys", prismtest.Request{Method: "GET", Path: "/search/deep", RawQuery: "filter%5Bcolor%5D=red&filter[size]=2", Header: header()}, nil},
		{"an exploded object's properties", prismtest.Request{Method: "GET", Path: "/search/object", RawQuery: "x=1&y=2&range=min,0", Header: header()}, nil},
		{"declared headers", prismtest.Request{Method: "GET", Path: "/items/1", Header: header("X-Request-Id", "a", "X-Trace-Depth", "1")}, nil},
		{"an undeclared key", prismtest.Request{Method: "GET", Path: "/search/form", RawQuery: "colors=red&title=x", Header: header()},
			[]string{`the query key "title" of GET /search/form?colors=red&title=x is no parameter of the operation`}},
		{"an undeclared X- header", prismtest.Request{Method: "GET", Path: "/items/1", Header: header("X-Request-Id", "a", "X-Note", "b")},
			[]string{"the header X-Note of GET /items/1 is no parameter of the operation"}},
		{"another operation's key", prismtest.Request{Method: "GET", Path: "/search/comma", RawQuery: "limit=1&colors=red", Header: header()},
			[]string{`the query key "limit" of GET /search/comma?limit=1&colors=red is no parameter of the operation`}},
		{"no such operation", prismtest.Request{Method: "DELETE", Path: "/items/1", Header: header()},
			[]string{"no operation of the document is DELETE /items/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.undeclared(tt.req); !slices.Equal(got, tt.want) {
				t.Errorf("undeclared %q\nwant       %q", got, tt.want)
			}
		})
	}
}
