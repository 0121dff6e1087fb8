package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/caddy-mcp/caddy-mcp/codemode/declarations"
	"github.com/caddy-mcp/caddy-mcp/search"
)

// Bounds of one search, the same for the search tool and tools.search:
// those of search.ParseArguments.
const (
	// DefaultSearchLimit is how many matches a search without a limit
	// returns.
	DefaultSearchLimit = search.DefaultLimit
	// MaxSearchLimit is the largest limit a search takes: each match
	// brings its declarations, output type included.
	MaxSearchLimit = search.MaxLimit
	// MaxSearchQuery bounds a query, in bytes: a few words do; a pasted
	// document is a mistake.
	MaxSearchQuery = search.MaxQuery
)

// Found is one backend tool a search found, as the code and the model get
// it: where it lives, what to call it by, and its declaration.
type Found struct {
	Backend     string `json:"backend"`
	Tool        string `json:"tool"`       // the backend's own tool name
	Identifier  string `json:"identifier"` // the method: await <backend>.<identifier>({...})
	Description string `json:"description,omitempty"`
	// Declaration is the TypeScript of the tool alone: its backend's
	// global with this one method, and its output type.
	Declaration string `json:"declaration"`

	decl         declarations.Tool
	instructions string // its backend's
}

// Matches is what a search found: the best tools, and how many matched
// among how many the caller may call.
type Matches struct {
	Found   []Found
	Matched int // the tools that match; Found holds the best of them
	Of      int // the tools searched
}

// CheckSearch returns an error, worded for the model, when query or limit
// are out of bounds.
func CheckSearch(query string, limit int) error {
	return SearchError(search.Check(query, limit))
}

// SearchError words p, a problem with the arguments of the search tool
// or tools.search, for the model; nil for none.
func SearchError(p *search.Problem) error {
	if p == nil {
		return nil
	}
	switch p.Fault {
	case search.NotAnObject:
		return errors.New(`the arguments must be an object: {"query": "what the tool should do", "limit"?: n}`)
	case search.UnknownArgument:
		return fmt.Errorf(`unknown argument %q: search takes "query" and "limit"`, p.Argument)
	case search.QueryNotString:
		return errors.New(`the "query" argument is required: a string saying in a few words what the tool should do`)
	case search.QueryEmpty:
		return errors.New("the query is empty: say in a few words what the tool should do")
	case search.QueryTooLong:
		return fmt.Errorf("the query is %d bytes; the limit is %d: use a few words", p.QueryBytes, MaxSearchQuery)
	case search.LimitNotInteger:
		return fmt.Errorf(`the "limit" argument must be an integer from 1 to %d`, MaxSearchLimit)
	default:
		return fmt.Errorf("limit %s is out of range: use 1 to %d (default %d)", p.Limit, MaxSearchLimit, DefaultSearchLimit)
	}
}

// Catalog is a search index over the tools of backends. A host builds it
// once per set of tool lists, from the backends' full APIs, and shares it,
// read-only, with every search; each search then keeps to the view of its
// caller.
type Catalog struct {
	backends []*BackendAPI
	refs     []toolRef // index in the search index -> the tool
	index    *search.Index
}

type toolRef struct{ backend, tool int }

// NewCatalog indexes the tools of backends by their names, descriptions
// and argument names and descriptions. Backends that are unavailable
// bring no tools.
func NewCatalog(backends []*BackendAPI) *Catalog {
	c := &Catalog{backends: backends}
	var tools []search.Tool
	for i, b := range backends {
		for j, t := range b.decl.Tools {
			c.refs = append(c.refs, toolRef{i, j})
			tools = append(tools, search.Tool{Name: t.Name, Description: t.Description, Args: schemaArgs(t.InputSchema)})
		}
	}
	c.index = search.New(tools)
	return c
}

// Len is the number of tools indexed.
func (c *Catalog) Len() int { return len(c.refs) }

// Search returns the best matches for query, at most limit, after
// CheckSearch, and how many tools match of how many were searched. view, when not nil, is the caller's API of each backend, in
// the catalog's order: only the tools it holds are found, under the
// identifiers it gives them (a view that leaves tools out may name the
// others differently).
func (c *Catalog) Search(query string, limit int, view []*BackendAPI) (Matches, error) {
	if err := CheckSearch(query, limit); err != nil {
		return Matches{}, err
	}
	if view != nil && len(view) != len(c.backends) {
		return Matches{}, fmt.Errorf("a view of %d backends for a catalog of %d", len(view), len(c.backends))
	}
	// Where the tool is in the caller's view; -1 when it is not there.
	in := func(r toolRef) (*BackendAPI, int) {
		full := c.backends[r.backend]
		if view == nil || view[r.backend] == full {
			return full, r.tool
		}
		// Tools of one name are one tool to a view (the first of them).
		name := full.decl.Tools[r.tool].Name
		if full.byTool[name] != r.tool {
			return nil, -1
		}
		if j, ok := view[r.backend].byTool[name]; ok {
			return view[r.backend], j
		}
		return nil, -1
	}
	matches, total := c.index.Search(query, limit, func(i int) bool {
		_, j := in(c.refs[i])
		return j >= 0
	})
	found := make([]Found, len(matches))
	for k, m := range matches {
		api, j := in(c.refs[m.Index])
		t := api.decl.Tools[j]
		found[k] = Found{
			Backend: api.name, Tool: t.Name, Identifier: t.Ident,
			Description: declarations.Summary(t.Description),
			Declaration: declarations.Render([]declarations.Backend{{Name: api.name, Tools: []declarations.Tool{t}}}),
			decl:        t, instructions: api.decl.Instructions,
		}
	}
	of := 0
	for i, b := range c.backends {
		if view != nil {
			b = view[i]
		}
		of += len(b.byTool)
	}
	return Matches{Found: found, Matched: total, Of: of}, nil
}

