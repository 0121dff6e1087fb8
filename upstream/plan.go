package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Placement says where an argument goes in the upstream request.
type Placement string

// Argument placements.
const (
	InPath   Placement = "path"
	InQuery  Placement = "query"
	InHeader Placement = "header"
	InBody   Placement = "body"
)

// BodyMode says how the body arguments are encoded.
type BodyMode string

// Body modes.
const (
	BodyJSON BodyMode = "json" // a JSON object of the body arguments
	BodyForm BodyMode = "form" // application/x-www-form-urlencoded
	BodyArg  BodyMode = "arg"  // one argument's value is the whole JSON body
)

// planArg is one argument and where it goes.
type planArg struct {
	Name string
	// Wire is the argument's name in the request: the query key, the body
	// key or the path template's slot; default Name. In a header, the
	// field is HeaderName or, without one, Wire.
	Wire string
	// Type is the argument's JSON Schema type ("string", "array", ...), or
	// "" when the schema does not say; Items is the item type of an array.
	Type  string
	Items string
	// In is where the argument goes; "" picks the default: path when the
	// path template names its wire name, else query for GET, HEAD and
	// DELETE, else body.
	In Placement
	// HeaderName is the header field for In == InHeader; default Wire.
	HeaderName string
	// Default is sent when the argument is omitted; nil for none.
	Default any
	// NullDefault marks a Default of null: an omitted argument is sent as
	// null, as a given null is.
	NullDefault bool
	// Nullable makes null a value; a path slot cannot hold it.
	Nullable bool
	// Style is how an array or object value is written; "" as before
	// styles existed. Explode is resolved: the style's default when the
	// definition left it unset.
	Style   Style
	Explode bool
	// explodeSet is the explode the definition gave, nil for none.
	explodeSet *bool
}

// Field is a fixed header or query parameter from the configuration.
type Field struct {
	Name  string
	Value string
}

// MergeHeaders returns the handler's headers with the tool's fields
// replacing those of the same name, in a stable order.
func MergeHeaders(handler, tool http.Header) []Field {
	merged := make(http.Header, len(handler)+len(tool))
	for k, v := range handler {
		merged[http.CanonicalHeaderKey(k)] = v
	}
	for k, v := range tool {
		merged[http.CanonicalHeaderKey(k)] = v
	}
	var out []Field
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		for _, v := range merged[k] {
			out = append(out, Field{Name: k, Value: v})
		}
	}
	return out
}

// planSpec is everything needed to turn an operation's arguments into a
// request.
type planSpec struct {
	Method string
	Path   string
	Args   []planArg
	Query  []Field
	Header []Field
	Body   BodyMode
	// BodyArg names the argument sent as the whole body with Body == BodyArg.
	BodyArg    string
	BodyFields []BodyField
}

// requestPlan turns the arguments of one call into one HTTP request. It is
// built once from a planSpec and is safe for concurrent use.
type requestPlan struct {
	method   string
	pathText string
	path     Template
	args     map[string]*planArg
	defaults []*planArg
	query    []fixedField
	header   []fixedField
	body     BodyMode
	bodyArg  string
	// bodyFields are the fixed members of the JSON body, compacted, by key.
	bodyFields map[string]json.RawMessage
	// extra is where arguments that are not declared go (a free-form
	// input_schema may allow them).
	extra Placement
	// hasBody is set when a declared argument goes in the body: the body
	// is then sent even when every body argument is omitted.
	hasBody bool
	// keys are the declared arguments by the query or body key they are
	// sent under, which an undeclared argument must not take.
	keys map[wireKey]*planArg
	// styledPath names the path arguments in style simple, whose arrays
	// and objects pathArgs prepares for the template.
	styledPath []string
}

// wireKey is a key of the query or of the body.
type wireKey struct {
	in  Placement
	key string
}

type fixedField struct {
	name  string
	value Text
}

var argHeaderForbidden = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// PartError is a fault of a definition that lies in one part of it: its
// path, or one argument, so that a configuration can point at that line.
type PartError struct {
	Arg string // the argument; empty for the path
	Err error
}

func (e *PartError) Error() string { return e.Err.Error() }
func (e *PartError) Unwrap() error { return e.Err }

func pathError(err error) error             { return &PartError{Err: err} }
func argError(name string, err error) error { return &PartError{Arg: name, Err: err} }

