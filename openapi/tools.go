package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Tool is one operation of a document as a tool.
type Tool struct {
	// Name is the tool name: the rename, or the operationId made valid
	// (letters, digits, '_' and '-', at most 64 characters, a short hash
	// ending a cut one), or <method>_<path words>.
	Name string
	// Title is the operation's summary.
	Title string
	// Description is the describe text, or the summary and description,
	// cut at a sentence within MaxDescription.
	Description string
	// OperationID, Method and Path are the operation's, as the document
	// writes them ("" for no operationId).
	OperationID string
	Method      string
	Path        string
	Annotations Annotations
	// Header holds the fixed request headers the document implies: Accept
	// from the media types of the 2xx responses, Content-Type when the
	// body's is not the one its body mode sends.
	Header http.Header
	// Definition is the request a call becomes: Path is the template with
	// argument names in its slots, InputSchema the whole schema of the
	// arguments, Args place its properties (in, header name, wire name,
	// nullable), OutputSchema the object schema of the first 2xx JSON
	// response, Header the caller's headers with Header over them.
	Definition upstream.Definition
	// Operation is Definition prepared for calls: its schemas compiled,
	// its request plan checked. Building it is most of the cost of a
	// document, so it is built once, here.
	Operation *upstream.Operation `json:"-"`
	// Dropped says why each optional parameter the tool cannot send was
	// left out of it.
	Dropped []string `json:",omitempty"`
}

// Annotations are the MCP hints an operation's method implies; unset ones
// are nil.
type Annotations struct {
	ReadOnly    *bool
	Destructive *bool
	Idempotent  *bool
}

// Skipped is an operation that could not become a tool.
type Skipped struct {
	OperationID string
	Method      string
	Path        string
	Reason      string
}

// Result is what a document gave.
type Result struct {
	Tools []Tool
	// Skipped are the selected operations that could not be mapped, with
	// the reason of each.
	Skipped []Skipped
	// Operations counts the document's operations; Selected those the
	// curation took (Tools and Skipped together).
	Operations int
	Selected   int
}

// methods are the operations of a path item in the order tools are made.
var methods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodTrace,
}

