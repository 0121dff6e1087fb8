package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/jsonschema"
)

// Definition is one tool as the configuration defines it: its arguments,
// and the HTTP request a call becomes.
type Definition struct {
	// Name names the operation in errors and in the URI of binary results.
	Name   string
	Method string
	// Path is the path template, such as /repos/{owner}/{repo}.
	Path string
	// Args are the arg lines: typed, they make the input schema; beside an
	// InputSchema, they only place its properties.
	Args []Arg
	// InputSchema is a whole JSON Schema for the arguments instead of typed
	// Args; OutputSchema, when set, is what a JSON answer must match.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Query and Header are fixed by the configuration; their values may
	// hold placeholders.
	Query  []Field
	Header []Field
	Body   BodyMode
	// BodyArg names the argument sent as the whole body with Body == BodyArg.
	BodyArg string
	// Jq is a jq filter that reshapes a 2xx JSON answer before it becomes
	// the result; OutputSchema then describes the filter's output. "": none.
	Jq string
	// BodyFields are members of the JSON body the configuration fixes,
	// which no argument sets: closing an issue sends "state": "closed".
	BodyFields []BodyField
	// Drift says OutputSchema comes from a document that the API's answers
	// may drift from: an answer that breaks it is an error result that
	// says so and holds the answer, rather than one that lists the
	// violations alone, so that the model still gets the data.
	Drift bool
	// CompileOnUse compiles InputSchema and OutputSchema at the first call
	// that needs them rather than in NewOperation, for schemas written by
	// a converter (an OpenAPI import) of which most are never used: a
	// schema that does not compile is then that call's error.
	CompileOnUse bool `json:"-"`
}

// BodyField is a fixed member of a JSON body: a key and its JSON value.
type BodyField struct {
	Key   string
	Value json.RawMessage
}

// Arg is one arg line of a Definition.
type Arg struct {
	Name string
	// Type is a type word: string, integer, number, boolean, object, array,
	// or string[], integer[], number[], boolean[], object[]; "" is string,
	// or, beside an input_schema, what the schema says.
	Type        string
	Required    bool
	Description string
	// In is where the argument goes; "" picks the default: path when the
	// path template names its wire name, else query for GET, HEAD and
	// DELETE, else body.
	In Placement
	// HeaderName is the header field for In == InHeader; default the wire
	// name. It and WireName do not go together.
	HeaderName string
	// Default is the JSON sent when the argument is omitted; nil for none.
	Default json.RawMessage
	// Enum lists the allowed values (of the items, for an array type).
	Enum []json.RawMessage
	// WireName is the argument's name in the request: the query key, the
	// header field, the body key or the path template's slot; default
	// Name, the name the model uses.
	WireName string
	// Nullable makes null a valid value: sent as JSON null in a JSON
	// body, left out of a query, a header and a form body.
	Nullable bool
	// Style is how an array or object is written (see Style): form,
	// spaceDelimited, pipeDelimited or deepObject in the query, simple in
	// the path or a header. Default "": an array in the query repeats its
	// key, and arrays and objects go nowhere else but the body.
	Style Style
	// Explode, with a style, says whether an array or object is exploded:
	// form's items each under the key, an object's properties as keys of
	// their own (form) or as name=value (simple). Default nil: the
	// style's own default, true for form and deepObject, false for the
	// others.
	Explode *bool
	// MirrorHeader is the name a 2026-07-28 client mirrors the argument
	// under, as the header Mcp-Param-<MirrorHeader> (the schema's
	// x-mcp-header, SEP-2243), so that a proxy can route on it; the
	// endpoint checks the header against the argument. Only for a
	// string, integer or boolean that is not nullable. "": not mirrored.
	MirrorHeader string
}

// typed reports whether the arg line declares anything beyond placement.
func (a *Arg) typed() bool {
	return a.Type != "" || a.Required || a.Description != "" || a.Default != nil || len(a.Enum) > 0 || a.Nullable
}

// Operation is one tool's HTTP operation, built once from its Definition
// and safe for concurrent use. A call goes Check, Request, then Result
// with the answer to the request.
type Operation struct {
	name   string
	schema json.RawMessage // the input schema, as tool lists show it
	quick  *quickCheck     // before the input schema, for arg lines
	input  *lazySchema
	output *lazySchema // nil: no output schema
	jq     *jqFilter   // nil: none
	drift  bool
	plan   *requestPlan
}

// lazySchema is a JSON Schema compiled once, when first asked for.
type lazySchema struct {
	doc  []byte
	what string // input_schema or output_schema, for errors

	once   sync.Once
	schema *jsonschema.Schema
	err    error
}

