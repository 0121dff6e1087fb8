package caddymcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/jsonschema"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Tool is one tool of an `mcp` handler: its MCP description and how a call
// becomes one HTTP request to the upstream.
type Tool struct {
	// Name is the tool name clients call. Required; letters, digits, '_',
	// '-' and '.', at most 128 characters.
	Name string `json:"name"`

	// Title is a human-readable name shown by clients. Default: none.
	Title string `json:"title,omitempty"`

	// Description tells the model what the tool does. Required.
	Description string `json:"description"`

	// Method is the upstream HTTP method: GET, POST, PUT, PATCH, DELETE or
	// HEAD. Required.
	Method string `json:"method"`

	// Path is the upstream path template, such as /repos/{owner}/{repo}.
	// {name} is the argument name; other placeholders ({env.X}, ...) are
	// resolved when the call is made. Required.
	Path string `json:"path"`

	// Args declares the arguments, each with a type, or, beside
	// InputSchema, only where a property of that schema goes. Default: none.
	Args []*Arg `json:"args,omitempty"`

	// InputSchema is a whole JSON Schema for the arguments, instead of typed
	// Args. Its root must be an object schema. Default: built from Args.
	InputSchema json.RawMessage `json:"input_schema,omitempty"`

	// OutputSchema is an object JSON Schema for the upstream's JSON answer;
	// the tool then returns structuredContent validated against it.
	// Default: none.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`

	// Query holds fixed query parameters; placeholders are allowed.
	// Default: none.
	Query map[string][]string `json:"query,omitempty"`

	// Headers holds fixed upstream request headers for this tool;
	// placeholders are allowed. A field named here replaces the handler's
	// field of that name. Default: none.
	Headers http.Header `json:"headers,omitempty"`

	// Body is how body arguments are sent: "json" (an object of them),
	// "form" (URL-encoded) or "arg" (the argument BodyArg is the whole JSON
	// body). Default: json.
	Body string `json:"body,omitempty"`

	// BodyArg names the argument sent as the whole body with Body "arg".
	BodyArg string `json:"body_arg,omitempty"`

	// Timeout bounds one call of this tool. Default: the handler's timeout.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// Annotations are hints to clients about the tool's behaviour.
	// Default: none.
	Annotations *Annotations `json:"annotations,omitempty"`
}

// Arg declares one argument of a tool.
type Arg struct {
	// Name is the argument name, as the model sends it. Required.
	Name string `json:"name"`

	// Type is one of string, integer, number, boolean, object, array,
	// string[], integer[], number[], boolean[], object[]. Default: string;
	// empty beside an input_schema, where the schema gives the type.
	Type string `json:"type,omitempty"`

	// Required marks an argument the model must send. Default: false.
	Required bool `json:"required,omitempty"`

	// Description tells the model what the argument is. Default: none.
	Description string `json:"description,omitempty"`

	// In is where the argument goes: path, query, header or body.
	// Default: path if the path template names it, else query for GET,
	// HEAD and DELETE, else body.
	In string `json:"in,omitempty"`

	// HeaderName is the header field for an argument in a header.
	// Default: the argument name.
	HeaderName string `json:"header_name,omitempty"`

	// Default is sent when the argument is omitted, and shown in the
	// schema. A literal; placeholders are not resolved. Default: none.
	Default json.RawMessage `json:"default,omitempty"`

	// Enum lists the allowed values (of the items, for an array type).
	// Default: any value.
	Enum []json.RawMessage `json:"enum,omitempty"`
}

