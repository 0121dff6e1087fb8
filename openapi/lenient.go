package openapi

import "strings"

// compactDepth is how many levels of properties and items a lenient
// output schema describes in full: the answer's top-level fields, each
// with its types, enum and description; below them, a value is only its
// types and its description. Output schemas were four fifths of GitHub's
// tool list (get_pull's 39.5 KB of its 43.7), and the shape a model
// reads is the top level.
const compactDepth = 1

// lenient makes a converted response schema one that answers drifting
// from their document in the usual ways still match: no member required,
// null accepted for every value, no formats, patterns or bounds, anyOf
// for oneOf (lenient alternatives overlap), and past compactDepth only
// types and descriptions. It keeps what a model reads: the properties,
// their types, enums and descriptions. The root stays an object, as MCP
// wants of an output schema.
func lenient(schema map[string]any) map[string]any {
	out := loosen(schema, 0)
	out["type"] = "object"
	return out
}

func loosen(s map[string]any, depth int) map[string]any {
	out := make(map[string]any, 4)
	if d, ok := s["description"].(string); ok {
		out["description"] = firstSentence(d, maxOutputDescription)
	}
	if types := typeList(s["type"]); len(types) > 0 {
		if !contains(types, "null") {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = types
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		if !containsNil(enum) {
			enum = append(append([]any(nil), enum...), nil)
		}
		out["enum"] = enum
	}
	if depth >= compactDepth {
		return out
	}
	if props, ok := s["properties"].(map[string]any); ok {
		loose := make(map[string]any, len(props))
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				loose[name] = loosen(ps, depth+1)
			}
		}
		out["properties"] = loose
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if sub, ok := s[key].(map[string]any); ok {
			out[key] = loosen(sub, depth+1)
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		out["allOf"] = loosenList(all, depth)
	}
	var alternatives []any
	for _, key := range []string{"anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok {
			alternatives = append(alternatives, loosenList(list, depth)...)
		}
	}
	if len(alternatives) > 0 {
		out["anyOf"] = alternatives
	}
	return out
}

// maxOutputDescription bounds the description of a value in a lenient
// output schema: its first sentence says what the value is, and what
// follows in GitHub's (the values an enum's members mean, examples) was
// a third of the schema.
const maxOutputDescription = 160

// firstSentence is the first sentence of text within max bytes, or its
// start cut at a word with an ellipsis.
func firstSentence(text string, max int) string {
	text = strings.TrimSpace(text)
	for _, end := range []string{". ", ".\n", "\n\n", ":\n"} {
		if i := strings.Index(text, end); i >= 0 && i < max {
			text = text[:i+1]
		}
	}
	text = strings.TrimSuffix(strings.TrimSpace(text), ":")
	return fitDescription(text, max)
}

func loosenList(list []any, depth int) []any {
	out := make([]any, 0, len(list))
	for _, s := range list {
		if m, ok := s.(map[string]any); ok {
			out = append(out, loosen(m, depth))
		}
	}
	return out
}

// typeList is a converted schema's type as a list: a string, or a list.
func typeList(t any) []string {
	switch t := t.(type) {
	case string:
		return []string{t}
	case []string:
		return append([]string(nil), t...)
	case []any:
		var out []string
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func containsNil(list []any) bool {
	for _, v := range list {
		if v == nil {
			return true
		}
	}
	return false
}
