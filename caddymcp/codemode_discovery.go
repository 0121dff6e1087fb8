package caddymcp

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/search"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// searchToolName is the name of the search tool of a codemode handler
// whose discovery is search or auto.
const searchToolName = "search"

// provisionDiscovery checks discovery, max_description and
// max_declarations and fills in their defaults.
func (cm *CodeMode) provisionDiscovery() error {
	switch cm.Discovery {
	case "":
		cm.Discovery = codemode.DiscoveryAuto
	case codemode.DiscoveryAll, codemode.DiscoverySearch, codemode.DiscoveryAuto:
	default:
		return fmt.Errorf("discovery %q: want all, search or auto", cm.Discovery)
	}
	if cm.MaxDeclarations == 0 {
		cm.MaxDeclarations = codemode.DefaultMaxDeclarations
	}
	if cm.MaxDescription == 0 {
		cm.MaxDescription = codemode.DefaultMaxDescription
	}
	if cm.MaxDescription < codemode.MinMaxDescription {
		return fmt.Errorf("max_description %s is too small: the rules and the backends' names need %s", upstream.FormatSize(cm.MaxDescription), upstream.FormatSize(codemode.MinMaxDescription))
	}
	if cm.ToolName == searchToolName && cm.Discovery != codemode.DiscoveryAll {
		return fmt.Errorf("tool_name %q is the name of the search tool of discovery %s: choose another, or discovery all", cm.ToolName, cm.Discovery)
	}
	return nil
}

// searchTool is the search tool, whose answers are for the code given to
// the tool named execute.
func searchTool(execute string) mcp.Tool {
	tool := mcp.NewToolWithRawSchema(searchToolName, codemode.SearchToolDescription(execute), codemode.SearchInputSchema)
	tool.Annotations.Title = "Find backend tools to call from code"
	readOnly := true
	tool.Annotations.ReadOnlyHint = &readOnly
	return tool
}

// search is the search tool: the declarations of the backend tools that
// best match the query, among those the caller may call. The tool filter
// (description.filter) refuses a call of it by a caller whose description
// declares every tool, as mcp-go applies it to calls too.
func (cm *CodeMode) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	query, limit, problem := search.ParseArguments(req.Params.Arguments)
	if err := codemode.SearchError(problem); err != nil {
		cm.countSearch(outcomeInvalidArgs, time.Since(start))
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent(err.Error())}}, nil
	}
	catalog, mine := cm.describe.catalog(ctx)
	found, err := catalog.Search(query, limit, mine)
	if err != nil {
		cm.countSearch(outcomeInvalidArgs, time.Since(start))
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent(err.Error())}}, nil
	}
	text := codemode.SearchAnswer(query, found, int(min(cm.MaxDeclarations, math.MaxInt32)))
	cm.countSearch("ok", time.Since(start))
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}}, nil
}

// searchFor is tools.search for an execution of the caller of ctx: the
// same search as the tool's, as data.
func (cm *CodeMode) searchFor(ctx context.Context) codemode.SearchFunc {
	return func(sctx context.Context, query string, limit int) ([]codemode.Found, error) {
		// The caller is the execution's, whatever context the call has.
		catalog, mine := cm.describe.catalog(ctx)
		m, err := catalog.Search(query, limit, mine)
		if err != nil {
			return nil, &codemode.ToolError{Message: err.Error()}
		}
		return m.Found, sctx.Err()
	}
}

// countSearch counts one use of the search tool in the metrics.
func (cm *CodeMode) countSearch(outcome string, d time.Duration) {
	cm.metrics.toolCalls.WithLabelValues("codemode", cm.Name, searchToolName, outcome).Inc()
	cm.metrics.toolDuration.WithLabelValues("codemode", cm.Name, searchToolName).Observe(d.Seconds())
}
