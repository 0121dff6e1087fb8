//go:build linux

package loadtest

import (
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// The scripted sequences use mcp-go's client.

// connect returns an initialized mcp-go client of endpoint speaking era,
// over httpClient (nil for a default one), and the initialize result. In
// the 2026-07-28 era, initializing is server/discover.
func connect(t *testing.T, endpoint, era string, httpClient *http.Client) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	return mcptest.Connect(t, endpoint, mcptest.Options{Era: era, HTTPClient: httpClient, Name: "loadtest"})
}
