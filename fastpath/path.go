package fastpath

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
)

// The tools/call fast path. mcp-go parses a message five or six times,
// starts a goroutine for notifications and builds a session for every
// request; for the one message that carries the traffic, a plain tools/call
// asking for no progress, the endpoint answers itself, with the bytes
// mcp-go would write. It takes a request only when every check mcp-go's
// streamable HTTP server makes of it is sure to pass (see accept), and
// otherwise leaves it to mcp-go untouched: initialize, ping,
// notifications, progress, unknown tools, anything malformed or unusual.
// Differential tests and fuzz targets, here and in caddymcp, hold the two
// to the same answers and the same upstream requests; TestMCPGoVersion
// asks for that to be re-checked when mcp-go changes.

// CallFunc runs a tool by name; it reports false, having run nothing, for
// a tool it does not have. A panic in it is answered as mcp-go answers a
// panic in a tool handler; logging it is CallFunc's.
type CallFunc func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool)

// Path answers the plain tools/calls and tools/lists of one endpoint.
type Path struct {
	call CallFunc
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
	// every tools/list (see ServeList).
	list    *listAnswers
	answers atomic.Int64 // tools/calls answered
	lists   atomic.Int64 // tools/lists answered
}

// New makes the fast path of an endpoint whose MCP server is srv and
// whose transport is transport; call runs its tools. It answers no
// tools/list until PrepareList.
func New(call CallFunc, srv *server.MCPServer, transport *server.StreamableHTTPServer, info mcp.Implementation, slogger *slog.Logger) *Path {
	f := &Path{call: call, transport: transport, mirrored: MirroredTools(srv), meta: serverMeta(info)}
	// The replay server has the tools of srv, each answering with the result
	// in its context, and the same name and version, so that mcp-go
	// decorates and encodes a result as the endpoint's own server would.
	replay := server.NewMCPServer(info.Name, info.Version, server.WithToolCapabilities(false), server.WithRecovery())
	for _, t := range srv.ListTools() {
		replay.AddTool(t.Tool, replayResult)
	}
	f.replay = NewTransport(replay, slogger)
	return f
}

// PrepareList has the fast path answer tools/list too, from bytes: for an
// endpoint whose list is the same for every caller.
func (f *Path) PrepareList(srv *server.MCPServer) { f.list = prepareList(srv, f.transport) }

// AnswersLists reports whether PrepareList was called.
func (f *Path) AnswersLists() bool { return f != nil && f.list != nil }

// Answered counts the tools/calls the fast path answered.
func (f *Path) Answered() int64 { return f.answers.Load() }

// Listed counts the tools/lists the fast path answered.
func (f *Path) Listed() int64 { return f.lists.Load() }

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