func (l *lazySchema) compiled() (*jsonschema.Schema, error) {
	l.once.Do(func() {
		if l.schema, l.err = CompileSchema(l.doc); l.err != nil {
			l.err = fmt.Errorf("%s: %v", l.what, l.err)
		}
	})
	return l.schema, l.err
}

// NewOperation checks def and prepares it for calls.
func NewOperation(def Definition) (*Operation, error) {
	seen := make(map[string]bool, len(def.Args))
	for _, a := range def.Args {
		if a.Name == "" {
			return nil, fmt.Errorf("an arg has no name")
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("arg %q is declared twice", a.Name)
		}
		seen[a.Name] = true
	}

	op := &Operation{name: def.Name, drift: def.Drift}
	var props map[string]schemaProperty
	var err error
	if len(def.InputSchema) > 0 {
		for _, a := range def.Args {
			if a.typed() {
				return nil, argError(a.Name, fmt.Errorf("arg %q: typed arg lines and input_schema do not mix; beside input_schema an arg line only places a property (in, name, header_name)", a.Name))
			}
			if a.MirrorHeader != "" {
				return nil, argError(a.Name, fmt.Errorf(`arg %q: mirror_header goes with typed arg lines; beside input_schema, put "x-mcp-header": %q in the property's schema`, a.Name, a.MirrorHeader))
			}
		}
		op.schema = def.InputSchema
		props, err = objectProperties(op.schema)
		if err != nil {
			return nil, fmt.Errorf("input_schema: %v", err)
		}
		for _, a := range def.Args {
			if _, ok := props[a.Name]; !ok {
				return nil, argError(a.Name, fmt.Errorf("arg %q places a property that input_schema does not have", a.Name))
			}
		}
	} else if op.schema, err = argsSchema(def.Args); err != nil {
		return nil, err
	}
	op.input = &lazySchema{doc: op.schema, what: "input_schema"}
	if !def.CompileOnUse {
		if _, err := op.input.compiled(); err != nil {
			return nil, err
		}
	}
	op.quick = newQuickCheck(def)
	if len(def.OutputSchema) > 0 {
		if _, err := objectProperties(def.OutputSchema); err != nil {
			return nil, fmt.Errorf("output_schema: %v", err)
		}
		op.output = &lazySchema{doc: def.OutputSchema, what: "output_schema"}
		if !def.CompileOnUse {
			if _, err := op.output.compiled(); err != nil {
				return nil, err
			}
		}
	}

	if def.Jq != "" {
		if op.jq, err = compileJq(def.Jq); err != nil {
			return nil, err
		}
	}

	spec := planSpec{Method: def.Method, Path: def.Path, Query: def.Query, Header: def.Header, Body: def.Body, BodyArg: def.BodyArg, BodyFields: def.BodyFields}
	if props != nil {
		placed := make(map[string]Arg, len(def.Args))
		for _, a := range def.Args {
			placed[a.Name] = a
		}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p := props[name]
			// An input_schema may give a property any type; an object left in
			// the query is sent as its JSON text.
			// A style says how to write it instead.
			pa := planArg{Name: name, Type: p.Type, Default: p.Default}
			if a, ok := placed[name]; ok {
				pa.In, pa.HeaderName, pa.Wire = a.In, a.HeaderName, a.WireName
				pa.Style, pa.explodeSet = a.Style, a.Explode
			}
			if pa.Type == "object" && pa.Style == "" {
				pa.Type = ""
			}
			spec.Args = append(spec.Args, pa)
		}
	} else {
		for _, a := range def.Args {
			typ, items := SchemaType(a.Type)
			pa := planArg{Name: a.Name, Wire: a.WireName, Type: typ, Items: items, In: a.In, HeaderName: a.HeaderName, Nullable: a.Nullable, Style: a.Style, explodeSet: a.Explode}
			if a.Default != nil {
				if err := json.Unmarshal(a.Default, &pa.Default); err != nil {
					return nil, argError(a.Name, fmt.Errorf("arg %q: default: %v", a.Name, err))
				}
				pa.NullDefault = pa.Default == nil
			}
			spec.Args = append(spec.Args, pa)
		}
	}
	if op.plan, err = newRequestPlan(spec); err != nil {
		return nil, err
	}
	return op, nil
}

// Name is the operation's name, as its Definition gave it.
func (op *Operation) Name() string { return op.name }

// InputSchema is the JSON Schema of the arguments: the definition's
// input_schema, or the one its arg lines make.
func (op *Operation) InputSchema() json.RawMessage { return op.schema }

