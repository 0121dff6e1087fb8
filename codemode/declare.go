package codemode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what one schema can make Declarations print. Tool schemas come
// from backends, so a recursive, huge or hostile schema must end in
// `unknown`, never in a loop or an explosion.
const (
	// declMaxDepth is how many levels of properties, items and index
	// signatures are shown before the rest becomes unknown.
	declMaxDepth = 8
	// declMaxTypeSize is how many characters one input or output type may
	// take. Past it the type is rendered again less deep, and at depth one
	// whatever does not fit becomes unknown.
	declMaxTypeSize = 8000
	// declMaxNesting bounds $ref and combinator hops, which do not count
	// as depth.
	declMaxNesting = 64
	// declMaxJSONDepth bounds the nesting kept when decoding a schema;
	// deeper values are dropped without recursion.
	declMaxJSONDepth = 256
	// declMaxDocRunes trims a description, declMaxSummaryRunes its copy
	// in a @param line, declMaxNoteRunes a default value or a pattern.
	declMaxDocRunes     = 1000
	declMaxSummaryRunes = 200
	declMaxNoteRunes    = 100
	// declMaxEnumSize is the longest enum, in characters, listed as
	// literals; a longer one shows only the kinds of its values.
	declMaxEnumSize = 2000
	// declMaxInstructions bounds, in bytes, the backend instructions
	// shown above a backend's global.
	declMaxInstructions = 2 << 10
	// declInlineWidth is the widest object type printed on one line.
	declInlineWidth = 80
)

// ToolDecl is one backend tool as the declarations show it.
type ToolDecl struct {
	Name         string          // the backend's own tool name
	Ident        string          // its identifier in the sandbox (from AssignNames)
	Description  string          // the tool's description from tools/list
	InputSchema  json.RawMessage // raw JSON Schema from tools/list; may be empty
	OutputSchema json.RawMessage // may be empty
}

// BackendDecl is one backend global.
type BackendDecl struct {
	Name        string // the global, already checked with CheckBackendName
	Description string // optional one-line note, e.g. "unavailable: connection refused"
	// Instructions are the backend's own, from its initialize answer (its
	// filter syntax, say). They are shown in the comment above the
	// backend's global, cut at 2 KiB.
	Instructions string
	Tools        []ToolDecl
}

// Declarations renders TypeScript declarations for the backends, in order:
// one `declare const <backend>: {...}` per backend with an async method per
// tool, followed by a type alias for each tool that has an output schema.
// Schemas are read from the raw JSON with their key order kept, so the
// output is deterministic and follows the backend's own property order.
func Declarations(backends []BackendDecl) string {
	d := declWriter{aliases: make(map[string]struct{}), nextAlias: make(map[string]int)}
	for i, be := range backends {
		if i > 0 {
			d.b.WriteByte('\n')
		}
		d.backend(be)
	}
	return d.b.String()
}

type declWriter struct {
	b         strings.Builder
	aliases   map[string]struct{} // output type names already used
	nextAlias map[string]int      // per base name, the first number not yet tried
}

func (d *declWriter) backend(be BackendDecl) {
	name := be.Name
	if !IsIdentifier(name) {
		// Never trust the caller with raw text outside a comment.
		name = SanitizeIdentifier(name)
	}
	lines := docLines(be.Description)
	if ins := instructionLines(be.Instructions); len(ins) > 0 {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(append(lines, "Instructions from the backend:"), ins...)
	}
	writeDoc(&d.b, "", lines)
	if len(be.Tools) == 0 {
		d.b.WriteString("declare const " + name + ": {};\n")
		return
	}
	d.b.WriteString("declare const " + name + ": {\n")
	var outputs []string
	for _, t := range be.Tools {
		if out := d.tool(name, t); out != "" {
			outputs = append(outputs, out)
		}
	}
	d.b.WriteString("};\n")
	for _, out := range outputs {
		d.b.WriteString(out)
	}
}

