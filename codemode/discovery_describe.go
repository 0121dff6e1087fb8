package codemode

import (
	"fmt"
	"strings"
)

// searchNamesBudget bounds, in bytes, the tool identifiers the execute
// description lists in search mode, across backends: past it each backend
// says how many more it has, which search finds.
const searchNamesBudget = 8 << 10

// SearchDescription is the description of the execute tool when the
// backends' declarations are too large to show (discovery search): the
// rules of the sandbox under limits l, the flow (the search tool, named
// searchTool, first; then code calling what it returned), and each
// backend with its instructions and the identifiers of its tools, within
// searchNamesBudget.
func (a *API) SearchDescription(l Limits, searchTool string) string {
	names, example := a.globals()
	var b strings.Builder
	fmt.Fprintf(&b, `Run JavaScript or TypeScript in a sandbox that can call the tools of the backends listed below. They have too many tools to declare here, so:

1. Call the %[1]s tool with a few words saying what you want to do. It answers with the TypeScript declarations of the best-matching tools (arguments and result types) and the identifiers to call them by.
2. Call this tool with code that calls them: const r = await %[2]s.<identifier>({...}). Any tool of a backend can be called, declared or not; the arguments are checked by the backend.

Write the body of an async function: use await, and return the result (it comes back as JSON).

- Each backend is a global object (%[3]s); each of its tools is an async function taking one object.
- A call resolves to the tool's structured result, or its text parsed as JSON when it is JSON, or its text. A failed call throws an Error with the backend's message.
- Inside the code, await tools.search(query, limit?) returns the same matches as data: [{backend, tool, identifier, description, declaration}]; it counts as a tool call.
- Start independent calls together with Promise.all. Filter, join and compute in the code, and return only what is needed.
- console.log output is returned too. The result and output together are cut at %[4]d bytes.
- Limits: %[5]s per run, %[6]d tool calls per run. There is no network, no fetch, no modules (import, require), no file system; setTimeout works within the run.

Backends:
`, searchTool, example, strings.Join(names, ", "), l.MaxOutput, l.Timeout, l.MaxToolCalls)
	budget := searchNamesBudget
	for _, be := range a.backends {
		b.WriteString("\n")
		budget = be.writeSummary(&b, budget)
	}
	return b.String()
}

// writeSummary writes the backend's line for SearchDescription: its name,
// its state or its tool count, its instructions, then as many of its
// identifiers as budget bytes allow. It returns the budget left.
func (a *BackendAPI) writeSummary(b *strings.Builder, budget int) int {
	if a.unavailable != "" {
		fmt.Fprintf(b, "%s: %s\n", a.name, a.decl.Description)
		return budget
	}
	tools := a.decl.Tools
	fmt.Fprintf(b, "%s: %d tools\n", a.name, len(tools))
	if ins := instructionLines(a.decl.Instructions); len(ins) > 0 {
		b.WriteString("  Instructions from the backend:\n")
		for _, line := range ins {
			b.WriteString("    " + line + "\n")
		}
	}
	if len(tools) == 0 {
		return budget
	}
	shown := 0
	var line strings.Builder
	for _, t := range tools {
		if len(t.Ident)+2 > budget {
			break
		}
		if shown > 0 {
			line.WriteString(", ")
		}
		line.WriteString(t.Ident)
		budget -= len(t.Ident) + 2
		shown++
	}
	if shown > 0 {
		b.WriteString("  " + line.String())
	}
	if rest := len(tools) - shown; rest > 0 {
		if shown > 0 {
			b.WriteString(", ")
		} else {
			b.WriteString("  ")
		}
		fmt.Fprintf(b, "and %d more (search finds them)", rest)
	}
	b.WriteString("\n")
	return budget
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

// Discovery modes: how a model learns the backends' tools.
const (
	// DiscoveryAll declares every tool in the execute tool's description.
	DiscoveryAll = "all"
	// DiscoverySearch lists the tools by name and offers a search tool
	// that answers with their declarations.
	DiscoverySearch = "search"
	// DiscoveryAuto is all while the declarations fit in max_declarations,
	// search past it.
	DiscoveryAuto = "auto"
)

// DefaultMaxDeclarations is the size, in bytes, of declarations past
// which auto discovery switches to search.
const DefaultMaxDeclarations = 32 << 10

// Describe is the execute tool's description in discovery mode: that of
// Description in all mode, SearchDescription's in search mode, and in auto
// mode the first while the declarations (the TypeScript alone, without the
// rules around it) take at most maxDeclarations bytes, else the second.
// search reports which it is.
func (a *API) Describe(l Limits, mode string, maxDeclarations int, searchTool string) (text string, search bool) {
	if mode == DiscoverySearch {
		return a.SearchDescription(l, searchTool), true
	}
	decls := a.Declarations()
	if mode == DiscoveryAuto && len(decls) > maxDeclarations {
		return a.SearchDescription(l, searchTool), true
	}
	return a.description(l, decls), false
}