// Tools maps the operations c selects to tools, in the order of the
// document's paths (sorted) and methods. header holds the caller's fixed
// upstream headers (placeholders allowed), which each tool's own Header
// overrides field by field; nil for none. An error is only a curation
// that does not fit the document; an operation that cannot be mapped,
// or whose request upstream.NewOperation refuses (a header parameter the
// caller's headers fix, say), is in Result.Skipped with the reason.
func (d *Document) Tools(c Curation, header http.Header) (*Result, error) {
	type entry struct {
		method, path string
		item         *openapi3.PathItem
		op           *openapi3.Operation
	}
	var entries []entry
	paths := d.doc.Paths.Map()
	for _, path := range sortedKeys(paths) {
		item := paths[path]
		if item == nil {
			continue
		}
		for _, method := range methods {
			if op := item.GetOperation(method); op != nil {
				entries = append(entries, entry{method, path, item, op})
			}
		}
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	ops := make([]curated, len(entries))
	for i, e := range entries {
		ops[i] = curated{id: e.op.OperationID, method: e.method, path: e.path, tags: e.op.Tags}
	}
	if err := c.unmatched(ops); err != nil {
		return nil, err
	}

	res := &Result{Operations: len(entries)}
	renamedTo := make(map[string]string, len(c.Rename)) // tool name -> operationId
	for _, id := range sortedKeys(c.Rename) {
		name := c.Rename[id]
		if other, taken := renamedTo[name]; taken {
			return nil, fmt.Errorf("rename %s: tool name %q is already given to %s", id, name, other)
		}
		renamedTo[name] = id
	}
	// Names first, in document order, since a name taken decides the next;
	// then the mapping, which is most of the work (compiling schemas), on
	// every core.
	type job struct {
		entry
		name   string
		tool   *Tool
		reason string
	}
	var jobs []job
	taken := make(map[string]bool)
	for _, e := range entries {
		if !c.selects(e.op.OperationID, e.method, e.path, e.op.Tags) {
			continue
		}
		name, renamed := c.Rename[e.op.OperationID]
		if !renamed || e.op.OperationID == "" {
			name = toolName(e.op.OperationID, e.method, e.path)
			renamed = false
		}
		// A generated name gives way to a rename; a second operation with
		// one operationId (an invalid document), or with one that is the
		// same once made valid, to the first. The name it takes instead
		// may be taken too (an operationId may be any name, a hashed one
		// included): then the hash is of the method, the path and a count.
		base := name
		for try := 0; taken[name] || !renamed && renamedTo[name] != ""; try++ {
			seed := e.method + " " + e.path
			if try > 0 {
				seed += " " + strconv.Itoa(try)
			}
			name = base[:min(len(base), maxToolName-9)] + "_" + shortHash(seed)
		}
		taken[name] = true
		jobs = append(jobs, job{entry: e, name: name})
	}
	var next, written atomic.Int64
	var passed atomic.Pointer[job] // the job whose tool passed MaxDocumentTools
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(jobs) && passed.Load() == nil; i = int(next.Add(1)) - 1 {
				j := &jobs[i]
				if j.reason = d.ownServer(j.item, j.op); j.reason == "" {
					j.tool, j.reason = mapOperation(j.name, j.method, j.path, j.item, j.op, header, c.tuning(j.op.OperationID))
				}
				if j.tool != nil && written.Add(int64(j.tool.size())) > MaxDocumentTools {
					passed.CompareAndSwap(nil, j)
				}
			}
		})
	}
	wg.Wait()
	if j := passed.Load(); j != nil {
		return nil, fmt.Errorf("the tools of the document pass %d MiB of schemas and descriptions in all (at %s %s, whose schemas are %d KiB): select fewer operations with include, exclude or tags",
			MaxDocumentTools>>20, j.method, j.path, j.tool.size()>>10)
	}

	res.Selected = len(jobs)
	for _, j := range jobs {
		if _, tuned := c.Tune[j.op.OperationID]; tuned && j.reason != "" && j.op.OperationID != "" {
			return nil, &OperationError{ID: j.op.OperationID, Err: errors.New(j.reason)}
		}
		if j.reason != "" {
			res.Skipped = append(res.Skipped, Skipped{OperationID: j.op.OperationID, Method: j.method, Path: j.path, Reason: j.reason})
			continue
		}
		if text, ok := c.Describe[j.op.OperationID]; ok && j.op.OperationID != "" {
			j.tool.Description = text
		}
		res.Tools = append(res.Tools, *j.tool)
	}
	return res, nil
}

// tuning is how the operation id is tuned, with its output mode: never
// nil.
func (c *Curation) tuning(id string) *Tuning {
	t := &Tuning{}
	if own := c.Tune[id]; own != nil && id != "" {
		*t = *own
	}
	if t.Output == "" {
		t.Output = c.Output
	}
	if t.Output == "" {
		t.Output = OutputLenient
	}
	return t
}

// MaxDocumentTools bounds the bytes of input and output schemas and
// descriptions that the tools of one document hold together: each is
// within its own bound, and thousands of them must still fit in memory
// once compiled. GitHub's whole document, about 1,200 tools, holds 5 MB.
const MaxDocumentTools = 16 << 20

// size is the bytes of the tool's schemas and description.
func (t *Tool) size() int {
	return len(t.Definition.InputSchema) + len(t.Definition.OutputSchema) + len(t.Description)
}

// ownServer says why an operation whose own servers are not the
// document's cannot be a tool: its tool would send it to the one upstream
// of them all.
func (d *Document) ownServer(item *openapi3.PathItem, op *openapi3.Operation) string {
	servers := item.Servers
	if op.Servers != nil {
		servers = *op.Servers
	}
	if own := firstServer(servers); own != "" && own != d.ServerURL {
		return fmt.Sprintf("the operation has a server of its own (%s); its tool would send it to the upstream of the others", own)
	}
	return ""
}