// tool writes one method and returns the declaration of its output type,
// if it has one.
func (d *declWriter) tool(backend string, t ToolDecl) (outputDecl string) {
	ident := t.Ident
	if !IsIdentifier(ident) {
		if ident == "" {
			ident = t.Name
		}
		ident = SanitizeIdentifier(ident)
	}
	in, optional := declInput(t.InputSchema)
	out := declOutput(t.OutputSchema)

	lines := docLines(t.Description)
	if t.Name != ident {
		lines = append(lines, "Calls the backend tool "+quoteTS(t.Name)+".")
	}
	for _, p := range declTopProps(in) {
		if p.doc.summary != "" {
			lines = append(lines, "@param input"+paramAccessor(p.key)+" "+p.doc.summary)
		}
	}
	writeDoc(&d.b, "  ", lines)

	result := "unknown"
	if !tsIsUnknown(out) {
		result = d.alias(backend, ident)
		var b strings.Builder
		b.WriteString("type " + result + " = ")
		writeTS(&b, out, 0)
		b.WriteString(";\n")
		outputDecl = b.String()
	}
	param := "input"
	if optional {
		param = "input?"
	}
	d.b.WriteString("  " + ident + "(" + param + ": ")
	writeTS(&d.b, in, 1)
	d.b.WriteString("): Promise<" + result + ">;\n")
	return outputDecl
}

// alias names the output type of a tool: PascalCase of backend and tool
// plus "Output", with a number added if that name is taken.
func (d *declWriter) alias(backend, tool string) string {
	base := declPascalCase(backend) + declPascalCase(tool) + "Output"
	if base[0] >= '0' && base[0] <= '9' {
		base = "_" + base
	}
	name := base
	if _, taken := d.aliases[name]; taken {
		// As in AssignNames: the search goes on where the last one for
		// this base stopped, so thousands of tools of one name stay linear.
		n := d.nextAlias[base]
		if n == 0 {
			n = 2
		}
		for ; ; n++ {
			name = base + strconv.Itoa(n)
			if _, taken := d.aliases[name]; !taken {
				break
			}
		}
		d.nextAlias[base] = n + 1
	}
	d.aliases[name] = struct{}{}
	return name
}