// Annotations are the MCP tool annotations. Unset hints are not sent.
type Annotations struct {
	ReadOnly    *bool `json:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

// typed reports whether the arg line declares anything beyond placement.
func (a *Arg) typed() bool {
	return a.Type != "" || a.Required || a.Description != "" || a.Default != nil || len(a.Enum) > 0
}

var argTypes = map[string]string{ // type word -> item type for arrays, "" for scalars
	"string": "", "integer": "", "number": "", "boolean": "", "object": "", "array": "",
	"string[]": "string", "integer[]": "integer", "number[]": "number", "boolean[]": "boolean", "object[]": "object",
}

// schemaType is the JSON Schema type of a type word and its item type.
func schemaType(word string) (typ, items string) {
	if items = argTypes[word]; items != "" {
		return "array", items
	}
	return word, ""
}

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// compiledTool is a tool ready for calls: all that can be done once is done.
type compiledTool struct {
	name    string
	mcpTool mcp.Tool
	request *upstream.Tool
	input   *jsonschema.Schema
	quick   *quickCheck // before input, for arg lines
	output  *jsonschema.Schema
	timeout caddy.Duration
	// refs are the {env.*} and {file.*} placeholders in the text this
	// tool's requests are built from, checked per call (see configRef).
	refs []configRef
}

// compile checks t and prepares it. handlerHeaders are the handler-wide
// upstream headers, which t.Headers may override field by field.
func (t *Tool) compile(handlerHeaders http.Header) (*compiledTool, error) {
	if !toolNamePattern.MatchString(t.Name) {
		return nil, fmt.Errorf("tool name %q: use 1 to 128 letters, digits, '_', '-' or '.'", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		return nil, fmt.Errorf("a description is required")
	}
	if t.Method == "" || t.Path == "" {
		return nil, fmt.Errorf("a method and path are required, e.g. 'get /items/{id}'")
	}
	if t.Timeout < 0 {
		return nil, fmt.Errorf("timeout must not be negative")
	}
	seen := make(map[string]bool, len(t.Args))
	for _, a := range t.Args {
		if a.Name == "" {
			return nil, fmt.Errorf("an arg has no name")
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("arg %q is declared twice", a.Name)
		}
		seen[a.Name] = true
	}

	var rawInput []byte
	var props map[string]schemaProperty
	var err error
	if len(t.InputSchema) > 0 {
		for _, a := range t.Args {
			if a.typed() {
				return nil, fmt.Errorf("arg %q: typed arg lines and input_schema do not mix; beside input_schema an arg line only places a property (in, header_name)", a.Name)
			}
		}
		rawInput = t.InputSchema
		props, err = objectProperties(rawInput)
		if err != nil {
			return nil, fmt.Errorf("input_schema: %v", err)
		}
		for _, a := range t.Args {
			if _, ok := props[a.Name]; !ok {
				return nil, fmt.Errorf("arg %q places a property that input_schema does not have", a.Name)
			}
		}
	} else {
		rawInput, err = argsSchema(t.Args)
		if err != nil {
			return nil, err
		}
	}
	input, err := upstream.CompileSchema(rawInput)
	if err != nil {
		return nil, fmt.Errorf("input_schema: %v", err)
	}

	ct := &compiledTool{name: t.Name, input: input, quick: newQuickCheck(t), timeout: t.Timeout}
	if len(t.OutputSchema) > 0 {
		if _, err := objectProperties(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("output_schema: %v", err)
		}
		if ct.output, err = upstream.CompileSchema(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("output_schema: %v", err)
		}
	}

	spec := upstream.Spec{Method: t.Method, Path: t.Path, Body: upstream.BodyMode(t.Body), BodyArg: t.BodyArg}
	if props != nil {
		placed := make(map[string]*Arg, len(t.Args))
		for _, a := range t.Args {
			placed[a.Name] = a
		}
		for _, name := range sortedKeys(props) {
			p := props[name]
			// An input_schema may give a property any type; an object left in
			// the query is sent as its JSON text.
			typ := p.Type
			if typ == "object" {
				typ = ""
			}
			ua := upstream.Arg{Name: name, Type: typ, Default: p.Default}
			if a := placed[name]; a != nil {
				ua.In, ua.HeaderName = upstream.Placement(a.In), a.HeaderName
			}
			spec.Args = append(spec.Args, ua)
		}
	} else {
		for _, a := range t.Args {
			typ, items := schemaType(a.Type)
			ua := upstream.Arg{Name: a.Name, Type: typ, Items: items, In: upstream.Placement(a.In), HeaderName: a.HeaderName}
			if a.Default != nil {
				if err := json.Unmarshal(a.Default, &ua.Default); err != nil {
					return nil, fmt.Errorf("arg %q: default: %v", a.Name, err)
				}
			}
			spec.Args = append(spec.Args, ua)
		}
	}
	spec.Header = mergeHeaders(handlerHeaders, t.Headers)
	for _, k := range sortedKeys(t.Query) {
		for _, v := range t.Query[k] {
			spec.Query = append(spec.Query, upstream.Field{Name: k, Value: v})
		}
	}
	if ct.request, err = upstream.New(spec); err != nil {
		return nil, err
	}
	ct.refs = addRefs(ct.refs, t.Path)
	for _, f := range spec.Header {
		ct.refs = addRefs(ct.refs, f.Value)
	}
	for _, f := range spec.Query {
		ct.refs = addRefs(ct.refs, f.Value)
	}

	ct.mcpTool = mcp.NewToolWithRawSchema(t.Name, t.Description, rawInput)
	ct.mcpTool.Title = t.Title
	if len(t.OutputSchema) > 0 {
		ct.mcpTool.RawOutputSchema = t.OutputSchema
	}
	ct.mcpTool.Annotations.Title = t.Title
	if a := t.Annotations; a != nil {
		ct.mcpTool.Annotations.ReadOnlyHint = a.ReadOnly
		ct.mcpTool.Annotations.DestructiveHint = a.Destructive
		ct.mcpTool.Annotations.IdempotentHint = a.Idempotent
		ct.mcpTool.Annotations.OpenWorldHint = a.OpenWorld
	}
	return ct, nil
}

// argsSchema builds the input schema from typed args, in their order.
func argsSchema(args []*Arg) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, a := range args {
		word := a.Type
		if word == "" {
			word = "string"
		}
		if _, ok := argTypes[word]; !ok {
			return nil, fmt.Errorf("arg %q: unknown type %q (want string, integer, number, boolean, object, array, or string[], integer[], number[], boolean[], object[])", a.Name, a.Type)
		}
		typ, items := schemaType(word)
		prop, err := propertySchema(a, typ, items)
		if err != nil {
			return nil, fmt.Errorf("arg %q: %v", a.Name, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(a.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(prop)
		if a.Required {
			required = append(required, a.Name)
		}
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes(), nil
}

func propertySchema(a *Arg, typ, items string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":%q`, typ)
	if a.Description != "" {
		d, _ := json.Marshal(a.Description)
		b.WriteString(`,"description":`)
		b.Write(d)
	}
	enum, err := enumJSON(a.Enum)
	if err != nil {
		return nil, err
	}
	if typ == "array" && (items != "" || enum != nil) {
		// For an array, the enum lists the allowed items.
		b.WriteString(`,"items":{`)
		if items != "" {
			fmt.Fprintf(&b, `"type":%q`, items)
			if enum != nil {
				b.WriteByte(',')
			}
		}
		if enum != nil {
			b.WriteString(`"enum":`)
			b.Write(enum)
		}
		b.WriteByte('}')
	} else if enum != nil {
		b.WriteString(`,"enum":`)
		b.Write(enum)
	}
	if a.Default != nil {
		if !json.Valid(a.Default) {
			return nil, fmt.Errorf("default is not valid JSON: %s", a.Default)
		}
		b.WriteString(`,"default":`)
		b.Write(a.Default)
	}
	b.WriteByte('}')
	// The default must itself be valid, or every call without it fails.
	if a.Default != nil {
		s, err := upstream.CompileSchema(b.Bytes())
		if err != nil {
			return nil, err
		}
		var v any
		_ = json.Unmarshal(a.Default, &v)
		if err := s.Validate(v); err != nil {
			return nil, fmt.Errorf("default %s does not fit the type and enum: %s", a.Default, strings.Join(upstream.Violations(err), "; "))
		}
	}
	return b.Bytes(), nil
}

