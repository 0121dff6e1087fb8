package openapi

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// Bounds of one converted schema. A document's references are resolved
// into shared Go values, so a schema used in many places is written out
// in full at each; these keep that finite and small whatever the document.
const (
	// maxSchemaDepth is how deep a schema is written out; deeper, a
	// subschema is {}.
	maxSchemaDepth = 24
	// maxInputNodes is how many subschemas one tool's input schema may
	// write out; past that, the rest are {}.
	maxInputNodes = 4000
	// maxOutputNodes does the same for an output schema, which only
	// checks answers: GitHub's would be ten times the size of its input
	// schemas, and compiling them most of the load.
	maxOutputNodes = 1000
	// MaxToolSchema bounds one tool's input schema, and separately its
	// output schema, as JSON: a schema with a long description referenced
	// by thousands of properties would otherwise be written out thousands
	// of times, hundreds of megabytes from a document of a few hundred
	// kilobytes. An operation past it is skipped with the reason. GitHub's
	// largest are 24 KB (input) and 76 KB (output).
	MaxToolSchema = 256 << 10
)

// direction says which side of the exchange a schema describes:
// readOnly properties are left out of what is sent, writeOnly ones out of
// what comes back.
type direction int

const (
	request direction = iota
	response
)

// converter turns kin-openapi schemas into JSON Schema (draft 2020-12)
// values ready for encoding/json.
type converter struct {
	dir direction
	// nodes counts down the subschemas left to write out.
	nodes int
	// left counts down the bytes of JSON left to write out, about: the
	// texts, names and values a schema holds, and a little for each
	// subschema. Past MaxToolSchema the conversion stops, and over names
	// the innermost referenced schema it was writing out then.
	left int
	over string
	// path holds the schemas being written out, outermost first: meeting
	// one of them again is a cycle, written as {}; refs their $refs.
	path []*openapi3.Schema
	refs []string
}

func newConverter(dir direction) *converter {
	if dir == request {
		return &converter{dir: dir, nodes: maxInputNodes, left: MaxToolSchema}
	}
	return &converter{dir: dir, nodes: maxOutputNodes, left: MaxToolSchema}
}

// nodeBytes is what charge counts for a subschema besides its texts and
// values: its braces and a few keys.
const nodeBytes = 16

// charge counts n bytes written out, and once past the bound, which
// schema passed it.
func (c *converter) charge(n int) {
	if c.left -= n; c.left < 0 && c.over == "" {
		c.over = "the operation's own schema"
		for i := len(c.refs) - 1; i >= 0; i-- {
			if c.refs[i] != "" {
				c.over = c.refs[i]
				break
			}
		}
	}
}

// passed says why the schema the converter wrote cannot be a tool's, or
// "" when it can: what, "input" or "output", passed MaxToolSchema.
func (c *converter) passed(what string, size int) string {
	if c.over == "" && size <= MaxToolSchema {
		return ""
	}
	at := ""
	if c.over != "" {
		at = " (writing out " + c.over + " where it is referenced)"
	}
	return fmt.Sprintf("its %s schema would be more than %d KiB%s", what, MaxToolSchema>>10, at)
}

// approxSize is about the bytes of v as JSON, counted up to limit.
func approxSize(v any, limit int) int {
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		return len(v) + 2
	case map[string]any:
		n := 2
		for k, e := range v {
			if n += len(k) + 4 + approxSize(e, limit-n); n > limit {
				break
			}
		}
		return n
	case []any:
		n := 2
		for _, e := range v {
			if n += 1 + approxSize(e, limit-n); n > limit {
				break
			}
		}
		return n
	}
	return 8
}