func declPascalCase(ident string) string {
	var b strings.Builder
	up := true
	for i := 0; i < len(ident); i++ {
		c := ident[i]
		if c == '_' || c == '$' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

// declInput renders a tool's input schema. A tool without a usable object
// schema takes an optional empty object; otherwise the argument is optional
// exactly when no property is required.
func declInput(raw json.RawMessage) (t *tsType, optional bool) {
	root := parseToolSchema(raw)
	if root == nil || root.kind != schemaObject || len(root.keys) == 0 || !schemaObjectLike(root) {
		return &tsType{kind: tsObject}, true
	}
	t = renderSchema(root)
	if !tsObjectish(t) {
		// The arguments of a tools/call are always an object.
		return &tsType{kind: tsObject}, true
	}
	return t, !declNeedsInput(t)
}

// tsObjectish reports whether t is an object type, or made only of them.
func tsObjectish(t *tsType) bool {
	switch t.kind {
	case tsObject:
		return true
	case tsUnion, tsIntersection:
		for _, m := range t.members {
			if !tsObjectish(m) {
				return false
			}
		}
		return true
	}
	return false
}

// schemaObjectLike reports whether a schema can describe an object: its type, if
// given, includes "object".
func schemaObjectLike(s *schemaNode) bool {
	names, given := schemaTypeNames(s)
	if !given {
		return true
	}
	for _, n := range names {
		if n == "object" {
			return true
		}
	}
	return false
}

func declNeedsInput(t *tsType) bool {
	switch t.kind {
	case tsObject:
		for _, p := range t.props {
			if !p.optional {
				return true
			}
		}
		return false
	case tsIntersection:
		for _, m := range t.members {
			if declNeedsInput(m) {
				return true
			}
		}
		return false
	case tsUnion:
		for _, m := range t.members {
			if !declNeedsInput(m) {
				return false
			}
		}
		return true
	}
	return !tsIsUnknown(t)
}

// declTopProps are the properties that get @param lines.
func declTopProps(t *tsType) []tsProp {
	switch t.kind {
	case tsObject:
		return t.props
	case tsIntersection:
		var props []tsProp
		for _, m := range t.members {
			if m.kind == tsObject {
				props = append(props, m.props...)
			}
		}
		return props
	}
	return nil
}

func declOutput(raw json.RawMessage) *tsType {
	root := parseToolSchema(raw)
	if root == nil || root.kind != schemaObject || len(root.keys) == 0 {
		return tsUnknown
	}
	return renderSchema(root)
}

func parseToolSchema(raw json.RawMessage) *schemaNode {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	v, err := parseSchemaNode(raw)
	if err != nil {
		return nil
	}
	return v
}

// --- JSON Schema to TypeScript types ---

type tsKind uint8

const (
	tsName         tsKind = iota // a keyword or a literal, in text
	tsArray                      // elem[]
	tsTuple                      // [members..., ...elem[]]
	tsUnion                      // members joined by |
	tsIntersection               // members joined by &
	tsObject                     // { props; [key: string]: index }
)

type tsType struct {
	kind    tsKind
	text    string
	elem    *tsType   // array element; tuple rest element, if any
	members []*tsType // union, intersection and tuple members
	minLen  int       // tuple members from this index on are optional
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

func tsIsUnknown(t *tsType) bool { return t.kind == tsName && t.text == "unknown" }
func tsIsNever(t *tsType) bool   { return t.kind == tsName && t.text == "never" }

// renderSchema converts a schema, trying less depth until the result fits
// declMaxTypeSize; at depth one it keeps what fits and cuts the rest.
func renderSchema(root *schemaNode) *tsType {
	for depth := declMaxDepth; ; depth-- {
		r := &schemaRenderer{root: root, maxDepth: depth, budget: declMaxTypeSize, refs: []*schemaNode{root}}
		t := r.typeOf(root, 0)
		if depth == 1 || (!r.over && tsPrintedSize(t) <= declMaxTypeSize) {
			return t
		}
	}
}

type schemaRenderer struct {
	root     *schemaNode
	maxDepth int
	budget   int
	over     bool          // the budget ran out; everything from now on is unknown
	refs     []*schemaNode // $ref targets being expanded, for the cycle guard
	nesting  int
}

func (r *schemaRenderer) spend(n int) {
	r.budget -= n
	if r.budget < 0 {
		r.over = true
	}
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
	case s.kind != schemaObject, depth > r.maxDepth, r.over, r.nesting >= declMaxNesting:
		return tsUnknown
	}
	r.nesting++
	defer func() { r.nesting-- }()
	r.spend(8)

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
			return tsUnknown
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
			members = append(members, r.arrayType(s, depth))
		case "object":
			members = append(members, r.objectType(s, depth))
		default:
			members = append(members, tsUnknown)
		}
	}
	return unionOf(members...)
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
	if r.over || depth > r.maxDepth {
		return tsUnknown
	}
	switch v.kind {
	case schemaNull:
		return tsNull
	case schemaBool:
		r.spend(5)
		return &tsType{kind: tsName, text: strconv.FormatBool(v.boolean)}
	case schemaNumber:
		r.spend(len(v.text))
		return &tsType{kind: tsName, text: v.text}
	case schemaString:
		q := quoteTS(v.text)
		r.spend(len(q))
		return &tsType{kind: tsName, text: q}
	case schemaArray:
		t := &tsType{kind: tsTuple, minLen: len(v.items)}
		for _, item := range v.items {
			t.members = append(t.members, r.literal(item, depth+1))
		}
		return t
	default:
		t := &tsType{kind: tsObject}
		for i, k := range v.keys {
			r.spend(len(k) + 4)
			t.props = append(t.props, tsProp{key: k, typ: r.literal(v.values[i], depth+1)})
		}
		return t
	}
}

