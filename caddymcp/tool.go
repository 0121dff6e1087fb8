package caddymcp

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"

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
	// {name} is an argument's wire name (its name, unless it sets
	// wire_name); other placeholders ({env.X}, ...) are resolved when the
	// call is made. Required.
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

	// Scopes must all be carried by the token of a request calling this
	// tool; it needs the endpoint's authorization block. Default: none.
	Scopes []string `json:"scopes,omitempty"`

	// Jq is a jq filter (gojq) that reshapes a 2xx JSON answer before it
	// becomes the result; with OutputSchema, structuredContent is the
	// filter's output, validated against it. One output is that value;
	// none or several are a JSON array of them. A filter that fails or
	// runs past the timeout gives an error result. Default: none.
	Jq string `json:"jq,omitempty"`

	// MaxResultSize bounds, in bytes, the result text and, separately,
	// its structuredContent; past it, JSON is cut structurally and text
	// at a character boundary, with a note saying what was cut. At least
	// 1KiB. Default: the handler's max_result_size.
	MaxResultSize int64 `json:"max_result_size,omitempty"`

	// BodyFields are members of the JSON body fixed by the configuration,
	// by key, each a JSON value: no argument sets them and the model does
	// not see them ({"state": "closed"} closes an issue). Placeholders in
	// them are not replaced. Default: none.
	BodyFields map[string]json.RawMessage `json:"body_fields,omitempty"`
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
	// Default: path if the path template names its wire name, else query
	// for GET, HEAD and DELETE, else body.
	In string `json:"in,omitempty"`

	// WireName is the argument's name in the upstream request: the query
	// key, the header field, the body key, or the {slot} of the path
	// template. It may hold what a tool-facing name should not, such as
	// perPage, filter[status], $top or X-Api-Version; it is escaped where
	// it goes, and must be a valid field name in a header. The input
	// schema keeps Name. Default: the argument name.
	WireName string `json:"wire_name,omitempty"`

	// Nullable makes null a valid value: the schema's type becomes a
	// union with "null", and a null is sent as null in a JSON body and
	// left out of a query, a header and a form body. A path argument
	// cannot be nullable. Default: false.
	Nullable bool `json:"nullable,omitempty"`

	// HeaderName is the header field for an argument in a header, as
	// WireName is; set one of them. Default: the argument name.
	HeaderName string `json:"header_name,omitempty"`

	// Style is how an array or object is written, as OpenAPI names its
	// styles: form, spaceDelimited, pipeDelimited or deepObject in the
	// query (tags=a,b; tags=a%7Cb; filter%5Bstate%5D=open), simple in the
	// path or a header (a,b). Default: none; an array in the query then
	// repeats its key, and arrays and objects go nowhere else but the body.
	Style string `json:"style,omitempty"`

	// Explode, with a style, says whether an array or object is exploded:
	// the key repeated, an object's properties as keys of their own
	// (form), name=value pairs (simple). Default: true for form and
	// deepObject, false for the others.
	Explode *bool `json:"explode,omitempty"`

	// Default is sent when the argument is omitted, and shown in the
	// schema. A literal; placeholders are not resolved. Default: none.
	Default json.RawMessage `json:"default,omitempty"`

	// Enum lists the allowed values (of the items, for an array type).
	// Default: any value.
	Enum []json.RawMessage `json:"enum,omitempty"`

	// MirrorHeader asks 2026-07-28 clients to send the argument in the
	// header Mcp-Param-<MirrorHeader> too (the input schema's
	// x-mcp-header, SEP-2243), so that Caddy's header matchers can route
	// or limit requests on it. The endpoint refuses a call whose header
	// disagrees with the argument, or, from a 2026-07-28 client, lacks it.
	// Only for a string, integer or boolean arg. Default: not mirrored.
	MirrorHeader string `json:"mirror_header,omitempty"`
}