// convert returns ref as JSON Schema; a nil ref is {}.
func (c *converter) convert(ref *openapi3.SchemaRef) map[string]any {
	if ref == nil || ref.Value == nil {
		return map[string]any{}
	}
	s := ref.Value
	if len(c.path) >= maxSchemaDepth || c.nodes <= 0 || c.left < 0 || slices.Contains(c.path, s) {
		return map[string]any{}
	}
	c.nodes--
	c.path = append(c.path, s)
	c.refs = append(c.refs, ref.Ref)
	defer func() {
		c.path = c.path[:len(c.path)-1]
		c.refs = c.refs[:len(c.refs)-1]
	}()
	c.charge(nodeBytes + len(s.Title) + len(s.Description) + len(s.Format) + len(s.Pattern) +
		approxSize(s.Enum, c.left+1) + approxSize(s.Const, c.left+1) + approxSize(s.Default, c.left+1))

	if s.Always != nil {
		if *s.Always {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	}
	out := make(map[string]any)
	if types := schemaTypes(s); len(types) == 1 {
		out["type"] = types[0]
	} else if len(types) > 1 {
		out["type"] = types
	}
	setString(out, "title", s.Title)
	setString(out, "description", plainLinks(s.Description))
	setString(out, "format", s.Format)
	if len(s.Enum) > 0 {
		enum := slices.Clone(s.Enum)
		if s.Nullable && !slices.Contains(enum, nil) {
			enum = append(enum, nil)
		}
		out["enum"] = enum
	}
	if s.Const != nil {
		out["const"] = s.Const
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if s.Deprecated {
		out["deprecated"] = true
	}
	if s.ReadOnly {
		out["readOnly"] = true
	}
	if s.WriteOnly {
		out["writeOnly"] = true
	}

	// Numbers. OpenAPI 3.0 writes an exclusive bound as a flag beside
	// minimum or maximum; JSON Schema 2020-12 as the bound itself.
	numberBound(out, "minimum", "exclusiveMinimum", s.Min, s.ExclusiveMin)
	numberBound(out, "maximum", "exclusiveMaximum", s.Max, s.ExclusiveMax)
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		out["multipleOf"] = *s.MultipleOf
	}

	// Strings. A pattern Go's regexp cannot read (JavaScript lookaheads,
	// say) is dropped: it would keep the whole tool from compiling.
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	if s.Pattern != "" && validPattern(s.Pattern) {
		out["pattern"] = s.Pattern
	}
	if s.ContentMediaType != "" {
		out["contentMediaType"] = s.ContentMediaType
	}
	if s.ContentEncoding != "" {
		out["contentEncoding"] = s.ContentEncoding
	}

	// Arrays.
	if s.Items != nil {
		out["items"] = c.convert(s.Items)
	}
	if len(s.PrefixItems) > 0 {
		out["prefixItems"] = c.list(s.PrefixItems)
	}
	if s.Contains != nil {
		out["contains"] = c.convert(s.Contains)
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	if s.UniqueItems {
		out["uniqueItems"] = true
	}

	// Objects.
	if len(s.Properties) > 0 {
		props, left := c.properties(s.Properties)
		out["properties"] = props
		if req := without(s.Required, left); len(req) > 0 {
			out["required"] = req
		}
	} else if len(s.Required) > 0 {
		out["required"] = slices.Clone(s.Required)
	}
	if ap := s.AdditionalProperties; ap.Has != nil && !*ap.Has {
		out["additionalProperties"] = false
	} else if ap.Schema != nil {
		out["additionalProperties"] = c.convert(ap.Schema)
	}
	if len(s.PatternProperties) > 0 {
		pp := make(map[string]any, len(s.PatternProperties))
		for _, pattern := range sortedKeys(s.PatternProperties) {
			if validPattern(pattern) {
				pp[pattern] = c.convert(s.PatternProperties[pattern])
			}
		}
		out["patternProperties"] = pp
	}
	if s.MinProps > 0 {
		out["minProperties"] = s.MinProps
	}
	if s.MaxProps != nil {
		out["maxProperties"] = *s.MaxProps
	}

	// Composition.
	if len(s.AllOf) > 0 {
		out["allOf"] = c.list(s.AllOf)
	}
	if len(s.AnyOf) > 0 {
		out["anyOf"] = c.list(s.AnyOf)
	}
	if len(s.OneOf) > 0 {
		out["oneOf"] = c.list(s.OneOf)
	}
	if s.Not != nil {
		out["not"] = c.convert(s.Not)
	}
	if s.Nullable && len(schemaTypes(s)) == 0 && (len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0) {
		// OpenAPI 3.0's nullable beside a composition and no type: null,
		// or what the composition says.
		return map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}
	}
	return out
}

// properties converts the properties of an object schema, leaving out
// those the direction does not carry; it returns the names left out.
func (c *converter) properties(props openapi3.Schemas) (map[string]any, []string) {
	out := make(map[string]any, len(props))
	var left []string
	for _, name := range sortedKeys(props) {
		if c.leftOut(props[name]) {
			left = append(left, name)
			continue
		}
		c.charge(len(name) + 4)
		out[name] = c.convert(props[name])
	}
	return out, left
}

// leftOut reports whether a property is not carried in this direction:
// readOnly in a request, writeOnly in a response.
func (c *converter) leftOut(ref *openapi3.SchemaRef) bool {
	if ref == nil || ref.Value == nil {
		return false
	}
	if c.dir == request {
		return ref.Value.ReadOnly
	}
	return ref.Value.WriteOnly
}

func (c *converter) list(refs openapi3.SchemaRefs) []any {
	out := make([]any, len(refs))
	for i, r := range refs {
		out[i] = c.convert(r)
	}
	return out
}

// schemaTypes are the JSON Schema types of s: its type list, with null
// added for OpenAPI 3.0's nullable.
func schemaTypes(s *openapi3.Schema) []string {
	var types []string
	if s.Type != nil {
		types = slices.Clone(s.Type.Slice())
	}
	if s.Nullable && len(types) > 0 && !slices.Contains(types, "null") {
		types = append(types, "null")
	}
	return types
}

// nullable reports whether null is a valid value of s: OpenAPI 3.0's
// nullable, or 3.1's "null" among the types or as one of the anyOf or
// oneOf schemas.
func nullable(s *openapi3.Schema) bool {
	if s.Nullable || (s.Type != nil && slices.Contains(s.Type.Slice(), "null")) {
		return true
	}
	for _, alt := range slices.Concat(s.AnyOf, s.OneOf) {
		if alt != nil && alt.Value != nil && alt.Value.Type != nil && alt.Value.Type.Is("null") {
			return true
		}
	}
	return false
}

// baseType is the one type s has besides null, or "" when it has none or
// several.
func baseType(s *openapi3.Schema) string {
	var base string
	if s.Type == nil {
		return ""
	}
	for _, t := range s.Type.Slice() {
		if t == "null" {
			continue
		}
		if base != "" {
			return ""
		}
		base = t
	}
	return base
}

func numberBound(out map[string]any, inclusive, exclusive string, bound *float64, excl openapi3.ExclusiveBound) {
	switch {
	case excl.Value != nil:
		out[exclusive] = *excl.Value
		if bound != nil {
			out[inclusive] = *bound
		}
	case bound != nil && excl.Bool != nil && *excl.Bool:
		out[exclusive] = *bound
	case bound != nil:
		out[inclusive] = *bound
	}
}

func setString(out map[string]any, key, value string) {
	if value != "" {
		out[key] = value
	}
}

func validPattern(pattern string) bool {
	_, err := regexp.Compile(pattern)
	return err == nil
}

// without returns names less those in drop.
func without(names, drop []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