func (r *schemaRenderer) objectType(s *schemaNode, depth int) *tsType {
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
	truncated := false
	seen := make(map[string]bool)
	if hasProps {
		for i, key := range props.keys {
			if r.over {
				truncated = true
				break
			}
			seen[key] = true
			doc := r.doc(props.values[i])
			r.spend(len(key) + 4 + doc.size())
			obj.props = append(obj.props, tsProp{
				key:      key,
				optional: !required[key],
				doc:      doc,
				typ:      r.typeOf(props.values[i], depth+1),
			})
		}
	}
	if !truncated {
		// Required names missing from properties are still required.
		for _, key := range requiredOrder {
			if !seen[key] && (hasProps || s.get("additionalProperties") != nil || s.get("patternProperties") != nil || len(obj.props) == 0) {
				r.spend(len(key) + 12)
				obj.props = append(obj.props, tsProp{key: key, typ: tsUnknown})
			}
		}
	}

	var index []*tsType
	if pp := s.get("patternProperties"); pp != nil && pp.kind == schemaObject {
		for _, v := range pp.values {
			index = append(index, r.typeOf(v, depth+1))
		}
	}
	switch ap := s.get("additionalProperties"); {
	case truncated:
		index = append(index, tsUnknown)
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

// --- doc comments ---

// docInfo is what a property's doc comment says: full lines for the
// property itself and a one-line summary for its @param line. Both are raw
// text; writeDoc and inline docs escape them.
type docInfo struct {
	lines   []string
	summary string
}

func (d docInfo) size() int {
	n := len(d.summary)
	for _, l := range d.lines {
		n += len(l) + 4
	}
	return n
}

// noteKeywords are the validation keywords worth telling a model, in the
// order they are shown.
var noteKeywords = []string{
	"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
	"minLength", "maxLength", "minItems", "maxItems",
}

// doc describes a property schema: its description, format and bounds,
// default and deprecation. A property that is only a $ref takes them from
// the target.
func (r *schemaRenderer) doc(s *schemaNode) docInfo {
	if s == nil || s.kind != schemaObject {
		return docInfo{}
	}
	sources := []*schemaNode{s}
	for cur := s; len(sources) < 4; {
		ref := cur.get("$ref")
		if ref == nil || ref.kind != schemaString {
			break
		}
		if cur = r.resolve(ref.text); cur == nil || cur.kind != schemaObject {
			break
		}
		sources = append(sources, cur)
	}
	find := func(key string) *schemaNode {
		for _, src := range sources {
			if v := src.get(key); v != nil {
				return v
			}
		}
		return nil
	}

	var desc string
	if v := find("description"); v != nil && v.kind == schemaString {
		desc = v.text
	}
	var notes []string
	if v := find("format"); v != nil && v.kind == schemaString {
		notes = append(notes, "format: "+docOneLine(v.text, declMaxNoteRunes))
	}
	for _, k := range noteKeywords {
		if v := find(k); v != nil && v.kind == schemaNumber {
			notes = append(notes, k+": "+v.text)
		}
	}
	if v := find("pattern"); v != nil && v.kind == schemaString {
		notes = append(notes, "pattern: "+docOneLine(v.text, declMaxNoteRunes))
	}
	var def string
	if v := find("default"); v != nil {
		def = truncateDoc(string(v.appendJSON(nil)), declMaxNoteRunes)
	}
	deprecated := false
	if v := find("deprecated"); v != nil && v.kind == schemaBool && v.boolean {
		deprecated = true
	}

	var d docInfo
	d.lines = docLines(desc)
	summary := []string{docOneLine(desc, declMaxSummaryRunes)}
	if len(notes) > 0 {
		note := "(" + strings.Join(notes, ", ") + ")"
		if n := len(d.lines); n > 0 {
			d.lines[n-1] += " " + note
		} else {
			d.lines = append(d.lines, note)
		}
		summary = append(summary, note)
	}
	if def != "" {
		d.lines = append(d.lines, "@default "+def)
		summary = append(summary, "(default: "+def+")")
	}
	if deprecated {
		d.lines = append(d.lines, "@deprecated")
		summary = append(summary, "(deprecated)")
	}
	d.summary = strings.TrimSpace(strings.Join(summary, " "))
	return d
}

// docLines turns a description into comment lines: printable text only,
// trimmed to declMaxDocRunes, lines kept, runs of blank lines collapsed.
func docLines(text string) []string {
	return splitDocLines(truncateDoc(cleanDocText(text), declMaxDocRunes))
}

// instructionLines turns a backend's instructions into comment lines, as
// docLines does, cut at declMaxInstructions bytes with a line saying so.
func instructionLines(text string) []string {
	text = cleanDocText(text)
	if len(text) <= declMaxInstructions {
		return splitDocLines(text)
	}
	shown := cutUTF8(text, declMaxInstructions)
	return append(splitDocLines(shown), fmt.Sprintf("[instructions cut: %d of %d bytes shown]", len(shown), len(text)))
}

// splitDocLines splits cleaned text into lines, runs of blank lines
// collapsed.
func splitDocLines(text string) []string {
	var lines []string
	blank := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" {
			blank = len(lines) > 0
			continue
		}
		if blank {
			lines = append(lines, "")
			blank = false
		}
		lines = append(lines, l)
	}
	return lines
}

