package fastpath

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tools/list fast path. mcp-go encodes the whole tool list for every
// tools/list, which for a thousand imported tools is tens of milliseconds
// and megabytes of garbage a request. The list does not change after
// Provision, nor, without tool scopes, with the caller: so the answer is
// mcp-go's own, asked for once per protocol version at Provision and kept
// as bytes, with the request's id put in and, for a cursor, the tools up
// to the cursor left out, as mcp-go leaves them out (no page size: the
// rest of the list). A request it is not sure mcp-go answers alike goes to
// mcp-go (see listAnswers.accept). FuzzFastListMatchesMCPGo holds the
// two to the same answers. The tools are encoded, and each version's
// answer asked for, on the first tools/list, not at Provision: for a large
// API each costs what one tools/list through mcp-go costs.

// listSentinel is the id of the tools/list each answer is prepared from;
// the answer has it exactly once, where a request's id goes.
const listSentinel = `"caddy-mcp-prepared-tools-list"`

// listAnswers are the prepared answers to a plain tools/list. The tools
// are encoded on the first tools/list too (encode).
type listAnswers struct {
	srv       *server.MCPServer
	transport *server.StreamableHTTPServer
	// byVersion holds the answer to a request of each Mcp-Protocol-Version
	// header ("" for none).
	byVersion map[string]*preparedAnswer

	once    sync.Once
	encoded bool     // the tools encoded; false: mcp-go answers
	names   []string // the tools, sorted, as mcp-go lists them
	items   []byte   // their JSON, comma-separated, as in the tools array
	start   []int    // where each tool's JSON starts in items
}

// preparedAnswer is the answer of one version, made once.
type preparedAnswer struct {
	version string
	once    sync.Once
	answer  *listAnswer // nil: not an answer the prepared bytes give
}

// listAnswer is mcp-go's answer to one tools/list, cut around the id and
// the tools array's items.
type listAnswer struct {
	status      int
	header      http.Header
	beforeID    []byte
	beforeItems []byte // after the id, up to and with the array's '['
	afterItems  []byte // from the array's ']'
	modern      bool
}

// prepareList makes the list answers of transport, whose server is srv,
// to each protocol version it serves; each is made on its first request.
func prepareList(srv *server.MCPServer, transport *server.StreamableHTTPServer) *listAnswers {
	l := &listAnswers{srv: srv, transport: transport, byVersion: make(map[string]*preparedAnswer)}
	for _, version := range append([]string{""}, mcp.ValidProtocolVersions...) {
		if !mcp.IsModernProtocol(version) || transport.SupportsProtocolVersion(version) {
			l.byVersion[version] = &preparedAnswer{version: version}
		}
	}
	return l
}

// encode encodes the tools as mcp-go lists them, once; it reports false
// if a tool does not encode.
func (l *listAnswers) encode() bool {
	l.once.Do(func() {
		tools := l.srv.ListTools()
		for name := range tools {
			l.names = append(l.names, name)
		}
		slices.Sort(l.names)
		for i, name := range l.names {
			b, err := json.Marshal(tools[name].Tool)
			if err != nil {
				return
			}
			if i > 0 {
				l.items = append(l.items, ',')
			}
			l.start = append(l.start, len(l.items))
			l.items = append(l.items, b...)
		}
		l.encoded = true
	})
	return l.encoded
}

// answer is mcp-go's answer to a plain tools/list of p's version, cut
// around the id and the tool list, asked for once; nil if the answer does
// not hold the tool list exactly as the items encode it.
func (p *preparedAnswer) get(l *listAnswers) *listAnswer {
	p.once.Do(func() {
		w := &answerRecorder{header: make(http.Header)}
		l.transport.Handle(&flushWriter{w: w}, &server.HTTPRequest{
			Method:  http.MethodPost,
			URL:     &url.URL{Path: "/"},
			Header:  listRequestHeader(p.version),
			Body:    []byte(listRequestBody(p.version)),
			Context: context.Background(),
		})
		body := w.body.Bytes()
		array := make([]byte, 0, len(l.items)+2)
		array = append(append(append(array, '['), l.items...), ']')
		id := bytes.Index(body, []byte(listSentinel))
		at := bytes.Index(body, array)
		if w.status != http.StatusOK || id < 0 || at < id || bytes.Count(body, []byte(listSentinel)) != 1 {
			return
		}
		end := at + len(array) - 1
		p.answer = &listAnswer{
			status:      w.status,
			header:      w.header,
			beforeID:    slices.Clone(body[:id]),
			beforeItems: slices.Clone(body[id+len(listSentinel) : at+1]),
			afterItems:  slices.Clone(body[end:]),
			modern:      mcp.IsModernProtocol(p.version),
		}
	})
	return p.answer
}

