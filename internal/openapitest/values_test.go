package openapitest

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// maxExampleDepth bounds how deep an example goes into nested objects and
// arrays; below it only required properties are filled.
const maxExampleDepth = 4

// example returns a value the JSON Schema s accepts, built from its
// keywords (const, enum, default, formats, bounds, required properties),
// or an error saying which schema it could not satisfy. It fills every
// property of the top-level objects, so that a tool call sends as many
// arguments as the operation has, and takes the first branch of a oneOf
// or anyOf that is not null.
func example(s map[string]any) (any, error) {
	return exampleAt(s, 0, "")
}

func exampleAt(s map[string]any, depth int, at string) (any, error) {
	if depth > 2*maxExampleDepth {
		return nil, fmt.Errorf("%s: schema nested too deep", at)
	}
	if v, ok := s["const"]; ok {
		return v, nil
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, v := range enum {
			if v != nil {
				return v, nil
			}
		}
	}
	if v, ok := s["default"]; ok && v != nil {
		return v, nil
	}
	if all, ok := s["allOf"].([]any); ok {
		return exampleAt(mergeAllOf(s, all), depth, at)
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		branches, ok := s[key].([]any)
		if !ok {
			continue
		}
		var errs []string
		for _, b := range branches {
			bs, _ := b.(map[string]any)
			if bs == nil || isNullOnly(bs) {
				continue
			}
			if v, err := exampleAt(withSiblings(s, key, bs), depth+1, at); err == nil {
				return v, nil
			} else {
				errs = append(errs, err.Error())
			}
		}
		return nil, fmt.Errorf("%s: no %s branch gave an example: %s", at, key, strings.Join(errs, "; "))
	}
	switch firstType(s) {
	case "string":
		return exampleString(s, at)
	case "integer":
		return exampleNumber(s, true), nil
	case "number":
		return exampleNumber(s, false), nil
	case "boolean":
		return true, nil
	case "array":
		items, _ := s["items"].(map[string]any)
		if items == nil {
			items = map[string]any{}
		}
		return exampleArray(s, items, depth, at)
	case "object":
		return exampleObject(s, depth, at)
	}
	return "example", nil // {}: anything
}

// exampleArray has two items (so that the wire shows how items are
// joined) where the bounds allow, distinct: other enum values, numbers
// and strings.
func exampleArray(s, items map[string]any, depth int, at string) (any, error) {
	n := 2
	if m, ok := s["minItems"].(float64); ok && int(m) > n {
		n = int(m)
	}
	if m, ok := s["maxItems"].(float64); ok && int(m) < n {
		n = int(m)
	}
	enum, _ := items["enum"].([]any)
	if min, _ := s["minItems"].(float64); len(enum) > 0 && len(enum) < n && int(min) <= len(enum) {
		n = len(enum) // no repeated item
	}
	out := make([]any, 0, n)
	for i := range n {
		v, err := exampleAt(items, depth+1, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case string:
			if len(enum) > 0 {
				v = enum[i%len(enum)]
			} else if i > 0 && items["format"] == nil && items["pattern"] == nil {
				v = fmt.Sprintf("%s%d", x, i)
			}
		case int64:
			if _, bounded := items["maximum"]; !bounded {
				v = x + int64(i)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func exampleObject(s map[string]any, depth int, at string) (any, error) {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	if r, ok := s["required"].([]any); ok {
		for _, name := range r {
			if n, ok := name.(string); ok {
				required[n] = true
			}
		}
	}
	out := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if depth >= maxExampleDepth && !required[name] {
			continue
		}
		ps, _ := props[name].(map[string]any)
		if ps == nil {
			continue
		}
		v, err := exampleAt(ps, depth+1, at+"."+name)
		if err != nil {
			if required[name] {
				return nil, err
			}
			continue // an optional property it cannot fill is left out
		}
		out[name] = v
	}
	if len(props) == 0 {
		if extra, ok := s["additionalProperties"].(map[string]any); ok {
			v, err := exampleAt(extra, depth+1, at+".key")
			if err != nil {
				return nil, err
			}
			out["key"] = v
		}
	}
	return out, nil
}

// formats are example strings for the formats the documents use.
var formats = map[string]string{
	"date-time": "2024-05-06T07:08:09Z",
	"date":      "2024-05-06",
	"email":     "octocat@example.com",
	"uri":       "https://example.com/a",
	"url":       "https://example.com/a",
	"uuid":      "4a3f2c1e-9b8d-4e7f-a6b5-c4d3e2f1a0b9",
	"ipv4":      "192.0.2.1",
	"hostname":  "example.com",
}

func exampleString(s map[string]any, at string) (any, error) {
	if f, ok := s["format"].(string); ok && formats[f] != "" {
		return formats[f], nil
	}
	candidates := []string{"example", "a", "abc", "a1", "1", "A1", "v1.0.0", "example-1"}
	if p, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("%s: pattern %q: %v", at, p, err)
		}
		for _, c := range candidates {
			if re.MatchString(c) && fitsLength(s, c) {
				return c, nil
			}
		}
		return nil, fmt.Errorf("%s: no example string matches the pattern %q", at, p)
	}
	v := "example"
	if m, ok := s["minLength"].(float64); ok && len(v) < int(m) {
		v += strings.Repeat("x", int(m)-len(v))
	}
	if m, ok := s["maxLength"].(float64); ok && len(v) > int(m) {
		v = v[:int(m)]
	}
	return v, nil
}

func fitsLength(s map[string]any, v string) bool {
	if m, ok := s["minLength"].(float64); ok && len(v) < int(m) {
		return false
	}
	if m, ok := s["maxLength"].(float64); ok && len(v) > int(m) {
		return false
	}
	return true
}

// exampleNumber is 1 (1.5 for a number), moved into the bounds.
func exampleNumber(s map[string]any, integer bool) any {
	v := 1.5
	if integer {
		v = 1
	}
	if m, ok := s["minimum"].(float64); ok && v < m {
		v = m
	}
	if m, ok := s["exclusiveMinimum"].(float64); ok && v <= m {
		v = m + 1
	}
	if m, ok := s["maximum"].(float64); ok && v > m {
		v = m
	}
	if m, ok := s["exclusiveMaximum"].(float64); ok && v >= m {
		v = m - 1
	}
	if integer {
		return int64(v)
	}
	return v
}

// firstType is the schema's type, or its first type other than null.
func firstType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				str, _ := x.(string)
				return str
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["items"]; ok {
		return "array"
	}
	return ""
}

