package caddymcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-mcp/caddy-mcp/openapi"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// ImportedOperation tunes the tool of one operation of an OpenAPI
// document, as the same lines of an inline tool would.
type ImportedOperation struct {
	// Title is the tool's title. Default: the operation's summary.
	Title string `json:"title,omitempty"`

	// Description is the tool's description. Default: the operation's
	// summary and description.
	Description string `json:"description,omitempty"`

	// Timeout overrides the handler's timeout for this tool. Default: the
	// handler's.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxResultSize overrides the handler's max_result_size for this
	// tool; at least 1KiB. Default: the handler's.
	MaxResultSize int64 `json:"max_result_size,omitempty"`

	// Jq reshapes a 2xx JSON answer. The document then no longer describes
	// the result: the tool has the OutputSchema given here, or none.
	// Default: none.
	Jq string `json:"jq,omitempty"`

	// Scopes are the scopes a token must carry to call the tool (with an
	// authorization block). Default: none.
	Scopes []string `json:"scopes,omitempty"`

	// Annotations override the hints the method implies, one by one.
	// Default: GET and HEAD read_only, DELETE destructive, PUT and DELETE
	// idempotent.
	Annotations *Annotations `json:"annotations,omitempty"`

	// Headers are fixed upstream headers of this tool (placeholders
	// allowed), over the handler's; a header parameter they fix is no
	// longer an argument. Default: none.
	Headers http.Header `json:"headers,omitempty"`

	// Query are fixed query parameters (placeholders allowed); a query
	// parameter they fix is no longer an argument. Default: none.
	Query map[string][]string `json:"query,omitempty"`

	// OutputSchema is "lenient", "strict" or "off", as the source's
	// output_schema, or a JSON Schema object of the tool's own, which
	// answers are held to as written. Default: the source's.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`

	// BodyFields are fixed members of the JSON body, by key; a body
	// property they fix is no longer an argument. Default: none.
	BodyFields map[string]json.RawMessage `json:"body_fields,omitempty"`

	// Origin is where the operation block was written: "<file>:<line>",
	// which the Caddyfile adapter fills in, for errors at load. Default:
	// none.
	Origin string `json:"origin,omitempty"`

	// at is the operation line in a Caddyfile, and scopesAt its scopes
	// line, for errors that need the whole handler to be read first.
	at, scopesAt caddyfile.Token
}

// tuning is what openapi applies of o: the request and the answer.
func (o *ImportedOperation) tuning() (*openapi.Tuning, error) {
	t := &openapi.Tuning{Jq: o.Jq, Header: o.Headers, BodyFields: bodyFields(o.BodyFields)}
	for _, k := range slices.Sorted(maps.Keys(o.Query)) {
		for _, v := range o.Query[k] {
			t.Query = append(t.Query, upstream.Field{Name: k, Value: v})
		}
	}
	if len(o.OutputSchema) > 0 {
		var mode string
		if err := json.Unmarshal(o.OutputSchema, &mode); err == nil {
			t.Output = openapi.OutputMode(mode)
			if err := openapi.CheckOutputMode(t.Output); err != nil {
				return nil, err
			}
		} else if _, err := upstream.CompileSchema(o.OutputSchema); err != nil {
			return nil, fmt.Errorf("output_schema: %v", err)
		} else {
			t.OutputSchema = o.OutputSchema
		}
	}
	return t, nil
}

// apply sets on p what o tunes of the tool beside its request: title,
// description, timeout, result size and annotations.
func (o *ImportedOperation) apply(p *provisioned) {
	if o.Title != "" {
		p.mcpTool.Title, p.mcpTool.Annotations.Title = o.Title, o.Title
	}
	if o.Description != "" {
		p.mcpTool.Description = o.Description
	}
	if o.Timeout != 0 {
		p.timeout = o.Timeout
	}
	if o.MaxResultSize != 0 {
		p.shape.MaxSize = o.MaxResultSize
	}
	if a := o.Annotations; a != nil {
		hints := &p.mcpTool.Annotations
		for _, h := range []struct{ from, to **bool }{
			{&a.ReadOnly, &hints.ReadOnlyHint}, {&a.Destructive, &hints.DestructiveHint},
			{&a.Idempotent, &hints.IdempotentHint}, {&a.OpenWorld, &hints.OpenWorldHint},
		} {
			if *h.from != nil {
				*h.to = *h.from
			}
		}
	}
	p.scopes = o.Scopes
}

