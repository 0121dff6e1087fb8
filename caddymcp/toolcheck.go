package caddymcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// compileTool compiles t as Provision does, against the handler's headers
// and its upstream URL when that is known at load. The error does not
// name the tool.
func compileTool(t *Tool, headers http.Header, base *url.URL) (*provisioned, error) {
	ct, err := t.compile(headers)
	if err != nil {
		return nil, err
	}
	if err := ct.op.CheckBase(base); err != nil {
		return nil, err
	}
	return ct, nil
}

// checkCaddyfile runs, on a handler UnmarshalCaddyfile read from d, the
// checks Provision and Validate would run on its tools, so that the error
// carries the file and line: the adapter hands Caddy JSON, and what
// Provision sees has no lines. An error about one line of a tool (the
// method line, an arg line) is reported there; any other error of a tool
// at its tool line. What this leaves to Provision depends on the running
// process (placeholders) and names no line.
func (h *Handler) checkCaddyfile(d *caddyfile.Dispenser) error {
	d.Reset()
	d.Next()
	directive := d.Token()
	lines := findToolLines(d)
	if len(h.Tools) == 0 {
		return errorAt(directive, errors.New("mcp needs at least one tool"))
	}
	var base *url.URL
	if h.Upstream != "" && !strings.Contains(h.Upstream, "{") {
		base, _ = parseBase(h.Upstream) // UnmarshalCaddyfile refused a bad one
	}
	seen := make(map[string]bool, len(h.Tools))
	for i, t := range h.Tools {
		at := toolLines{tool: directive}
		if i < len(lines) { // always, unless the grammar outgrows findToolLines
			at = lines[i]
		}
		if seen[t.Name] {
			return errorAt(at.tool, fmt.Errorf("tool %q is defined twice", t.Name))
		}
		seen[t.Name] = true
		if tok, err := t.lineProblem(at); err != nil {
			return errorAt(tok, fmt.Errorf("tool %q: %w", t.Name, err))
		}
		if _, err := compileTool(t, h.Headers, base); err != nil {
			return errorAt(at.tool, fmt.Errorf("tool %q: %w", t.Name, err))
		}
	}
	return nil
}

// errorAt adds to err the place of tok, as the parser's own errors have it.
func errorAt(tok caddyfile.Token, err error) error {
	d := caddyfile.NewDispenser([]caddyfile.Token{tok})
	d.Next()
	return d.WrapErr(err)
}

// toolLines are where the lines of one tool block are.
type toolLines struct {
	tool   caddyfile.Token            // tool <name>
	method caddyfile.Token            // <method> <path>
	args   map[string]caddyfile.Token // arg <name> ..., the first of each name
}

// findToolLines returns the lines of each tool block of the mcp directive
// of d, in order. d holds tokens UnmarshalCaddyfile accepted: only a tool
// has a block, and no line inside an arg block starts with "arg" or a
// method.
func findToolLines(d *caddyfile.Dispenser) []toolLines {
	var found []toolLines
	for d.NextBlock(0) {
		if d.Val() != "tool" {
			d.RemainingArgs()
			continue
		}
		at := toolLines{tool: d.Token(), args: make(map[string]caddyfile.Token)}
		d.RemainingArgs()
		for nesting := d.Nesting(); d.NextBlock(nesting); {
			tok := d.Token()
			args := d.RemainingArgs()
			switch {
			case methodWords[strings.ToLower(tok.Text)]:
				at.method = tok
			case tok.Text == "arg" && len(args) > 0:
				if _, ok := at.args[args[0]]; !ok {
					at.args[args[0]] = tok
				}
			}
		}
		found = append(found, at)
	}
	return found
}

// lineProblem reports a fault of the tool that lies on one line of it, and
// that line: a path that is not a template of its arguments (on the method
// line), or an argument placed where its path or type cannot go (on its
// arg line). The words are those Provision uses.
func (t *Tool) lineProblem(at toolLines) (caddyfile.Token, error) {
	if t.Path == "" {
		return caddyfile.Token{}, nil // compile says a method and path are required
	}
	if !strings.HasPrefix(t.Path, "/") {
		return at.method, fmt.Errorf("path %q must start with /", t.Path)
	}
	if strings.ContainsAny(t.Path, "?#") {
		return at.method, fmt.Errorf("path %q: put query parameters in query lines or arguments, not in the path", t.Path)
	}
	names := make(map[string]bool, len(t.Args))
	for _, a := range t.Args {
		names[a.Name] = true
	}
	if len(t.InputSchema) > 0 {
		props, err := upstream.PropertyNames(t.InputSchema)
		if err != nil {
			return caddyfile.Token{}, nil // compile says what is wrong with the schema
		}
		for _, name := range props {
			names[name] = true
		}
	}
	path, err := upstream.ParseTemplate(t.Path, func(name string) bool { return names[name] })
	if err != nil {
		return at.method, err
	}
	for _, a := range t.Args {
		inPath := path.HasSlot(a.Name)
		in := upstream.Placement(a.In)
		switch {
		case in == upstream.InPath && !inPath:
			return at.args[a.Name], fmt.Errorf("argument %q is placed in the path, but the path %q has no {%s}", a.Name, t.Path, a.Name)
		case in != "" && in != upstream.InPath && inPath:
			return at.args[a.Name], fmt.Errorf("argument %q is in the path %q but placed in %s", a.Name, t.Path, in)
		case in == "" && inPath:
			in = upstream.InPath
		case in == "" && (t.Method == http.MethodGet || t.Method == http.MethodHead || t.Method == http.MethodDelete):
			in = upstream.InQuery
		}
		if len(t.InputSchema) > 0 {
			continue // the schema gives the type; compile checks it
		}
		typ, items := schemaType(a.Type)
		switch {
		case in == upstream.InQuery && (typ == "object" || items == "object"):
			err := fmt.Errorf("argument %q: objects go only in the body, not in the query", a.Name)
			if a.In == "" {
				err = fmt.Errorf("%w (a %s sends its arguments in the query; say \"in body\")", err, t.Method)
			}
			return at.args[a.Name], err
		case (in == upstream.InPath || in == upstream.InHeader) && (typ == "array" || typ == "object"):
			return at.args[a.Name], fmt.Errorf("argument %q: %s arguments cannot go in the %s", a.Name, typ, in)
		}
	}
	return caddyfile.Token{}, nil
}
