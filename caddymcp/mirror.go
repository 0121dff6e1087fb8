package caddymcp

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

// mirroredTools are the tools of srv with mirrored arguments, by name.
func mirroredTools(srv *server.MCPServer) map[string]*mcp.Tool {
	tools := make(map[string]*mcp.Tool)
	for name, t := range srv.ListTools() {
		if len(mcp.ExtractParamHeaderBindings(&t.Tool)) > 0 {
			tool := t.Tool
			tools[name] = &tool
		}
	}
	return tools
}

// paramHeadersMatch checks the Mcp-Param headers of a tools/call of tool,
// whose params are params, as mcp-go checks a 2026-07-28 request's: every
// mirrored argument sent is in its header, and every header is its
// argument. With modern false (an earlier revision), only the headers
// sent are checked.
func paramHeadersMatch(tool *mcp.Tool, header http.Header, params []byte, modern bool) error {
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

// refuseMirror answers a tools/call whose Mcp-Param headers disagree with
// its arguments, or hold one twice, with mcp-go's answer to such a
// 2026-07-28 request, and reports whether it did. It checks the headers
// sent whatever revision the call claims: the era mcp-go reads from a
// request may not be the one its own fields seem to say (a _meta key in
// other letters, a version that is not a string), and a call it takes
// for an earlier revision gets no check of its own. mcp-go then holds a
// 2026-07-28 call to every mirrored argument as well.
func (e *Endpoint) refuseMirror(w http.ResponseWriter, r *http.Request, info *rpcInfo) bool {
	tool := e.mirrored[info.Params.Name]
	if tool == nil {
		return false
	}
	if err := paramHeadersMatch(tool, r.Header, info.RawParams, false); err != nil {
		e.rpcError(w, http.StatusBadRequest, info.id(), mcp.HEADER_MISMATCH, err.Error())
		return true
	}
	return false
}
