package caddymcp

import (
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
// one value and call with another.

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

// refuseMirror answers a tools/call of an earlier revision whose Mcp-Param
// headers disagree with its arguments, with mcp-go's answer to such a
// 2026-07-28 request, and reports whether it did.
func (e *Endpoint) refuseMirror(w http.ResponseWriter, r *http.Request, info *rpcInfo) bool {
	tool := e.mirrored[info.Params.Name]
	if tool == nil || !info.paramsDecoded ||
		mcp.IsModernProtocol(info.Params.Meta.ProtocolVersion) || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return false
	}
	if err := paramHeadersMatch(tool, r.Header, info.RawParams, false); err != nil {
		e.rpcError(w, http.StatusBadRequest, info.id(), mcp.HEADER_MISMATCH, err.Error())
		return true
	}
	return false
}