// operationMapping is one operation's tool as it is built.
type operationMapping struct {
	method  string
	dropped []string   // why each optional parameter left out was
	tune    *Tuning    // never nil: an operation not tuned has an empty one
	conv    *converter // of the input schema
	out     *converter // of the output schema
	props   map[string]any
	req     []string
	args    []upstream.Arg
	used    map[string]bool // argument names
	header  http.Header
	def     upstream.Definition
}

// mapOperation makes the tool of one operation, tuned by tune, or says
// why it cannot.
func mapOperation(name, method, path string, item *openapi3.PathItem, op *openapi3.Operation, header http.Header, tune *Tuning) (*Tool, string) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil, fmt.Sprintf("method %s is not one a tool can use", method)
	}
	m := &operationMapping{
		method: method,
		conv:   newConverter(request),
		out:    newConverter(response),
		tune:   tune,
		props:  make(map[string]any),
		used:   make(map[string]bool),
		header: make(http.Header),
	}
	params, reason := operationParameters(item, op)
	if reason != "" {
		return nil, reason
	}
	pathArgs := make(map[string]string) // wire name -> argument name
	for _, p := range params {
		argName, reason := m.parameter(p)
		if reason != "" {
			if p.Required || p.In == openapi3.ParameterInPath {
				return nil, reason
			}
			// An optional parameter the tool cannot send is left out: the
			// operation works without it.
			m.dropped = append(m.dropped, reason)
			continue
		}
		if argName != "" && p.In == openapi3.ParameterInPath {
			pathArgs[p.Name] = argName
		}
	}
	template, reason := pathTemplate(path, pathArgs)
	if reason != "" {
		return nil, reason
	}
	if reason := m.body(op.RequestBody); reason != "" {
		return nil, reason
	}
	output, accept := m.responses(op.Responses)

	schema := map[string]any{"type": "object", "properties": m.props, "additionalProperties": false}
	if len(m.req) > 0 {
		schema["required"] = m.req
	}
	if reason := m.conv.passed("input", 0); reason != "" {
		return nil, reason // before writing it out
	}
	input, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Sprintf("the input schema has no JSON form: %v", err)
	}
	if reason := m.conv.passed("input", len(input)); reason != "" {
		return nil, reason
	}
	if accept != "" {
		m.header.Set("Accept", accept)
	}
	def := m.def
	def.Name, def.Method, def.Path = name, method, template
	def.Args, def.InputSchema = m.args, input
	def.Jq, def.Query, def.BodyFields = tune.Jq, tune.Query, tune.BodyFields
	// The document's response schemas drift from the API's answers: an
	// answer that breaks the output schema still reaches the model.
	def.Drift = true
	// Most of a large document's tools are never called: their schemas,
	// which the converter writes to compile, are compiled when first used.
	def.CompileOnUse = true
	switch {
	case tune.OutputSchema != nil:
		output, def.OutputSchema = nil, tune.OutputSchema
	case tune.Jq != "" || tune.Output == OutputOff:
		output = nil // the document does not describe a filter's output
	case output != nil && tune.Output == OutputLenient:
		output = lenient(output)
	}
	if output != nil {
		if reason := m.out.passed("output", 0); reason != "" {
			return nil, reason
		}
		if def.OutputSchema, err = json.Marshal(output); err != nil {
			return nil, fmt.Sprintf("the output schema has no JSON form: %v", err)
		}
		if reason := m.out.passed("output", len(def.OutputSchema)); reason != "" {
			return nil, reason
		}
	}
	for field, values := range tune.Header {
		m.header[http.CanonicalHeaderKey(field)] = values
	}
	if len(m.header) == 0 {
		m.header = nil
	}
	def.Header = upstream.MergeHeaders(header, m.header)
	// The upstream package is the judge of what it can send: a tool it
	// refuses is skipped with its reason rather than left to fail a load.
	operation, err := upstream.NewOperation(def)
	if err != nil {
		return nil, err.Error()
	}
	return &Tool{
		Name:        name,
		Title:       strings.TrimSpace(op.Summary),
		Description: description(op, method, path),
		OperationID: op.OperationID,
		Method:      method,
		Path:        path,
		Annotations: methodAnnotations(method),
		Dropped:     m.dropped,
		Header:      m.header,
		Definition:  def,
		Operation:   operation,
	}, ""
}

