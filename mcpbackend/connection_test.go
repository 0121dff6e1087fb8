package mcpbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/caddy-mcp/caddy-mcp/internal/version"
)

// TestClientInfo: the backend client introduces itself with the plugin's
// name and version, in initialize and, in the protocol era without
// sessions, in each request's _meta.
func TestClientInfo(t *testing.T) {
	t.Parallel()
	for _, era := range []struct {
		name     string
		versions []string // the server's; none: mcp-go's
		carrier  string   // the method that must carry the info
	}{
		{"sessions", []string{"2025-11-25"}, "initialize"},
		{"no sessions", nil, "tools/list"},
	} {
		t.Run(era.name, func(t *testing.T) {
			srv := server.NewMCPServer("info", "1")
			srv.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("echo"), nil
			})
			opts := []server.StreamableHTTPOption{server.WithDisableLocalhostProtection(true)}
			if era.versions != nil {
				opts = append(opts, server.WithStreamableHTTPProtocolVersions(era.versions...))
			}
			inner := server.NewStreamableHTTPServer(srv, opts...)
			var mu sync.Mutex
			seen := map[string][]mcp.Implementation{} // by method
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var msg struct {
					Method string `json:"method"`
					Params struct {
						ClientInfo *mcp.Implementation        `json:"clientInfo"`
						Meta       map[string]json.RawMessage `json:"_meta"`
					} `json:"params"`
				}
				if json.Unmarshal(body, &msg) == nil {
					info := msg.Params.ClientInfo
					if raw, ok := msg.Params.Meta[mcp.MetaKeyClientInfo]; ok {
						info = new(mcp.Implementation)
						_ = json.Unmarshal(raw, info)
					}
					if info != nil {
						mu.Lock()
						seen[msg.Method] = append(seen[msg.Method], *info)
						mu.Unlock()
					}
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)
			connectedBackend(t, Config{URL: hs.URL + "/mcp"})
			mu.Lock()
			defer mu.Unlock()
			if len(seen[era.carrier]) == 0 {
				t.Errorf("no client info in %s; seen: %v", era.carrier, seen)
			}
			want := mcp.Implementation{Name: version.Name, Version: version.Version}
			for method, infos := range seen {
				for _, info := range infos {
					if info.Name != want.Name || info.Version != want.Version {
						t.Errorf("%s: client info %s %s, want %s %s", method, info.Name, info.Version, want.Name, want.Version)
					}
				}
			}
		})
	}
}

// TestSSEBackend: a backend of the SSE transport (mcp-go's server) answers
// calls after the connection is made, and after its event stream ends the
// backend reconnects: the answers come on that stream.
func TestSSEBackend(t *testing.T) {
	t.Parallel()
	srv := server.NewMCPServer("sse", "1")
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("word")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo " + req.GetString("word", "")), nil
	})
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = server.NewSSEServer(srv, server.WithBaseURL("http://"+ts.Listener.Addr().String()))
	ts.Start()
	t.Cleanup(ts.Close) // after the backend's close: the server waits for its streams

	b := connectedBackend(t, Config{URL: ts.URL + "/sse", Transport: TransportSSE})
	for i, event := range []string{"after connecting", "after the stream ended"} {
		if i == 1 {
			b.mu.Lock()
			before := b.conn
			b.mu.Unlock()
			ts.CloseClientConnections()
			waitFor(t, "a new connection", func() bool {
				b.mu.Lock()
				defer b.mu.Unlock()
				return b.conn != nil && b.conn != before
			})
		}
		ans, err := b.Call(context.Background(), "echo", json.RawMessage(`{"word":"hi"}`))
		if err != nil || string(ans.Value) != `"echo hi"` {
			t.Fatalf("%s: %s, %v", event, ans.Value, err)
		}
	}
}

// TestHoldFor: the wait before connecting again after event streams that
// ended soon after they began, again and again.
func TestHoldFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{
		{0, 0}, {1, 0}, {2, 250 * time.Millisecond}, {3, 500 * time.Millisecond}, {8, 16 * time.Second}, {9, 30 * time.Second}, {1000, 30 * time.Second},
	} {
		if got := holdFor(tt.n); got != tt.want {
			t.Errorf("holdFor(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
}
