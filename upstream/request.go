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

// build builds the upstream request for one call. base supplies the
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
// configuration error already (newRequestPlan): in the query or body
// under a query line's key, in a header that is fixed or set by another
// argument; an argument in a path slot goes nowhere else. With `body arg`,
// the body is that one argument, and an undeclared argument is refused.
//
// An object in style form with explode, or in deepObject, sends keys of
// its own (its property names, or key[name]); such a key is refused per
// call when it is a fixed query key (case ignored) or a key another
// argument sends.
//
// A declared argument goes under its wire name (the query key, the body
// key, the header field), and every comparison above is of wire names.
// An undeclared argument goes under its own name, and is refused when
// that is the wire name of a declared argument in the same place, which
// would then be sent twice. A null value is left out of the query, a
// header and a form body, and is null in a JSON body.
//
// The returned Target names the request for results, errors and logs;
// Operation.Request completes it.
func (p *requestPlan) build(ctx context.Context, base *url.URL, args map[string]any, repl Replacer) (*http.Request, Target, error) {
	pathValues, err := p.pathArgs(args)
	if err != nil {
		return nil, Target{}, err
	}
	path, label, err := p.path.expand(pathValues, repl)
	if err != nil {
		return nil, Target{}, err
	}
	target := Target{Label: p.method + " " + label, Path: label}
	u := url.URL{Scheme: base.Scheme, Host: base.Host}
	rawPath := strings.TrimSuffix(base.EscapedPath(), "/") + path
	u.Path, err = url.PathUnescape(rawPath)
	if err != nil {
		return nil, target, fmt.Errorf("path %s: %w", path, err)
	}
	u.RawPath = rawPath

	// The maps of a call are made only when something goes in them: a
	// call of a tool with no query, headers or styled arguments makes none
	// but the header.
	var fixed url.Values
	if base.RawQuery != "" {
		fixed, _ = url.ParseQuery(base.RawQuery)
	}
	for _, f := range p.query {
		if fixed == nil {
			fixed = make(url.Values, len(p.query))
		}
		fixed.Add(f.name, f.value.Resolve(repl))
	}
	if len(fixed) > 0 {
		if err := p.refuseFixed(args, fixed); err != nil {
			return nil, target, err
		}
	}
	var query queryParts
	for k, vs := range fixed {
		for _, v := range vs {
			query.add(k, url.QueryEscape(v))
		}
	}
	// The keys the arguments send under their wire names, and those that
	// the properties of styled objects make, by argument.
	var ownKeys, propertyKeys map[string]string
	own := func(key, name string) {
		if ownKeys == nil {
			ownKeys = make(map[string]string, len(args))
		}
		ownKeys[key] = name
	}

	// The fixed fields' values share one backing array, each field a
	// slice of it capped at its own length, so that appending to one (a
	// handler in route mode may) copies it instead of overwriting the next.
	header := make(http.Header, len(p.header)+2)
	values := make([]string, 0, len(p.header)+1)
	field := func(name, v string) {
		if prev, ok := header[name]; ok {
			header[name] = append(prev, v)
			return
		}
		values = append(values, v)
		n := len(values)
		header[name] = values[n-1 : n : n]
	}
	for _, f := range p.header {
		if v := f.value.Resolve(repl); v != "" {
			field(f.name, v)
		}
	}
	if _, set := header["User-Agent"]; !set {
		field("User-Agent", "caddy-mcp")
	}

	var bodyArgs map[string]any
	var bodyValue any
	bodyGiven := false
	for name, v := range args {
		a, in, key := p.keyOf(name)
		if a == nil {
			if owner := p.keys[wireKey{in, key}]; owner != nil {
				return nil, target, fmt.Errorf("argument %q is not declared, and %s is the %s key of argument %q", name, key, in, owner.Name)
			}
		}
		switch in {
		case InPath:
		case InQuery:
			if v == nil {
				continue
			}
			if a != nil && a.Style != "" {
				pairs, err := a.styledQuery(key, v)
				if err != nil {
					return nil, target, fmt.Errorf("argument %q: %w", name, err)
				}
				for _, pair := range pairs {
					if pair.key == key {
						own(key, name)
					} else {
						if propertyKeys == nil {
							propertyKeys = make(map[string]string)
						}
						if other, taken := propertyKeys[pair.key]; taken {
							first, second := min(name, other), max(name, other)
							return nil, target, fmt.Errorf("arguments %q and %q would both send the query parameter %s", first, second, pair.key)
						}
						propertyKeys[pair.key] = name
					}
					query.add(pair.key, pair.value)
				}
				continue
			}
			vals, err := queryStrings(v)
			if err != nil {
				return nil, target, fmt.Errorf("argument %q: %w", name, err)
			}
			for _, s := range vals {
				query.add(key, url.QueryEscape(s))
			}
			own(key, name)
		case InHeader:
			if v == nil {
				continue
			}
			s, send, err := a.headerValue(v)
			if err != nil {
				return nil, target, fmt.Errorf("argument %q: %w", name, err)
			}
			if !send {
				continue
			}
			if !httpguts.ValidHeaderFieldValue(s) {
				return nil, target, fmt.Errorf("argument %q: the value has characters not allowed in a header", name)
			}
			header[a.HeaderName] = []string{s}
		case InBody:
			if p.bodyArg != "" {
				if a == nil {
					return nil, target, fmt.Errorf("argument %q is not declared, and the body is the argument %q alone", name, p.bodyArg)
				}
				bodyValue, bodyGiven = v, true
				continue
			}
			if _, fixed := p.bodyFields[key]; fixed {
				return nil, target, fmt.Errorf("argument %q is fixed by the configuration and cannot be sent", name)
			}
			if bodyArgs == nil {
				bodyArgs = make(map[string]any, len(args)+len(p.bodyFields))
			}
			bodyArgs[key] = v
		}
	}
	if err := checkPropertyKeys(propertyKeys, ownKeys, fixed); err != nil {
		return nil, target, err
	}
	u.RawQuery = query.encode()

	var body []byte
	switch {
	case p.bodyArg != "":
		if bodyGiven {
			body, err = json.Marshal(bodyValue)
			setDefault(header, "Content-Type", "application/json")
		}
	case p.body == BodyForm && (p.hasBody || bodyArgs != nil):
		form := url.Values{}
		for name, v := range args {
			_, in, key := p.keyOf(name)
			if in != InBody || v == nil {
				continue
			}
			vals, verr := queryStrings(v)
			if verr != nil {
				return nil, target, fmt.Errorf("argument %q: %w", name, verr)
			}
			form[key] = vals
		}
		body = []byte(form.Encode())
		setDefault(header, "Content-Type", "application/x-www-form-urlencoded")
	case p.hasBody || bodyArgs != nil:
		if bodyArgs == nil {
			bodyArgs = make(map[string]any, len(p.bodyFields))
		}
		for key, v := range p.bodyFields {
			bodyArgs[key] = v
		}
		body, err = json.Marshal(bodyArgs)
		setDefault(header, "Content-Type", "application/json")
	}
	if err != nil {
		return nil, target, fmt.Errorf("encoding the body: %w", err)
	}

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, "/", rd)
	if err != nil {
		return nil, target, err
	}
	// The URL NewRequestWithContext parsed from "/" is the request's own:
	// filled in, rather than replaced by one more.
	*req.URL = u
	req.Host = u.Host
	if h := header.Get("Host"); h != "" {
		// net/http sends req.Host, never a Host field of the header.
		req.Host = h
		header.Del("Host")
	}
	req.Header = header
	return req, target, nil
}

// setDefault sets a header field unless the configuration set it.
func setDefault(h http.Header, name, value string) {
	if _, set := h[name]; !set {
		h[name] = []string{value}
	}
}