// operationParameters are the path item's parameters with the
// operation's replacing those of the same name and place.
func operationParameters(item *openapi3.PathItem, op *openapi3.Operation) ([]*openapi3.Parameter, string) {
	var out []*openapi3.Parameter
	index := make(map[string]int)
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				return nil, "a parameter has no definition"
			}
			p := ref.Value
			key := p.In + " " + p.Name
			if i, ok := index[key]; ok {
				out[i] = p
				continue
			}
			index[key] = len(out)
			out = append(out, p)
		}
	}
	return out, ""
}

// parameter adds a path, query or header parameter as an argument and
// returns its name; "" with no reason for one that is not sent.
func (m *operationMapping) parameter(p *openapi3.Parameter) (string, string) {
	switch p.In {
	case openapi3.ParameterInPath, openapi3.ParameterInQuery, openapi3.ParameterInHeader:
	case openapi3.ParameterInCookie:
		return "", fmt.Sprintf("cookie parameter %q: cookies are not sent", p.Name)
	default:
		return "", fmt.Sprintf("parameter %q is in %q, not in a path, query or header", p.Name, p.In)
	}
	if p.Name == "" {
		return "", fmt.Sprintf("a %s parameter has no name", p.In)
	}
	if p.In == openapi3.ParameterInHeader {
		// OpenAPI: these header parameters are ignored; the media types
		// and the security schemes say what goes there.
		switch http.CanonicalHeaderKey(p.Name) {
		case "Accept", "Content-Type", "Authorization":
			return "", ""
		}
	}
	if p.In == openapi3.ParameterInQuery && m.tune.fixesQuery(p.Name) || p.In == openapi3.ParameterInHeader && m.tune.fixesHeader(p.Name) {
		return "", "" // the configuration fixes it
	}
	schema := p.Schema
	var style upstream.Style
	var explode *bool
	if schema == nil || schema.Value == nil {
		// A query parameter whose value is an object's JSON text, which
		// upstream sends for an object with no style (Directus's filter).
		var reason string
		if schema, reason = jsonQueryObject(p); reason != "" {
			return "", reason
		}
	} else {
		var reason string
		if style, explode, reason = parameterStyle(p, schema.Value, baseType(schema.Value)); reason != "" {
			return "", reason
		}
	}

	name := m.claim(argName(p.Name))
	m.conv.charge(len(name) + 4)
	prop := m.conv.convert(schema)
	if p.Description != "" {
		prop["description"] = plainLinks(p.Description)
		m.conv.charge(len(p.Description))
	}
	if p.Deprecated {
		prop["deprecated"] = true
	}
	m.props[name] = dropUnfitDefault(prop)
	if p.Required || p.In == openapi3.ParameterInPath {
		m.req = append(m.req, name)
	}
	// Beside the input schema, which says whether null is a value, an arg
	// only places the property; upstream leaves a null out of a query and
	// a header.
	a := upstream.Arg{Name: name, Style: style, Explode: explode}
	switch p.In {
	case openapi3.ParameterInPath:
		a.In = upstream.InPath // the path template is rewritten to this name
	case openapi3.ParameterInQuery:
		a.In = upstream.InQuery
		if name != p.Name {
			a.WireName = p.Name
		}
	case openapi3.ParameterInHeader:
		a.In, a.HeaderName = upstream.InHeader, p.Name
	}
	m.args = append(m.args, a)
	return name, ""
}

// jsonQueryObject is the schema of a query parameter described by
// content rather than a schema, when its one media type is JSON and its
// schema an object: the argument is an object, sent as its JSON text.
// Anything else described by content is not sent, and reason says so.
func jsonQueryObject(p *openapi3.Parameter) (*openapi3.SchemaRef, string) {
	reason := fmt.Sprintf("%s parameter %q is described by content, not a schema", p.In, p.Name)
	if p.In != openapi3.ParameterInQuery || len(p.Content) != 1 {
		return nil, reason
	}
	for k, mt := range p.Content {
		t, _, err := mime.ParseMediaType(k)
		if err != nil || !isJSON(t) || mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
			return nil, reason
		}
		if baseType(mt.Schema.Value) != "object" {
			return nil, reason + " (only JSON objects are sent as JSON text)"
		}
		return mt.Schema, ""
	}
	return nil, reason
}

