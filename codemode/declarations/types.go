package declarations

import (
	"net/url"
	"strconv"
	"strings"
)

// tsKind is the kind of a TypeScript type a JSON Schema is turned into.
type tsKind uint8

const (
	tsName         tsKind = iota // a keyword or a literal, in text
	tsArray                      // elem[]
	tsTuple                      // [members..., ...elem[]]
	tsUnion                      // members joined by |
	tsIntersection               // members joined by &
	tsObject                     // { props; [key: string]: index }
	tsRef                        // a type declared once under a name (text)
)

type tsType struct {
	kind    tsKind
	text    string     // tsName's text; tsRef's name
	named   *declNamed // the type tsRef names
	elem    *tsType    // array element; tuple rest element, if any
	members []*tsType  // union, intersection and tuple members
	minLen  int        // tuple members from this index on are optional
	props   []tsProp
	index   *tsType // object index signature value, if any
}

type tsProp struct {
	key      string // the property name as in the schema
	optional bool
	doc      docInfo
	typ      *tsType
}

var (
	tsUnknown = &tsType{kind: tsName, text: "unknown"}
	tsNever   = &tsType{kind: tsName, text: "never"}
	tsString  = &tsType{kind: tsName, text: "string"}
	tsNumber  = &tsType{kind: tsName, text: "number"}
	tsBoolean = &tsType{kind: tsName, text: "boolean"}
	tsNull    = &tsType{kind: tsName, text: "null"}
)

// tsCut is an object whose members are not shown: a level past the depth
// or the work the schema may take, or one that would repeat.
var tsCut = &tsType{kind: tsObject, index: tsUnknown}

// shallowType is what a schema's own "type" says, without expanding
// anything: objects and arrays are cut.
func shallowType(s *schemaNode) *tsType {
	names, given := schemaTypeNames(s)
	if !given {
		switch {
		case s.hasAny([]string{"properties", "additionalProperties", "patternProperties"}):
			return tsCut
		case s.hasAny([]string{"items", "prefixItems"}):
			return &tsType{kind: tsArray, elem: tsUnknown}
		}
		return tsUnknown
	}
	return unionOfTypes(names,
		func() *tsType { return &tsType{kind: tsArray, elem: tsUnknown} },
		func() *tsType { return tsCut })
}

// unionOfTypes is the union of the TypeScript types of JSON Schema type
// names, with array and object rendering arrays and objects.
func unionOfTypes(names []string, array, object func() *tsType) *tsType {
	members := make([]*tsType, 0, len(names))
	for _, n := range names {
		switch n {
		case "string":
			members = append(members, tsString)
		case "number", "integer":
			members = append(members, tsNumber)
		case "boolean":
			members = append(members, tsBoolean)
		case "null":
			members = append(members, tsNull)
		case "array":
			members = append(members, array())
		case "object":
			members = append(members, object())
		default:
			members = append(members, tsUnknown)
		}
	}
	return unionOf(members...)
}

func tsIsUnknown(t *tsType) bool { return t.kind == tsName && t.text == "unknown" }
func tsIsNever(t *tsType) bool   { return t.kind == tsName && t.text == "never" }

// renderSchema converts a schema as deep as declMaxDepth levels of
// objects and arrays, or less deep when that would take more than
// declMaxWork steps (a hostile schema), so the levels that go are the
// deepest ones. Which levels are shown is decided later, when the
// declarations are printed (see budget.go).
//
// An output's comments leave out formats ("uri", "int64"): they tell
// what to send, and a result is read.
func renderSchema(root *schemaNode, output bool) *tsType {
	for depth := declMaxDepth; ; depth-- {
		r := &schemaRenderer{root: root, output: output, maxDepth: depth, work: declMaxWork, refs: []*schemaNode{root}}
		t := r.typeOf(root, 0)
		if depth == 1 || !r.over {
			return t
		}
	}
}

type schemaRenderer struct {
	root     *schemaNode
	output   bool
	maxDepth int
	work     int           // steps left
	over     bool          // no step left: nothing more is expanded
	refs     []*schemaNode // $ref targets being expanded, for the cycle guard
	nesting  int
}

// schemaKeywords are the keywords that, next to a $ref, add to its type.
var schemaKeywords = []string{
	"type", "const", "enum", "properties", "additionalProperties",
	"patternProperties", "items", "prefixItems", "allOf", "anyOf", "oneOf",
}

