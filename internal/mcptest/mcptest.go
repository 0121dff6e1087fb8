// Package mcptest holds what tests of several packages need to talk MCP to
// a running endpoint: an initialized mcp-go client, a bounded tool call,
// the text of a result, go-httpbin as a REST upstream, an address that
// refuses connections, and what a hand-written MCP server reads of a
// request.
package mcptest

import (
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

// Timeout bounds each request a helper here makes.
const Timeout = 20 * time.Second

// Options are what a test may change of a client; the zero value is a
// client of the default transport, sending no extra header.
type Options struct {
	// Era is the protocol revision the client asks for; empty means
	// mcp-go's latest. The negotiated one must be it.
	Era string
	// Headers are sent with every request.
	Headers map[string]string
	// HTTPClient, when set, sends the requests.
	HTTPClient *http.Client
	// Name is the client's name in its initialize request.
	Name string
	// HTTPTimeout bounds each HTTP request of the client; default Timeout.
	HTTPTimeout time.Duration
}

// Connect returns an initialized mcp-go client of url, closed when the
// test ends, and the initialize result.
func Connect(t testing.TB, url string, o Options) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(cmp.Or(o.HTTPTimeout, Timeout))}
	if o.Headers != nil {
		opts = append(opts, transport.WithHTTPHeaders(o.Headers))
	}
	if o.HTTPClient != nil {
		opts = append(opts, transport.WithHTTPBasicClient(o.HTTPClient))
	}
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	era := cmp.Or(o.Era, mcp.LATEST_PROTOCOL_VERSION)
	c := client.NewClient(tr, client.WithProtocolVersion(era))
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = era
	req.Params.ClientInfo = mcp.Implementation{Name: cmp.Or(o.Name, "caddy-mcp-test"), Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize %s (%s): %v", url, era, err)
	}
	if res.ProtocolVersion != era {
		t.Fatalf("initialize %s: negotiated %s, want %s", url, res.ProtocolVersion, era)
	}
	return c, res
}

// CallTool calls a tool, bounded by Timeout.
func CallTool(c *client.Client, name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// ToolNames lists the endpoint's tools, sorted.
func ToolNames(t testing.TB, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
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

// ResultText joins the text content of a result.
func ResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// StartHTTPBin runs go-httpbin on 127.0.0.1, stopped when the test ends,
// and returns its base URL.
func StartHTTPBin(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(httpbin.New(httpbin.WithMaxDuration(10 * time.Second)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// ClosedAddr returns a loopback address nothing listens on: the port was
// free a moment ago, and a connection to it is refused.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// RPCRequest is what a test's hand-written MCP server reads of a JSON-RPC
// message: the id to answer with, as sent, the method, and the params of
// tools/call and tools/list.
type RPCRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name   string `json:"name"`
		Cursor string `json:"cursor"`
	} `json:"params"`
}