// Annotations are the MCP tool annotations. Unset hints are not sent.
type Annotations struct {
	ReadOnly    *bool `json:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	Idempotent  *bool `json:"idempotent,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

// argTypes are the type words of arg lines, with the item type each gives
// an array; schemaType is the JSON Schema type of one. upstream owns both.
var argTypes = upstream.ArgTypes()

func schemaType(word string) (typ, items string) { return upstream.SchemaType(word) }

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func checkToolName(name string) error {
	if !toolNamePattern.MatchString(name) {
		return fmt.Errorf("tool name %q: use 1 to 128 letters, digits, '_', '-' or '.'", name)
	}
	return nil
}

// provisioned is a tool as Provision leaves it: its entry in the tool
// list, its upstream operation and the Caddy settings of its calls.
type provisioned struct {
	mcpTool mcp.Tool
	op      *upstream.Operation
	timeout caddy.Duration
	// shape sizes its results: the tool's max_result_size or the
	// handler's, and the handler's structured_text.
	shape upstream.Shaping
	// refs are the {env.*} and {file.*} placeholders in the text this
	// tool's requests are built from, checked per call (see configRef).
	refs []configRef
	// scopes are the scopes a token must carry to call the tool.
	scopes []string
	// driftLog lets one line a minute through about answers that break
	// the tool's output schema from a document.
	driftLog logLimit
}

// compile checks t and prepares it. handlerHeaders are the handler-wide
// upstream headers, which t.Headers may override field by field.
func (t *Tool) compile(handlerHeaders http.Header) (*provisioned, error) {
	if err := checkToolName(t.Name); err != nil {
		return nil, err
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
	if err := checkResultSize(t.MaxResultSize); err != nil {
		return nil, err
	}
	def := upstream.Definition{
		Name: t.Name, Method: t.Method, Path: t.Path,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Header: upstream.MergeHeaders(handlerHeaders, t.Headers),
		Body:   upstream.BodyMode(t.Body), BodyArg: t.BodyArg,
		Jq: t.Jq,
	}
	for _, a := range t.Args {
		def.Args = append(def.Args, upstream.Arg{
			Name: a.Name, Type: a.Type, Required: a.Required, Description: a.Description,
			In: upstream.Placement(a.In), HeaderName: a.HeaderName, Default: a.Default, Enum: a.Enum,
			WireName: a.WireName, Nullable: a.Nullable, Style: upstream.Style(a.Style), Explode: a.Explode,
			MirrorHeader: a.MirrorHeader,
		})
	}
	for _, k := range slices.Sorted(maps.Keys(t.Query)) {
		for _, v := range t.Query[k] {
			def.Query = append(def.Query, upstream.Field{Name: k, Value: v})
		}
	}
	def.BodyFields = bodyFields(t.BodyFields)
	op, err := upstream.NewOperation(def)
	if err != nil {
		return nil, err
	}
	p := newProvisioned(op, &def, t.Description, t.Title, t.Annotations)
	// An input_schema may carry x-mcp-header itself: mcp-go would check
	// calls against an annotation no client can follow.
	if err := mcp.ValidateParamHeaderAnnotations(&p.mcpTool); err != nil {
		return nil, fmt.Errorf("input_schema: %v", err)
	}
	p.timeout = t.Timeout
	p.shape.MaxSize = t.MaxResultSize
	p.scopes = t.Scopes
	return p, nil
}

// bodyFields are fields as a definition takes them, in key order.
func bodyFields(fields map[string]json.RawMessage) []upstream.BodyField {
	var out []upstream.BodyField
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		out = append(out, upstream.BodyField{Key: k, Value: fields[k]})
	}
	return out
}

// checkResultSize refuses a max_result_size that is negative or too small
// to hold the note that says what was cut.
func checkResultSize(n int64) error {
	if n < 0 || n > 0 && n < upstream.MinResultSize {
		return fmt.Errorf("max_result_size %d: want at least %d bytes (1KiB), room for the note that says what was cut", n, upstream.MinResultSize)
	}
	return nil
}

// newProvisioned is the provisioned form of op, built from def: its entry
// in the tool list, with description, title and annotations, and the
// placeholders of def's text, checked per call.
func newProvisioned(op *upstream.Operation, def *upstream.Definition, description, title string, a *Annotations) *provisioned {
	p := &provisioned{op: op, driftLog: logLimit{every: time.Minute}}
	p.refs = addRefs(p.refs, def.Path)
	for _, f := range def.Header {
		p.refs = addRefs(p.refs, f.Value)
	}
	for _, f := range def.Query {
		p.refs = addRefs(p.refs, f.Value)
	}

	p.mcpTool = mcp.NewToolWithRawSchema(def.Name, description, op.InputSchema())
	p.mcpTool.Title = title
	if len(def.OutputSchema) > 0 {
		p.mcpTool.RawOutputSchema = def.OutputSchema
	}
	p.mcpTool.Annotations.Title = title
	if a != nil {
		p.mcpTool.Annotations.ReadOnlyHint = a.ReadOnly
		p.mcpTool.Annotations.DestructiveHint = a.Destructive
		p.mcpTool.Annotations.IdempotentHint = a.Idempotent
		p.mcpTool.Annotations.OpenWorldHint = a.OpenWorld
	}
	return p
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
