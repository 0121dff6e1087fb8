package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
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

// Arg describes one declared argument.
type Arg struct {
	Name string
	// Type is the argument's JSON Schema type ("string", "array", ...), or
	// "" when the schema does not say; Items is the item type of an array.
	Type  string
	Items string
	// In is where the argument goes; "" picks the default: path when the
	// path template names it, else query for GET, HEAD and DELETE, else body.
	In Placement
	// HeaderName is the header field for In == InHeader; default Name.
	HeaderName string
	// Default is sent when the argument is omitted; nil for none.
	Default any
}

// Field is a fixed header or query parameter from the configuration.
type Field struct {
	Name  string
	Value string
}

// Spec is everything needed to turn a tool's arguments into a request.
type Spec struct {
	Method string
	Path   string
	Args   []Arg
	Query  []Field
	Header []Field
	Body   BodyMode
	// BodyArg names the argument sent as the whole body with Body == BodyArg.
	BodyArg string
}

// Tool turns the arguments of one tool call into one HTTP request. It is
// built once from a Spec and is safe for concurrent use.
type Tool struct {
	method   string
	pathText string
	path     Template
	args     map[string]*Arg
	defaults []*Arg
	query    []fixedField
	header   []fixedField
	body     BodyMode
	bodyArg  string
	// extra is where arguments that are not declared go (a free-form
	// input_schema may allow them).
	extra Placement
	// hasBody is set when a declared argument goes in the body: the body
	// is then sent even when every body argument is omitted.
	hasBody bool
}

type fixedField struct {
	name  string
	value Text
}

var argHeaderForbidden = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Te": true, "Trailer": true, "Upgrade": true,
}

// New checks spec and prepares it for calls.
func New(spec Spec) (*Tool, error) {
	method := strings.ToUpper(spec.Method)
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead:
	default:
		return nil, fmt.Errorf("method %q is not one of get, post, put, patch, delete, head", spec.Method)
	}
	if !strings.HasPrefix(spec.Path, "/") {
		return nil, fmt.Errorf("path %q must start with /", spec.Path)
	}
	if strings.ContainsAny(spec.Path, "?#") {
		return nil, fmt.Errorf("path %q: put query parameters in query lines or arguments, not in the path", spec.Path)
	}
	t := &Tool{
		method:   method,
		pathText: spec.Path,
		args:     make(map[string]*Arg, len(spec.Args)),
		body:     spec.Body,
	}
	if t.body == "" {
		t.body = BodyJSON
	}
	t.extra = InBody
	if method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete {
		t.extra = InQuery
	}
	for i := range spec.Args {
		a := spec.Args[i]
		if a.Name == "" {
			return nil, fmt.Errorf("argument without a name")
		}
		if _, dup := t.args[a.Name]; dup {
			return nil, fmt.Errorf("argument %q is declared twice", a.Name)
		}
		t.args[a.Name] = &a
	}
	path, err := ParseTemplate(spec.Path, func(name string) bool { return t.args[name] != nil })
	if err != nil {
		return nil, err
	}
	t.path = path
	headerNames := make(map[string]string)
	for _, f := range spec.Header {
		name := http.CanonicalHeaderKey(f.Name)
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("invalid header field name %q", f.Name)
		}
		t.header = append(t.header, fixedField{name: name, value: NewText(f.Value)})
		headerNames[name] = ""
	}
	for _, f := range spec.Query {
		if f.Name == "" {
			return nil, fmt.Errorf("query parameter without a name")
		}
		t.query = append(t.query, fixedField{name: f.Name, value: NewText(f.Value)})
	}
	for _, name := range argNames(spec.Args) {
		a := t.args[name]
		inPath := path.HasSlot(a.Name)
		switch {
		case a.In == "" && inPath:
			a.In = InPath
		case a.In == "":
			a.In = t.extra
		case a.In == InPath && !inPath:
			return nil, fmt.Errorf("argument %q is placed in the path, but the path %q has no {%s}", a.Name, spec.Path, a.Name)
		case a.In != InPath && inPath:
			return nil, fmt.Errorf("argument %q is in the path %q but placed in %s", a.Name, spec.Path, a.In)
		}
		switch a.In {
		case InPath, InHeader:
			if a.Type == "array" || a.Type == "object" {
				return nil, fmt.Errorf("argument %q: %s arguments cannot go in the %s", a.Name, a.Type, a.In)
			}
		case InQuery:
			if a.Type == "object" || a.Items == "object" {
				return nil, fmt.Errorf("argument %q: objects go only in the body, not in the query", a.Name)
			}
		case InBody:
		default:
			return nil, fmt.Errorf("argument %q: unknown placement %q (want path, query, header or body)", a.Name, a.In)
		}
		if a.In == InHeader {
			if a.HeaderName == "" {
				a.HeaderName = a.Name
			}
			a.HeaderName = http.CanonicalHeaderKey(a.HeaderName)
			if !httpguts.ValidHeaderFieldName(a.HeaderName) {
				return nil, fmt.Errorf("argument %q: invalid header field name %q", a.Name, a.HeaderName)
			}
			if argHeaderForbidden[a.HeaderName] {
				return nil, fmt.Errorf("argument %q: header %s cannot be set by an argument", a.Name, a.HeaderName)
			}
			if other, taken := headerNames[a.HeaderName]; taken {
				if other == "" {
					return nil, fmt.Errorf("argument %q: header %s is already set by a fixed header", a.Name, a.HeaderName)
				}
				return nil, fmt.Errorf("argument %q: header %s is already set by argument %q", a.Name, a.HeaderName, other)
			}
			headerNames[a.HeaderName] = a.Name
		} else if a.HeaderName != "" {
			return nil, fmt.Errorf("argument %q: header_name goes only with 'in header'", a.Name)
		}
		if a.In == InBody {
			t.hasBody = true
			if t.body == BodyForm && a.Type == "object" {
				return nil, fmt.Errorf("argument %q: object arguments cannot go in a form body", a.Name)
			}
		}
		if a.Default != nil {
			t.defaults = append(t.defaults, a)
		}
	}
	switch t.body {
	case BodyJSON, BodyForm:
		if spec.BodyArg != "" {
			return nil, fmt.Errorf("body %s takes no argument name", t.body)
		}
	case BodyArg:
		a := t.args[spec.BodyArg]
		if a == nil {
			return nil, fmt.Errorf("body arg %q names no argument", spec.BodyArg)
		}
		if a.In != InBody {
			return nil, fmt.Errorf("body arg %q: the argument is placed in the %s", spec.BodyArg, a.In)
		}
		for _, other := range t.args {
			if other.In == InBody && other.Name != a.Name {
				return nil, fmt.Errorf("body arg %q sends one argument as the whole body, but %q is also placed in the body", a.Name, other.Name)
			}
		}
		t.bodyArg = a.Name
		t.hasBody = true
	default:
		return nil, fmt.Errorf("unknown body mode %q (want json, form or arg)", t.body)
	}
	fixed := make(url.Values, len(t.query))
	for _, f := range t.query {
		fixed[f.name] = nil
	}
	for _, name := range argNames(spec.Args) {
		if key, taken := fixedKey(name, fixed); taken && t.sendsKey(t.args[name]) {
			return nil, fmt.Errorf("argument %q: the query parameter %s is fixed by a query line, and an argument cannot add to it", name, key)
		}
	}
	return t, nil
}

