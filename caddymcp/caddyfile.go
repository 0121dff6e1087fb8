package caddymcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-mcp/caddy-mcp/openapi"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

func init() {
	registerEndpointDirective("mcp", parseMCP)
	// Before respond, so mcp works in a site block without route, ahead of
	// the reverse_proxy that route mode sends tool requests to.
	httpcaddyfile.RegisterDirectiveOrder("mcp", httpcaddyfile.Before, "respond")
}

func parseMCP(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, m.checkCaddyfile(h.Dispenser)
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	mcp [<matcher>] {
//		name          <server-name>
//		version       <version>
//		instructions  <text>
//		upstream      <base-url>
//		header        <field> <value>
//		timeout       <duration>
//		max_response_size <size>
//		max_result_size   <size>
//		structured_text   full|summary
//		max_request_size  <size>
//		list_ttl          <duration>
//		discovery     all|search
//		allow_origins <origin...>
//		allow_hosts   <host...>
//		authorization { ... }   (see parseAuthorization)
//
//		openapi <file-or-url> {
//			include  <pattern...>
//			exclude  <pattern...>
//			tags     <tag...>
//			rename   <operationId> <tool-name>
//			describe <operationId> <text>
//			output_schema lenient|strict|off
//			operation <operationId> {
//				title, description, timeout, max_result_size, jq, scopes,
//				annotations, header, query, body_field: as on a tool
//				output_schema lenient|strict|off|<json>
//			}
//		}
//
//		tool <name> {
//			title        <text>
//			description  <text>
//			<method>     <path-template>
//			arg <name> [<type>] [required] [<description>] {
//				in          path|query|header|body
//				name        <wire-name>
//				nullable
//				header_name <field>
//				mirror_header <name>
//				style       form|spaceDelimited|pipeDelimited|deepObject|simple
//				explode     true|false
//				default     <value>
//				enum        <value...>
//			}
//			input_schema  <json>
//			output_schema <json>
//			query   <key> <value>
//			header  <field> <value>
//			body    json|form|arg <name>
//			timeout <duration>
//			annotations <hint>[=false] ...
//			scopes  <scope...>
//			jq      <filter>
//			max_result_size <size>
//			body_field <key> <json>
//		}
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := make(map[string]bool)
	for d.NextBlock(0) {
		key := d.Val()
		if key != "tool" && key != "header" && key != "openapi" {
			if seen[key] {
				return d.Errf("%s is set twice", key)
			}
			seen[key] = true
		}
		var err error
		switch key {
		case "name":
			err = oneArg(d, &h.Name)
		case "version":
			err = oneArg(d, &h.Version)
		case "instructions":
			err = oneArg(d, &h.Instructions)
		case "upstream":
			if err = oneArg(d, &h.Upstream); err == nil && !strings.Contains(h.Upstream, "{") {
				if _, err = parseBase(h.Upstream); err != nil {
					err = d.WrapErr(err)
				}
			}
		case "header":
			if h.Headers == nil {
				h.Headers = make(http.Header)
			}
			err = headerLine(d, h.Headers)
		case "timeout":
			err = durationArg(d, &h.Timeout)
		case "max_response_size":
			err = sizeArg(d, &h.MaxResponseSize)
		case "discovery":
			if err = oneArg(d, &h.Discovery); err == nil {
				if err = checkDiscovery(h.Discovery); err != nil {
					err = d.WrapErr(err)
				}
			}
		case "max_result_size":
			if err = sizeArg(d, &h.MaxResultSize); err == nil {
				if err = checkResultSize(h.MaxResultSize); err != nil {
					err = d.WrapErr(err)
				}
			}
		case "structured_text":
			if err = oneArg(d, &h.StructuredText); err == nil {
				if err = checkStructuredText(h.StructuredText); err != nil {
					err = d.WrapErr(err)
				}
			}
		case "tool":
			var t *Tool
			t, err = parseTool(d)
			if err == nil {
				h.Tools = append(h.Tools, t)
			}
		case "openapi":
			var src *OpenAPISource
			src, err = parseOpenAPI(d)
			if err == nil {
				h.OpenAPI = append(h.OpenAPI, src)
			}
		default:
			var handled bool
			handled, err = h.Endpoint.unmarshalSubdirective(d)
			if !handled {
				return d.Errf("unknown subdirective %q", key)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseOpenAPI reads an openapi line and its block. The document itself
// is read at load, not here: adapting a Caddyfile fetches nothing.
func parseOpenAPI(d *caddyfile.Dispenser) (*OpenAPISource, error) {
	s := &OpenAPISource{at: d.Token(), Origin: origin(d.Token())}
	if err := oneArg(d, &s.Source); err != nil {
		return nil, err
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		var err error
		switch d.Val() {
		case "include":
			err = listArgs(d, &s.Include)
		case "exclude":
			err = listArgs(d, &s.Exclude)
		case "tags":
			err = listArgs(d, &s.Tags)
		case "rename":
			err = operationArg(d, &s.Rename, "a tool name")
			if err == nil {
				if err = checkToolName(d.Val()); err != nil {
					err = d.Errf("rename: %v", err)
				}
			}
		case "describe":
			err = operationArg(d, &s.Describe, "a text")
		case "output_schema":
			if s.OutputSchema != "" {
				err = d.Errf("output_schema is set twice")
			} else if err = oneArg(d, &s.OutputSchema); err == nil {
				if err = openapi.CheckOutputMode(openapi.OutputMode(s.OutputSchema)); err != nil {
					err = d.Errf("%v", err)
				}
			}
		case "operation":
			err = parseOperation(d, s)
		default:
			err = d.Errf("unknown openapi subdirective %q", d.Val())
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// listArgs appends the line's arguments, at least one, to list.
func listArgs(d *caddyfile.Dispenser, list *[]string) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.ArgErr()
	}
	*list = append(*list, args...)
	return nil
}

// operationArg reads "<operationId> <value>" into m, once per
// operationId; what names the value in the error of a wrong count.
func operationArg(d *caddyfile.Dispenser, m *map[string]string, what string) error {
	key := d.Val()
	args := d.RemainingArgs()
	if len(args) != 2 {
		return d.Errf("%s takes an operationId and %s, got %d arguments", key, what, len(args))
	}
	if _, dup := (*m)[args[0]]; dup {
		return d.Errf("%s %s is set twice", key, args[0])
	}
	if *m == nil {
		*m = make(map[string]string)
	}
	(*m)[args[0]] = args[1]
	return nil
}

var methodWords = map[string]bool{"get": true, "post": true, "put": true, "patch": true, "delete": true, "head": true}

func parseTool(d *caddyfile.Dispenser) (*Tool, error) {
	t := &Tool{}
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	t.Name = d.Val()
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if methodWords[strings.ToLower(key)] {
			if t.Method != "" {
				return nil, d.Errf("tool %s: a second method line %q (a tool makes one request)", t.Name, key)
			}
			t.Method = strings.ToUpper(key)
			if err := oneArg(d, &t.Path); err != nil {
				return nil, err
			}
			continue
		}
		switch key {
		case "arg", "query", "header", "annotations", "body_field":
		default:
			if seen[key] {
				return nil, d.Errf("tool %s: %s is set twice", t.Name, key)
			}
			seen[key] = true
		}
		handled, err := t.parseLine(d, key)
		if !handled {
			return nil, d.Errf("tool %s: unknown subdirective %q", t.Name, key)
		}
		if err != nil {
			return nil, err
		}
	}
	mapShorthands(t)
	return t, nil
}

// parseLine reads one line of a tool block other than its method line,
// key being its first word: handled is false for a key tools do not
// have.
func (t *Tool) parseLine(d *caddyfile.Dispenser, key string) (handled bool, err error) {
	switch key {
	case "title":
		err = oneArg(d, &t.Title)
		t.Title = restoreShorthands(t.Title)
	case "description":
		err = oneArg(d, &t.Description)
		t.Description = restoreShorthands(t.Description)
	case "arg":
		var a *Arg
		a, err = parseArg(d, t.Name)
		if err == nil {
			t.Args = append(t.Args, a)
		}
	case "input_schema", "output_schema":
		var raw string
		if err = oneArg(d, &raw); err == nil {
			raw = restoreShorthands(raw)
			if err := badJSON(d, raw); err != nil {
				return true, fmt.Errorf("tool %s: %s is not valid JSON: %w", t.Name, key, err)
			}
			if key == "input_schema" {
				t.InputSchema = json.RawMessage(raw)
			} else {
				t.OutputSchema = json.RawMessage(raw)
			}
		}
	case "query":
		args := d.RemainingArgs()
		if len(args) != 2 {
			return true, d.ArgErr()
		}
		if t.Query == nil {
			t.Query = make(map[string][]string)
		}
		t.Query[args[0]] = append(t.Query[args[0]], args[1])
	case "header":
		if t.Headers == nil {
			t.Headers = make(http.Header)
		}
		err = headerLine(d, t.Headers)
	case "body":
		args := d.RemainingArgs()
		switch {
		case len(args) == 1 && (args[0] == "json" || args[0] == "form"):
			t.Body = args[0]
		case len(args) == 2 && args[0] == "arg":
			t.Body, t.BodyArg = "arg", args[1]
		default:
			return true, d.Errf("tool %s: body takes json, form, or arg <name>", t.Name)
		}
	case "body_field":
		err = bodyFieldLine(d, &t.BodyFields, "tool "+t.Name)
	case "timeout":
		err = durationArg(d, &t.Timeout)
	case "jq":
		if err = oneArg(d, &t.Jq); err == nil {
			t.Jq = restoreShorthands(t.Jq)
			if err = upstream.CheckJq(t.Jq); err != nil {
				return true, d.Errf("tool %s: %v", t.Name, err)
			}
		}
	case "max_result_size":
		if err = sizeArg(d, &t.MaxResultSize); err == nil {
			if err = checkResultSize(t.MaxResultSize); err != nil {
				return true, d.Errf("tool %s: %v", t.Name, err)
			}
		}
	case "annotations":
		err = parseAnnotations(d, t)
	case "scopes":
		if t.Scopes = d.RemainingArgs(); len(t.Scopes) == 0 {
			return true, d.ArgErr()
		}
		if err := checkScopes(t.Scopes); err != nil {
			return true, d.Errf("tool %s: scopes: %v", t.Name, err)
		}
	default:
		return false, nil
	}
	return true, err
}

// bodyFieldLine reads "body_field <key> <json>" into fields. A value in
// double quotes is a JSON string (body_field state "closed"); any other
// (3, true, null, a backquoted object or array) is JSON as written. where
// names the block in errors.
func bodyFieldLine(d *caddyfile.Dispenser, fields *map[string]json.RawMessage, where string) error {
	args := d.CountRemainingArgs()
	if args != 2 {
		return d.Errf("%s: body_field takes a key and a JSON value, got %d arguments", where, args)
	}
	d.NextArg()
	key := d.Val()
	d.NextArg()
	text := restoreShorthands(d.Val())
	var value json.RawMessage
	if strings.HasPrefix(d.ValRaw(), `"`) {
		value, _ = json.Marshal(text)
	} else if json.Valid([]byte(text)) {
		value = json.RawMessage(text)
	} else {
		return d.Errf("%s: body_field %s: %s is not JSON (write a string in double quotes, \"%s\")", where, key, text, text)
	}
	if _, dup := (*fields)[key]; dup {
		return d.Errf("%s: body_field %s is set twice", where, key)
	}
	if *fields == nil {
		*fields = make(map[string]json.RawMessage)
	}
	(*fields)[key] = value
	return nil
}

// typeLike are words that look like a type but are not one of ours; an
// unquoted one on an arg line is a mistake, not a description.
var typeLike = map[string]bool{
	"int": true, "int32": true, "int64": true, "uint": true, "float": true, "float32": true,
	"float64": true, "double": true, "long": true, "bool": true, "str": true, "list": true,
	"dict": true, "map": true, "null": true,
}

func parseArg(d *caddyfile.Dispenser, tool string) (*Arg, error) {
	a := &Arg{}
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	a.Name = d.Val()
	descSet := false
	for _, tok := range d.RemainingArgsAsTokens() {
		word := tok.Text
		if !tok.Quoted() {
			if _, ok := argTypes[word]; ok {
				if a.Type != "" {
					return nil, d.Errf("tool %s: arg %s: a second type %q", tool, a.Name, word)
				}
				a.Type = word
				continue
			}
			if word == "required" {
				a.Required = true
				continue
			}
			if typeLike[word] || strings.HasSuffix(word, "[]") {
				return nil, d.Errf("tool %s: arg %s: unknown type %q (want string, integer, number, boolean, object, array, or string[], integer[], number[], boolean[], object[]; quote a one-word description)", tool, a.Name, word)
			}
		}
		if descSet {
			return nil, d.Errf("tool %s: arg %s: more than one description token (%q); quote a description that has spaces", tool, a.Name, word)
		}
		a.Description, descSet = restoreShorthands(word), true
	}
	var defaults, enum []string
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "enum" {
			if seen[key] {
				return nil, d.Errf("tool %s: arg %s: %s is set twice", tool, a.Name, key)
			}
			seen[key] = true
		}
		switch key {
		case "in":
			if err := oneArg(d, &a.In); err != nil {
				return nil, err
			}
			switch a.In {
			case "path", "query", "header", "body":
			default:
				return nil, d.Errf("tool %s: arg %s: in %q: want path, query, header or body", tool, a.Name, a.In)
			}
		case "name":
			if err := oneArg(d, &a.WireName); err != nil {
				return nil, err
			}
			if a.WireName == "" {
				return nil, d.Errf("tool %s: arg %s: name: an empty wire name (leave the line out to send the arg name)", tool, a.Name)
			}
		case "nullable":
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			a.Nullable = true
		case "header_name":
			if err := oneArg(d, &a.HeaderName); err != nil {
				return nil, err
			}
		case "mirror_header":
			if err := oneArg(d, &a.MirrorHeader); err != nil {
				return nil, err
			}
		case "style":
			if err := oneArg(d, &a.Style); err != nil {
				return nil, err
			}
		case "explode":
			var v string
			if err := oneArg(d, &v); err != nil {
				return nil, err
			}
			if v != "true" && v != "false" {
				return nil, d.Errf("tool %s: arg %s: explode %q: want true or false", tool, a.Name, v)
			}
			explode := v == "true"
			a.Explode = &explode
		case "default":
			if defaults = d.RemainingArgs(); len(defaults) == 0 {
				return nil, d.ArgErr()
			}
			for i := range defaults {
				defaults[i] = restoreShorthands(defaults[i])
			}
		case "enum":
			values := d.RemainingArgs()
			if len(values) == 0 {
				return nil, d.ArgErr()
			}
			for _, v := range values {
				enum = append(enum, restoreShorthands(v))
			}
		default:
			return nil, d.Errf("tool %s: arg %s: unknown subdirective %q", tool, a.Name, key)
		}
	}
	if defaults != nil {
		v, err := literalValue(a.Type, defaults)
		if err != nil {
			return nil, d.Errf("tool %s: arg %s: default: %v", tool, a.Name, err)
		}
		a.Default = v
	}
	for _, e := range enum {
		item := a.Type
		if typ, items := schemaType(a.Type); typ == "array" {
			item = items // "" (a string) for a plain array
		}
		v, err := literalValue(item, []string{e})
		if err != nil {
			return nil, d.Errf("tool %s: arg %s: enum: %v", tool, a.Name, err)
		}
		a.Enum = append(a.Enum, v)
	}
	return a, nil
}

// literalValue turns Caddyfile tokens into a JSON value of the arg type. An
// array takes one token per item, or one JSON array token; an object takes
// one JSON token.
func literalValue(word string, tokens []string) (json.RawMessage, error) {
	typ, items := schemaType(word)
	if typ == "" {
		typ = "string"
	}
	if typ == "array" {
		if len(tokens) == 1 && strings.HasPrefix(strings.TrimSpace(tokens[0]), "[") {
			return jsonToken(tokens[0])
		}
		out := make([]json.RawMessage, 0, len(tokens))
		for _, tok := range tokens {
			if items == "" {
				items = "string"
			}
			v, err := literalValue(items, []string{tok})
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return json.Marshal(out)
	}
	if len(tokens) != 1 {
		return nil, fmt.Errorf("one value expected for a %s, got %d (quote a value with spaces)", typ, len(tokens))
	}
	tok := tokens[0]
	switch typ {
	case "string":
		return json.Marshal(tok)
	case "integer":
		n, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", tok)
		}
		return json.Marshal(n)
	case "number":
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", tok)
		}
		return json.Marshal(f)
	case "boolean":
		b, err := strconv.ParseBool(tok)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", tok)
		}
		return json.Marshal(b)
	default: // object
		return jsonToken(tok)
	}
}

func jsonToken(tok string) (json.RawMessage, error) {
	if !json.Valid([]byte(tok)) {
		return nil, fmt.Errorf("%q is not valid JSON", tok)
	}
	return json.RawMessage(tok), nil
}

var hintNames = map[string]func(*Annotations) **bool{
	"read_only":   func(a *Annotations) **bool { return &a.ReadOnly },
	"destructive": func(a *Annotations) **bool { return &a.Destructive },
	"idempotent":  func(a *Annotations) **bool { return &a.Idempotent },
	"open_world":  func(a *Annotations) **bool { return &a.OpenWorld },
}

func parseAnnotations(d *caddyfile.Dispenser, t *Tool) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.ArgErr()
	}
	if t.Annotations == nil {
		t.Annotations = &Annotations{}
	}
	for _, arg := range args {
		name, val, hasVal := strings.Cut(arg, "=")
		field, ok := hintNames[name]
		if !ok {
			return d.Errf("tool %s: unknown annotation %q (want read_only, destructive, idempotent, open_world)", t.Name, name)
		}
		b := true
		if hasVal {
			var err error
			if b, err = strconv.ParseBool(val); err != nil {
				return d.Errf("tool %s: annotation %s=%q: want true or false", t.Name, name, val)
			}
		}
		*field(t.Annotations) = &b
	}
	return nil
}

// Interface guards
var _ caddyfile.Unmarshaler = (*Handler)(nil)
