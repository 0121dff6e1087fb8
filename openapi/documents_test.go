package openapi

import (
	"encoding/json"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
)

// The real documents the tests load, installed by npm from
// testdata/package-lock.json.
const (
	githubDocument  = openapidocs.GitHub
	petstore30      = "@readme/oas-examples/3.0/json/petstore.json"
	petstore31      = "@readme/oas-examples/3.1/json/petstore.json"
	petstore31YAML  = "@readme/oas-examples/3.1/yaml/petstore.yaml"
	swaggerPetstore = "@readme/oas-examples/2.0/json/petstore.json"
	swaggerYAML     = "@readme/oas-examples/2.0/yaml/petstore.yaml"
	trainTravel31   = "@readme/oas-examples/3.1/json/train-travel.json"
	circular30      = "@readme/oas-examples/3.0/json/schema-circular.json"
	parameterStyles = "@readme/oas-examples/3.0/json/parameters-style.json"
)

// document returns the bytes of one of the documents above, installing
// them first when needed.
func document(tb testing.TB, name string) []byte {
	tb.Helper()
	return openapidocs.Read(tb, name)
}

// githubDocument31 is GitHub's document in its OpenAPI 3.1 form, as
// GitHub publishes it beside the 3.0 one (descriptions-next): nullable
// becomes a type union with "null" (or anyOf with a null schema where
// there is no type), boolean exclusive bounds become numbers, and the
// version says 3.1.0. npm ships only the 3.0 form.
func githubDocument31(tb testing.TB) []byte {
	tb.Helper()
	var doc map[string]any
	if err := json.Unmarshal(document(tb, githubDocument), &doc); err != nil {
		tb.Fatal(err)
	}
	doc["openapi"] = "3.1.0"
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "example" || k == "examples" {
					continue
				}
				v[k] = walk(child)
			}
			if n, _ := v["nullable"].(bool); n {
				delete(v, "nullable")
				switch t := v["type"].(type) {
				case string:
					v["type"] = []any{t, "null"}
				case nil:
					inner := make(map[string]any, len(v))
					for k, child := range v {
						inner[k] = child
						delete(v, k)
					}
					v["anyOf"] = []any{inner, map[string]any{"type": "null"}}
				}
			}
			for _, bound := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
				if b, ok := v[bound[0]].(bool); ok {
					delete(v, bound[0])
					if b {
						v[bound[0]] = v[bound[1]]
						delete(v, bound[1])
					}
				}
			}
			return v
		case []any:
			for i, child := range v {
				v[i] = walk(child)
			}
		}
		return v
	}
	walk(doc)
	data, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
