package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
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

// Violations lists every leaf violation of a validation error as
// "<instance path>: <reason>", the root written as "/". Other errors come
// back as their message.
func Violations(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	seen := make(map[string]bool)
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := e.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			line := loc + ": " + e.Message
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(out)
	return out
}