// docOneLine is text as a single line of at most n runes.
func docOneLine(text string, n int) string {
	return truncateDoc(strings.Join(strings.Fields(cleanDocText(text)), " "), n)
}

var docNewlines = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n")

// cleanDocText keeps docNewlines and printable characters; every other control
// or bidi-control character becomes a space.
func cleanDocText(text string) string {
	text = docNewlines.Replace(strings.ToValidUTF8(text, "\uFFFD"))
	text = strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, text)
	return strings.TrimSpace(text)
}

// truncateDoc cuts text to at most n runes plus "...", at a space when
// one is near the end.
func truncateDoc(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	cut := 0
	for i := range text {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	text = text[:cut]
	if sp := strings.LastIndexAny(text, " \n"); sp > len(text)*4/5 {
		text = text[:sp]
	}
	return strings.TrimRight(text, " \n") + "..."
}

// escapeComment makes text safe inside a /* */ comment: "*/" is the only
// sequence that ends one.
func escapeComment(text string) string {
	return strings.ReplaceAll(text, "*/", `*\/`)
}

func writeDoc(b *strings.Builder, indent string, lines []string) {
	switch len(lines) {
	case 0:
		return
	case 1:
		b.WriteString(indent + "/** " + escapeComment(lines[0]) + " */\n")
		return
	}
	b.WriteString(indent + "/**\n")
	for _, l := range lines {
		if l == "" {
			b.WriteString(indent + " *\n")
			continue
		}
		b.WriteString(indent + " * " + escapeComment(l) + "\n")
	}
	b.WriteString(indent + " */\n")
}

// --- printing ---

const tsIndentUnit = "  "

// tsPrintedSize is the length of t as printed in a method signature.
func tsPrintedSize(t *tsType) int {
	var b strings.Builder
	writeTS(&b, t, 1)
	return b.Len()
}

// tsInline is a type on one line.
func tsInline(t *tsType) string {
	var b strings.Builder
	writeTS(&b, t, -1)
	return b.String()
}

// tsFitsInline reports whether an object type reads well on one line: short,
// and with no doc comment longer than a line.
func tsFitsInline(t *tsType) bool {
	return !tsHasBlockDoc(t) && len(tsInline(t)) <= declInlineWidth
}

func tsHasBlockDoc(t *tsType) bool {
	for _, p := range t.props {
		if len(p.doc.lines) > 1 || tsHasBlockDoc(p.typ) {
			return true
		}
	}
	for _, m := range t.members {
		if tsHasBlockDoc(m) {
			return true
		}
	}
	return (t.elem != nil && tsHasBlockDoc(t.elem)) || (t.index != nil && tsHasBlockDoc(t.index))
}

// writeTS prints t; objects that do not fit on a line are spread over
// lines indented one level deeper than indent. indent < 0 prints everything
// on one line.
func writeTS(b *strings.Builder, t *tsType, indent int) {
	switch t.kind {
	case tsName:
		b.WriteString(t.text)
	case tsArray:
		writeTSOperand(b, t.elem, indent)
		b.WriteString("[]")
	case tsTuple:
		b.WriteByte('[')
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(", ")
			}
			if i >= t.minLen {
				writeTSOperand(b, m, indent)
				b.WriteByte('?')
			} else {
				writeTS(b, m, indent)
			}
		}
		if t.elem != nil {
			if len(t.members) > 0 {
				b.WriteString(", ")
			}
			b.WriteString("...")
			writeTSOperand(b, t.elem, indent)
			b.WriteString("[]")
		}
		b.WriteByte(']')
	case tsUnion:
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(" | ")
			}
			writeTS(b, m, indent)
		}
	case tsIntersection:
		for i, m := range t.members {
			if i > 0 {
				b.WriteString(" & ")
			}
			if m.kind == tsUnion {
				b.WriteByte('(')
				writeTS(b, m, indent)
				b.WriteByte(')')
			} else {
				writeTS(b, m, indent)
			}
		}
	case tsObject:
		writeTSObject(b, t, indent)
	}
}