// newRequestPlan checks spec and prepares it for calls.
func newRequestPlan(spec planSpec) (*requestPlan, error) {
	method := strings.ToUpper(spec.Method)
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead:
	default:
		return nil, fmt.Errorf("method %q is not one of get, post, put, patch, delete, head", spec.Method)
	}
	if !strings.HasPrefix(spec.Path, "/") {
		return nil, pathError(fmt.Errorf("path %q must start with /", spec.Path))
	}
	if strings.ContainsAny(spec.Path, "?#") {
		return nil, pathError(fmt.Errorf("path %q: put query parameters in query lines or arguments, not in the path", spec.Path))
	}
	p := &requestPlan{
		method:   method,
		pathText: spec.Path,
		args:     make(map[string]*planArg, len(spec.Args)),
		body:     spec.Body,
	}
	if p.body == "" {
		p.body = BodyJSON
	}
	p.extra = InBody
	if method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete {
		p.extra = InQuery
	}
	byWire := make(map[string][]*planArg, len(spec.Args))
	for i := range spec.Args {
		a := spec.Args[i]
		if a.Name == "" {
			return nil, fmt.Errorf("argument without a name")
		}
		if _, dup := p.args[a.Name]; dup {
			return nil, fmt.Errorf("argument %q is declared twice", a.Name)
		}
		if a.Wire != "" {
			if a.HeaderName != "" {
				return nil, argError(a.Name, fmt.Errorf("argument %q: name and header_name both name its header field; keep name", a.Name))
			}
			if err := checkWireName(a.Wire); err != nil {
				return nil, argError(a.Name, fmt.Errorf("argument %q: wire name %q: %v", a.Name, a.Wire, err))
			}
		} else {
			a.Wire = a.Name
		}
		p.args[a.Name] = &a
		byWire[a.Wire] = append(byWire[a.Wire], &a)
	}
	// A slot names a wire name. An argument's own name in a slot, when the
	// argument has another wire name, is taken here to say so below.
	path, err := ParseTemplate(spec.Path, func(name string) bool { return byWire[name] != nil || p.args[name] != nil })
	if err != nil {
		return nil, pathError(err)
	}
	slotArg := make(map[string]string, len(path.Slots()))
	for _, slot := range path.Slots() {
		if _, done := slotArg[slot]; done {
			continue
		}
		a, err := slotOwner(slot, spec.Path, byWire[slot], p.args[slot])
		if err != nil {
			return nil, err
		}
		a.In = InPath
		slotArg[slot] = a.Name
	}
	p.path = path.bound(slotArg)
	headerNames := make(map[string]string)
	for _, f := range spec.Header {
		name := http.CanonicalHeaderKey(f.Name)
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("invalid header field name %q", f.Name)
		}
		p.header = append(p.header, fixedField{name: name, value: NewText(f.Value)})
		headerNames[name] = ""
	}
	for _, f := range spec.Query {
		if f.Name == "" {
			return nil, fmt.Errorf("query parameter without a name")
		}
		p.query = append(p.query, fixedField{name: f.Name, value: NewText(f.Value)})
	}
	p.keys = make(map[wireKey]*planArg)
	for _, name := range argNames(spec.Args) {
		a := p.args[name]
		placed := a.In != ""
		switch {
		case a.In == "":
			a.In = p.extra
		case a.In == InPath && slotArg[a.Wire] != a.Name:
			return nil, argError(a.Name, fmt.Errorf("argument %q is placed in the path, but the path %q has no {%s}", a.Name, spec.Path, a.Wire))
		}
		switch a.In {
		case InPath, InHeader, InQuery, InBody:
		default:
			return nil, argError(a.Name, fmt.Errorf("argument %q: unknown placement %q (want path, query, header or body)", a.Name, a.In))
		}
		if a.In == InPath && a.Nullable {
			return nil, argError(a.Name, fmt.Errorf("argument %q is nullable, but a path cannot hold null", a.Name))
		}
		if err := a.checkStyle(placed, method); err != nil {
			return nil, argError(a.Name, err)
		}
		if a.In == InPath && a.Style == StyleSimple {
			p.styledPath = append(p.styledPath, a.Name)
		}
		if a.In == InHeader {
			field := a.HeaderName
			if field == "" {
				field = a.Wire
			}
			field = http.CanonicalHeaderKey(field)
			if !httpguts.ValidHeaderFieldName(field) {
				return nil, argError(a.Name, fmt.Errorf("argument %q: invalid header field name %q", a.Name, field))
			}
			if argHeaderForbidden[field] {
				return nil, argError(a.Name, fmt.Errorf("argument %q: header %s cannot be set by an argument", a.Name, field))
			}
			if other, taken := headerNames[field]; taken {
				if other == "" {
					return nil, argError(a.Name, fmt.Errorf("argument %q: header %s is already set by a fixed header", a.Name, field))
				}
				return nil, argError(a.Name, fmt.Errorf("argument %q: header %s is already set by argument %q", a.Name, field, other))
			}
			headerNames[field] = a.Name
			a.HeaderName, a.Wire = field, field
		} else if a.HeaderName != "" {
			return nil, argError(a.Name, fmt.Errorf("argument %q: header_name goes only with 'in header'", a.Name))
		}
		if a.In == InQuery || a.In == InBody {
			key := wireKey{a.In, a.Wire}
			if other := p.keys[key]; other != nil {
				return nil, argError(a.Name, fmt.Errorf("argument %q: argument %q already goes in the %s as %s", a.Name, other.Name, a.In, a.Wire))
			}
			p.keys[key] = a
		}
		if a.In == InBody {
			p.hasBody = true
			if p.body == BodyForm && a.Type == "object" {
				return nil, argError(a.Name, fmt.Errorf("argument %q: object arguments cannot go in a form body", a.Name))
			}
		}
		if a.Default != nil || a.NullDefault {
			p.defaults = append(p.defaults, a)
		}
	}
	switch p.body {
	case BodyJSON, BodyForm:
		if spec.BodyArg != "" {
			return nil, fmt.Errorf("body %s takes no argument name", p.body)
		}
	case BodyArg:
		a := p.args[spec.BodyArg]
		if a == nil {
			return nil, fmt.Errorf("body arg %q names no argument", spec.BodyArg)
		}
		if a.In != InBody {
			return nil, fmt.Errorf("body arg %q: the argument is placed in the %s", spec.BodyArg, a.In)
		}
		for _, other := range p.args {
			if other.In == InBody && other.Name != a.Name {
				return nil, fmt.Errorf("body arg %q sends one argument as the whole body, but %q is also placed in the body", a.Name, other.Name)
			}
		}
		p.bodyArg = a.Name
		p.hasBody = true
	default:
		return nil, fmt.Errorf("unknown body mode %q (want json, form or arg)", p.body)
	}
	if err := p.fixBodyFields(spec.BodyFields); err != nil {
		return nil, err
	}
	fixed := make(url.Values, len(p.query))
	for _, f := range p.query {
		fixed[f.name] = nil
	}
	for _, name := range argNames(spec.Args) {
		if key, taken := fixedKey(p.args[name].Wire, fixed); taken && p.sendsKey(p.args[name]) {
			return nil, argError(name, fmt.Errorf("argument %q: the query parameter %s is fixed by a query line, and an argument cannot add to it", name, key))
		}
	}
	return p, nil
}

