package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// OutputMode is how an operation's response schema becomes its tool's
// output schema.
type OutputMode string

// The output modes.
const (
	// OutputLenient publishes the response schema without required
	// members and with null accepted everywhere, compacted, so that an
	// answer that drifts from its document in the usual ways still
	// matches; one that does not is an error result that carries the
	// answer. The default.
	OutputLenient OutputMode = "lenient"
	// OutputStrict publishes the response schema as the document writes
	// it; an answer that breaks it is that same error result.
	OutputStrict OutputMode = "strict"
	// OutputOff publishes no output schema: a JSON answer is text only.
	OutputOff OutputMode = "off"
)

// CheckOutputMode reports whether m is an output mode ("" is the
// default).
func CheckOutputMode(m OutputMode) error {
	switch m {
	case "", OutputLenient, OutputStrict, OutputOff:
		return nil
	}
	return fmt.Errorf("output_schema %q: want lenient, strict or off, or a JSON schema", m)
}

// Tuning changes the request and the answer of one operation's tool.
type Tuning struct {
	// Jq reshapes a 2xx JSON answer; the document's response schema then
	// no longer describes the result, so the tool has the output schema
	// OutputSchema gives, or none.
	Jq string
	// Header and Query are fixed upstream headers and query parameters
	// (placeholders allowed), over those the document implies; a
	// parameter they fix is no longer an argument.
	Header http.Header
	Query  []upstream.Field
	// Output is this operation's output mode; "" for the document's.
	Output OutputMode
	// OutputSchema is the operator's own output schema, checked strictly;
	// nil for the one Output makes.
	OutputSchema json.RawMessage
	// BodyFields are fixed members of the JSON body; a body property they
	// fix is no longer an argument.
	BodyFields []upstream.BodyField
}

// fixesQuery reports whether t fixes the query parameter name.
func (t *Tuning) fixesQuery(name string) bool {
	return t != nil && slices.ContainsFunc(t.Query, func(f upstream.Field) bool { return f.Name == name })
}

// fixesHeader reports whether t fixes the header field name.
func (t *Tuning) fixesHeader(name string) bool {
	return t != nil && len(t.Header.Values(name)) > 0
}

// fixesBody reports whether t fixes the body member key.
func (t *Tuning) fixesBody(key string) bool {
	return t != nil && slices.ContainsFunc(t.BodyFields, func(f upstream.BodyField) bool { return f.Key == key })
}

// OperationError is a fault of the configuration of one operation: a
// tuned operation that cannot be mapped, or an operation block, rename or
// describe naming no operation.
type OperationError struct {
	ID  string // the operationId
	Err error
}

func (e *OperationError) Error() string { return "operation " + e.ID + ": " + e.Err.Error() }
func (e *OperationError) Unwrap() error { return e.Err }