// writeTSOperand prints t where a postfix [] or ? follows.
func writeTSOperand(b *strings.Builder, t *tsType, indent int) {
	if t.kind == tsUnion || t.kind == tsIntersection {
		b.WriteByte('(')
		writeTS(b, t, indent)
		b.WriteByte(')')
		return
	}
	writeTS(b, t, indent)
}

func writeTSObject(b *strings.Builder, t *tsType, indent int) {
	if len(t.props) == 0 && t.index == nil {
		b.WriteString("{}")
		return
	}
	if indent < 0 || tsFitsInline(t) {
		b.WriteString("{ ")
		for i, p := range t.props {
			if i > 0 {
				b.WriteString("; ")
			}
			if len(p.doc.lines) > 0 {
				// Block docs never print inline; a one-line form only
				// measures them.
				b.WriteString("/** " + escapeComment(strings.Join(p.doc.lines, " ")) + " */ ")
			}
			b.WriteString(tsPropertyKey(p.key))
			if p.optional {
				b.WriteByte('?')
			}
			b.WriteString(": ")
			writeTS(b, p.typ, -1)
		}
		if t.index != nil {
			if len(t.props) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("[key: string]: ")
			writeTS(b, t.index, -1)
		}
		b.WriteString(" }")
		return
	}
	inner := strings.Repeat(tsIndentUnit, indent+1)
	b.WriteString("{\n")
	for _, p := range t.props {
		writeDoc(b, inner, p.doc.lines)
		b.WriteString(inner + tsPropertyKey(p.key))
		if p.optional {
			b.WriteByte('?')
		}
		b.WriteString(": ")
		writeTS(b, p.typ, indent+1)
		b.WriteString(";\n")
	}
	if t.index != nil {
		b.WriteString(inner + "[key: string]: ")
		writeTS(b, t.index, indent+1)
		b.WriteString(";\n")
	}
	b.WriteString(strings.Repeat(tsIndentUnit, indent) + "}")
}

// tsPropertyKey is a property name as TypeScript accepts it: bare when it is
// an identifier name (reserved words are fine there), quoted otherwise.
func tsPropertyKey(key string) string {
	if identifierName(key) {
		return key
	}
	return quoteTS(key)
}

// paramAccessor is how a @param line names a property of input.
func paramAccessor(key string) string {
	if identifierName(key) {
		return "." + key
	}
	return "[" + quoteTS(key) + "]"
}