// sendsKey reports whether the argument a (nil: an undeclared one) goes on
// the wire under its own name as a key a server may read as a query
// parameter: in the query, or in a JSON or form body, which many
// frameworks merge with the query (Rails params, PHP $_REQUEST, servlet
// request parameters).
func (t *Tool) sendsKey(a *Arg) bool {
	in := t.extra
	if a != nil {
		in = a.In
	}
	switch in {
	case InQuery:
		return true
	case InBody:
		return t.bodyArg == ""
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

// refuseFixed returns an error naming the arguments that would add to a
// query parameter of fixed (the upstream URL's query and the query lines),
// or nil.
func (t *Tool) refuseFixed(args map[string]any, fixed url.Values) error {
	var names []string
	for name := range args {
		if _, taken := fixedKey(name, fixed); taken && t.sendsKey(t.args[name]) {
			names = append(names, strconv.Quote(name))
		}
	}
	switch len(names) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("argument %s is fixed by the configuration and cannot be sent", names[0])
	}
	sort.Strings(names)
	return fmt.Errorf("arguments %s are fixed by the configuration and cannot be sent", strings.Join(names, ", "))
}

func argNames(args []Arg) []string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Name
	}
	return names
}

// Method returns the upstream HTTP method.
func (t *Tool) Method() string { return t.method }

// Label names the request a call with args makes, as Call.Label does, for
// when the request cannot be built; with arguments that do not fit the
// path, the path template stands in.
func (t *Tool) Label(args map[string]any) string {
	if _, label, err := t.path.expand(args, nil); err == nil {
		return t.method + " " + label
	}
	return t.method + " " + t.pathText
}

// CheckBase reports a declared argument that would add to a query
// parameter of the upstream URL base, when that URL is known at load.
// (One known only per call is checked per call, by NewRequest.)
func (t *Tool) CheckBase(base *url.URL) error {
	if base == nil || base.RawQuery == "" {
		return nil
	}
	fixed, _ := url.ParseQuery(base.RawQuery)
	names := make([]string, 0, len(t.args))
	for name := range t.args {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if key, taken := fixedKey(name, fixed); taken && t.sendsKey(t.args[name]) {
			return fmt.Errorf("argument %q: the query parameter %s is fixed by the upstream URL, and an argument cannot add to it", name, key)
		}
	}
	return nil
}

