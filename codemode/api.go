package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caddy-mcp/caddy-mcp/codemode/declarations"
)

// APITool is one backend tool as the backend's tools/list describes it.
type APITool struct {
	Name         string          // the backend's own tool name
	Description  string          // may be empty
	InputSchema  json.RawMessage // raw JSON Schema; may be empty
	OutputSchema json.RawMessage // may be empty
}

// APIBackend is one backend as the host knows it: either its tool list
// and instructions, or why they are not known.
type APIBackend struct {
	// Name is the global, already checked with CheckBackendName.
	Name string
	// Tools are the backend's tools, in the order of its tools/list.
	Tools []APITool
	// Instructions are the backend's own, from its initialize answer.
	Instructions string
	// Unavailable, when set, says why the tools are not known (the
	// backend is down); Tools and Instructions are then ignored.
	Unavailable string
	// Hidden are tools the caller may not call, by the backend's name,
	// with the reason (the scope it needs): the code is told it when it
	// calls one.
	Hidden map[string]string
}

// BackendAPI is one backend's tools named for the sandbox: each tool gets
// its identifier once, here, and both the declarations and the binding use
// that one mapping. A backend may list thousands of tools, so a host builds
// it once per tool list and shares it, read-only, with every execution.
type BackendAPI struct {
	name        string
	unavailable string
	tools       map[string]string // identifier in the sandbox -> backend tool name
	hidden      map[string]string // identifier -> why the caller may not call it
	byTool      map[string]int    // backend tool name -> its index in decl.Tools
	collisions  []declarations.Collision
	decl        declarations.Backend
}

// NewBackendAPI names the tools of one backend (see AssignNames).
func NewBackendAPI(b APIBackend) *BackendAPI {
	if b.Unavailable != "" {
		return &BackendAPI{name: b.Name, unavailable: b.Unavailable, decl: declarations.Backend{Name: b.Name,
			Description: "unavailable right now (" + b.Unavailable + "); calls to it fail until it is back"}}
	}
	names := make([]string, len(b.Tools))
	for i, t := range b.Tools {
		names[i] = t.Name
	}
	idents, collisions := declarations.AssignNames(names)
	a := &BackendAPI{
		name:       b.Name,
		tools:      make(map[string]string, len(b.Tools)),
		byTool:     make(map[string]int, len(b.Tools)),
		collisions: collisions,
		decl:       declarations.Backend{Name: b.Name, Instructions: b.Instructions, Tools: make([]declarations.Tool, len(b.Tools))},
	}
	for i, t := range b.Tools {
		a.tools[idents[i]] = t.Name
		if _, dup := a.byTool[t.Name]; !dup {
			a.byTool[t.Name] = i
		}
		a.decl.Tools[i] = declarations.Tool{
			Name: t.Name, Ident: idents[i], Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		}
	}
	for name, reason := range b.Hidden {
		if ident := declarations.SanitizeIdentifier(name); a.tools[ident] == "" {
			if a.hidden == nil {
				a.hidden = make(map[string]string, len(b.Hidden))
			}
			a.hidden[ident] = reason
		}
	}
	return a
}

// Tools maps each identifier the code calls to the backend's tool name; nil
// when the backend is unavailable. It is shared: do not change it.
func (a *BackendAPI) Tools() map[string]string { return a.tools }

// Collisions are the tools renamed because their sanitized name was taken.
func (a *BackendAPI) Collisions() []declarations.Collision { return a.collisions }

// Binding is the backend's global for one execution, whose methods call
// call with the backend's tool name.
func (a *BackendAPI) Binding(call func(ctx context.Context, tool string, args []byte) (Answer, error)) Binding {
	return Binding{Name: a.name, Tools: a.tools, Hidden: a.hidden, Unavailable: a.unavailable, Call: call}
}

// API is what the code is told of its backends: the rules of the sandbox
// and the TypeScript declarations of every backend's tools.
type API struct {
	backends []*BackendAPI
}

// NewAPI puts backends together, in the order their globals are declared.
func NewAPI(backends []*BackendAPI) *API {
	return &API{backends: backends}
}

// Declarations renders the TypeScript declarations of the backends (see
// the function Declarations).
func (a *API) Declarations() string {
	decls := make([]declarations.Backend, len(a.backends))
	for i, b := range a.backends {
		decls[i] = b.decl
	}
	return declarations.Render(decls)
}

// Description is the text a model reads before it writes code: the rules
// of the sandbox under limits l, and the declarations in a TypeScript block.
func (a *API) Description(l Limits) string {
	return a.description(l, a.Declarations())
}

func (a *API) description(l Limits, decls string) string {
	return a.Rules(l) + "\n\n```ts\n" + decls + "```"
}

// Rules explains the sandbox under limits l above the declarations: how
// to call the backends, what a call gives back, and what the code cannot
// do.
func (a *API) Rules(l Limits) string {
	names, example := a.globals()
	return fmt.Sprintf("Run JavaScript or TypeScript that calls the tools declared below. Each backend is a global object (%s); each tool an async function taking one object: const r = await %s.<tool>({...}).\n\n",
		strings.Join(names, ", "), example) + a.rules(l)
}

// rules are the sandbox's rules, the same in every discovery mode.
func (a *API) rules(l Limits) string {
	return fmt.Sprintf(`- The code is the body of an async function: await the calls, and return the result (it comes back as JSON).
- A call resolves to the tool's structured result, or its text parsed as JSON, or its text. A failure throws an Error with the backend's message.
- A result its backend cut to size is the shortened value: tools.cut(r) then says what was left out (else undefined).
- Run independent calls together with Promise.all; filter and compute in the code; return only what is needed.
- console.log output is returned too; result and output are cut at %d bytes. Limits: %s and %d tool calls per run; no network, fetch, modules or files.`,
		l.MaxOutput, l.Timeout, l.MaxToolCalls)
}

// globals are the backends' globals, and the one an example calls.
func (a *API) globals() (names []string, example string) {
	names = make([]string, len(a.backends))
	for i, b := range a.backends {
		names[i] = b.name
	}
	example = "api"
	if len(names) > 0 {
		example = names[0]
	}
	return names, example
}