func (r *schemaRenderer) typeOf(s *schemaNode, depth int) *tsType {
	switch {
	case s == nil:
		return tsUnknown
	case s.kind == schemaBool:
		if s.boolean {
			return tsUnknown
		}
		return tsNever
	case s.kind != schemaObject:
		return tsUnknown
	case r.over, r.nesting >= declMaxNesting:
		return shallowType(s)
	}
	if r.work--; r.work <= 0 {
		r.over = true
	}
	r.nesting++
	defer func() { r.nesting-- }()

	var parts []*tsType
	if ref := s.get("$ref"); ref != nil {
		parts = append(parts, r.refType(ref, depth))
	}
	if len(parts) == 0 || s.hasAny(schemaKeywords) {
		if t := r.baseType(s, depth); t != nil {
			parts = append(parts, t)
		}
		if all := s.get("allOf"); all != nil && all.kind == schemaArray {
			for _, m := range all.items {
				parts = append(parts, r.typeOf(m, depth))
			}
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			if alt := s.get(k); alt != nil && alt.kind == schemaArray {
				members := make([]*tsType, 0, len(alt.items))
				for _, m := range alt.items {
					members = append(members, r.typeOf(m, depth))
				}
				parts = append(parts, unionOf(members...))
			}
		}
	}
	t := intersectionOf(parts...)
	if n := s.get("nullable"); n != nil && n.kind == schemaBool && n.boolean {
		t = unionOf(t, tsNull)
	}
	return t
}

func (r *schemaRenderer) refType(ref *schemaNode, depth int) *tsType {
	if ref.kind != schemaString {
		return tsUnknown
	}
	target := r.resolve(ref.text)
	if target == nil {
		return tsUnknown
	}
	for _, open := range r.refs {
		if open == target {
			// A recursive schema: the level that would repeat is
			// not expanded.
			return shallowType(target)
		}
	}
	r.refs = append(r.refs, target)
	t := r.typeOf(target, depth)
	r.refs = r.refs[:len(r.refs)-1]
	return t
}

// resolve follows an internal reference: "#", or "#" and a JSON pointer
// (percent-decoded, with ~1 for "/" and ~0 for "~"). Anything else (other
// documents, anchors) is not resolved.
func (r *schemaRenderer) resolve(ref string) *schemaNode {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil
	}
	if frag == "" {
		return r.root
	}
	if frag[0] != '/' {
		return nil
	}
	cur := r.root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch cur.kind {
		case schemaObject:
			cur = cur.get(tok)
		case schemaArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.items) || tok != strconv.Itoa(i) {
				return nil
			}
			cur = cur.items[i]
		default:
			return nil
		}
		if cur == nil {
			return nil
		}
	}
	return cur
}

// schemaTypeNames returns the names in "type" and whether a usable "type" was
// given at all.
func schemaTypeNames(s *schemaNode) (names []string, given bool) {
	t := s.get("type")
	switch {
	case t == nil:
	case t.kind == schemaString:
		names = []string{t.text}
	case t.kind == schemaArray:
		for _, v := range t.items {
			if v.kind == schemaString {
				names = append(names, v.text)
			}
		}
	}
	return names, len(names) > 0
}

// baseType is the type given by const, enum or type (or implied by the
// object and array keywords); nil if the schema says nothing of its type.
func (r *schemaRenderer) baseType(s *schemaNode, depth int) *tsType {
	if c := s.get("const"); c != nil {
		return r.literal(c, depth)
	}
	if e := s.get("enum"); e != nil && e.kind == schemaArray {
		members := make([]*tsType, 0, len(e.items))
		if enumSize(e) > declMaxEnumSize {
			// Too many values to list: say only what kinds they are.
			for _, v := range e.items {
				members = append(members, valueKind(v))
			}
			return unionOf(members...)
		}
		for _, v := range e.items {
			members = append(members, r.literal(v, depth))
		}
		return unionOf(members...)
	}
	names, given := schemaTypeNames(s)
	if !given {
		switch {
		case s.hasAny([]string{"properties", "additionalProperties", "patternProperties"}):
			names = []string{"object"}
		case s.hasAny([]string{"items", "prefixItems"}):
			names = []string{"array"}
		default:
			return nil
		}
	}
	return unionOfTypes(names,
		func() *tsType { return r.arrayType(s, depth) },
		func() *tsType { return r.objectType(s, depth) })
}

// enumSize is about how long the enum's values are as literals, counted
// only as far as needed to compare with declMaxEnumSize.
func enumSize(e *schemaNode) int {
	n := 0
	for _, v := range e.items {
		if n > declMaxEnumSize {
			break
		}
		n += len(v.appendJSON(nil)) + 3
	}
	return n
}

// valueKind is the type of a JSON value without its value.
func valueKind(v *schemaNode) *tsType {
	switch v.kind {
	case schemaNull:
		return tsNull
	case schemaBool:
		return tsBoolean
	case schemaNumber:
		return tsNumber
	case schemaString:
		return tsString
	}
	return tsUnknown
}