// listRequestBody is a plain tools/list of version ("" for none).
func listRequestBody(version string) string {
	if !mcp.IsModernProtocol(version) {
		return `{"jsonrpc":"2.0","id":` + listSentinel + `,"method":"tools/list"}`
	}
	return `{"jsonrpc":"2.0","id":` + listSentinel + `,"method":"tools/list","params":{"_meta":{` +
		`"` + mcp.MetaKeyProtocolVersion + `":"` + version + `","` + mcp.MetaKeyClientCapabilities + `":{}}}}`
}

func listRequestHeader(version string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if version != "" {
		h.Set(mcp.HeaderProtocolVersion, version)
	}
	if mcp.IsModernProtocol(version) {
		h.Set(mcp.HeaderMethod, string(mcp.MethodToolsList))
	}
	return h
}

// listParams are the params of a tools/list.
type listParams struct {
	Cursor string   `json:"cursor"`
	Meta   callMeta `json:"_meta"`
}

// ServeList answers a tools/list from the prepared answers if it can, and
// reports whether it did.
func (f *Path) ServeList(w http.ResponseWriter, r *http.Request, body []byte, m *Message) bool {
	if f == nil || f.list == nil {
		return false
	}
	answer, id, from, ok := f.acceptList(r, body, m)
	if !ok {
		return false
	}
	f.lists.Add(1)
	for k, v := range answer.header {
		w.Header()[k] = slices.Clone(v)
	}
	w.WriteHeader(answer.status)
	var items []byte
	if from < len(f.list.start) {
		items = f.list.items[f.list.start[from]:]
	}
	// In pieces: the items are megabytes for a large API, not copied.
	for _, part := range [][]byte{answer.beforeID, id, answer.beforeItems, items, answer.afterItems} {
		if _, err := w.Write(part); err != nil {
			break
		}
	}
	return true
}

// acceptList is accept for a tools/list, with the params of a list (a
// cursor and _meta) and a prepared answer for its version; it says which
// answer, with what id, from which tool on.
func (f *Path) acceptList(r *http.Request, body []byte, m *Message) (answer *listAnswer, id json.RawMessage, from int, ok bool) {
	l := f.list
	var params listParams
	if raw := bytes.TrimSpace(m.RawParams); len(raw) > 0 {
		if raw[0] != '{' || json.Unmarshal(raw, &params) != nil {
			return nil, nil, 0, false
		}
	}
	a, ok := f.accept(r, body, m, listMembers, params.Meta)
	if !ok || !l.encode() {
		return nil, nil, 0, false
	}
	prepared := l.byVersion[a.version]
	if prepared == nil {
		return nil, nil, 0, false
	}
	if answer = prepared.get(l); answer == nil {
		return nil, nil, 0, false
	}
	if params.Cursor != "" {
		after, err := base64.StdEncoding.DecodeString(params.Cursor)
		if err != nil {
			return nil, nil, 0, false // mcp-go answers the error
		}
		from = sort.Search(len(l.names), func(i int) bool { return l.names[i] > string(after) })
	}
	return answer, a.id, from, true
}

// answerRecorder keeps the answer mcp-go writes.
type answerRecorder struct {
	status int
	header http.Header
	body   bytes.Buffer
}

func (a *answerRecorder) Header() http.Header { return a.header }
func (a *answerRecorder) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *answerRecorder) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	return a.body.Write(p)
}
