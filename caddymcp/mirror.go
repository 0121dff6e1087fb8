package caddymcp

import (
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/fastpath"
)

// refuseMirror answers a tools/call whose Mcp-Param headers disagree with
// its arguments, or hold one twice, with mcp-go's answer to such a
// 2026-07-28 request, and reports whether it did. It checks the headers
// sent whatever revision the call claims: the era mcp-go reads from a
// request may not be the one its own fields seem to say (a _meta key in
// other letters, a version that is not a string), and a call it takes
// for an earlier revision gets no check of its own. mcp-go then holds a
// 2026-07-28 call to every mirrored argument as well.
func (e *Endpoint) refuseMirror(w http.ResponseWriter, r *http.Request, info *fastpath.Message) bool {
	tool := e.mirrored[info.Params.Name]
	if tool == nil {
		return false
	}
	if err := fastpath.ParamHeadersMatch(tool, r.Header, info.RawParams, false); err != nil {
		e.rpcError(w, http.StatusBadRequest, info.ID(), mcp.HEADER_MISMATCH, err.Error())
		return true
	}
	return false
}
