package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
)

// The tools/call fast path. mcp-go parses a message five or six times,
// starts a goroutine for notifications and builds a session for every
// request; for the one message that carries the traffic, a plain tools/call
// asking for no progress, the mcp handler answers itself, with the bytes
// mcp-go would write. It takes a request only when every check mcp-go's
// streamable HTTP server makes of it is sure to pass (see accept), and
// otherwise leaves it to mcp-go untouched: initialize, tools/list, ping,
// notifications, progress, unknown tools, anything malformed or unusual.
// FuzzFastPathMatchesMCPGo holds the two to the same answers and the same
// upstream requests; TestMCPGoVersion asks for that to be re-checked when
// mcp-go changes.

// fastCall runs a tool by name; it reports false, having run nothing, for
// a tool it does not have.
type fastCall func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool)

// fastPath answers plain tools/calls of the mcp handler.
type fastPath struct {
	call fastCall
	// transport is the endpoint's: the protocol versions it serves.
	transport *server.StreamableHTTPServer
	// replay writes a result the tool already gave, through mcp-go, for the
	// answers appendAnswer does not write.
	replay *server.StreamableHTTPServer
	// mirrored are the tools with arguments mirrored into headers, which
	// mcp-go checks against the request headers in 2026-07-28 requests.
	mirrored map[string]*mcp.Tool
	meta     []byte // the _meta of 2026-07-28 answers, marshalled once
	// list holds the prepared tools/list answers; nil: mcp-go answers
	// every tools/list (see serveList).
	list    *listAnswers
	logger  *zap.Logger
	answers atomic.Int64 // tools/calls answered (for tests)
	lists   atomic.Int64 // tools/lists answered (for tests)
}

// newFastPath makes the fast path of an endpoint whose MCP server is srv
// and whose transport is transport; call runs its tools.
func newFastPath(call fastCall, srv *server.MCPServer, transport *server.StreamableHTTPServer, info mcp.Implementation, slogger *slog.Logger, logger *zap.Logger) *fastPath {
	f := &fastPath{call: call, transport: transport, mirrored: mirroredTools(srv), meta: serverMeta(info), logger: logger}
	// The replay server has the tools of srv, each answering with the result
	// in its context, and the same name and version, so that mcp-go
	// decorates and encodes a result as the endpoint's own server would.
	replay := server.NewMCPServer(info.Name, info.Version, server.WithToolCapabilities(false), server.WithRecovery())
	for _, t := range srv.ListTools() {
		replay.AddTool(t.Tool, replayResult)
	}
	f.replay = newTransport(replay, slogger)
	return f
}

// toolRun is what one run of a tool gave: a result, or a panic.
type toolRun struct {
	result    *mcp.CallToolResult
	panicked  bool
	recovered any
}

type toolRunKey struct{}

// replayResult is the replay server's tool handler: it gives what the tool
// gave, again panicking with its panic for mcp-go to recover.
func replayResult(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	run := ctx.Value(toolRunKey{}).(*toolRun)
	if run.panicked {
		panic(run.recovered)
	}
	return run.result, nil
}

// serve answers a tools/call, whose body is body and whose envelope info
// is already decoded, if it can, and reports whether it did. Once the tool
// has run it answers whatever happens: handing the request on would run
// the tool again.
func (f *fastPath) serve(w http.ResponseWriter, r *http.Request, body []byte, info *rpcInfo) bool {
	call, ok := f.accept(r, body, info)
	if !ok {
		return false
	}
	run, ok := f.run(r.Context(), info.Params.Name, call.args)
	if !ok {
		return false
	}
	defer releaseArgs(call.args)
	f.answers.Add(1)
	if !run.panicked && run.result != nil && f.write(w, call, run.result) {
		return true
	}
	f.answerThroughMCPGo(w, r, body, run)
	return true
}

// answerThroughMCPGo has mcp-go answer the request with what the tool
// gave: a panic, or a result appendAnswer does not write (mcp-go's answer
// to one it cannot encode is a 200 with no body).
func (f *fastPath) answerThroughMCPGo(w http.ResponseWriter, r *http.Request, body []byte, run toolRun) {
	f.replay.Handle(&flushWriter{w: w}, &server.HTTPRequest{
		Method:  r.Method,
		URL:     r.URL,
		Header:  r.Header,
		Body:    body,
		Context: context.WithValue(r.Context(), toolRunKey{}, &run),
	})
}

// fastRequest is what accept found in a request it takes.
type fastRequest struct {
	id     json.RawMessage // as the answer carries it
	args   map[string]any
	modern bool // 2026-07-28
}

