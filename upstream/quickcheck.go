package upstream

import (
	"encoding/json"
	"math"
)

// quickCheck accepts the arguments that obviously fit the input schema
// arg lines make: known names, the required ones present, values of the
// declared type, string enums, null for a nullable argument. It says nothing of anything else: what it
// does not accept goes to the JSON Schema validator, which decides and
// words the violations. The validator costs a few microseconds and a
// kilobyte of allocations per call; this costs neither.
type quickCheck struct {
	props    map[string]quickProp
	required []string
}

type quickProp struct {
	typ   string // string, integer, number, boolean, object or array
	items string // an array's item type, or "" for any
	enum  map[string]bool
	// opaque: an enum this check does not read (not all strings); the
	// validator decides whenever the property is given.
	opaque bool
	// nullable: null is a value, whatever the type and the enum.
	nullable bool
}

// newQuickCheck builds the check for a definition's arg lines; nil when
// it has an input_schema, which may say anything.
func newQuickCheck(def Definition) *quickCheck {
	if len(def.InputSchema) > 0 {
		return nil
	}
	q := &quickCheck{props: make(map[string]quickProp, len(def.Args))}
	for _, a := range def.Args {
		word := a.Type
		if word == "" {
			word = "string"
		}
		typ, items := SchemaType(word)
		p := quickProp{typ: typ, items: items, nullable: a.Nullable}
		if len(a.Enum) > 0 {
			p.enum = make(map[string]bool, len(a.Enum))
			for _, raw := range a.Enum {
				// json.Unmarshal reads null into a string as nothing at
				// all: a null in the enum would let "" through.
				var s string
				if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
					p.opaque = true
					break
				}
				p.enum[s] = true
			}
		}
		q.props[a.Name] = p
		if a.Required {
			q.required = append(q.required, a.Name)
		}
	}
	return q
}

// accepts reports whether args surely fit the schema; false means only
// that the validator must look.
func (q *quickCheck) accepts(args map[string]any) bool {
	if q == nil {
		return false
	}
	for _, name := range q.required {
		if _, ok := args[name]; !ok {
			return false
		}
	}
	for name, v := range args {
		p, ok := q.props[name]
		if !ok {
			return false
		}
		if v == nil && p.nullable {
			continue
		}
		if p.opaque {
			return false
		}
		if p.typ == "array" {
			items, ok := v.([]any)
			if !ok {
				return false
			}
			for _, item := range items {
				if (p.items != "" && !quickType(p.items, item)) || !p.inEnum(item) {
					return false
				}
			}
			continue
		}
		if !quickType(p.typ, v) || !p.inEnum(v) {
			return false
		}
	}
	return true
}

func (p quickProp) inEnum(v any) bool {
	if p.enum == nil {
		return true
	}
	s, ok := v.(string)
	return ok && p.enum[s]
}

// quickType reports whether v is surely of the JSON Schema type typ.
// Arguments come decoded with json.Number; defaults as float64.
func quickType(typ string, v any) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "integer":
		switch n := v.(type) {
		case json.Number:
			return plainInteger(string(n))
		case float64:
			return !math.IsInf(n, 0) && n == math.Trunc(n)
		}
	case "number":
		switch n := v.(type) {
		case json.Number:
			return len(n) > 0 && (n[0] == '-' || n[0] >= '0' && n[0] <= '9') && json.Valid([]byte(n))
		case float64:
			return !math.IsInf(n, 0) && !math.IsNaN(n)
		}
	}
	return false
}

// plainInteger reports whether s is an optional minus and digits only.
func plainInteger(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
