package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/caddy-mcp/caddy-mcp/internal/jsonschema"
)

// CompileSchema compiles a JSON Schema document (draft 2020-12 unless it
// names another draft in $schema). References outside the document are
// refused: a tool schema must not make the server read files or fetch URLs.
func CompileSchema(doc []byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("external reference %q is not allowed", s)
	}
	const url = "mem://schema.json"
	if err := c.AddResource(url, bytes.NewReader(doc)); err != nil {
		return nil, schemaError(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, schemaError(err)
	}
	return s, nil
}

// schemaError shortens the compiler's messages, which name our in-memory
// URL, and keeps the reason.
func schemaError(err error) error {
	var se *jsonschema.SchemaError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return fmt.Errorf("not a valid JSON Schema: %s", strings.Join(Violations(ve), "; "))
	}
	msg := strings.ReplaceAll(err.Error(), "mem://schema.json", "schema")
	return errors.New(msg)
}

// Violations lists the leaf violations of a validation error as
// "<instance path>: <reason>", the root written as "/", by instance path
// (array items in order) then reason: the first jsonschema.Kept of them,
// then, when there were more, a last line "and N more". A validation
// keeps no more than these, however often the instance fails, and a line
// longer than maxViolationLine keeps its start and end. Other errors come
// back as their message.
func Violations(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	leaves, more := ve.Leaves()
	out := make([]string, 0, len(leaves)+1)
	seen := make(map[string]bool, len(leaves))
	for _, l := range leaves {
		loc := l.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		// A property named "" is at "/" too.
		if line := shortened(loc + ": " + l.Message); !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %s more", humanize.Comma(int64(more))))
	}
	return out
}

// maxViolationLine bounds a line of Violations: a path may name a
// property of any length, and a reason may quote the value.
const maxViolationLine = 1024

// shortened cuts the middle out of a line longer than maxViolationLine.
func shortened(line string) string {
	if len(line) <= maxViolationLine {
		return line
	}
	head, tail := maxViolationLine*2/3, len(line)-maxViolationLine/3
	for head > 0 && !utf8.RuneStart(line[head]) {
		head--
	}
	for tail < len(line) && !utf8.RuneStart(line[tail]) {
		tail++
	}
	return fmt.Sprintf("%s… (%d bytes left out) …%s", line[:head], tail-head, line[tail:])
}
