package caddymcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-mcp/caddy-mcp/openapi"
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
	if len(h.Tools) == 0 && len(h.OpenAPI) == 0 {
		return errorAt(directive, errors.New("mcp needs at least one tool"))
	}
	if err := h.checkOperationScopes(errorAt); err != nil {
		return err
	}
	imported, err := h.checkDocuments()
	if err != nil {
		return err
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
		if where, ok := imported[t.Name]; ok {
			return errorAt(at.tool, fmt.Errorf("tool %q is defined twice: defined inline, and %s", t.Name, where))
		}
		seen[t.Name] = true
		if h.Discovery == discoverySearch {
			if err := checkSearchName(t.Name); err != nil {
				return errorAt(at.tool, err)
			}
		}
		if err := h.checkToolScopes(t); err != nil {
			return errorAt(at.tool, fmt.Errorf("tool %q: %w", t.Name, err))
		}
		if _, err := compileTool(t, h.Headers, base); err != nil {
			return errorAt(at.of(err), fmt.Errorf("tool %q: %w", t.Name, err))
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

// of is the line an error of the tool belongs to: the method line for its
// path, an arg line for that argument, else the tool line.
func (at toolLines) of(err error) caddyfile.Token {
	var part *upstream.PartError
	if !errors.As(err, &part) {
		return at.tool
	}
	tok := at.method
	if part.Arg != "" {
		tok = at.args[part.Arg]
	}
	if tok.File == "" {
		return at.tool // an argument of input_schema has no line of its own
	}
	return tok
}

// adaptHold is how long an import made while a Caddyfile is adapted
// stays in the pool with no config holding it: the load that follows
// takes it, instead of parsing the document again.
const adaptHold = time.Minute

// checkDocuments imports each document of a file, as Provision will, so
// that what is wrong with it (a file missing, a curation that matches
// nothing, an operation that cannot be mapped) is reported at its
// openapi or operation line. A URL is not fetched while adapting: its
// document's errors come at load, naming the URL and ending with the
// line the config's origin keeps. It returns where each
// imported tool name comes from.
func (h *Handler) checkDocuments() (map[string]string, error) {
	names := make(map[string]string)
	var first *importedDocument // the first document imported
	imported := 0
	for _, s := range h.OpenAPI {
		if s == nil || s.isURL() || strings.TrimSpace(s.Source) == "" || strings.Contains(s.Source, "{") {
			continue
		}
		doc, err := s.load(context.Background(), h)
		if err != nil {
			at := s.at
			var opErr *openapi.OperationError
			if errors.As(err, &opErr) {
				if o := s.Operations[opErr.ID]; o != nil && o.at.File != "" {
					at = o.at
				}
			}
			return nil, errorAt(at, fmt.Errorf("openapi %s: %w", s.shown(), err))
		}
		key := doc.key
		time.AfterFunc(adaptHold, func() { _, _ = imports.Delete(key) })
		for _, t := range doc.res.Tools {
			where := fmt.Sprintf("imported from %s (operation %s)", s.shown(), operationName(&t))
			if other, taken := names[t.Name]; taken {
				return nil, errorAt(s.at, fmt.Errorf("tool %q is defined twice: %s, and %s", t.Name, other, where))
			}
			names[t.Name] = where
		}
		if h.Upstream == "" && doc.serverURL == "" {
			return nil, errorAt(s.at, fmt.Errorf("openapi %s names no server; set upstream", s.shown()))
		}
		if first == nil {
			first = doc
		}
		imported++
	}
	if len(h.Tools) == 0 && len(names) == 0 && first != nil && imported == len(h.OpenAPI) {
		return nil, errorAt(first.src.at, noTool(first))
	}
	h.importKeys = nil // adapting holds none: the pool lets each go after adaptHold
	return names, nil
}