// slotOwner returns the argument that fills the slot {slot} of path: of
// those named on the wire as slot (candidates), the one not placed
// elsewhere. An API may name a path parameter and a query parameter
// alike, so one other may be placed in the query. named is the argument
// whose own name is slot, when no wire name is.
func slotOwner(slot, path string, candidates []*planArg, named *planArg) (*planArg, error) {
	if len(candidates) == 0 {
		return nil, argError(named.Name, fmt.Errorf("argument %q goes in the path as {%s}, its wire name, but the path %q has {%s}", named.Name, named.Wire, path, slot))
	}
	var owner *planArg
	for _, a := range candidates {
		if a.In != "" && a.In != InPath {
			continue
		}
		if owner != nil {
			return nil, argError(a.Name, fmt.Errorf("argument %q: argument %q already goes in the path as {%s}", a.Name, owner.Name, slot))
		}
		owner = a
	}
	if owner == nil {
		a := candidates[0]
		return nil, argError(a.Name, fmt.Errorf("argument %q is in the path %q but placed in %s", a.Name, path, a.In))
	}
	return owner, nil
}

// checkWireName refuses a wire name no request can carry as it is
// written: one with a control character or a byte that is not UTF-8,
// which would be escaped in a query or a body, and read differently by
// different servers in a header or a path.
func checkWireName(wire string) error {
	if controls(wire) > 0 {
		return errors.New("a control character or a byte that is not UTF-8")
	}
	return nil
}

// keyOf returns where the argument name goes and under which key: a
// declared argument under its wire name, another where the default
// placement puts it, under its own name. a is nil for an undeclared one.
func (p *requestPlan) keyOf(name string) (a *planArg, in Placement, key string) {
	if a = p.args[name]; a != nil {
		return a, a.In, a.Wire
	}
	return nil, p.extra, name
}

