package caddymcp

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// BackendToolScopes are the scopes that the backend tools matching a glob
// need, beside those of the whole backend.
type BackendToolScopes struct {
	// Tool is a glob of backend tool names: '*' matches any characters,
	// '/' included, '?' one, [...] a class.
	Tool string `json:"tool"`

	// Scopes must all be carried by the caller's token.
	Scopes []string `json:"scopes"`
}

// backendScopes are the scopes one backend's tools need, from its config.
type backendScopes struct {
	all   []string            // every tool of the backend
	tools []BackendToolScopes // the tools matching a glob, besides
	names []string            // every scope named above, sorted, once
}

// newBackendScopes checks the scopes of b; nil when it names none.
// Scopes need the handler's authorization block: without one, no token
// is checked.
func newBackendScopes(b *CodeModeBackend, authorization bool) (*backendScopes, error) {
	if len(b.Scopes) == 0 && len(b.ToolScopes) == 0 {
		return nil, nil
	}
	if !authorization {
		return nil, errScopesWithoutAuthorization
	}
	if err := checkScopes(b.Scopes); err != nil {
		return nil, fmt.Errorf("scopes: %w", err)
	}
	s := &backendScopes{all: b.Scopes, tools: b.ToolScopes}
	s.names = append(s.names, b.Scopes...)
	for _, ts := range b.ToolScopes {
		if _, err := path.Match(ts.Tool, ""); err != nil || ts.Tool == "" {
			return nil, fmt.Errorf("tool_scopes %q: not a glob of tool names", ts.Tool)
		}
		if len(ts.Scopes) == 0 {
			return nil, fmt.Errorf("tool_scopes %s: no scopes", ts.Tool)
		}
		if err := checkScopes(ts.Scopes); err != nil {
			return nil, fmt.Errorf("tool_scopes %s: %w", ts.Tool, err)
		}
		s.names = append(s.names, ts.Scopes...)
	}
	slices.Sort(s.names)
	s.names = slices.Compact(s.names)
	return s, nil
}

// globMatch is path.Match with '*' matching '/' too: a tool name is not a
// path, and a glob that needs scopes must not miss "admin/delete".
func globMatch(glob, name string) bool {
	ok, _ := path.Match(strings.ReplaceAll(glob, "/", "\x00"), strings.ReplaceAll(name, "/", "\x00"))
	return ok
}

// needs returns the scopes the backend tool needs; nil for none.
func (s *backendScopes) needs(tool string) []string {
	if s == nil {
		return nil
	}
	needed := s.all
	for _, ts := range s.tools {
		if !globMatch(ts.Tool, tool) {
			continue
		}
		for _, scope := range ts.Scopes {
			if !slices.Contains(needed, scope) {
				needed = append(slices.Clip(needed), scope)
			}
		}
	}
	return needed
}

// refuse returns an error for a call of tool by caller when caller lacks
// scopes the tool needs; nil when the call may go on.
func (s *backendScopes) refuse(backend, tool string, caller *authorized) error {
	missing := s.missing(tool, caller)
	if len(missing) == 0 {
		return nil
	}
	return &codemode.ToolError{Message: fmt.Sprintf("insufficient scope: %s.%s needs %s, which the caller's token does not carry",
		backend, tool, strings.Join(missing, " "))}
}

// missing are the scopes the tool needs that caller does not hold.
func (s *backendScopes) missing(tool string, caller *authorized) []string {
	needed := s.needs(tool)
	if len(needed) == 0 || caller == nil {
		return needed
	}
	return caller.id.Missing(needed)
}

// held says which of the scopes the backend names the caller holds, as
// a key for the views built for callers like it.
func (s *backendScopes) held(caller *authorized) string {
	var b strings.Builder
	for _, scope := range s.names {
		if caller != nil && slices.Contains(caller.id.Scopes, scope) {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

// maxScopedViews bounds the views kept per backend tool list, one per set
// of scopes held: a handful in practice.
const maxScopedViews = 64

// scopedViews are the APIs of one backend tool list as callers with
// different scopes see it: only the tools they may call.
type scopedViews struct {
	mu    sync.Mutex
	byKey map[string]*codemode.BackendAPI
}

// apiFor returns v's API for caller: v.api itself when the backend's
// tools need no scopes, else the tools caller holds the scopes for. A
// backend whose every tool is left out keeps no instructions either.
func (v *backendView) apiFor(caller *authorized) *codemode.BackendAPI {
	s := v.scopes
	if s == nil {
		return v.api
	}
	key := s.held(caller)
	v.scoped.mu.Lock()
	defer v.scoped.mu.Unlock()
	if api, ok := v.scoped.byKey[key]; ok {
		return api
	}
	b := codemode.APIBackend{Name: v.name, Instructions: v.instructions}
	for _, t := range v.tools {
		missing := s.missing(t.Name, caller)
		if len(missing) == 0 {
			b.Tools = append(b.Tools, t)
			continue
		}
		// The code that calls it is told why it cannot.
		if b.Hidden == nil {
			b.Hidden = make(map[string]string)
		}
		scope := "scope"
		if len(missing) > 1 {
			scope = "scopes"
		}
		b.Hidden[t.Name] = fmt.Sprintf("it needs the %s %s, which the caller's token does not carry", scope, strings.Join(missing, " "))
	}
	if len(b.Tools) == 0 {
		b.Instructions = ""
	}
	api := codemode.NewBackendAPI(b)
	if v.scoped.byKey == nil {
		v.scoped.byKey = make(map[string]*codemode.BackendAPI)
	}
	if len(v.scoped.byKey) < maxScopedViews {
		v.scoped.byKey[key] = api
	}
	return api
}

// scoped reports whether what a caller is told of the backends' tools
// depends on its token: whether a backend has scopes.
func (cm *CodeMode) scoped() bool {
	for _, b := range cm.backends {
		if b.scopes != nil {
			return true
		}
	}
	return false
}
