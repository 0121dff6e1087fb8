package codemode

import (
	"bytes"
	"encoding/json"
	"strings"
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