// acceptsNull reports whether the schema takes null: a type union with
// null, or a oneOf/anyOf branch that is null.
func acceptsNull(s map[string]any) bool {
	if t, ok := s["type"].([]any); ok && slices.Contains(t, any("null")) {
		return true
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		if branches, ok := s[key].([]any); ok {
			for _, b := range branches {
				if bs, _ := b.(map[string]any); bs != nil && isNullOnly(bs) {
					return true
				}
			}
		}
	}
	return false
}

func isNullOnly(s map[string]any) bool {
	return s["type"] == "null"
}

// withSiblings is a oneOf/anyOf branch with the keywords beside the
// combinator (such as the type of the whole) that the branch lacks.
func withSiblings(s map[string]any, combinator string, branch map[string]any) map[string]any {
	out := maps.Clone(branch)
	for k, v := range s {
		if k == combinator || k == "default" || k == "enum" || k == "const" {
			continue
		}
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	if t, ok := out["type"].([]any); ok && len(t) > 0 {
		if bt, ok := branch["type"]; ok {
			out["type"] = bt
		}
	}
	return out
}

// mergeAllOf folds an allOf into one schema: properties and required
// joined, other keywords of the first schema that has them.
func mergeAllOf(s map[string]any, all []any) map[string]any {
	out := maps.Clone(s)
	delete(out, "allOf")
	props := map[string]any{}
	if p, ok := s["properties"].(map[string]any); ok {
		maps.Copy(props, p)
	}
	required, _ := s["required"].([]any)
	for _, part := range all {
		ps, _ := part.(map[string]any)
		for k, v := range ps {
			switch k {
			case "properties":
				if p, ok := v.(map[string]any); ok {
					maps.Copy(props, p)
				}
			case "required":
				r, _ := v.([]any)
				required = append(required, r...)
			default:
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// TestExample checks that the examples keep to their schemas' keywords,
// and that a schema no example fits is an error, not a guess.
func TestExample(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"const before enum", `{"const":"x","enum":["y"]}`, `"x"`},
		{"the first enum value that is not null", `{"enum":[null,"b"]}`, `"b"`},
		{"a default", `{"type":"integer","default":30}`, `30`},
		{"a format", `{"type":"string","format":"date-time"}`, `"2024-05-06T07:08:09Z"`},
		{"length bounds", `{"type":"string","minLength":9,"maxLength":9}`, `"examplexx"`},
		{"a pattern", `{"type":"string","pattern":"^[0-9]+$"}`, `"1"`},
		{"integer bounds", `{"type":"integer","minimum":5,"maximum":9}`, `5`},
		{"an exclusive bound", `{"type":"number","exclusiveMaximum":1}`, `0`},
		{"a type union with null", `{"type":["null","boolean"]}`, `true`},
		{"two distinct items", `{"type":"array","items":{"type":"string","enum":["a","b","c"]}}`, `["a","b"]`},
		{"one item where only one is allowed", `{"type":"array","maxItems":1,"items":{"type":"integer"}}`, `[1]`},
		{"an enum shorter than two items, unrepeated", `{"type":"array","items":{"enum":["only"]}}`, `["only"]`},
		{"every property, nested ones too", `{"type":"object","required":["a"],"properties":{"a":{"type":"integer"},"b":{"type":"object","properties":{"c":{"type":"boolean"}}}}}`, `{"a":1,"b":{"c":true}}`},
		{"the first branch that is not null", `{"oneOf":[{"type":"null"},{"type":"integer","minimum":3}]}`, `3`},
		{"allOf merged", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"required":["b"],"properties":{"b":{"const":2}}}]}`, `{"a":"example","b":2}`},
		{"a map", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"key":1}`},
		{"an optional property no example fits is left out", `{"type":"object","properties":{"a":{"type":"string","pattern":"^z{3}$"},"b":{"type":"boolean"}}}`, `{"b":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s map[string]any
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			v, err := example(s)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(v)
			if string(got) != tt.want {
				t.Errorf("example of %s is %s, want %s", tt.schema, got, tt.want)
			}
		})
	}
	for _, schema := range []string{
		`{"type":"string","pattern":"^z{3}$"}`,
		`{"type":"object","required":["a"],"properties":{"a":{"type":"string","pattern":"^z{3}$"}}}`,
		`{"anyOf":[{"type":"null"}]}`,
	} {
		var s map[string]any
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatal(err)
		}
		if v, err := example(s); err == nil {
			t.Errorf("example of %s is %v, want an error", schema, v)
		}
	}
}