// check reports what is wrong with o on its own, as a tool's check does.
func (o *ImportedOperation) check() error {
	if o.Timeout < 0 {
		return fmt.Errorf("timeout must not be negative")
	}
	if err := checkResultSize(o.MaxResultSize); err != nil {
		return err
	}
	if o.Jq != "" {
		if err := upstream.CheckJq(o.Jq); err != nil {
			return err
		}
	}
	if len(o.Scopes) > 0 {
		if err := checkScopes(o.Scopes); err != nil {
			return fmt.Errorf("scopes: %v", err)
		}
	}
	_, err := o.tuning()
	return err
}

// operationLines are the lines an operation block takes: those of a
// tool that tune it, not those that define it (the document does).
var operationLines = []string{"title", "description", "timeout", "max_result_size", "jq", "scopes", "annotations", "header", "query", "output_schema", "body_field"}

// parseOperation reads "operation <operationId> { ... }" into s.
func parseOperation(d *caddyfile.Dispenser, s *OpenAPISource) error {
	args := d.RemainingArgs()
	if len(args) != 1 {
		return d.Errf("operation takes an operationId and a block, got %d arguments", len(args))
	}
	id := args[0]
	if _, dup := s.Operations[id]; dup {
		return d.Errf("operation %s is set twice", id)
	}
	// The lines are a tool's, read as a tool's and taken from it.
	t := &Tool{Name: id}
	o := &ImportedOperation{at: d.Token(), Origin: origin(d.Token())}
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if !slices.Contains(operationLines, key) {
			return d.Errf("operation %s: unknown subdirective %q (an operation takes %s)", id, key, strings.Join(operationLines, ", "))
		}
		if seen[key] && key != "header" && key != "query" && key != "annotations" && key != "body_field" {
			return d.Errf("operation %s: %s is set twice", id, key)
		}
		seen[key] = true
		if key == "output_schema" {
			var raw string
			if err := oneArg(d, &raw); err != nil {
				return err
			}
			raw = restoreShorthands(raw)
			if openapi.CheckOutputMode(openapi.OutputMode(raw)) == nil {
				o.OutputSchema, _ = json.Marshal(raw)
				continue
			}
			if err := badJSON(d, raw); err != nil {
				return fmt.Errorf("operation %s: output_schema is lenient, strict, off or a JSON schema: %w", id, err)
			}
			o.OutputSchema = json.RawMessage(raw)
			continue
		}
		if key == "scopes" {
			o.scopesAt = d.Token()
		}
		if _, err := t.parseLine(d, key); err != nil {
			return err
		}
	}
	o.Title, o.Description, o.Timeout, o.MaxResultSize = t.Title, t.Description, t.Timeout, t.MaxResultSize
	o.Jq, o.Scopes, o.Annotations, o.Headers, o.Query, o.BodyFields = t.Jq, t.Scopes, t.Annotations, t.Headers, t.Query, t.BodyFields
	if err := o.check(); err != nil {
		return d.Errf("operation %s: %v", id, err)
	}
	if s.Operations == nil {
		s.Operations = make(map[string]*ImportedOperation)
	}
	s.Operations[id] = o
	return nil
}

// checkOperationScopes refuses operation scopes on an endpoint without
// authorization, as for inline tools. at gives the place of a line, for
// an error read from a Caddyfile; nil for none.
func (h *Handler) checkOperationScopes(at func(caddyfile.Token, error) error) error {
	if h.Authorization != nil {
		return nil
	}
	for _, s := range h.OpenAPI {
		if s == nil {
			continue
		}
		for _, id := range slices.Sorted(maps.Keys(s.Operations)) {
			if o := s.Operations[id]; o != nil && len(o.Scopes) > 0 {
				err := fmt.Errorf("openapi %s: operation %s: %w", s.shown(), id, errScopesWithoutAuthorization)
				if at != nil && o.scopesAt.Text != "" {
					return at(o.scopesAt, err)
				}
				return err
			}
		}
	}
	return nil
}
