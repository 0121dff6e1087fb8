package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/caddy-mcp/caddy-mcp/fastpath"
	"github.com/caddy-mcp/caddy-mcp/search"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Discovery modes of an mcp handler (Handler.Discovery).
const (
	discoveryAll    = "all"
	discoverySearch = "search"
)

// The two tools tools/list holds with discovery search.
const (
	searchToolsName = "search_tools"
	callToolName    = "call_tool"
)

// discovery is the state of discovery search: every tool, in the order
// the index was given them (by name), and the index.
type discovery struct {
	tools []*provisioned
	index *search.Index
}

// checkDiscovery checks the discovery mode.
func checkDiscovery(mode string) error {
	switch mode {
	case "", discoveryAll, discoverySearch:
		return nil
	}
	return fmt.Errorf("discovery %q: want all or search", mode)
}

// offerTools puts the tools on srv: each one, or with discovery search
// the two tools that find and call them.
func (h *Handler) offerTools(srv *server.MCPServer, tools []*provisioned) error {
	if err := checkDiscovery(h.Discovery); err != nil {
		return err
	}
	if h.Discovery != discoverySearch {
		for _, p := range tools {
			srv.AddTool(p.mcpTool, h.toolHandler(p))
		}
		return nil
	}
	for _, p := range tools {
		if err := checkSearchName(p.mcpTool.Name); err != nil {
			return err
		}
	}
	tools = slices.SortedFunc(slices.Values(tools), func(a, b *provisioned) int {
		return strings.Compare(a.mcpTool.Name, b.mcpTool.Name)
	})
	entries := make([]search.Tool, len(tools))
	for i, p := range tools {
		entries[i] = searchEntry(p.mcpTool)
	}
	h.disc = &discovery{tools: tools, index: search.New(entries)}
	srv.AddTool(h.searchToolsTool(), h.metaHandler(searchToolsName))
	srv.AddTool(h.callToolTool(), h.metaHandler(callToolName))
	h.callTarget = callTarget
	return nil
}

// checkSearchName refuses a tool named as one of discovery search's own.
func checkSearchName(name string) error {
	if name == searchToolsName || name == callToolName {
		return fmt.Errorf("tool %q: with discovery search, %s is the name of the tool that finds or calls the others; rename this one", name, name)
	}
	return nil
}

// searchEntry is what the index reads of a tool: its name, title,
// description, and its arguments' names and descriptions from the input
// schema.
func searchEntry(t mcp.Tool) search.Tool {
	entry := search.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(t.RawInputSchema, &schema) // compiled: it is an object schema
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range schema.Properties {
			if !yield(k) {
				return
			}
		}
	}) {
		entry.Args = append(entry.Args, search.Arg{Name: name, Description: schema.Properties[name].Description})
	}
	return entry
}

func (h *Handler) searchToolsTool() mcp.Tool {
	t := mcp.NewToolWithRawSchema(searchToolsName, fmt.Sprintf(
		"Find the tools of %s: it has %d, too many to list. For each step of the task, search once with a few words for that step; "+
			"the answer says how many tools match and holds the best, each with its name, description and inputSchema. "+
			"Then call one with call_tool, giving its exact name and arguments that match its inputSchema. "+
			"If none fits, search again with other words.", h.Name, len(h.disc.tools)),
		json.RawMessage(`{"type":"object","properties":{`+
			`"query":{"type":"string","minLength":1,"description":"What you want to do, in a few words, such as: list the open issues of a repository"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":`+strconv.Itoa(search.MaxLimit)+`,"default":`+strconv.Itoa(search.DefaultLimit)+`,"description":"How many tools to return, best first"}},`+
			`"required":["query"],"additionalProperties":false}`))
	if h.StructuredText == structuredTextSummary {
		// For clients that read structuredContent: the answer is there,
		// and its text is a line.
		t.RawOutputSchema = json.RawMessage(`{"type":"object","properties":{` +
			`"tools":{"type":"array","items":{"type":"object","properties":{` +
			`"name":{"type":"string"},"title":{"type":"string"},"description":{"type":"string"},` +
			`"inputSchema":{"type":"object"},"annotations":{"type":"object"}},` +
			`"required":["name","inputSchema"]}},` +
			`"matched":{"type":"integer"},"of":{"type":"integer"},` +
			`"note":{"type":"string"}},"required":["tools","matched","of","note"]}`)
	}
	t.Title = "Search tools"
	t.Annotations.Title = t.Title
	t.Annotations.ReadOnlyHint = mcp.ToBoolPtr(true)
	t.Annotations.OpenWorldHint = mcp.ToBoolPtr(false)
	return t
}