// accept reports whether mcp-go would take the tools/call as the tool call
// it seems to be, and what the fast path needs of it. It checks, in the
// order mcp-go does:
//
//   - Content-Type is application/json, parameters allowed (handlePost);
//   - the body is an object of the members jsonrpc, id, method and params,
//     params of name, arguments and _meta, and _meta of the protocol
//     version, client capabilities and client info, each member once and
//     spelled exactly (see messageShape): so no result or error member,
//     which makes the message a response, and no member mcp-go reads and
//     the fast path does not (a task, progressToken, anything new);
//   - no number that no float64 holds, in the id, the arguments or _meta,
//     which mcp-go decodes into an any and answers a parse error for;
//   - for a 2025 client (legacy era): no version in _meta, and a
//     Mcp-Protocol-Version header that is absent or a version mcp-go
//     knows; Mcp-Session-Id is ignored (stateless);
//   - for a 2026-07-28 client: no Last-Event-ID, the version header equal to
//     the _meta version, a version the transport serves, client
//     capabilities that decode, Mcp-Method and Mcp-Name matching the body,
//     and the Mcp-Param headers of mirrored arguments matching them;
//   - jsonrpc is "2.0", and the id a string or a number (not null, which
//     makes a notification);
//   - the arguments absent, null or an object.
//
// mcp-go does not look at Accept.
func (f *fastPath) accept(r *http.Request, body []byte, info *rpcInfo) (fastRequest, bool) {
	var call fastRequest
	if !info.paramsDecoded || !jsonContentType(r.Header.Get("Content-Type")) {
		return call, false
	}
	meta, ok := messageShape(body, paramsMembers)
	if !ok {
		return call, false
	}
	header := r.Header.Get(mcp.HeaderProtocolVersion)
	version := info.Params.Meta.ProtocolVersion
	call.modern = mcp.IsModernProtocol(version) || mcp.IsModernProtocol(header)
	if !call.modern {
		if version != "" || (header != "" && !mcp.IsValidProtocolVersion(header)) {
			return call, false
		}
	} else if header != version || !f.transport.SupportsProtocolVersion(version) ||
		r.Header.Get(mcp.HeaderLastEventID) != "" || !clientCapabilities(info.Params.Meta.Capabilities, meta) ||
		!standardHeadersMatch(r, version, info) || !f.paramHeadersMatch(r, info) {
		return call, false
	}
	if info.JSONRPC != mcp.JSONRPC_VERSION {
		return call, false
	}
	if call.id, ok = answerID(info.RawID); !ok {
		return call, false
	}
	if raw := bytes.TrimSpace(info.Params.Arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if call.args = decodePooledArgs(raw); call.args == nil {
			return call, false // not an object: mcp-go and the tool handler say so
		}
	}
	return call, true
}

// write writes the answer to a call whose tool gave res, if appendAnswer
// can; it reports whether it did.
func (f *fastPath) write(w http.ResponseWriter, call fastRequest, res *mcp.CallToolResult) bool {
	var meta []byte
	if call.modern {
		// As mcp-go decorates a 2026-07-28 result: a resultType the handler
		// set is kept.
		if res.ResultType == "" {
			res.SetResultType(mcp.ResultTypeComplete)
		}
		meta = f.meta
	}
	buf := answerBuffers.Get().(*[]byte)
	body, ok := appendAnswer((*buf)[:0], call.id, res, meta)
	if ok {
		// Set, not a shared slice: Caddy's header replace rewrites values in place.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		body = append(body, '\n')
		_, _ = w.Write(body)
	}
	if cap(body) <= 64<<10 {
		*buf = body[:0]
		answerBuffers.Put(buf)
	}
	return ok
}

// run runs the tool, keeping a panic for the answer.
func (f *fastPath) run(ctx context.Context, name string, args map[string]any) (run toolRun, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			f.logger.Error("panic in tool handler", zap.String("tool", name), zap.Any("panic", p))
			run.panicked, run.recovered, ok = true, p, true
		}
	}()
	run.result, ok = f.call(ctx, name, args)
	return run, ok
}

// answerBuffers hold answers while they are written. A buffer that grew
// past 64 KiB for one large answer is not kept.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func serverMeta(info mcp.Implementation) []byte {
	m := &mcp.Meta{}
	m.SetServerInfo(info)
	b, _ := json.Marshal(m)
	return b
}

// callMeta is the part of a tools/call's _meta the fast path reads.
type callMeta struct {
	ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
	Capabilities    json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
}

// clientCapabilities reports whether the client capabilities of a
// 2026-07-28 request decode as mcp-go decodes them from _meta: an empty
// object, the usual, or else whatever mcp-go's own Meta makes of it.
func clientCapabilities(caps json.RawMessage, meta []byte) bool {
	if bytes.Equal(bytes.TrimSpace(caps), []byte("{}")) {
		return true
	}
	var m mcp.Meta
	return json.Unmarshal(meta, &m) == nil && m.ClientCapabilities() != nil
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

// paramHeadersMatch reports whether a 2026-07-28 tools/call's Mcp-Param
// headers match its mirrored arguments, as mcp-go checks them.
func (f *fastPath) paramHeadersMatch(r *http.Request, info *rpcInfo) bool {
	tool := f.mirrored[info.Params.Name]
	return tool == nil || paramHeadersMatch(tool, r.Header, info.RawParams, true) == nil
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
