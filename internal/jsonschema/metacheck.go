package jsonschema

import (
	"encoding/json"
	"math/big"
)

// metaValid2020 reports whether doc, a schema as the compiler decodes it
// (numbers as json.Number), is valid against the draft 2020-12
// metaschema, for the keywords it knows; false says nothing, and the
// metaschema is then applied. Validating a schema against the metaschema
// applies seven vocabulary schemas and a map of its keys to every
// subschema: compiling a large generated schema took twice as long with
// it as without. This walk checks what those schemas require of each
// keyword, the same way: the regex format with the function the
// metaschema asserts it with.
func metaValid2020(doc interface{}) bool {
	switch doc := doc.(type) {
	case bool:
		return true
	case map[string]interface{}:
		for kw, v := range doc {
			if !metaKeyword2020(kw, v) {
				return false
			}
		}
		return true
	}
	return false
}

// metaKeyword2020 reports whether the value of keyword kw is certainly
// valid against the draft 2020-12 metaschema. A keyword the metaschema
// does not name may hold anything. The core keywords that are URIs or
// anchors, $vocabulary and dependencies are not checked here: false.
func metaKeyword2020(kw string, v interface{}) bool {
	switch kw {
	case "$id", "$schema", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$recursiveAnchor", "$recursiveRef", "dependencies":
		return false
	case "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema":
		return metaValid2020(v)
	case "prefixItems", "allOf", "anyOf", "oneOf":
		a, ok := v.([]interface{})
		if !ok || len(a) == 0 {
			return false
		}
		for _, s := range a {
			if !metaValid2020(s) {
				return false
			}
		}
		return true
	case "properties", "dependentSchemas", "$defs", "definitions", "patternProperties":
		m, ok := v.(map[string]interface{})
		if !ok {
			return false
		}
		for name, s := range m {
			if kw == "patternProperties" && !isRegex(name) || !metaValid2020(s) {
				return false
			}
		}
		return true
	case "type":
		if t, ok := v.(string); ok {
			return simpleType(t)
		}
		a, ok := v.([]interface{})
		if !ok || len(a) == 0 {
			return false
		}
		for i, t := range a {
			if t, ok := t.(string); !ok || !simpleType(t) || !uniqueString(a[:i], t) {
				return false
			}
		}
		return true
	case "required":
		return stringArray(v)
	case "dependentRequired":
		m, ok := v.(map[string]interface{})
		if !ok {
			return false
		}
		for _, a := range m {
			if !stringArray(a) {
				return false
			}
		}
		return true
	case "enum", "examples":
		_, ok := v.([]interface{})
		return ok
	case "multipleOf":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		r, ok := new(big.Rat).SetString(string(n))
		return ok && r.Sign() > 0
	case "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum":
		_, ok := v.(json.Number)
		return ok
	case "maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties", "minProperties":
		n, ok := v.(json.Number)
		return ok && isDigits(string(n))
	case "pattern":
		s, ok := v.(string)
		return ok && isRegex(s)
	case "uniqueItems", "deprecated", "readOnly", "writeOnly":
		_, ok := v.(bool)
		return ok
	case "title", "description", "format", "contentEncoding", "contentMediaType", "$comment":
		_, ok := v.(string)
		return ok
	}
	// const, default, and what the metaschema does not name.
	return true
}

func simpleType(t string) bool {
	switch t {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

// stringArray is the metaschema's: an array of distinct strings.
func stringArray(v interface{}) bool {
	a, ok := v.([]interface{})
	if !ok {
		return false
	}
	for i, s := range a {
		if s, ok := s.(string); !ok || !uniqueString(a[:i], s) {
			return false
		}
	}
	return true
}

// uniqueString reports whether s is not among the strings before it. The
// lists checked (types, required) are short.
func uniqueString(before []interface{}, s string) bool {
	for _, b := range before {
		if b == s {
			return false
		}
	}
	return true
}
