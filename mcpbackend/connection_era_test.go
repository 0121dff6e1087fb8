package mcpbackend

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestEraRefused: which answers say the backend no longer speaks the
// connection's era. A 2026-07-28 server answers 400 to requests it read
// and refused for their content (bad arguments, a header that disagrees
// with the body): those keep the connection.
func TestEraRefused(t *testing.T) {
	t.Parallel()
	const modern, legacy = "2026-07-28", "2025-11-25"
	rpc := func(code int, msg string) error {
		return (&mcp.JSONRPCErrorDetails{Code: code, Message: msg}).AsError()
	}
	tests := []struct {
		name    string
		err     error
		status  int
		version string
		want    bool
	}{
		{"-32022 without the connection's version", mcp.UnsupportedProtocolVersionError{Version: modern, Supported: []string{legacy}}, 400, modern, true},
		{"-32022 listing the connection's version", mcp.UnsupportedProtocolVersionError{Version: modern, Supported: []string{modern}}, 400, modern, false},
		{"-32022 listing nothing", mcp.UnsupportedProtocolVersionError{Version: legacy}, 400, legacy, true},
		{"no session, from a server of 2025-11-25", rpc(-32000, "Bad Request: Mcp-Session-Id header is required"), 400, modern, true},
		{"plain text 404", errors.New("request failed with status 404: session not found"), 404, modern, true},
		{"bad arguments", fmt.Errorf("call: %w", rpc(mcp.INVALID_PARAMS, "invalid params")), 400, modern, false},
		{"unknown method", rpc(mcp.METHOD_NOT_FOUND, "no such method"), 400, modern, false},
		{"a header that disagrees", rpc(mcp.HEADER_MISMATCH, "Mcp-Name disagrees"), 400, modern, false},
		{"a capability missing", rpc(mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, "needs sampling"), 400, modern, false},
		{"a server error", rpc(-32000, "boom"), 500, modern, false},
		{"400 on a connection of 2025-11-25", rpc(-32000, "Bad Request"), 400, legacy, false},
	}
	for _, tt := range tests {
		state := &callState{}
		state.answered(tt.status, false)
		if got := eraRefused(tt.err, state, tt.version); got != tt.want {
			t.Errorf("%s: eraRefused = %v, want %v", tt.name, got, tt.want)
		}
	}
}
