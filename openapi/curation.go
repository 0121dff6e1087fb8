package openapi

import (
	"fmt"
	"slices"
	"strings"
)

// Curation chooses which operations become tools and how they are named
// and described. The zero Curation takes every operation as it is.
type Curation struct {
	// Include keeps only the operations one of these patterns matches:
	// an operationId glob ("repos/*"), or a method and path glob
	// ("GET /repos/*", "* /users/{username}"). '*' matches any run of
	// characters, '/' included; '?' one character. Default: every one.
	Include []string
	// Exclude drops the operations one of these patterns matches, after
	// Include.
	Exclude []string
	// Tags keeps only the operations carrying one of these tags. Default:
	// any tags, or none.
	Tags []string
	// Rename gives the tool of an operationId another name.
	Rename map[string]string
	// Describe gives the tool of an operationId another description.
	Describe map[string]string
	// Output is how the response schemas become output schemas; default
	// OutputLenient.
	Output OutputMode
	// Tune changes the tools of single operations, by operationId. A
	// tuned operation that cannot be mapped is an error, not a skip.
	Tune map[string]*Tuning
}

// check reports a name a rename may not take, an empty description or
// pattern, and an output mode that is not one.
func (c *Curation) check() error {
	for _, id := range sortedKeys(c.Rename) {
		if name := c.Rename[id]; !renameRule.MatchString(name) {
			return fmt.Errorf("rename %s: tool name %q: use 1 to 128 letters, digits, '_', '-' or '.'", id, name)
		}
	}
	for _, id := range sortedKeys(c.Describe) {
		if strings.TrimSpace(c.Describe[id]) == "" {
			return fmt.Errorf("describe %s: the description is empty", id)
		}
	}
	for _, id := range sortedKeys(c.Tune) {
		if t := c.Tune[id]; t != nil {
			if err := CheckOutputMode(t.Output); err != nil {
				return fmt.Errorf("operation %s: %v", id, err)
			}
		}
	}
	if err := CheckOutputMode(c.Output); err != nil {
		return err
	}
	for _, p := range slices.Concat(c.Include, c.Exclude) {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("an empty pattern matches no operation")
		}
	}
	return nil
}

// selects reports whether the curation takes the operation.
func (c *Curation) selects(id, method, path string, tags []string) bool {
	if len(c.Include) > 0 && !matchesAny(c.Include, id, method, path) {
		return false
	}
	if matchesAny(c.Exclude, id, method, path) {
		return false
	}
	if len(c.Tags) > 0 && !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(c.Tags, t) }) {
		return false
	}
	return true
}

func matchesAny(patterns []string, id, method, path string) bool {
	for _, p := range patterns {
		if m, pathGlob, ok := strings.Cut(strings.TrimSpace(p), " "); ok {
			if glob(strings.ToUpper(m), method) && glob(strings.TrimSpace(pathGlob), path) {
				return true
			}
		} else if id != "" && glob(p, id) {
			return true
		}
	}
	return false
}

// glob reports whether s matches pattern, where '*' is any run of
// characters and '?' any one. It runs in O(len(pattern)*len(s)) at worst.
func glob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
