// Package gosdktest holds MCP servers of one protocol era each, for the
// tests of code mode's backends (upstream and this package's own), and,
// in its tests, the official Go SDK's client against a whole Caddy.
//
// ModernOnly is the Go SDK's server restricted to 2026-07-28 behind a
// filter that refuses the initialize handshake and any older version, as
// a server written for 2026-07-28 alone does. LegacyOnly is mcp-go's
// server behind a filter that answers what a server predating 2026-07-28
// answers: server/discover is an unknown method, and a request declaring
// 2026-07-28 is refused for its version. Both have one tool, era, that
// returns {"era": <the server's era>, "text": <its argument>}, and count
// the requests they receive by method.
package gosdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two eras.
const (
	Modern = "2026-07-28"
	Legacy = "2025-11-25"
)

// EraInput is the era tool's input.
type EraInput struct {
	Text string `json:"text,omitempty" jsonschema:"any text, returned as it came"`
}

// EraOutput is the era tool's structured result.
type EraOutput struct {
	Era  string `json:"era"`
	Text string `json:"text"`
}

// Counts holds how many requests of each method an era server received.
type Counts struct {
	mu sync.Mutex
	n  map[string]int
}

// Get returns the count of method.
func (c *Counts) Get(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

func (c *Counts) add(method string) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[method]++
	c.mu.Unlock()
}

// ModernOnly returns the handler of a server that speaks only 2026-07-28.
func ModernOnly(counts *Counts) http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "modern-only", Version: "1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{Modern}, Instructions: "A server of 2026-07-28 alone."})
	sdk.AddTool(s, &sdk.Tool{Name: "era", Description: "Says which era the server speaks."},
		func(_ context.Context, _ *sdk.CallToolRequest, in EraInput) (*sdk.CallToolResult, EraOutput, error) {
			return nil, EraOutput{Era: Modern, Text: in.Text}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
	return filter(counts, h, func(id json.RawMessage, method, version string) (int, string) {
		if id != nil && (method == "initialize" || (version != "" && version != Modern)) {
			return http.StatusBadRequest, rpcError(id, unsupported(Modern))
		}
		return 0, ""
	})
}

// LegacyOnly returns the handler of a server that speaks only 2025-11-25
// (and the versions before it), with the initialize handshake and sessions.
func LegacyOnly(counts *Counts) http.Handler {
	return LegacyAnswering(counts, http.StatusOK, "")
}

// LegacyAnswering is LegacyOnly answering server/discover with status and
// body; an empty body is the JSON-RPC error -32601 (method not found), and
// status 0 never answers, holding the request until the client gives up.
// Servers predating 2026-07-28 answer it in several ways: -32601, 400 for
// a request without a session, 404 or 405 from a router, or nothing.
func LegacyAnswering(counts *Counts, status int, body string) http.Handler {
	s := server.NewMCPServer("legacy-only", "1", server.WithToolCapabilities(false), server.WithInstructions("A server of 2025-11-25."))
	s.AddTool(mcp.NewTool("era", mcp.WithDescription("Says which era the server speaks."), mcp.WithString("text")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out := EraOutput{Era: Legacy, Text: req.GetString("text", "")}
			return mcp.NewToolResultStructured(out, fmt.Sprintf(`{"era":%q,"text":%q}`, out.Era, out.Text)), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	return filter(counts, h, func(id json.RawMessage, method, version string) (int, string) {
		switch {
		case method == "server/discover" && status == 0:
			return 0, "hold"
		case method == "server/discover" && body == "":
			return status, rpcError(id, `{"code":-32601,"message":"Method not found"}`)
		case method == "server/discover":
			return status, body
		case version == Modern && id != nil:
			// mcp-go's server would serve it (it speaks 2026-07-28 as
			// well); a server of 2025-11-25 alone refuses a request
			// without a session, as the TypeScript SDK's does.
			return http.StatusBadRequest, rpcError(json.RawMessage("null"), `{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"}`)
		}
		return 0, ""
	})
}

func rpcError(id json.RawMessage, err string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":%s}`, id, err)
}

// unsupported is the UnsupportedProtocolVersion error (-32022) naming the
// one version a server speaks.
func unsupported(version string) string {
	return fmt.Sprintf(`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[%q]}}`, version)
}

// filter counts each POSTed message by method and answers it with the
// status and body refuse returns for it, if any, instead of passing it on.
// The version is the one the request declares: its Mcp-Protocol-Version
// header, else the protocolVersion of its _meta.
func filter(counts *Counts, next http.Handler, refuse func(id json.RawMessage, method, version string) (int, string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		counts.add(msg.Method)
		version := r.Header.Get("Mcp-Protocol-Version")
		if version == "" {
			version, _ = msg.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
		}
		status, answer := refuse(msg.ID, msg.Method, version)
		if status == 0 && answer != "" {
			<-r.Context().Done()
			return
		}
		if answer != "" {
			if json.Valid([]byte(answer)) {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(status)
			io.WriteString(w, answer)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// Switchable is one URL whose server a test replaces, as a restart with
// another build does.
type Switchable struct {
	URL     string
	handler atomic.Pointer[http.Handler]
}

// StartSwitchable serves h on 127.0.0.1 until the test ends.
func StartSwitchable(t testing.TB, h http.Handler) *Switchable {
	t.Helper()
	s := &Switchable{}
	s.Switch(h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*s.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/mcp"
	return s
}

// Switch serves h from now on.
func (s *Switchable) Switch(h http.Handler) { s.handler.Store(&h) }