// unsentCollectionFormat is the extension in which loadSwagger keeps a
// Swagger collectionFormat that OpenAPI 3 cannot say.
const unsentCollectionFormat = "x-caddy-mcp-collection-format"

// parameterStyle says how upstream writes the argument of p, as the
// document says the parameter is sent: the style and explode of its
// upstream.Arg (none for a scalar, or for a query array in style form
// with explode, the key repeated, which is upstream's default), or the
// reason it cannot be sent. A schema that does not say its type (a
// oneOf, a union) may take an array or an object, so it is styled too.
//
// The query takes arrays and objects in style form (exploded or not),
// spaceDelimited and pipeDelimited, and objects in deepObject; the path
// and headers take them in style simple. OpenAPI leaves some pairs
// undefined, which are read as the tools that generate clients read
// them: spaceDelimited and pipeDelimited with explode are the key
// repeated, and deepObject is exploded whatever explode says (its default
// would be false). Only one level is written: arrays of arrays or of
// objects are skipped, and an object property that is itself an array or
// an object is refused per call by upstream.
func parameterStyle(p *openapi3.Parameter, s *openapi3.Schema, base string) (upstream.Style, *bool, string) {
	if format, ok := p.Extensions[unsentCollectionFormat].(string); ok {
		return "", nil, fmt.Sprintf("%s parameter %q: collectionFormat %s is not sent", p.In, p.Name, format)
	}
	style := p.Style
	if base == "array" && s.Items != nil && s.Items.Value != nil {
		if item := baseType(s.Items.Value); item == "array" || item == "object" {
			return "", nil, fmt.Sprintf("%s parameter %q: an array of %ss is not sent", p.In, p.Name, item)
		}
	}
	switch p.In {
	case openapi3.ParameterInPath, openapi3.ParameterInHeader:
		if style != "" && style != openapi3.SerializationSimple {
			return "", nil, fmt.Sprintf("%s parameter %q: style %s is not sent", p.In, p.Name, style)
		}
		if base == "array" || base == "object" || base == "" {
			return upstream.StyleSimple, p.Explode, ""
		}
	case openapi3.ParameterInQuery:
		if style == "" {
			style = openapi3.SerializationForm
		}
		explode := style == openapi3.SerializationForm
		if p.Explode != nil {
			explode = *p.Explode
		}
		if base != "array" && base != "object" && base != "" {
			return "", nil, "" // a scalar reads the same in every style
		}
		switch style {
		case openapi3.SerializationForm:
			if base == "array" && explode {
				return "", nil, ""
			}
			return upstream.StyleForm, &explode, ""
		case openapi3.SerializationSpaceDelimited, openapi3.SerializationPipeDelimited:
			if explode {
				if base == "array" {
					return "", nil, ""
				}
				return upstream.StyleForm, nil, ""
			}
			return upstream.Style(style), nil, ""
		case openapi3.SerializationDeepObject:
			if base == "array" {
				return "", nil, fmt.Sprintf("query parameter %q: an array in style deepObject is not sent (OpenAPI defines deepObject for objects)", p.Name)
			}
			return upstream.StyleDeepObject, nil, ""
		}
		return "", nil, fmt.Sprintf("query parameter %q: style %s is not sent", p.Name, style)
	}
	return "", nil, ""
}

// claim returns name, or name with a number added when an argument of the
// operation already has it.
func (m *operationMapping) claim(name string) string {
	if !m.used[name] {
		m.used[name] = true
		return name
	}
	for i := 2; ; i++ {
		suffix := "_" + strconv.Itoa(i)
		n := name[:min(len(name), maxArgName-len(suffix))] + suffix
		if !m.used[n] {
			m.used[n] = true
			return n
		}
	}
}

