package fastpath

import (
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Mirrored arguments (x-mcp-header, SEP-2243): a 2026-07-28 client sends
// each argument whose schema property names a header in Mcp-Param-<name>
// too, so that a proxy in front, or Caddy's own header matchers, can route
// and limit on it without reading the body. That only holds if the header
// is the argument: mcp-go checks a 2026-07-28 request's headers against
// its body, and so does the fast path, with the same function. A client
// of an earlier revision knows nothing of the headers and sends none; one
// that sends such a header anyway is held to it, or it could be routed by
// one value and call with another; and no client may send one twice.

// MirroredTools are the tools of srv with mirrored arguments, by name.
func MirroredTools(srv *server.MCPServer) map[string]*mcp.Tool {
	tools := make(map[string]*mcp.Tool)
	for name, t := range srv.ListTools() {
		if len(mcp.ExtractParamHeaderBindings(&t.Tool)) > 0 {
			tool := t.Tool
			tools[name] = &tool
		}
	}
	return tools
}

// ParamHeadersMatch checks the Mcp-Param headers of a tools/call of tool,
// whose params are params, as mcp-go checks a 2026-07-28 request's: every
// mirrored argument sent is in its header, and every header is its
// argument. With modern false (an earlier revision), only the headers
// sent are checked.
func ParamHeadersMatch(tool *mcp.Tool, header http.Header, params []byte, modern bool) error {
	// A header sent twice could be matched (Caddy's header matcher takes
	// any of the values) by a value the check never saw.
	for _, b := range mcp.ExtractParamHeaderBindings(tool) {
		if n := len(header.Values(b.HeaderName())); n > 1 {
			return mcp.HeaderMismatchError{Reason: fmt.Sprintf("%s sent %d times", b.HeaderName(), n)}
		}
	}
	var expected map[string]string
	if !modern {
		// A header not sent is taken as what a client that mirrors would
		// have sent: only the headers sent can disagree.
		expected = mcp.GenerateParamHeaders(tool, params)
	}
	return mcp.ValidateParamHeadersLookup(func(name string) (string, bool) {
		if values := header.Values(name); len(values) > 0 {
			return values[0], true
		}
		value, ok := expected[name]
		return value, ok
	}, tool, params)
}