// CheckBase reports a declared argument that would add to a query
// parameter of the upstream URL base, when that URL is known at load.
// (One known only per call is checked per call, by Request.)
func (op *Operation) CheckBase(base *url.URL) error { return op.plan.checkBase(base) }

// Label names the request a call with args makes, as Target.Label does,
// for when the request cannot be built; with arguments that do not fit the
// path, the path template stands in.
func (op *Operation) Label(args map[string]any) string { return op.plan.label(args) }

// Check returns the arguments of one call with the declared defaults filled
// in, or an error that tells the model what is wrong with them. raw is the
// call's arguments as decoded, nil for none. The map given is not changed.
func (op *Operation) Check(raw any) (map[string]any, error) {
	args, ok := raw.(map[string]any)
	if !ok && raw != nil {
		return nil, fmt.Errorf("arguments must be a JSON object")
	}
	if args == nil {
		args = map[string]any{}
	}
	args = op.plan.applyDefaults(args)
	if !op.quick.accepts(args) {
		input, err := op.input.compiled()
		if err != nil {
			return nil, fmt.Errorf("tool %s: %v", op.name, err)
		}
		if err := input.Validate(args); err != nil {
			return nil, fmt.Errorf("invalid arguments for tool %s:\n- %s", op.name, strings.Join(Violations(err), "\n- "))
		}
	}
	return args, nil
}

// Request builds the HTTP request for arguments that passed Check; see
// requestPlan.build for what the configuration fixes. base supplies the
// scheme, host, path prefix and any query of the upstream; in route mode
// it is empty and the caller completes the request. Configuration text
// goes through repl; argument values never do. An error tells the model
// which argument could not be sent; the Target names the request even
// then, as far as it was built.
func (op *Operation) Request(ctx context.Context, base *url.URL, args map[string]any, repl Replacer) (*http.Request, Target, error) {
	req, target, err := op.plan.build(ctx, base, args, repl)
	if err != nil {
		return nil, target, fmt.Errorf("invalid arguments for tool %s: %v", op.name, err)
	}
	target.URI = "caddy-mcp://" + op.name + target.Path
	target.Sent, target.Base = req.URL.EscapedPath(), strings.TrimSuffix(base.EscapedPath(), "/")
	return req, target, nil
}

// Result maps the answer to the request target names to a tool result: a
// 2xx JSON answer, through the jq filter if there is one, is its JSON text
// and, with an output schema, also structuredContent validated against
// it; text, images and audio map to their content types; anything else is
// an error result naming the status. shape then sizes the result. ctx
// bounds the filter: the tool's deadline.
func (op *Operation) Result(ctx context.Context, target Target, answer *Response, shape Shaping) *mcp.CallToolResult {
	res, _ := op.ResultDrift(ctx, target, answer, shape)
	return res
}

// ResultDrift is Result, and the violations of the output schema by an
// answer of a Definition with Drift, which the result holds whole: nil
// when the answer matched, or the tool has no Drift.
func (op *Operation) ResultDrift(ctx context.Context, target Target, answer *Response, shape Shaping) (*mcp.CallToolResult, []string) {
	res, drift := answer.result(ctx, target, op)
	// The text of a JSON answer, or of a filter's output, is JSON result
	// checked: it is cut as JSON.
	jsonText := !res.IsError && (op.jq != nil || isJSONType(answer.Header.Get("Content-Type")))
	res = shape.apply(target, answer.Status, res, jsonText)
	return op.checkCut(target, res), drift
}

// checkCut holds a cut structuredContent to the output schema it was
// checked against whole: shortened arrays and strings and summarized
// values may no longer match it, and a client refuses structuredContent
// that does not. Such a result becomes an error result that still holds
// the cut text, so the model reads what there is and why it is partial.
func (op *Operation) checkCut(target Target, res *mcp.CallToolResult) *mcp.CallToolResult {
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok || op.output == nil || res.Meta == nil || res.Meta.AdditionalFields[CutMetaKey] == nil {
		return res
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err == nil {
		var output *jsonschema.Schema
		if output, err = op.output.compiled(); err == nil {
			err = output.Validate(v)
		}
		if err == nil {
			return res
		}
	}
	text := ""
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(mcp.TextContent); ok {
			text = t.Text + "\n\n"
		}
	}
	out := ErrorResult(fmt.Sprintf("%s%s: the answer is larger than the tool's max_result_size and, cut to fit, no longer matches the tool's output_schema, so it comes as text only; a jq filter that selects what is needed, or a larger max_result_size, gives it whole",
		text, target.Label))
	out.Meta = res.Meta
	return out
}
