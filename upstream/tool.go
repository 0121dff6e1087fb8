package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
		method: method,
		args:   make(map[string]*Arg, len(spec.Args)),
		body:   spec.Body,
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
			if _, fixed := headerNames[a.HeaderName]; fixed {
				return nil, fmt.Errorf("argument %q: header %s is already set by a fixed header", a.Name, a.HeaderName)
			}
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
	return t, nil
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