// sendsKey reports whether the argument a (nil: an undeclared one) goes on
// the wire under its own name as a key a server may read as a query
// parameter: in the query, or in a JSON or form body, which many
// frameworks merge with the query (Rails params, PHP $_REQUEST, servlet
// request parameters).
func (p *requestPlan) sendsKey(a *planArg) bool {
	in := p.extra
	if a != nil {
		in = a.In
	}
	switch in {
	case InQuery:
		return true
	case InBody:
		return p.bodyArg == ""
	}
	return false
}

// fixedKey reports whether name is one of the keys of fixed, and which.
// Case is ignored, as some servers ignore it when they read a query.
func fixedKey(name string, fixed url.Values) (string, bool) {
	if _, ok := fixed[name]; ok {
		return name, true
	}
	for key := range fixed {
		if strings.EqualFold(key, name) {
			return key, true
		}
	}
	return "", false
}

// fixBodyFields checks and keeps the fixed members of the JSON body: in
// a JSON body of a request that has one, each key once, valid JSON, and
// no declared argument sent under the same key.
func (p *requestPlan) fixBodyFields(fields []BodyField) error {
	if len(fields) == 0 {
		return nil
	}
	if p.method == http.MethodGet || p.method == http.MethodHead {
		return fmt.Errorf("body_field: a %s request has no body", p.method)
	}
	if p.body != BodyJSON {
		return fmt.Errorf("body_field: fixed members go in a JSON body, and this one is body %s", p.body)
	}
	p.bodyFields = make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		if f.Key == "" {
			return fmt.Errorf("body_field: the key is empty")
		}
		if _, dup := p.bodyFields[f.Key]; dup {
			return fmt.Errorf("body_field %s is set twice", f.Key)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, f.Value); err != nil {
			return fmt.Errorf("body_field %s: the value is not JSON: %v", f.Key, err)
		}
		if a := p.keys[wireKey{InBody, f.Key}]; a != nil {
			return argError(a.Name, fmt.Errorf("argument %q: the body member %s is fixed by body_field", a.Name, f.Key))
		}
		p.bodyFields[f.Key] = compact.Bytes()
	}
	p.hasBody = true
	return nil
}

// refuseFixed returns an error naming the arguments that would add to a
// query parameter of fixed (the upstream URL's query and the query lines),
// or nil.
func (p *requestPlan) refuseFixed(args map[string]any, fixed url.Values) error {
	var names []string
	for name := range args {
		a, _, key := p.keyOf(name)
		if _, taken := fixedKey(key, fixed); taken && p.sendsKey(a) {
			names = append(names, strconv.Quote(name))
		}
	}
	switch len(names) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("argument %s is fixed by the configuration and cannot be sent", names[0])
	}
	slices.Sort(names)
	return fmt.Errorf("arguments %s are fixed by the configuration and cannot be sent", strings.Join(names, ", "))
}

func argNames(args []planArg) []string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Name
	}
	return names
}

// label names the request a call with args makes, as Target.Label does, for
// when the request cannot be built; with arguments that do not fit the
// path, the path template stands in.
func (p *requestPlan) label(args map[string]any) string {
	if args, err := p.pathArgs(args); err == nil {
		if _, label, err := p.path.expand(args, nil); err == nil {
			return p.method + " " + label
		}
	}
	return p.method + " " + p.pathText
}

// checkBase reports a declared argument that would add to a query
// parameter of the upstream URL base, when that URL is known at load.
// (One known only per call is checked per call, by build.)
func (p *requestPlan) checkBase(base *url.URL) error {
	if base == nil || base.RawQuery == "" {
		return nil
	}
	fixed, _ := url.ParseQuery(base.RawQuery)
	for _, name := range slices.Sorted(maps.Keys(p.args)) {
		if key, taken := fixedKey(p.args[name].Wire, fixed); taken && p.sendsKey(p.args[name]) {
			return argError(name, fmt.Errorf("argument %q: the query parameter %s is fixed by the upstream URL, and an argument cannot add to it", name, key))
		}
	}
	return nil
}

// applyDefaults returns args with the declared defaults filled in for
// omitted arguments. args itself is not changed.
func (p *requestPlan) applyDefaults(args map[string]any) map[string]any {
	if len(p.defaults) == 0 {
		return args
	}
	var out map[string]any
	for _, a := range p.defaults {
		if _, given := args[a.Name]; given {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(args)+len(p.defaults))
			for k, v := range args {
				out[k] = v
			}
		}
		out[a.Name] = a.Default
	}
	if out == nil {
		return args
	}
	return out
}