// pathTemplate rewrites the document's path with argument names in its
// slots; every slot must be a declared path parameter and every path
// parameter a slot.
func pathTemplate(path string, args map[string]string) (string, string) {
	if !strings.HasPrefix(path, "/") {
		return "", fmt.Sprintf("path %q does not start with /", path)
	}
	var b strings.Builder
	seen := make(map[string]bool)
	rest := path
	for {
		open := strings.IndexAny(rest, "{}\\")
		if open < 0 {
			b.WriteString(rest)
			break
		}
		if rest[open] != '{' {
			return "", fmt.Sprintf("path %q: a %q outside a {parameter}", path, rest[open])
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return "", fmt.Sprintf("path %q: unclosed '{'", path)
		}
		wire := rest[open+1 : open+end]
		name, ok := args[wire]
		if !ok {
			return "", fmt.Sprintf("path %q: {%s} is not a declared path parameter", path, wire)
		}
		seen[wire] = true
		b.WriteString(rest[:open])
		b.WriteString("{" + name + "}")
		rest = rest[open+end+1:]
	}
	for _, wire := range sortedKeys(args) {
		if !seen[wire] {
			return "", fmt.Sprintf("path parameter %q is not in the path %s", wire, path)
		}
	}
	return b.String(), ""
}

// body adds the request body: a JSON object's properties as arguments, a
// URL-encoded form's likewise, any other JSON as the one argument body.
func (m *operationMapping) body(ref *openapi3.RequestBodyRef) string {
	if ref == nil {
		return ""
	}
	if ref.Value == nil {
		return "the request body has no definition"
	}
	rb := ref.Value
	if len(rb.Content) == 0 {
		return ""
	}
	mediaType, mt, form := bodyMediaType(rb.Content)
	if mt == nil {
		return fmt.Sprintf("request body %s is not sent (only JSON and URL-encoded forms are)", strings.Join(sortedKeys(rb.Content), ", "))
	}
	if reason := m.contentType(mediaType, form); reason != "" {
		return reason
	}
	var s *openapi3.Schema
	if mt.Schema != nil {
		s = mt.Schema.Value
	}
	if form {
		m.def.Body = upstream.BodyForm
		if s == nil || len(s.Properties) == 0 {
			return fmt.Sprintf("request body %s has no properties to send", mediaType)
		}
		for _, prop := range sortedKeys(s.Properties) {
			if p := s.Properties[prop]; p != nil && p.Value != nil {
				if base := baseType(p.Value); base == "object" || base == "array" && p.Value.Items != nil && p.Value.Items.Value != nil && baseType(p.Value.Items.Value) == "object" {
					return fmt.Sprintf("form property %q is an object; a form body sends only scalars and arrays of them", prop)
				}
			}
		}
		m.bodyProperties(s)
		return ""
	}
	if s != nil && isPlainObject(s) {
		m.def.Body = upstream.BodyJSON
		m.bodyProperties(s)
		return ""
	}
	name := m.claim("body")
	prop := m.conv.convert(mt.Schema)
	if rb.Description != "" {
		prop["description"] = plainLinks(rb.Description)
		m.conv.charge(len(rb.Description))
	}
	m.props[name] = dropUnfitDefault(prop)
	if rb.Required {
		m.req = append(m.req, name)
	}
	m.args = append(m.args, upstream.Arg{Name: name, In: upstream.InBody})
	m.def.Body, m.def.BodyArg = upstream.BodyArg, name
	return ""
}

// dropUnfitDefault removes a property's default that its own type or
// enum refuses: the request building sends a default for an omitted
// argument, and the arguments are validated with it, so such a default
// would fail every call that leaves the argument out.
func dropUnfitDefault(prop map[string]any) map[string]any {
	d, ok := prop["default"]
	if !ok {
		return prop
	}
	fits := true
	switch t := prop["type"].(type) {
	case string:
		fits = jsonTypeIs(d, t)
	case []string:
		fits = slices.ContainsFunc(t, func(t string) bool { return jsonTypeIs(d, t) })
	}
	if enum, ok := prop["enum"].([]any); ok && fits {
		fits = slices.ContainsFunc(enum, func(v any) bool { return reflect.DeepEqual(v, d) })
	}
	if !fits {
		delete(prop, "default")
	}
	return prop
}