// ServeCall answers a tools/call, whose body is body and whose envelope
// m is already decoded, if it can, and reports whether it did. Once the tool
// has run it answers whatever happens: handing the request on would run
// the tool again.
func (f *Path) ServeCall(w http.ResponseWriter, r *http.Request, body []byte, m *Message) bool {
	if f == nil {
		return false
	}
	call, ok := f.acceptCall(r, body, m)
	if !ok {
		return false
	}
	run, ok := f.run(r.Context(), m.Params.Name, call.args)
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
func (f *Path) answerThroughMCPGo(w http.ResponseWriter, r *http.Request, body []byte, run toolRun) {
	HandOn(context.WithValue(r.Context(), toolRunKey{}, &run), f.replay, w, r, body)
}

// accepted is what accept found in a request it takes.
type accepted struct {
	id      json.RawMessage // as the answer carries it
	version string          // of the Mcp-Protocol-Version header
	modern  bool            // 2026-07-28
}

// accept reports whether mcp-go would take the tools/call or tools/list m
// as the plain call or list it seems to be, given its params' _meta (meta)
// and the members its params may have; a call's own checks (its mirrored
// headers, its arguments) and a list's (its prepared answer) are the
// callers'. It checks what mcp-go checks:
//
//   - Content-Type is application/json, parameters allowed (handlePost);
//   - the body is an object of the members jsonrpc, id, method and params,
//     params of the given members, and _meta of the protocol version,
//     client capabilities, client info and trace context, each member once
//     and spelled exactly (see messageShape): so no result or error
//     member, which makes the message a response, and no member mcp-go
//     reads and the fast path does not (a task, progressToken, anything
//     new);
//   - no number that no float64 holds, in the id, the params or _meta,
//     which mcp-go decodes into an any and answers a parse error for;
//   - for a 2025 client (legacy era): no version in _meta, and a
//     Mcp-Protocol-Version header that is absent or a version mcp-go
//     knows; Mcp-Session-Id is ignored (stateless);
//   - for a 2026-07-28 client: no Last-Event-ID, the version header equal
//     to the _meta version, a version the transport serves, client
//     capabilities that decode, and Mcp-Method and Mcp-Name matching the
//     body;
//   - jsonrpc is "2.0", and the id a string or a number (not null, which
//     makes a notification).
//
// mcp-go does not look at Accept.
func (f *Path) accept(r *http.Request, body []byte, m *Message, members []string, meta callMeta) (accepted, bool) {
	var a accepted
	if !jsonContentType(r.Header.Get("Content-Type")) {
		return a, false
	}
	rawMeta, ok := messageShape(body, members)
	if !ok {
		return a, false
	}
	a.version = r.Header.Get(mcp.HeaderProtocolVersion)
	a.modern = mcp.IsModernProtocol(a.version)
	if !a.modern {
		if meta.ProtocolVersion != "" || (a.version != "" && !mcp.IsValidProtocolVersion(a.version)) {
			return a, false
		}
	} else if a.version != meta.ProtocolVersion || !f.transport.SupportsProtocolVersion(a.version) ||
		r.Header.Get(mcp.HeaderLastEventID) != "" || !clientCapabilities(meta.Capabilities, rawMeta) ||
		!standardHeadersMatch(r, a.version, m) {
		return a, false
	}
	if m.JSONRPC != mcp.JSONRPC_VERSION {
		return a, false
	}
	if a.id, ok = answerID(m.RawID); !ok {
		return a, false
	}
	return a, true
}

// fastCall is what acceptCall found in a tools/call it takes.
type fastCall struct {
	accepted
	args map[string]any
}

// acceptCall is accept for a tools/call, whose params must have decoded,
// whose Mcp-Param headers of a 2026-07-28 call must match its mirrored
// arguments, and whose arguments must be absent, null or an object.
func (f *Path) acceptCall(r *http.Request, body []byte, m *Message) (fastCall, bool) {
	var call fastCall
	if !m.paramsDecoded {
		return call, false
	}
	var ok bool
	if call.accepted, ok = f.accept(r, body, m, paramsMembers, m.Params.Meta); !ok {
		return call, false
	}
	if call.modern && !f.paramHeadersMatch(r, m) {
		return call, false
	}
	if raw := bytes.TrimSpace(m.Params.Arguments); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if call.args = decodePooledArgs(raw); call.args == nil {
			return call, false // not an object: mcp-go and the tool handler say so
		}
	}
	return call, true
}

// write writes the answer to a call whose tool gave res, if appendAnswer
// can; it reports whether it did.
func (f *Path) write(w http.ResponseWriter, call fastCall, res *mcp.CallToolResult) bool {
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

// run runs the tool, keeping a panic for the answer (CallFunc logs it).
func (f *Path) run(ctx context.Context, name string, args map[string]any) (run toolRun, ok bool) {
	defer func() {
		if p := recover(); p != nil {
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
// does; a tools/call's usual plain name is compared with the name already
// decoded instead of parsing the params a third time.
func standardHeadersMatch(r *http.Request, version string, m *Message) bool {
	if m.Method == string(mcp.MethodToolsCall) {
		name := r.Header.Get(mcp.HeaderName)
		if r.Header.Get(mcp.HeaderMethod) == m.Method && name != "" && name == m.Params.Name {
			if decoded, ok := mcp.DecodeHeaderValue(name); ok && decoded == name {
				return true
			}
		}
	}
	return mcp.ValidateStandardHeaders(r.Header.Get, version, mcp.MCPMethod(m.Method), m.RawParams) == nil
}

// paramHeadersMatch reports whether a 2026-07-28 tools/call's Mcp-Param
// headers match its mirrored arguments, as mcp-go checks them.
func (f *Path) paramHeadersMatch(r *http.Request, info *Message) bool {
	tool := f.mirrored[info.Params.Name]
	return tool == nil || ParamHeadersMatch(tool, r.Header, info.RawParams, true) == nil
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