// ApplyDefaults returns args with the declared defaults filled in for
// omitted arguments. args itself is not changed.
func (t *Tool) ApplyDefaults(args map[string]any) map[string]any {
	if len(t.defaults) == 0 {
		return args
	}
	var out map[string]any
	for _, a := range t.defaults {
		if _, given := args[a.Name]; given {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(args)+len(t.defaults))
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

// NewRequest builds the upstream request for one call. base supplies the
// scheme, host, path prefix and any query of the upstream; in route mode it
// is empty and the caller completes the request. args must already be
// validated. Configuration text goes through repl; argument values never do.
//
// What the configuration fixes, an argument never adds to or overrides: a
// query parameter of a query line or of the upstream URL, a fixed header
// (handler or tool), a path slot. A schema that does not forbid extra
// properties lets undeclared arguments through, and they go where the
// default placement puts them (the query of a GET, HEAD or DELETE, else the
// body); so an argument, declared or not, whose name is a fixed query key
// (case ignored) is refused with an error naming it, whether it would go in
// the query or in a JSON or form body, which many servers merge with the
// query. It is refused rather than dropped so that the caller learns its
// value was not used. A declared argument that would collide is a
// configuration error already (New): in the query or body under a query
// line's key, in a header that is fixed or set by another argument; an
// argument in a path slot goes nowhere else. With `body arg`, the body is
// that one argument, and an undeclared argument is refused.
//
// The returned Call names the request for results, errors and logs.
func (t *Tool) NewRequest(ctx context.Context, base *url.URL, args map[string]any, repl Replacer) (*http.Request, Call, error) {
	path, label, err := t.path.expand(args, repl)
	if err != nil {
		return nil, Call{}, err
	}
	call := Call{Label: t.method + " " + label, Path: label}
	u := &url.URL{Scheme: base.Scheme, Host: base.Host}
	rawPath := strings.TrimSuffix(base.EscapedPath(), "/") + path
	u.Path, err = url.PathUnescape(rawPath)
	if err != nil {
		return nil, call, fmt.Errorf("path %s: %w", path, err)
	}
	u.RawPath = rawPath

	query := url.Values{}
	if base.RawQuery != "" {
		query, _ = url.ParseQuery(base.RawQuery)
	}
	for _, f := range t.query {
		query.Add(f.name, f.value.Resolve(repl))
	}
	if len(query) > 0 {
		if err := t.refuseFixed(args, query); err != nil {
			return nil, call, err
		}
	}

	header := make(http.Header, len(t.header)+2)
	for _, f := range t.header {
		if v := f.value.Resolve(repl); v != "" {
			header[f.name] = append(header[f.name], v)
		}
	}
	if _, set := header["User-Agent"]; !set {
		header["User-Agent"] = []string{"caddy-mcp"}
	}

	var bodyArgs map[string]any
	var bodyValue any
	bodyGiven := false
	for name, v := range args {
		in := t.extra
		a := t.args[name]
		if a != nil {
			in = a.In
		}
		switch in {
		case InPath:
		case InQuery:
			if v == nil {
				continue
			}
			vals, err := queryStrings(v)
			if err != nil {
				return nil, call, fmt.Errorf("argument %q: %w", name, err)
			}
			query[name] = append(query[name], vals...)
		case InHeader:
			if v == nil {
				continue
			}
			s, err := scalarString(v)
			if err != nil {
				return nil, call, fmt.Errorf("argument %q: %w", name, err)
			}
			if !httpguts.ValidHeaderFieldValue(s) {
				return nil, call, fmt.Errorf("argument %q: the value has characters not allowed in a header", name)
			}
			header[a.HeaderName] = []string{s}
		case InBody:
			if t.bodyArg != "" {
				if a == nil {
					return nil, call, fmt.Errorf("argument %q is not declared, and the body is the argument %q alone", name, t.bodyArg)
				}
				bodyValue, bodyGiven = v, true
				continue
			}
			if bodyArgs == nil {
				bodyArgs = make(map[string]any, len(args))
			}
			bodyArgs[name] = v
		}
	}
	u.RawQuery = query.Encode()

	var body []byte
	switch {
	case t.bodyArg != "":
		if bodyGiven {
			body, err = json.Marshal(bodyValue)
			setDefault(header, "Content-Type", "application/json")
		}
	case t.body == BodyForm && (t.hasBody || bodyArgs != nil):
		form := url.Values{}
		for name, v := range bodyArgs {
			if v == nil {
				continue
			}
			vals, verr := queryStrings(v)
			if verr != nil {
				return nil, call, fmt.Errorf("argument %q: %w", name, verr)
			}
			form[name] = vals
		}
		body = []byte(form.Encode())
		setDefault(header, "Content-Type", "application/x-www-form-urlencoded")
	case t.hasBody || bodyArgs != nil:
		if bodyArgs == nil {
			bodyArgs = map[string]any{}
		}
		body, err = json.Marshal(bodyArgs)
		setDefault(header, "Content-Type", "application/json")
	}
	if err != nil {
		return nil, call, fmt.Errorf("encoding the body: %w", err)
	}

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, "/", rd)
	if err != nil {
		return nil, call, err
	}
	req.URL = u
	req.Host = u.Host
	if h := header.Get("Host"); h != "" {
		// net/http sends req.Host, never a Host field of the header.
		req.Host = h
		header.Del("Host")
	}
	req.Header = header
	return req, call, nil
}

// setDefault sets a header field unless the configuration set it.
func setDefault(h http.Header, name, value string) {
	if _, set := h[name]; !set {
		h[name] = []string{value}
	}
}
