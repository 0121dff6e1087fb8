package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// The tools/call fast path. mcp-go parses a message five or six times,
// starts a goroutine for notifications and builds a session for every
// request; for the one message that carries the traffic, a plain tools/call
// asking for no progress, the endpoint answers itself, with the answer
// mcp-go would give. Everything else (initialize, tools/list, ping,
// notifications, progress, unknown tools, anything malformed or unusual)
// goes through mcp-go, which also writes every error.

// callMeta is the part of a tools/call's _meta the fast path reads.
type callMeta struct {
	ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
	Capabilities    json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	ProgressToken   json.RawMessage `json:"progressToken"`
}

// fastCall runs a tool by name; it reports false for a tool it does not
// have.
type fastCall func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool)

// serveFast answers a tools/call if it can; it reports whether it did.
func (e *Endpoint) serveFast(w http.ResponseWriter, r *http.Request, info *rpcInfo) bool {
	if e.fast == nil || info.JSONRPC != mcp.JSONRPC_VERSION || len(info.Params.Meta.ProgressToken) > 0 ||
		!jsonContentType(r.Header.Get("Content-Type")) || info.Result != nil || info.Error != nil {
		return false
	}
	id, ok := answerID(info.RawID)
	if !ok {
		return false
	}
	var args map[string]any
	if raw := bytes.TrimSpace(info.Params.Arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if args = decodeArgs(raw); args == nil {
			return false // not an object: mcp-go and the tool handler say so
		}
	}
	header := r.Header.Get(mcp.HeaderProtocolVersion)
	version := info.Params.Meta.ProtocolVersion
	modern := version != ""
	if modern {
		if header != version || !mcp.IsModernProtocol(version) || !e.transport.SupportsProtocolVersion(version) ||
			len(info.Params.Meta.Capabilities) == 0 || r.Header.Get(mcp.HeaderLastEventID) != "" ||
			!standardHeadersMatch(r, version, info) {
			return false
		}
	} else if header != "" && (!mcp.IsValidProtocolVersion(header) || mcp.IsModernProtocol(header)) {
		return false
	}

	res, ran := e.runFast(r.Context(), info.Params.Name, args)
	if !ran {
		return false
	}
	var body []byte
	var err error
	if res == nil {
		body, err = json.Marshal(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id),
			Error: mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("panic recovered in %s tool handler", info.Params.Name)}})
	} else {
		var meta []byte
		if modern {
			res.SetResultType(mcp.ResultTypeComplete)
			meta = e.answerMeta()
		}
		buf := answerBuffers.Get().(*[]byte)
		defer func() {
			if cap(body) <= 64<<10 {
				*buf = body[:0]
				answerBuffers.Put(buf)
			}
		}()
		var ok bool
		if body, ok = appendAnswer((*buf)[:0], id, res, meta); !ok {
			if modern {
				res.EnsureResultMeta().SetServerInfo(e.serverInfo)
			}
			body, err = json.Marshal(mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Result: res})
		}
	}
	// Set, not a shared slice: Caddy's header replace rewrites values in place.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	atomic.AddInt64(&e.fastAnswers, 1)
	if err != nil {
		// The tool has run: the request is not handed on, to run it again.
		// mcp-go, failing to encode an answer, sends the status and no body.
		e.logger.Error("encoding a tool result", zap.String("tool", info.Params.Name), zap.Error(err))
		return true
	}
	body = append(body, '\n')
	_, _ = w.Write(body)
	return true
}

// answerBuffers hold answers while they are written. A buffer that grew
// past 64 KiB for one large answer is not kept.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// answerMeta is the _meta of every 2026-07-28 answer, marshalled at
// provision.
func (e *Endpoint) answerMeta() []byte {
	if e.metaJSON == nil { // an endpoint made without provisionEndpoint
		return serverMeta(e.serverInfo)
	}
	return e.metaJSON
}

func serverMeta(info mcp.Implementation) []byte {
	m := &mcp.Meta{}
	m.SetServerInfo(info)
	b, _ := json.Marshal(m)
	return b
}

// standardHeadersMatch reports whether a 2026-07-28 request's Mcp-Method
// and Mcp-Name headers match its body, as mcp.ValidateStandardHeaders
// does; the usual plain name is compared with the name already decoded
// instead of parsing the params a third time.
func standardHeadersMatch(r *http.Request, version string, info *rpcInfo) bool {
	name := r.Header.Get(mcp.HeaderName)
	if r.Header.Get(mcp.HeaderMethod) == string(mcp.MethodToolsCall) && name != "" && name == info.Params.Name {
		if decoded, ok := mcp.DecodeHeaderValue(name); ok && decoded == name {
			return true
		}
	}
	return mcp.ValidateStandardHeaders(r.Header.Get, version, mcp.MethodToolsCall, info.RawParams) == nil
}

// runFast runs the tool, turning a panic into a nil result.
func (e *Endpoint) runFast(ctx context.Context, name string, args map[string]any) (res *mcp.CallToolResult, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			e.logger.Error("panic in tool handler", zap.String("tool", name), zap.Any("panic", p))
			res, ok = nil, true
		}
	}()
	return e.fast(ctx, name, args)
}

// jsonContentType reports whether a Content-Type is application/json, as
// mcp-go requires of a POST.
func jsonContentType(value string) bool {
	if value == "application/json" {
		return true
	}
	media, _, err := mime.ParseMediaType(value)
	return err == nil && media == "application/json"
}

// answerID is the id of the answer to a request with this id, as mcp-go
// writes it: it decodes the id into an any (a string or a float64) and
// encodes that, so 1.0 comes back as 1 and "\u0041" as "A". It reports
// false for an id mcp-go does not answer alike: not a string or a number,
// or a number no float64 holds (1e400), for which it answers a parse error.
func answerID(raw json.RawMessage) (json.RawMessage, bool) {
	if plainID(raw) {
		return raw, true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	switch v.(type) {
	case string, float64:
	default:
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

// plainID reports whether an id is written back as it came: an integer of
// at most 15 digits, which a float64 holds exactly and encoding/json
// writes in the same digits, or a string of printable ASCII that
// encoding/json neither escapes nor unescapes.
func plainID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return false
		}
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