func enumJSON(values []json.RawMessage) ([]byte, error) {
	if len(values) == 0 {
		return nil, nil
	}
	for _, v := range values {
		if !json.Valid(v) {
			return nil, fmt.Errorf("enum value is not valid JSON: %s", v)
		}
	}
	return json.Marshal(values)
}

// schemaProperty is what placement needs to know of a top-level property.
type schemaProperty struct {
	Type    string
	Default any
}

// objectProperties checks that doc is an object schema and returns its
// top-level properties.
func objectProperties(doc []byte) (map[string]schemaProperty, error) {
	var root struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if root.Type != "object" {
		return nil, fmt.Errorf(`the root must be an object schema ("type": "object")`)
	}
	props := make(map[string]schemaProperty, len(root.Properties))
	for name, raw := range root.Properties {
		var p struct {
			Type    any `json:"type"`
			Default any `json:"default"`
		}
		_ = json.Unmarshal(raw, &p) // a boolean schema has neither
		typ, _ := p.Type.(string)
		props[name] = schemaProperty{Type: typ, Default: p.Default}
	}
	return props, nil
}

// configRef is a placeholder of configuration text whose value comes from
// outside the configuration: an environment variable ({env.X}) or a file
// ({file./path}). The replacer makes an unset one empty without a word, so
// "Bearer {env.TOKEN}" with TOKEN unset sends "Bearer" on every call and
// the upstream's 403 says nothing of why: the load and the call log say
// which one was empty.
type configRef struct {
	kind string // "env" or "file", the log field naming it
	name string // the variable name or the file path
}