// jsonTypeIs reports whether a decoded JSON value is of a JSON Schema type.
func jsonTypeIs(v any, typ string) bool {
	switch v := v.(type) {
	case nil:
		return typ == "null"
	case bool:
		return typ == "boolean"
	case string:
		return typ == "string"
	case float64:
		return typ == "number" || typ == "integer" && v == math.Trunc(v)
	case int, int64, uint64:
		return typ == "number" || typ == "integer"
	case []any:
		return typ == "array"
	case map[string]any:
		return typ == "object"
	}
	return true // a type of the YAML decoder's: leave it to the validator
}

// isPlainObject reports whether s is an object schema whose properties
// can stand as arguments: declared properties, no composition, not null.
func isPlainObject(s *openapi3.Schema) bool {
	base := baseType(s)
	return (base == "object" || base == "" && s.Type == nil) && len(s.Properties) > 0 &&
		len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && s.Not == nil && !nullable(s)
}

// bodyProperties adds the properties of a body object as body arguments;
// one whose name an argument already has becomes body_<name>.
func (m *operationMapping) bodyProperties(s *openapi3.Schema) {
	// The body is the outermost schema: a property that refers back to
	// it is the cycle.
	m.conv.path = append(m.conv.path, s)
	defer func() { m.conv.path = m.conv.path[:len(m.conv.path)-1] }()
	for _, wire := range sortedKeys(s.Properties) {
		ref := s.Properties[wire]
		if m.conv.leftOut(ref) || m.tune.fixesBody(wire) {
			continue
		}
		name := argName(wire)
		if m.used[name] {
			name = argName("body_" + wire)
		}
		name = m.claim(name)
		m.conv.charge(len(name) + 4)
		m.props[name] = dropUnfitDefault(m.conv.convert(ref))
		if slices.Contains(s.Required, wire) {
			m.req = append(m.req, name)
		}
		a := upstream.Arg{Name: name, In: upstream.InBody}
		if name != wire {
			a.WireName = wire
		}
		m.args = append(m.args, a)
	}
}

// bodyMediaType picks the body's media type: application/json, another
// JSON type, a URL-encoded form, or any type (*/*, application/*: what
// Swagger 2.0 documents without consumes give), sent as JSON, in that
// order.
func bodyMediaType(content openapi3.Content) (string, *openapi3.MediaType, bool) {
	keys := sortedKeys(content)
	for _, pass := range []func(string) bool{
		func(t string) bool { return t == "application/json" },
		isJSON,
		func(t string) bool { return t == "application/x-www-form-urlencoded" },
		isWildcard,
	} {
		for _, k := range keys {
			if t, _, err := mime.ParseMediaType(k); err == nil && pass(t) && content[k] != nil {
				return k, content[k], t == "application/x-www-form-urlencoded"
			}
		}
	}
	return "", nil, false
}

