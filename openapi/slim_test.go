package openapi

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

func TestSlimJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"examples and extensions of keywords go",
			`{"openapi": "3.0.3", "x-logo": {"url": "u"}, "paths": {"/a": {"get": {"x-github": 1, "responses": {"200": {"description": "ok",
			"content": {"application/json": {"example": {"a": 1}, "examples": {"e": {"$ref": "#/components/examples/e"}}, "schema": {"type": "string", "example": "s"}}}}}}}},
			"components": {"examples": {"e": {"value": 1}}, "schemas": {"S": {"type": "object"}}}}`,
			`{"openapi":"3.0.3","paths":{"/a":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"string"}}}}}}}},"components":{"schemas":{"S":{"type":"object"}}}}`},
		{"names are kept, whatever they are called",
			`{"properties": {"example": {"type": "string"}, "x-rate": {"type": "integer", "x-no": 1}, "examples": {}},
			"security": [{"x-api-key": []}], "headers": {"x-ratelimit": {"schema": {"type": "integer"}}}}`,
			`{"properties":{"example":{"type":"string"},"x-rate":{"type":"integer"},"examples":{}},"security":[{"x-api-key":[]}],"headers":{"x-ratelimit":{"schema":{"type":"integer"}}}}`},
		{"data is copied as it is",
			`{"default": {"example": 1, "x-a": [1, 2]}, "enum": [{"examples": []}, "x-"], "const": {"x-b": null}}`,
			`{"default":{"example": 1, "x-a": [1, 2]},"enum":[{"examples": []}, "x-"],"const":{"x-b": null}}`},
		{"an escaped key is kept",
			`{"x\u002da": 1, "ex\u0061mple": 2, "x-b": 3}`,
			`{"x\u002da":1,"ex\u0061mple":2}`},
		{"strings with quotes and brackets",
			`{"description": "a \"}\" and a [", "x-c": "]\\", "title": "t"}`,
			`{"description":"a \"}\" and a [","title":"t"}`},
		{"the first member left out", `{"x-a": 1, "b": 2}`, `{"b":2}`},
		{"every member left out", `{"x-a": 1, "example": 2}`, `{}`},
		{"empty", `{"a": {}, "b": [], "c": [ ]}`, `{"a":{},"b":[],"c":[]}`},
		{"scalars", `{"a": 1.5e3 , "b": true, "c": null, "d": -0}`, `{"a":1.5e3,"b":true,"c":null,"d":-0}`},
		{"YAML after the object", `{"a": 1} b: 2`, ""},
		{"unclosed", `{"a": {"b": 1}`, ""},
		{"a key that is not a string", `{a: 1}`, ""},
		{"no colon", `{"a" 1}`, ""},
		{"too deep", strings.Repeat(`{"a":`, maxSlimDepth+2) + "1" + strings.Repeat("}", maxSlimDepth+2), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := slimJSON([]byte(tt.in))
			if tt.want == "" {
				if ok {
					t.Errorf("slimmed to %s, want it refused", got)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Errorf("got %s (ok %v)\nwant %s", got, ok, tt.want)
			}
		})
	}
}