func (h *Handler) callToolTool() mcp.Tool {
	t := mcp.NewToolWithRawSchema(callToolName, fmt.Sprintf(
		"Call one of the %d tools of %s and get its result. Find the tool with search_tools first: "+
			"give its exact name, and its arguments as an object that matches the inputSchema search_tools returned for it.",
		len(h.disc.tools), h.Name),
		json.RawMessage(`{"type":"object","properties":{`+
			`"name":{"type":"string","description":"The exact name of a tool, as search_tools returned it"},`+
			`"arguments":{"type":"object","description":"The tool's arguments, matching its inputSchema"}},`+
			`"required":["name"],"additionalProperties":false}`))
	t.Title = "Call a tool"
	t.Annotations.Title = t.Title
	// Any tool's result comes back through it.
	hint := 0
	for _, p := range h.disc.tools {
		hint = max(hint, p.shape.SizeHint())
	}
	announceSize(&t, hint)
	return t
}

// metaHandler is mcp-go's way into search_tools and call_tool.
func (h *Handler) metaHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := req.Params.Arguments
		if args, ok := ctx.Value(argsKey{}).(map[string]any); ok {
			raw = args
		}
		if name == callToolName && req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			if args, ok := raw.(map[string]any); ok {
				if inner, ok := args["name"].(string); ok && h.tools[inner] != nil {
					notifyProgress(ctx, req.Params.Meta.ProgressToken, inner)
				}
			}
		}
		res, _ := h.runMeta(ctx, name, raw)
		return res, nil
	}
}

// runMeta runs search_tools or call_tool; it reports false for another
// name, having run nothing.
func (h *Handler) runMeta(ctx context.Context, name string, raw any) (*mcp.CallToolResult, bool) {
	switch name {
	case searchToolsName:
		start := time.Now()
		res, kind := h.searchTools(ctx, raw)
		h.observe(searchToolsName, outcome{kind: kind, sub: subOf(ctx)}, time.Since(start))
		return res, true
	case callToolName:
		p, args, res := h.callToolTarget(ctx, raw)
		if p == nil {
			h.observe(callToolName, outcome{kind: outcomeInvalidArgs, sub: subOf(ctx)}, 0)
			return res, true
		}
		// The inner tool's own call: its validation, limits, logs and
		// metrics, under its name.
		return h.callTool(ctx, p, args), true
	}
	return nil, false
}

func subOf(ctx context.Context) string {
	if caller := callerOf(ctx); caller != nil {
		return caller.id.Subject
	}
	return ""
}

// metaArgs are the arguments of search_tools or call_tool as an object:
// absent or null is an empty one.
func metaArgs(tool string, raw any, members ...string) (map[string]any, error) {
	var args map[string]any
	switch v := raw.(type) {
	case nil:
	case map[string]any:
		args = v
	default:
		return nil, fmt.Errorf("%s: the arguments must be an object with %s", tool, strings.Join(members, " and "))
	}
	for k := range args {
		if !slices.Contains(members, k) {
			return nil, fmt.Errorf("%s takes only %s, not %s", tool, strings.Join(members, " and "), shownName(k))
		}
	}
	return args, nil
}

// shownName quotes a name from a request for an error text, at most 128
// bytes of it (tool names are no longer).
func shownName(s string) string {
	if len(s) > 128 {
		s = s[:128] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// searchTools answers search_tools: the best-matching tools the caller
// may call, with their schemas and how many match of how many, sent once
// (see the end).
func (h *Handler) searchTools(ctx context.Context, raw any) (*mcp.CallToolResult, string) {
	query, limit, problem := search.ParseArguments(raw)
	if problem != nil {
		return upstream.ErrorResult(searchToolsError(problem)), outcomeInvalidArgs
	}
	var keep func(int) bool
	if h.auth != nil && len(h.auth.toolScopes) > 0 {
		keep = func(i int) bool { return h.mayCall(ctx, h.disc.tools[i].mcpTool.Name) }
	}
	matches, matched := h.disc.index.Search(query, limit, keep)
	answer := searchAnswer{Tools: make([]json.RawMessage, 0, len(matches)), Matched: matched, Of: h.searchable(ctx)}
	for _, m := range matches {
		// What a call needs, and no more: an output schema of a large API
		// is often larger than the rest together (GitHub's five best
		// matches came to 110 KB with theirs), and the result says what
		// came back anyway.
		t := h.disc.tools[m.Index].mcpTool
		t.OutputSchema, t.RawOutputSchema = mcp.ToolOutputSchema{}, nil
		b, err := json.Marshal(t)
		if err != nil {
			continue // it encoded for tools/list at Provision
		}
		answer.Tools = append(answer.Tools, b)
	}
	switch {
	case len(answer.Tools) == 0:
		answer.Note = fmt.Sprintf("no tool of %d matches these words; search again with other words, such as the thing the tool acts on and what it does to it", answer.Of)
	case matched > len(answer.Tools):
		answer.Note = fmt.Sprintf("%d of %d tools match; these are the best %d, best first: add words to narrow it", matched, answer.Of, len(answer.Tools))
	default:
		answer.Note = fmt.Sprintf("%d of %d tools match, best first", matched, answer.Of)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(answer)
	text := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	// The tools once: as text, or for structured_text summary as
	// structuredContent with a line of text.
	if h.StructuredText != structuredTextSummary {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}}, outcomeOK
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(answer.Note + "; their names and inputSchemas are in structuredContent")},
		StructuredContent: json.RawMessage(text),
	}, outcomeOK
}

