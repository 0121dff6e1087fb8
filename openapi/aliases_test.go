package openapi

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/caddy-mcp/caddy-mcp/internal/hostileinput"
)

// TestLoadRefusesAliasBombs: YAML whose aliases would expand it far past
// what it writes is refused before kin-openapi reads it, in little memory:
// 5 levels, a million values, took half a gigabyte to load, and 7 levels
// ended the process (internal/loadtest shows that through Caddy). Aliases
// that only share a few schemas load.
func TestLoadRefusesAliasBombs(t *testing.T) {
	// Not parallel: it measures the process's allocations, and the
	// parallel tests of the package load GitHub's whole document.
	for _, levels := range []int{5} {
		t.Run(fmt.Sprintf("%d levels", levels), func(t *testing.T) {
			doc := hostileinput.AliasBomb(levels, 10)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Load([]byte(doc))
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "alias bomb") {
				t.Fatalf("%d bytes of YAML: got %v, want the alias bomb refused", len(doc), err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("refusing %d bytes allocated %d MB", len(doc), alloc>>20)
			}
			t.Log(err)
		})
	}
	t.Run("aliases within the allowance", func(t *testing.T) {
		d, err := Load(hostileinput.AliasBomb(3, 10))
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Tools(Curation{Output: OutputStrict}, nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("%v, %+v", err, res)
		}
		if !strings.Contains(string(res.Tools[0].Definition.OutputSchema), `"p9":{"properties":{"p0"`) {
			t.Errorf("the aliases are not expanded in the output schema: %.300s", res.Tools[0].Definition.OutputSchema)
		}
	})
	t.Run("merge keys", func(t *testing.T) {
		doc := `openapi: 3.0.3
info: {title: merge, version: "1"}
components:
  parameters:
    page: &page {name: page, in: query, schema: {type: integer}}
paths:
  /items:
    get:
      operationId: list
      parameters:
        - *page
        - {<<: *page, name: per_page}
      responses: {"200": {description: ok}}
`
		d, err := Load([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Tools(Curation{}, nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("%v, %+v", err, res)
		}
		if in := string(res.Tools[0].Definition.InputSchema); !strings.Contains(in, `"page"`) || !strings.Contains(in, `"per_page"`) {
			t.Errorf("input schema %s, want page and per_page", in)
		}
	})
	t.Run("an alias within its own anchor", func(t *testing.T) {
		doc := "openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\ncomponents:\n  schemas:\n    a: &a {type: object, properties: {self: *a}}\npaths: {/x: {get: {responses: {\"200\": {description: ok}}}}}\n"
		_, err := Load([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "*a refers to a node that holds it") {
			t.Fatalf("got %v, want the alias within its anchor refused", err)
		}
	})
}

// aliasDocument builds YAML with anchors, aliases and merge keys from a
// program of bytes: each pair is an anchored level of width aliases to
// the level before (or a merge of it), the last level used in a path.
func aliasDocument(prog []byte) string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\ncomponents:\n  schemas:\n    a0: &a0 {type: string}\n")
	level := 0
	for i := 0; i+1 < len(prog) && level < 40; i += 2 {
		kind, width := prog[i]%3, int(prog[i+1]%16)
		level++
		fmt.Fprintf(&b, "    a%d: &a%d ", level, level)
		switch kind {
		case 0: // properties, each an alias
			b.WriteString("{type: object, properties: {")
			for w := range width {
				if w > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "p%d: *a%d", w, level-1-w%level)
			}
			b.WriteString("}}\n")
		case 1: // allOf of aliases
			b.WriteString("{allOf: [")
			for w := range width + 1 {
				if w > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "*a%d", level-1)
			}
			b.WriteString("]}\n")
		default: // a merge key
			fmt.Fprintf(&b, "{<<: *a%d, description: merged}\n", level-1)
		}
	}
	fmt.Fprintf(&b, "paths: {/x: {get: {operationId: x, responses: {\"200\": {description: ok, content: {application/json: {schema: *a%d}}}}}}}\n", level)
	return b.String()
}

// expandedNodes counts the nodes of a YAML tree with its aliases expanded
// one by one, as a decoder would meet them, up to limit+1.
func expandedNodes(n *yaml.Node, limit int) int {
	total := 1
	if n.Kind == yaml.AliasNode {
		total = expandedNodes(n.Alias, limit)
	}
	for _, c := range n.Content {
		if total += expandedNodes(c, limit-total); total > limit {
			return limit + 1
		}
	}
	return min(total, limit+1)
}

// FuzzAliases: the check counts aliases expanded as a decoder meets them
// (each one walked again), refuses exactly the documents past the
// allowance, and Load of any of them ends.
func FuzzAliases(f *testing.F) {
	f.Add([]byte{0, 9, 0, 9, 0, 9})
	f.Add([]byte{0, 15, 1, 15, 2, 0, 0, 15, 0, 15, 0, 15, 0, 15})
	f.Add([]byte{2, 0, 2, 0, 1, 3})
	f.Fuzz(func(t *testing.T, prog []byte) {
		doc := aliasDocument(prog)
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Fatalf("the program made invalid YAML: %v\n%s", err, doc)
		}
		written := countNodes(&root)
		limit := written + max(written, minAliasAllowance)
		over := expandedNodes(&root, limit) > limit
		err := checkAliases([]byte(doc))
		if over != (err != nil) {
			t.Fatalf("expanded past %d: %v, but the check says %v\n%s", limit, over, err, doc)
		}
		if !over {
			_, _ = Load([]byte(doc))
		}
	})
}
