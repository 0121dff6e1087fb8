//go:build linux

package loadtest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The scripted sequences use mcp-go's client.

// connect returns an initialized mcp-go client of endpoint speaking era,
// over httpClient (nil for a default one), and the initialize result. In
// the 2026-07-28 era, initializing is server/discover.
func connect(t *testing.T, endpoint, era string, httpClient *http.Client) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(20 * time.Second)}
	if httpClient != nil {
		opts = append(opts, transport.WithHTTPBasicClient(httpClient))
	}
	tr, err := transport.NewStreamableHTTP(endpoint, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(era))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = era
	req.Params.ClientInfo = mcp.Implementation{Name: "loadtest", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize %s (%s): %v", endpoint, era, err)
	}
	if res.ProtocolVersion != era {
		t.Fatalf("initialize %s: negotiated %s, want %s", endpoint, res.ProtocolVersion, era)
	}
	return c, res
}

// callTool calls a tool with a bounded time.
func callTool(c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// toolNames lists the endpoint's tools, sorted.
func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// resultText joins the text content of a result.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
