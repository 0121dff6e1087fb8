package declarations

import (
	"strings"
)

// unionOf joins types with |: nested unions are flattened and duplicates
// dropped, never adds nothing, and unknown makes the whole union unknown.
func unionOf(members ...*tsType) *tsType {
	var out []*tsType
	seen := make(map[string]bool)
	var add func(m *tsType) bool
	add = func(m *tsType) bool {
		switch {
		case m.kind == tsUnion:
			for _, mm := range m.members {
				if !add(mm) {
					return false
				}
			}
		case tsIsUnknown(m):
			return false
		case tsIsNever(m):
		default:
			if key := tsInline(m); !seen[key] {
				seen[key] = true
				out = append(out, m)
			}
		}
		return true
	}
	for _, m := range members {
		if !add(m) {
			return tsUnknown
		}
	}
	// null reads best last, as in `string | null`, whatever the schema's
	// order ("type": ["null", "string"]).
	if seen["null"] && out[len(out)-1] != tsNull {
		rest := out[:0:0]
		for _, m := range out {
			if m != tsNull {
				rest = append(rest, m)
			}
		}
		out = append(rest, tsNull)
	}
	switch len(out) {
	case 0:
		return tsNever
	case 1:
		return out[0]
	}
	return &tsType{kind: tsUnion, members: out}
}

// intersectionOf joins types with &: nested intersections are flattened and
// duplicates dropped, unknown adds nothing, and never makes the whole
// intersection never.
func intersectionOf(members ...*tsType) *tsType {
	var out []*tsType
	seen := make(map[string]bool)
	var add func(m *tsType) bool
	add = func(m *tsType) bool {
		switch {
		case m.kind == tsIntersection:
			for _, mm := range m.members {
				if !add(mm) {
					return false
				}
			}
		case tsIsNever(m):
			return false
		case tsIsUnknown(m):
		default:
			if key := tsInline(m); !seen[key] {
				seen[key] = true
				out = append(out, m)
			}
		}
		return true
	}
	for _, m := range members {
		if !add(m) {
			return tsNever
		}
	}
	// `string & ("a" | "b")` says no more than `"a" | "b"`: a keyword adds
	// nothing next to literals of its own kind (type plus oneOf of consts).
	kept := out[:0]
	for i, m := range out {
		redundant := false
		if m.kind == tsName && (m == tsString || m == tsNumber || m == tsBoolean) {
			for j, other := range out {
				if j != i && other != m && tsPrimitive(other) == m.text {
					redundant = true
					break
				}
			}
		}
		if !redundant {
			kept = append(kept, m)
		}
	}
	out = kept
	switch len(out) {
	case 0:
		return tsUnknown
	case 1:
		return out[0]
	}
	return &tsType{kind: tsIntersection, members: out}
}

// tsPrimitive names the primitive type of a literal type or a union of
// literals of one kind; "" for anything else.
func tsPrimitive(t *tsType) string {
	switch t.kind {
	case tsName:
		switch {
		case t == tsString || t == tsNumber || t == tsBoolean || t.text == "null" || t.text == "unknown" || t.text == "never":
			return ""
		case strings.HasPrefix(t.text, `"`):
			return "string"
		case t.text == "true" || t.text == "false":
			return "boolean"
		default:
			return "number"
		}
	case tsUnion:
		kind := ""
		for i, m := range t.members {
			k := tsPrimitive(m)
			if k == "" || (i > 0 && k != kind) {
				return ""
			}
			kind = k
		}
		return kind
	}
	return ""
}
