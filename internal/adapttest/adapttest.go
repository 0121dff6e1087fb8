// Package adapttest holds what the Caddyfile tests of several packages
// share: the adapt golden files (a Caddyfile, a line of ten dashes, then
// the expected JSON or error text, as in Caddy's own caddyfile_adapt
// tests) and a walk of adapted JSON that finds handlers.
package adapttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// Golden is one golden file.
type Golden struct {
	// File is the path of the golden file.
	File string
	// Input is the Caddyfile, trimmed and ending in one newline, as the
	// Caddyfile formatter writes it.
	Input string
	// Expected is the expected JSON config or the text the adapter's
	// error must contain, trimmed.
	Expected string
}

// WantsJSON reports whether g expects a config rather than an error.
func (g Golden) WantsJSON() bool { return strings.HasPrefix(g.Expected, "{") }

// Goldens reads the golden files matching pattern; none is a failure.
func Goldens(t testing.TB, pattern string) []Golden {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files match %s", pattern)
	}
	var out []Golden
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		input, expected, ok := strings.Cut(string(data), "----------")
		if !ok {
			t.Fatalf("%s has no ---------- line", file)
		}
		out = append(out, Golden{File: file, Input: strings.TrimSpace(input) + "\n", Expected: strings.TrimSpace(expected)})
	}
	return out
}

// Adapt adapts a Caddyfile and decodes the JSON; an error or a warning
// fails the test (the test Caddyfiles are formatted, and a handler that
// fails to marshal is only a warning).
func Adapt(t testing.TB, input string) any {
	t.Helper()
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("adapt warning: %s:%d: %s", w.File, w.Line, w.Message)
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("adapted JSON: %v", err)
	}
	return doc
}

// Handlers returns the JSON of every handler named name in doc (decoded
// JSON), without its "handler" key, in document order (object keys
// sorted, for a stable order).
func Handlers(doc any, name string) []json.RawMessage {
	var found []json.RawMessage
	walk(doc, func(h map[string]any) bool {
		if h["handler"] != name {
			return true
		}
		rest := make(map[string]any, len(h))
		for k, v := range h {
			if k != "handler" {
				rest[k] = v
			}
		}
		raw, _ := json.Marshal(rest)
		found = append(found, raw)
		return false
	})
	return found
}

// HandlerNames returns the name of every handler in doc (decoded JSON),
// in document order: the order a route's handlers run in.
func HandlerNames(doc any) []string {
	var names []string
	walk(doc, func(h map[string]any) bool {
		name, _ := h["handler"].(string)
		names = append(names, name)
		return true
	})
	return names
}

// walk calls visit on every object of v with a "handler" key, looking
// inside it while visit returns true.
func walk(v any, visit func(map[string]any) bool) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["handler"]; ok && !visit(v) {
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walk(v[k], visit)
		}
	case []any:
		for _, e := range v {
			walk(e, visit)
		}
	}
}
