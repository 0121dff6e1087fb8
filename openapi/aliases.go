package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v4"
)

// minAliasAllowance is how many nodes YAML aliases may add to any
// document; past it, at most as many as the document writes itself.
// kin-openapi decodes each value on its own, so the YAML library's guard
// against alias bombs never sees the whole: 1.2 KB of anchors seven
// levels deep, ten aliases a level, would be ten million values, each a
// few hundred bytes to decode, and the end of the process. 250,000 added
// nodes cost about 150 MB at most to load.
const minAliasAllowance = 250_000

// checkAliases refuses YAML whose aliases (*name, and merge keys, which
// are aliases) expand it by more than the allowance, or that refers to a
// node from within it, on one walk of the node tree in which each node is
// counted once. JSON, and YAML without aliases, are not walked.
func checkAliases(data []byte) error {
	if bytes.IndexByte(data, '*') < 0 || json.Valid(data) {
		return nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil // not YAML: the parse that follows says so
	}
	w := aliasWalk{expanded: make(map[*yaml.Node]int), open: make(map[*yaml.Node]bool)}
	written := countNodes(&root)
	w.limit = written + max(written, minAliasAllowance)
	n, err := w.size(&root)
	if err != nil {
		return err
	}
	if n > w.limit {
		return fmt.Errorf("YAML aliases expand the document's %d nodes past %d: aliases may add at most %d nodes, or as many as the document writes; refused as an alias bomb", written, w.limit, minAliasAllowance)
	}
	return nil
}

// aliasWalk counts the nodes of a YAML tree with its aliases expanded.
type aliasWalk struct {
	limit    int
	expanded map[*yaml.Node]int  // the expanded size of each node counted
	open     map[*yaml.Node]bool // the nodes being counted: an alias to one is a cycle
}

// size is the number of nodes n stands for once its aliases are
// expanded; past the limit it stops counting and returns more than it.
func (w *aliasWalk) size(n *yaml.Node) (int, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := w.expanded[n]; ok {
		return s, nil
	}
	if w.open[n] {
		return 0, fmt.Errorf("the document's YAML alias *%s refers to a node that holds it", n.Anchor)
	}
	w.open[n] = true
	defer delete(w.open, n)
	total := 1
	if n.Kind == yaml.AliasNode {
		s, err := w.size(n.Alias)
		if err != nil {
			return 0, err
		}
		total = s
	}
	for _, child := range n.Content {
		s, err := w.size(child)
		if err != nil {
			return 0, err
		}
		if total += s; total > w.limit {
			return total, nil
		}
	}
	w.expanded[n] = total
	return total, nil
}

// countNodes is the number of nodes the document writes: an alias is
// one.
func countNodes(n *yaml.Node) int {
	total := 1
	for _, child := range n.Content {
		total += countNodes(child)
	}
	return total
}