// schemaArgs reads the top-level properties of an input schema for the
// index: their names and descriptions. A schema that is not an object
// of properties gives none.
func schemaArgs(raw json.RawMessage) []search.Arg {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	args := make([]search.Arg, 0, len(s.Properties))
	for name, p := range s.Properties {
		var prop struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(p, &prop)
		args = append(args, search.Arg{Name: name, Description: prop.Description})
	}
	return args
}

// SearchAnswer is what the model reads of a search: how many tools match
// of how many, the matches in rank order with what to call them by, then
// their TypeScript declarations, grouped by backend under its
// instructions. Past budget bytes of declarations, the remaining matches
// are named with their summary but not declared; the first is always
// declared. Each tool's description is written once, in its declaration.
func SearchAnswer(query string, m Matches, budget int) string {
	var b strings.Builder
	found := m.Found
	if len(found) == 0 {
		fmt.Fprintf(&b, "No tool of %d matches %q. Try other words: what the tool does, or the kind of thing it reads or changes.", m.Of, CutUTF8(query, 200))
		return b.String()
	}
	fmt.Fprintf(&b, "%d of %d tools match %q", m.Matched, m.Of, CutUTF8(query, 200))
	if m.Matched > len(found) {
		fmt.Fprintf(&b, "; the best %d, best first (search with more words to narrow it):\n", len(found))
	} else {
		b.WriteString(", best first:\n")
	}
	size := 0
	declared := 0
	for i, f := range found {
		if i == 0 || size+len(f.Declaration) <= budget {
			size += len(f.Declaration)
			declared = i + 1
		} else {
			break
		}
	}
	for i, f := range found {
		line := fmt.Sprintf("- %s.%s", f.Backend, f.Identifier)
		if f.Identifier != f.Tool {
			line += fmt.Sprintf(" (the backend tool %q)", f.Tool)
		}
		if i >= declared {
			line += " [not declared below, to keep this answer short: search for it alone]"
			if summary := firstLine(f.Description); summary != "" {
				line += ": " + summary
			}
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\nCall them in the code you give the execute tool, as declared here:\n\n```ts\n")
	b.WriteString(groupedDeclarations(found[:declared]))
	b.WriteString("```")
	return b.String()
}

// groupedDeclarations declares the tools found, one global per backend in
// the order the backends first appear, under the backend's instructions,
// each with its tools in rank order.
func groupedDeclarations(found []Found) string {
	var decls []declarations.Backend
	at := make(map[string]int)
	for _, f := range found {
		i, ok := at[f.Backend]
		if !ok {
			i = len(decls)
			at[f.Backend] = i
			decls = append(decls, declarations.Backend{Name: f.Backend, Instructions: f.instructions})
		}
		decls[i].Tools = append(decls[i].Tools, f.decl)
	}
	return declarations.Render(decls)
}

// firstLine is the first line of text, cut at 200 bytes.
func firstLine(text string) string {
	text, _, _ = strings.Cut(strings.TrimSpace(text), "\n")
	text = strings.TrimSpace(text)
	if len(text) > 200 {
		text = CutUTF8(text, 200) + "..."
	}
	return text
}

// SearchGlobal is the global that holds search in the sandbox:
// await tools.search(query, limit?). No backend may take its name
// (CheckBackendName).
const SearchGlobal = "tools"

// SearchFunc answers tools.search for one execution: the best matches for
// query, at most limit, among the tools its caller may call. query and
// limit passed CheckSearch. A *ToolError becomes an Error thrown in the
// code with its message.
type SearchFunc func(ctx context.Context, query string, limit int) ([]Found, error)

// SearchArgs are the arguments of tools.search as they cross from the
// sandbox to the host, as JSON text.
type SearchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// answer answers a search from its JSON arguments, checked again: they
// come from a worker process.
func (s SearchFunc) answer(ctx context.Context, args []byte) ([]byte, error) {
	var in SearchArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &ToolError{Message: "the arguments are not {query, limit}: " + err.Error()}
	}
	if err := CheckSearch(in.Query, in.Limit); err != nil {
		return nil, &ToolError{Message: err.Error()}
	}
	found, err := s(ctx, in.Query, in.Limit)
	if err != nil {
		return nil, err
	}
	if found == nil {
		found = []Found{}
	}
	return json.Marshal(found)
}

// Binding is the binding the sandbox queues a search on, as a tool call
// is: it counts against max_tool_calls and runs beside the other calls.
// Its Call takes the search's arguments as SearchArgs in JSON text and
// answers with the matches as JSON text.
func (s SearchFunc) Binding() Binding {
	return Binding{Name: SearchGlobal, Call: func(ctx context.Context, _ string, args []byte) (Answer, error) {
		found, err := s.answer(ctx, args)
		return Answer{Value: found}, err
	}}
}
