package codemode

import (
	"fmt"
	"strings"
)

// Discovery modes: how a model learns the backends' tools.
const (
	// DiscoveryAll declares every tool in the execute tool's description,
	// whatever its size.
	DiscoveryAll = "all"
	// DiscoverySearch names the backends and offers a search tool that
	// answers with the declarations of the tools that match.
	DiscoverySearch = "search"
	// DiscoveryAuto is all while the whole description fits in
	// max_description (and the declarations in max_declarations), search
	// past it.
	DiscoveryAuto = "auto"
)

// DefaultMaxDescription is the size, in bytes, of the execute tool's
// whole description in auto and search modes: Claude Code shows the model
// the first 2 KB of a tool description, and other clients copy it.
const DefaultMaxDescription = 2 << 10

// MinMaxDescription is the smallest max_description: the search mode's
// rules and the backends' names must fit.
const MinMaxDescription = 1536

// DefaultMaxDeclarations bounds the declarations alone in auto mode.
const DefaultMaxDeclarations = 32 << 10

// Discovery says how Describe tells the model of the tools.
type Discovery struct {
	Mode string // DiscoveryAll, DiscoverySearch or DiscoveryAuto
	// MaxDescription bounds the whole execute description in auto and
	// search modes; MaxDeclarations the declarations alone in auto mode.
	MaxDescription, MaxDeclarations int
	// SearchTool is the name of the search tool.
	SearchTool string
}

// Describe is the execute tool's description: Description's in all mode,
// SearchDescription's in search mode, and in auto mode the first while it
// fits in MaxDescription bytes with its declarations in MaxDeclarations,
// else the second. search reports which it is.
func (a *API) Describe(l Limits, d Discovery) (text string, search bool) {
	if d.Mode != DiscoverySearch {
		decls := a.Declarations()
		text := a.description(l, decls)
		if d.Mode == DiscoveryAll || len(text) <= d.MaxDescription && len(decls) <= d.MaxDeclarations {
			return text, false
		}
	}
	return a.SearchDescription(l, d.SearchTool, d.MaxDescription), true
}

// SearchDescription is the description of the execute tool when its
// backends' tools are found by search: the flow first (search once per
// step, then code calling what it found), then the rules of the sandbox
// under limits l, then each backend with its tool count and as many of its
// identifiers as fit in max bytes in all. Backends' instructions come with
// the search answers, which declare the tools.
func (a *API) SearchDescription(l Limits, searchTool string, max int) string {
	_, example := a.globals()
	var b strings.Builder
	fmt.Fprintf(&b, `Run JavaScript or TypeScript that calls the tools of the backends below, which are not declared here. For each step of the task, first call the %[1]s tool once with a few words for that step ("list the open issues of a repository"): it answers with the TypeScript declarations of the best tools. Then call this tool with code that calls them as declared: const r = await %[2]s.<identifier>({...}). Never guess a tool or an argument.

%[3]s
- In the code, await tools.search(query) gives the same matches as data.

Backends, their tool counts, and some tools (search finds all):
`, searchTool, example, a.rules(l))
	a.writeBackends(&b, max)
	return b.String()
}

// writeBackends writes a line per backend, its state or its tool count
// then its identifiers, while b stays within max bytes: first every
// backend's count, then identifiers in turn from each backend while they
// fit.
func (a *API) writeBackends(b *strings.Builder, max int) {
	heads := make([]string, len(a.backends))
	// Each line may end in ", and N more"; the last may be "- and N
	// more backends".
	room := max - b.Len() - len("- and 999 more backends")
	for i, be := range a.backends {
		if be.unavailable != "" {
			heads[i] = fmt.Sprintf("- %s: unavailable right now (%s)", be.name, CutUTF8(be.unavailable, 100))
		} else {
			heads[i] = fmt.Sprintf("- %s: %d tools", be.name, len(be.decl.Tools))
		}
		room -= len(heads[i]) + len(", and 99999 more") + 1
	}
	shown := make([][]string, len(a.backends))
	for more := true; more; {
		more = false
		for i, be := range a.backends {
			k := len(shown[i])
			if be.unavailable != "" || k >= len(be.decl.Tools) {
				continue
			}
			ident := be.decl.Tools[k].Ident
			if len(ident)+2 > room { // ": " or ", " before it
				continue
			}
			shown[i] = append(shown[i], ident)
			room -= len(ident) + 2
			more = true
		}
	}
	for i, be := range a.backends {
		line := heads[i]
		if len(shown[i]) > 0 {
			line += ": " + strings.Join(shown[i], ", ")
			if rest := len(be.decl.Tools) - len(shown[i]); rest > 0 {
				line += fmt.Sprintf(", and %d more", rest)
			}
		}
		if i < len(a.backends)-1 && b.Len()+len(line)+1 > max-len("- and 999 more backends") || b.Len()+len(line)+1 > max {
			fmt.Fprintf(b, "- and %d more backends", len(a.backends)-i)
			return
		}
		b.WriteString(line + "\n")
	}
}

// SearchToolDescription is the description of the search tool, whose
// answers the code given to the tool executeTool uses.
func SearchToolDescription(executeTool string) string {
	return fmt.Sprintf(`Find the backend tools to use in code: give a few words saying what you want to do (for example "list open issues of a repository"). The answer ranks the best-matching tools and gives their TypeScript declarations, with argument and result types and the identifiers to call them by. Then call the %[1]s tool with code that calls them: await <backend>.<identifier>({...}). Search again with other words when nothing fits. limit is how many tools to return: %[2]d by default, at most %[3]d.`,
		executeTool, DefaultSearchLimit, MaxSearchLimit)
}

// SearchInputSchema is the input schema of the search tool.
var SearchInputSchema = []byte(fmt.Sprintf(`{"type":"object","properties":{`+
	`"query":{"type":"string","minLength":1,"maxLength":%d,"description":"What the tool should do, in a few words."},`+
	`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"How many tools to return; default %d."}},`+
	`"required":["query"],"additionalProperties":false}`, MaxSearchQuery, MaxSearchLimit, DefaultSearchLimit))