// TestSlimLoadsTheSameTools loads real documents, and the odd ones the
// load tests use, slimmed and a piece at a time, and as given: the
// same tools, skipped operations, server and errors.
func TestSlimLoadsTheSameTools(t *testing.T) {
	// Parallel: the tests that measure allocation are not, so they run
	// before it.
	t.Parallel()
	documents := map[string][]byte{
		"duplicate keys": []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"info":{"title":"u","version":"2"},` +
			`"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`),
		"a path twice": []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},` +
			`"paths":{"/a":{"get":{"operationId":"one","responses":{"200":{"description":"ok"}}}},"/a":{"get":{"operationId":"two","responses":{"200":{"description":"ok"}}}}}}`),
		"a reference to nothing": []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Missing"}}}}}}}}}`),
		"a reference to an example": []byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"#/components/examples/E/value"}}}}}}}},"components":{"examples":{"E":{"value":{"type":"string"}}}}}`),
	}
	if !racetest.Enabled { // minutes under the race detector, for no concurrency
		documents["github 3.1 form"] = githubDocument31(t)
		documents["github 3.0"] = document(t, githubDocument)
	}
	for _, version := range []string{"3.0", "3.1"} {
		dir := filepath.Join(filepath.Dir(openapidocs.Path(t, petstore30)), "..", "..", version, "json")
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) < 10 {
			t.Fatalf("%d documents in %s: %v", len(files), dir, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			documents[version+" "+filepath.Base(f)] = data
		}
	}
	// These load as given, as the slim load fails.
	fallBack := map[string]bool{"duplicate keys": true, "a reference to nothing": true, "a reference to an example": true}
	for name, data := range documents {
		if _, err := loadSlim(data); (err != nil) != fallBack[name] {
			t.Errorf("%s: the slim load's error is %v", name, err)
		}
		slim, slimErr := load(data, true)
		given, givenErr := load(data, false)
		if (slimErr == nil) != (givenErr == nil) || slimErr != nil && slimErr.Error() != givenErr.Error() {
			t.Errorf("%s: error %v, as given %v", name, slimErr, givenErr)
			continue
		}
		if slimErr != nil {
			continue
		}
		if slim.Version != given.Version || slim.ServerURL != given.ServerURL {
			t.Errorf("%s: version %q, server %q; as given %q, %q", name, slim.Version, slim.ServerURL, given.Version, given.ServerURL)
		}
		a, aErr := slim.Tools(Curation{}, nil)
		b, bErr := given.Tools(Curation{}, nil)
		if (aErr == nil) != (bErr == nil) {
			t.Errorf("%s: tools error %v, as given %v", name, aErr, bErr)
			continue
		}
		if aErr == nil && !reflect.DeepEqual(mustJSON(t, a), mustJSON(t, b)) {
			t.Errorf("%s: the tools differ from those of the document as given", name)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzSlimJSON holds slimJSON to a plain reading of its rules, on the
// decoded value: for valid JSON it keeps exactly what the rules keep.
func FuzzSlimJSON(f *testing.F) {
	f.Add([]byte(`{"properties":{"example":{"x-a":1,"examples":[]}},"security":[{"x-k":[]}],"default":{"x-b":1}}`))
	f.Add([]byte(`{"paths":{"/a":{"get":{"x-g":{},"parameters":[{"name":"p","example":"e"}]}}},"components":{"parameters":{"example":{"x-a":1}}}}`))
	f.Add([]byte(`[{"enum":[{"x-a":1}],"items":{"example":"e","type":"string"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := slimJSON(data)
		if !json.Valid(data) {
			return // the document is then loaded as given
		}
		if !ok {
			if depth(data) <= maxSlimDepth {
				t.Fatalf("%q: refused", data)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("%q: slimmed to %q, which is not JSON", data, got)
		}
		if bytes.Contains(data, []byte(`\`)) {
			return // an escaped key is kept, which the plain reading cannot tell
		}
		var in, out any
		_ = json.Unmarshal(data, &in)
		_ = json.Unmarshal(got, &out)
		if want := plainSlim(in, keywords); !reflect.DeepEqual(out, want) {
			t.Fatalf("%q: slimmed to %q, want %v", data, got, want)
		}
	})
}

// plainSlim is slimJSON's rules on a decoded value.
func plainSlim(v any, k kind) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for key, child := range v {
			switch {
			case k == names:
				out[key] = plainSlim(child, keywords)
			case leftOut([]byte(key)):
			case verbatim[key]:
				out[key] = child
			case nameMaps[key]:
				if _, list := child.([]any); list && key != "security" {
					out[key] = plainSlim(child, keywords)
				} else {
					out[key] = plainSlim(child, names)
				}
			default:
				out[key] = plainSlim(child, keywords)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, child := range v {
			out[i] = plainSlim(child, k)
		}
		return out
	}
	return v
}

// depth is how deep JSON nests.
func depth(data []byte) int {
	d, most := 0, 0
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == '{' || c == '['):
			d++
			most = max(most, d)
		case !in && (c == '}' || c == ']'):
			d--
		}
	}
	return most
}
