package openapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/caddy-mcp/caddy-mcp/internal/suggest"
)

// An operation as the curation's patterns see it.
type curated struct {
	id, method, path string
	tags             []string
}

// unmatched reports the first include or exclude pattern, tag, rename,
// describe or operation that matches no operation of ops, naming the
// closest operationIds (or tags, or method and path) the document has: a
// typo there would otherwise import nothing, silently.
func (c *Curation) unmatched(ops []curated) error {
	ids, lines, tags := make([]string, 0, len(ops)), make([]string, 0, len(ops)), []string{}
	has := make(map[string]bool)
	for _, op := range ops {
		if op.id != "" {
			ids = append(ids, op.id)
			has[op.id] = true
		}
		lines = append(lines, op.method+" "+op.path)
		for _, t := range op.tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	for _, list := range []struct {
		name     string
		patterns []string
	}{{"include", c.Include}, {"exclude", c.Exclude}} {
		for _, p := range list.patterns {
			if slices.ContainsFunc(ops, func(op curated) bool { return matchesAny([]string{p}, op.id, op.method, op.path) }) {
				continue
			}
			if _, _, byPath := strings.Cut(strings.TrimSpace(p), " "); byPath {
				return fmt.Errorf("%s %q matches no operation%s", list.name, p, closest("method and path", p, lines))
			}
			return fmt.Errorf("%s %q matches no operationId%s", list.name, p, closest("operationId", p, ids))
		}
	}
	for _, t := range c.Tags {
		if !slices.Contains(tags, t) {
			return fmt.Errorf("tags %q: no operation has that tag%s", t, closest("tag", t, tags))
		}
	}
	for _, kind := range []struct {
		name string
		keys []string
	}{{"rename", sortedKeys(c.Rename)}, {"describe", sortedKeys(c.Describe)}, {"operation", sortedKeys(c.Tune)}} {
		for _, id := range kind.keys {
			if !has[id] && kind.name == "operation" {
				return &OperationError{ID: id, Err: fmt.Errorf("the document has no operation with that operationId%s", closest("operationId", id, ids))}
			}
			if !has[id] {
				return fmt.Errorf("%s %s: the document has no operation with that operationId%s", kind.name, id, closest("operationId", id, ids))
			}
		}
	}
	return nil
}

// maxSuggestions is how many close names an error offers.
const maxSuggestions = 3

// closest is "; the closest <what>s are a, b and c" for the candidates
// nearest to s by edit distance (ignoring case and glob characters), or
// "" when none is near.
func closest(what, s string, candidates []string) string {
	names := suggest.Near(s, candidates, maxSuggestions)
	switch len(names) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("; did you mean the %s %s?", what, names[0])
	}
	return fmt.Sprintf("; the closest %ss are %s", what, suggest.And(names))
}
