package mcpbackend

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestInstructions: the instructions of the backend's initialize answer
// are kept, in both protocol eras, and a change of them changes Version.
func TestInstructions(t *testing.T) {
	t.Parallel()
	const text = "Search with the filter syntax: state:open label:bug."
	for _, tt := range []struct {
		name string
		opts []server.StreamableHTTPOption
	}{
		{"stateless", []server.StreamableHTTPOption{server.WithStateLess(true)}},
		{"2025-11-25 with sessions", []server.StreamableHTTPOption{server.WithStateful(true), server.WithStreamableHTTPProtocolVersions("2025-11-25")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := server.NewMCPServer("issues", "1", server.WithInstructions(text))
			srv.AddTool(mcp.NewTool("search"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("[]"), nil
			})
			hs := httptest.NewServer(server.NewStreamableHTTPServer(srv, append(tt.opts, server.WithDisableLocalhostProtection(true))...))
			defer hs.Close()
			b := New(Config{Name: "issues", URL: hs.URL})
			defer b.Close()
			if b.Instructions() != "" {
				t.Errorf("instructions %q before the first connection", b.Instructions())
			}
			if _, err := b.Tools(context.Background(), time.Now().Add(5*time.Second)); err != nil {
				t.Fatal(err)
			}
			if got := b.Instructions(); got != text {
				t.Errorf("instructions %q, want %q", got, text)
			}
		})
	}

	var b Backend
	v := b.Version()
	b.setInstructions("a")
	if b.Version() == v {
		t.Error("new instructions did not change Version")
	}
	v = b.Version()
	b.setInstructions("a")
	if b.Version() != v {
		t.Error("the same instructions changed Version")
	}
}