// quoteTS quotes s as a JSON string, which is also a valid JavaScript and
// TypeScript string literal.
func quoteTS(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// --- order-preserving JSON ---

type schemaKind uint8

const (
	schemaNull schemaKind = iota
	schemaBool
	schemaNumber
	schemaString
	schemaArray
	schemaObject
)

// schemaNode is decoded JSON that keeps the order of object keys, which
// encoding/json's maps lose and which the declarations must show.
type schemaNode struct {
	kind    schemaKind
	boolean bool
	text    string // a number's literal text or a string's value
	items   []*schemaNode
	keys    []string
	values  []*schemaNode
	lookup  map[string]int // key index of large objects
}

func (v *schemaNode) get(key string) *schemaNode {
	if v == nil || v.kind != schemaObject {
		return nil
	}
	if v.lookup != nil {
		if i, ok := v.lookup[key]; ok {
			return v.values[i]
		}
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.values[i]
		}
	}
	return nil
}

func (v *schemaNode) hasAny(keys []string) bool {
	for _, k := range keys {
		if v.get(k) != nil {
			return true
		}
	}
	return false
}

func (v *schemaNode) intValue() (int, bool) {
	if v == nil || v.kind != schemaNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.text, 64)
	if err != nil || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// set adds a key; a repeated key keeps its first position and its last
// value, as encoding/json keeps the last value.
func (v *schemaNode) set(key string, val *schemaNode) {
	const lookupFrom = 16
	if v.lookup != nil {
		if i, ok := v.lookup[key]; ok {
			v.values[i] = val
			return
		}
		v.lookup[key] = len(v.keys)
	} else {
		for i, k := range v.keys {
			if k == key {
				v.values[i] = val
				return
			}
		}
		if len(v.keys)+1 >= lookupFrom {
			v.lookup = make(map[string]int, 2*lookupFrom)
			for i, k := range v.keys {
				v.lookup[k] = i
			}
			v.lookup[key] = len(v.keys)
		}
	}
	v.keys = append(v.keys, key)
	v.values = append(v.values, val)
}

// appendJSON appends v as compact JSON.
func (v *schemaNode) appendJSON(b []byte) []byte {
	switch v.kind {
	case schemaNull:
		return append(b, "null"...)
	case schemaBool:
		return strconv.AppendBool(b, v.boolean)
	case schemaNumber:
		return append(b, v.text...)
	case schemaString:
		return append(b, quoteTS(v.text)...)
	case schemaArray:
		b = append(b, '[')
		for i, item := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.appendJSON(b)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, quoteTS(k)...)
			b = append(b, ':')
			b = v.values[i].appendJSON(b)
		}
		return append(b, '}')
	}
}

func parseSchemaNode(data []byte) (*schemaNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeSchemaNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeSchemaNode(dec *json.Decoder, depth int) (*schemaNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &schemaNode{kind: schemaNull}, nil
	case bool:
		return &schemaNode{kind: schemaBool, boolean: t}, nil
	case json.Number:
		return &schemaNode{kind: schemaNumber, text: t.String()}, nil
	case string:
		return &schemaNode{kind: schemaString, text: t}, nil
	case json.Delim:
		if depth >= declMaxJSONDepth {
			return &schemaNode{kind: schemaNull}, skipSchemaValue(dec)
		}
		v := &schemaNode{kind: schemaArray}
		if t == '{' {
			v.kind = schemaObject
		}
		for dec.More() {
			var key string
			if v.kind == schemaObject {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ = kt.(string)
			}
			item, err := decodeSchemaNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if v.kind == schemaObject {
				v.set(key, item)
			} else {
				v.items = append(v.items, item)
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return v, nil
	}
	return nil, errors.New("unexpected JSON token")
}

// skipSchemaValue consumes the rest of an array or object whose opening delimiter
// was just read, without recursion.
func skipSchemaValue(dec *json.Decoder) error {
	for level := 1; level > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				level++
			} else {
				level--
			}
		}
	}
	return nil
}
