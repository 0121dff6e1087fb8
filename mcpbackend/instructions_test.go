package mcpbackend

import (
	"context"
	"net/http"
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
			// New connects in the background at once: the server answers
			// nothing until the test has read the instructions of a backend
			// not yet connected.
			opened := make(chan struct{})
			mcpServer := server.NewStreamableHTTPServer(srv, append(tt.opts, server.WithDisableLocalhostProtection(true))...)
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-opened:
				case <-r.Context().Done():
					return
				}
				mcpServer.ServeHTTP(w, r)
			}))
			defer hs.Close()
			b := New(Config{Name: "issues", URL: hs.URL})
			defer b.Close()
			if b.Instructions() != "" {
				t.Errorf("instructions %q before the first connection", b.Instructions())
			}
			close(opened)
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
