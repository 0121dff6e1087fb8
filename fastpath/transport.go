package fastpath

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
)

// NewTransport serves srv over streamable HTTP as every endpoint here does.
func NewTransport(srv *server.MCPServer, logger *slog.Logger) *server.StreamableHTTPServer {
	return server.NewStreamableHTTPServer(srv,
		// Stateless: no session state, so any number of instances behind any
		// load balancer serve the same endpoint.
		server.WithStateLess(true),
		// No standalone GET stream: an open stream would hold up reloads.
		server.WithDisableStreaming(true),
		// The Origin and Host policy is the endpoint's own.
		server.WithDisableLocalhostProtection(true),
		server.WithStreamableHTTPLogger(logger),
	)
}

// HandOn has mcp-go's transport answer a request whose body was read, in
// ctx.
func HandOn(ctx context.Context, transport *server.StreamableHTTPServer, w http.ResponseWriter, r *http.Request, body []byte) {
	transport.Handle(&flushWriter{w: w}, &server.HTTPRequest{
		Method:  r.Method,
		URL:     r.URL,
		Header:  r.Header,
		Body:    body,
		Context: ctx,
	})
}

// flushWriter lets mcp-go stream SSE responses through a response writer
// that is not an http.Flusher itself, such as Caddy's.
type flushWriter struct{ w http.ResponseWriter }

func (f *flushWriter) Header() http.Header         { return f.w.Header() }
func (f *flushWriter) WriteHeader(status int)      { f.w.WriteHeader(status) }
func (f *flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f *flushWriter) Flush()                      { _ = http.NewResponseController(f.w).Flush() }
func (f *flushWriter) CanStream() bool             { return true }
func (f *flushWriter) Unwrap() http.ResponseWriter { return f.w }

// Interface guards
var _ server.HTTPResponseWriter = (*flushWriter)(nil)