// configRefs returns the configRefs of configuration text.
func configRefs(text string) []configRef {
	var refs []configRef
	for _, key := range upstream.Placeholders(text) {
		if name, ok := strings.CutPrefix(key, "env."); ok && name != "" {
			refs = append(refs, configRef{kind: "env", name: name})
		} else if name, ok := strings.CutPrefix(key, "file."); ok && name != "" {
			refs = append(refs, configRef{kind: "file", name: name})
		}
	}
	return refs
}

// addRefs adds the configRefs of text to refs, each once.
func addRefs(refs []configRef, text string) []configRef {
	for _, ref := range configRefs(text) {
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// missing says why the placeholder resolves to empty text now ("unset",
// "empty", "unreadable"), or "" when it has a value. Only the state is
// looked at, never logged: the value may be a secret.
func (r configRef) missing() string {
	if r.kind == "env" {
		v, set := os.LookupEnv(r.name)
		switch {
		case !set:
			return "unset"
		case v == "":
			return "empty"
		}
		return ""
	}
	// As Caddy's {file.*} reads it: what it cannot open is empty text,
	// and one trailing newline (\n, \r or \r\n) is dropped.
	f, err := os.Open(r.name)
	if err != nil {
		return "unreadable"
	}
	defer f.Close()
	var head [3]byte
	n, err := io.ReadFull(f, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "unreadable"
	}
	switch string(head[:n]) {
	case "", "\n", "\r", "\r\n":
		return "empty"
	}
	return ""
}

// emptyRefs returns those of refs that resolve to empty text now; nil
// when all have a value, without allocating.
func emptyRefs(refs []configRef) []configRef {
	var empty []configRef
	for _, r := range refs {
		if r.missing() != "" {
			empty = append(empty, r)
		}
	}
	return empty
}

// mergeHeaders returns the handler's headers with the tool's fields
// replacing those of the same name, in a stable order.
func mergeHeaders(handler, tool http.Header) []upstream.Field {
	merged := make(http.Header, len(handler)+len(tool))
	for k, v := range handler {
		merged[http.CanonicalHeaderKey(k)] = v
	}
	for k, v := range tool {
		merged[http.CanonicalHeaderKey(k)] = v
	}
	var out []upstream.Field
	for _, k := range sortedKeys(merged) {
		for _, v := range merged[k] {
			out = append(out, upstream.Field{Name: k, Value: v})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