func isWildcard(mediaType string) bool {
	return mediaType == "*/*" || mediaType == "application/*"
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// contentType sets the Content-Type header when the body's media type is
// not the one the body mode sends.
func (m *operationMapping) contentType(mediaType string, form bool) string {
	want := "application/json"
	if form {
		want = "application/x-www-form-urlencoded"
	}
	if t, _, _ := mime.ParseMediaType(mediaType); t == want || isWildcard(t) {
		if t == mediaType || isWildcard(t) {
			return ""
		}
	}
	if !headerSafe(mediaType) {
		return fmt.Sprintf("request body media type %q cannot be sent as a header", mediaType)
	}
	m.header.Set("Content-Type", mediaType)
	return ""
}

// responses returns the output schema (the object schema of the first
// 2xx JSON response) and the Accept header (the 2xx media types).
func (m *operationMapping) responses(responses *openapi3.Responses) (map[string]any, string) {
	if responses == nil {
		return nil, ""
	}
	var codes []string
	for _, code := range responses.Keys() {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	slices.SortFunc(codes, func(a, b string) int {
		// 2XX is the range, after every code in it.
		return strings.Compare(strings.ToUpper(strings.ReplaceAll(a, "X", "~")), strings.ToUpper(strings.ReplaceAll(b, "X", "~")))
	})
	var output map[string]any
	var accept []string
	first := true
	for _, code := range codes {
		ref := responses.Value(code)
		if ref == nil || ref.Value == nil {
			continue
		}
		for _, k := range sortedKeys(ref.Value.Content) {
			t, _, err := mime.ParseMediaType(k)
			if err != nil || !headerSafe(k) || slices.Contains(accept, k) {
				continue
			}
			accept = append(accept, k)
			mt := ref.Value.Content[k]
			if first && isJSON(t) && mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
				if s := mt.Schema.Value; baseType(s) == "object" && !nullable(s) {
					output = m.out.convert(mt.Schema)
				}
			}
		}
		if len(ref.Value.Content) > 0 {
			first = false
		}
	}
	// JSON first: it is what results map best.
	slices.SortStableFunc(accept, func(a, b string) int {
		ja, jb := isJSONMediaType(a), isJSONMediaType(b)
		switch {
		case ja && !jb:
			return -1
		case jb && !ja:
			return 1
		}
		return 0
	})
	return output, strings.Join(accept, ", ")
}

func isJSONMediaType(v string) bool {
	t, _, err := mime.ParseMediaType(v)
	return err == nil && isJSON(t)
}

// headerSafe reports whether a media type from the document can be sent
// as a fixed header: a valid header value, with nothing a placeholder
// could read.
func headerSafe(v string) bool {
	return v != "" && !strings.ContainsAny(v, "{}\r\n\x00") && strings.TrimSpace(v) == v
}

func description(op *openapi3.Operation, method, path string) string {
	summary, desc := strings.TrimSpace(op.Summary), strings.TrimSpace(op.Description)
	text := method + " " + path
	switch {
	case summary != "" && desc != "" && !strings.HasPrefix(desc, summary):
		text = summary + "\n\n" + desc
	case desc != "":
		text = desc
	case summary != "":
		text = summary
	}
	return fitDescription(plainLinks(text), MaxDescription)
}

// markdownLink is a Markdown link to a URL or a site path.
var markdownLink = regexp.MustCompile(`\[([^\]\n]*)\]\((?:https?://|/)[^)\s]*\)`)

// plainLinks keeps the text of the Markdown links in text and leaves out
// their URLs, which a model cannot follow: in GitHub's document they are
// a tenth of what ten tools list.
func plainLinks(text string) string {
	if !strings.Contains(text, "](") {
		return text
	}
	return markdownLink.ReplaceAllString(text, "$1")
}

// MaxDescription bounds a description the import makes: Claude Code, and
// the clients that copy it, show 2 KB of each tool's description.
const MaxDescription = 2048

// fitDescription is text within max bytes: whole when it fits, else cut
// after the last sentence or paragraph that fits, or, when not even the
// first does, at a word, and ended with an ellipsis.
func fitDescription(text string, max int) string {
	if len(text) <= max {
		return text
	}
	room := max - len(ellipsis)
	head := text[:utf8Prefix(text, room)]
	cut := -1
	for _, end := range []string{". ", ".\n", "\n\n", "! ", "? "} {
		if i := strings.LastIndex(head, end); i >= 0 && i+1 > cut {
			cut = i + 1
		}
	}
	if cut < room/2 { // no sentence ends in the first half: cut at a word
		if i := strings.LastIndexAny(head, " \n"); i > 0 {
			cut = i
		} else {
			cut = len(head)
		}
	}
	return strings.TrimSpace(head[:cut]) + ellipsis
}

// ellipsis ends a description that was cut.
const ellipsis = "…"

// utf8Prefix is the length of the longest prefix of s of at most n bytes
// that ends at a character boundary.
func utf8Prefix(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

func methodAnnotations(method string) Annotations {
	yes := func() *bool { v := true; return &v }
	var a Annotations
	switch method {
	case http.MethodGet, http.MethodHead:
		a.ReadOnly = yes()
	case http.MethodDelete:
		a.Destructive, a.Idempotent = yes(), yes()
	case http.MethodPut:
		a.Idempotent = yes()
	}
	return a
}