// literal is the TypeScript literal type of a JSON value.
func (r *schemaRenderer) literal(v *schemaNode, depth int) *tsType {
	switch v.kind {
	case schemaNull:
		return tsNull
	case schemaBool:
		return &tsType{kind: tsName, text: strconv.FormatBool(v.boolean)}
	case schemaNumber:
		return &tsType{kind: tsName, text: v.text}
	case schemaString:
		return &tsType{kind: tsName, text: quoteTS(v.text)}
	}
	if r.over || depth > r.maxDepth {
		return valueKind(v)
	}
	if r.work--; r.work <= 0 {
		r.over = true
	}
	switch v.kind {
	case schemaArray:
		t := &tsType{kind: tsTuple, minLen: len(v.items)}
		for _, item := range v.items {
			t.members = append(t.members, r.literal(item, depth+1))
		}
		return t
	default:
		t := &tsType{kind: tsObject}
		for i, k := range v.keys {
			t.props = append(t.props, tsProp{key: k, typ: r.literal(v.values[i], depth+1)})
		}
		return t
	}
}

func (r *schemaRenderer) objectType(s *schemaNode, depth int) *tsType {
	if depth > r.maxDepth {
		return tsCut
	}
	obj := &tsType{kind: tsObject}
	required := make(map[string]bool)
	var requiredOrder []string
	if req := s.get("required"); req != nil && req.kind == schemaArray {
		for _, v := range req.items {
			if v.kind == schemaString && !required[v.text] {
				required[v.text] = true
				requiredOrder = append(requiredOrder, v.text)
			}
		}
	}
	props := s.get("properties")
	hasProps := props != nil && props.kind == schemaObject
	seen := make(map[string]bool)
	if hasProps {
		for i, key := range props.keys {
			seen[key] = true
			obj.props = append(obj.props, tsProp{
				key:      key,
				optional: !required[key],
				doc:      r.doc(props.values[i]),
				typ:      r.typeOf(props.values[i], depth+1),
			})
		}
	}
	// Required names missing from properties are still required.
	for _, key := range requiredOrder {
		if !seen[key] && (hasProps || s.get("additionalProperties") != nil || s.get("patternProperties") != nil || len(obj.props) == 0) {
			obj.props = append(obj.props, tsProp{key: key, typ: tsUnknown})
		}
	}

	var index []*tsType
	if pp := s.get("patternProperties"); pp != nil && pp.kind == schemaObject {
		for _, v := range pp.values {
			index = append(index, r.typeOf(v, depth+1))
		}
	}
	switch ap := s.get("additionalProperties"); {
	case ap == nil:
		if !hasProps && len(index) == 0 {
			index = append(index, tsUnknown)
		}
	case ap.kind == schemaBool:
		if ap.boolean {
			index = append(index, tsUnknown)
		}
	case ap.kind == schemaObject:
		index = append(index, r.typeOf(ap, depth+1))
	}
	if len(index) == 0 {
		return obj
	}
	it := unionOf(index...)
	if tsIsNever(it) {
		return obj
	}
	if tsIsUnknown(it) || len(obj.props) == 0 {
		obj.index = it
		return obj
	}
	// `{ a: string; [key: string]: number }` is a type error in TypeScript
	// (every property must fit the index signature), an intersection is not.
	return &tsType{kind: tsIntersection, members: []*tsType{obj, {kind: tsObject, index: it}}}
}

func (r *schemaRenderer) arrayType(s *schemaNode, depth int) *tsType {
	prefix, rest := s.get("prefixItems"), s.get("items")
	if (prefix == nil || prefix.kind != schemaArray) && rest != nil && rest.kind == schemaArray {
		// Draft 4 to 2019-09 tuples: items as an array, then additionalItems.
		prefix, rest = rest, s.get("additionalItems")
	}
	if prefix != nil && prefix.kind == schemaArray {
		t := &tsType{kind: tsTuple, minLen: len(prefix.items)}
		for _, e := range prefix.items {
			t.members = append(t.members, r.typeOf(e, depth+1))
		}
		if n, ok := s.get("minItems").intValue(); ok && n < t.minLen {
			t.minLen = max(n, 0)
		}
		if n, ok := s.get("maxItems").intValue(); ok && n <= len(t.members) {
			return t
		}
		if rest == nil {
			t.elem = tsUnknown
		} else if e := r.typeOf(rest, depth+1); !tsIsNever(e) {
			t.elem = e
		}
		return t
	}
	if rest != nil && rest.kind == schemaBool && !rest.boolean {
		return &tsType{kind: tsTuple}
	}
	return &tsType{kind: tsArray, elem: r.typeOf(rest, depth+1)}
}
