package declarations

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Bounds on what one schema can make Render print. Tool schemas come
// from backends, so a recursive, huge or hostile schema must end in
// `unknown`, never in a loop or an explosion.
const (
	// declMaxDepth is how many levels of properties, items and index
	// signatures are shown before the rest becomes unknown.
	declMaxDepth = 8
	// declMaxTypeSize is how many characters one input, output or shared
	// type may take even with only its own members shown: past it their
	// comments go, then the optional members that do not fit.
	declMaxTypeSize = 8000
	// declMaxWork bounds the steps of converting one schema; past it the
	// schema is converted again less deep.
	declMaxWork = 20000
	// declMaxNesting bounds $ref and combinator hops, which do not count
	// as depth.
	declMaxNesting = 64
	// declMaxJSONDepth bounds the nesting kept when decoding a schema;
	// deeper values are dropped without recursion.
	declMaxJSONDepth = 256
	// declMaxDocRunes trims a description (a backend's; a tool's shown
	// by search), declMaxToolDocRunes a tool's above its method,
	// declMaxPropDocRunes a property's, declMaxNoteRunes a default value
	// or a pattern.
	declMaxDocRunes     = 1000
	declMaxToolDocRunes = 300
	declMaxPropDocRunes = 250
	declMaxNoteRunes    = 100
	// declMaxShortRunes is the longest short comment (see docsShort).
	declMaxShortRunes = 100
	// declMaxEnumSize is the longest enum, in characters, listed as
	// literals; a longer one shows only the kinds of its values.
	declMaxEnumSize = 2000
	// declMaxInstructions bounds, in bytes, the backend instructions
	// shown above a backend's global.
	declMaxInstructions = 2 << 10
	// declInlineWidth is the widest object type printed on one line.
	declInlineWidth = 80

	// The budgets, in bytes, past which a type shows fewer levels: the
	// deepest levels collapse first, never the members of a level shown
	// (see fitType). One for a tool's input, one for its output, one for
	// a type declared once and shared.
	declInputBudget  = 6000
	declOutputBudget = 2200
	declNamedBudget  = 1500
	// declShareMinSize is the smallest object type, printed on one line,
	// that is declared once under a name when it is used twice.
	declShareMinSize = 60
	// declNamedPool is what the shared types of one backend may take in
	// all; past it they are not declared, and print as objects whose
	// members are not shown.
	declNamedPool = 2000
)

// Tool is one backend tool as the declarations show it.
type Tool struct {
	Name         string          // the backend's own tool name
	Ident        string          // its identifier in the sandbox (from AssignNames)
	Description  string          // the tool's description from tools/list
	InputSchema  json.RawMessage // raw JSON Schema from tools/list; may be empty
	OutputSchema json.RawMessage // may be empty
}

// Backend is one backend global.
type Backend struct {
	Name        string // the global, already checked with CheckBackendName
	Description string // optional one-line note, e.g. "unavailable: connection refused"
	// Instructions are the backend's own, from its initialize answer (its
	// filter syntax, say). They are shown in the comment above the
	// backend's global, cut at 2 KiB.
	Instructions string
	Tools        []Tool
}

// Render writes TypeScript declarations for the backends, in order:
// one `declare const <backend>: {...}` per backend with an async method per
// tool, followed by a type alias for each tool that has an output schema.
// Schemas are read from the raw JSON with their key order kept, so the
// output is deterministic and follows the backend's own property order.
func Render(backends []Backend) string {
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

func (d *declWriter) backend(be Backend) {
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
	tools := make([]declTool, len(be.Tools))
	for i, t := range be.Tools {
		tools[i] = declToolOf(t)
	}
	sh := newDeclSharing(d, name, tools)
	d.b.WriteString("declare const " + name + ": {\n")
	for _, t := range tools {
		d.method(sh, t)
	}
	d.b.WriteString("};\n")
	sh.declareAll()
}

// declTool is one tool's method, its types converted from its schemas.
type declTool struct {
	Tool
	ident    string
	in       *tsType
	optional bool    // the input may be left out
	out      *tsType // unknown when the tool has no output schema
}

func declToolOf(t Tool) declTool {
	ident := t.Ident
	if !IsIdentifier(ident) {
		if ident == "" {
			ident = t.Name
		}
		ident = SanitizeIdentifier(ident)
	}
	in, optional := declInput(t.InputSchema)
	return declTool{Tool: t, ident: ident, in: in, optional: optional, out: declOutput(t.OutputSchema)}
}

// method writes one tool's method: its description above it, once; the
// arguments' descriptions are on the arguments.
func (d *declWriter) method(sh *declSharing, t declTool) {
	lines := splitDocLines(truncateToolDoc(cleanDocText(t.Description)))
	if t.Name != t.ident {
		lines = append(lines, "Calls the backend tool "+quoteTS(t.Name)+".")
	}
	writeDoc(&d.b, "  ", lines)

	result := "unknown"
	if named := sh.output(t); named != nil {
		result = named.name
	}
	param := "input"
	if t.optional {
		param = "input?"
	}
	d.b.WriteString("  " + t.ident + "(" + param + ": ")
	sh.printInput(sh.subst(t.in, true))
	d.b.WriteString("): Promise<" + result + ">;\n")
}

// declInput renders a tool's input schema. A tool without a usable object
// schema takes an optional empty object; otherwise the argument is optional
// exactly when no property is required.
func declInput(raw json.RawMessage) (t *tsType, optional bool) {
	root := parseToolSchema(raw)
	if root == nil || root.kind != schemaObject || len(root.keys) == 0 || !schemaObjectLike(root) {
		return &tsType{kind: tsObject}, true
	}
	t = renderSchema(root, false)
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

func declOutput(raw json.RawMessage) *tsType {
	root := parseToolSchema(raw)
	if root == nil || root.kind != schemaObject || len(root.keys) == 0 {
		return tsUnknown
	}
	return renderSchema(root, true)
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