// searchable is how many tools a search by the caller of ctx looks in.
func (h *Handler) searchable(ctx context.Context) int {
	if h.auth == nil || len(h.auth.toolScopes) == 0 {
		return len(h.disc.tools)
	}
	n := 0
	for _, p := range h.disc.tools {
		if h.mayCall(ctx, p.mcpTool.Name) {
			n++
		}
	}
	return n
}

// searchAnswer is search_tools' result: the best tools, how many match of
// how many the caller may call, and a note that says it in words.
type searchAnswer struct {
	Tools   []json.RawMessage `json:"tools"`
	Matched int               `json:"matched"`
	Of      int               `json:"of"`
	Note    string            `json:"note"`
}

// searchToolsError words p, a problem with search_tools' arguments.
func searchToolsError(p *search.Problem) string {
	switch p.Fault {
	case search.NotAnObject:
		return searchToolsName + ": the arguments must be an object with query and limit"
	case search.UnknownArgument:
		return fmt.Sprintf("%s takes only query and limit, not %s", searchToolsName, shownName(p.Argument))
	case search.QueryNotString, search.QueryEmpty:
		return searchToolsName + `: "query" must be a non-empty string: a few words of what you want to do, such as "list the open issues of a repository"`
	case search.QueryTooLong:
		return fmt.Sprintf(`%s: "query" is %d bytes; the limit is %d: use a few words`, searchToolsName, p.QueryBytes, search.MaxQuery)
	default: // the limit
		return fmt.Sprintf(`%s: "limit" must be an integer from 1 to %d`, searchToolsName, search.MaxLimit)
	}
}

// callToolTarget reads call_tool's arguments: the tool to call and its
// arguments, or a result saying what is wrong.
func (h *Handler) callToolTarget(ctx context.Context, raw any) (*provisioned, any, *mcp.CallToolResult) {
	args, err := metaArgs(callToolName, raw, "name", "arguments")
	if err != nil {
		return nil, nil, upstream.ErrorResult(err.Error())
	}
	name, ok := args["name"].(string)
	if !ok || name == "" {
		return nil, nil, upstream.ErrorResult(`call_tool: "name" must be a tool's name, as search_tools returned it`)
	}
	p := h.tools[name]
	if p == nil {
		return nil, nil, upstream.ErrorResult(fmt.Sprintf("call_tool: there is no tool named %s; use search_tools to find the tool and its exact name", shownName(name)))
	}
	inner := args["arguments"]
	switch inner.(type) {
	case nil, map[string]any:
	default:
		return nil, nil, upstream.ErrorResult(fmt.Sprintf(`call_tool: "arguments" must be an object of %s's arguments, matching its inputSchema`, name))
	}
	// The endpoint refused such a call with 403 before it got here (see
	// callTarget); this holds should another way in appear.
	if !h.mayCall(ctx, name) {
		return nil, nil, upstream.ErrorResult(fmt.Sprintf("insufficient scope: tool %s needs %s", name, strings.Join(h.auth.toolScopes[name], " ")))
	}
	return p, inner, nil
}

// callTarget names the tool whose scopes a tools/call of discovery search
// needs: for call_tool the tool it calls, read as call_tool reads it; for
// search_tools none; for any other name none either, since only the two
// tools are offered and mcp-go answers that the tool is unknown.
func callTarget(name string, raw json.RawMessage) string {
	if name != callToolName {
		return ""
	}
	args := fastpath.DecodeArgs(raw)
	inner, _ := args["name"].(string)
	return inner
}
