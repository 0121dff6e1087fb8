package mcpbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Bounds of a backend's tool list when the config sets none. GitHub's
// REST API, one tool per operation, is about 1000 tools.
const (
	DefaultMaxBackendTools     = 2000
	DefaultMaxBackendToolsSize = 16 << 20
)

// maxToolPages bounds the pages of one listing.
const maxToolPages = 100

// toolList gathers a backend's tools page by page, within the bounds of
// its config.
type toolList struct {
	b     *Backend
	tools []RemoteTool
	size  int64 // JSON bytes of the tools listed so far, exposed or not
	// refused counts the tools seen past a bound; reason names the bound.
	refused int
	reason  string
	more    bool // the backend offered pages that were not read
}

// listTools sends tools/list through the transport and keeps the raw JSON
// of each tool: mcp-go's mcp.Tool drops parts of schemas ($schema, oneOf,
// a top-level title) and the order of nested properties. Each page is
// decoded one tool at a time, so that a list past its bounds is refused
// as it is read, not after.
func (b *Backend) listTools(ctx context.Context, c *client.Client) ([]RemoteTool, error) {
	l := &toolList{b: b}
	cursor := ""
	for page := 0; page < maxToolPages; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var header http.Header
		if v := c.ProtocolVersion(); mcp.IsModernProtocol(v) {
			params["_meta"] = map[string]any{
				mcp.MetaKeyProtocolVersion:    v,
				mcp.MetaKeyClientCapabilities: map[string]any{},
				mcp.MetaKeyClientInfo:         clientInfo,
			}
			encoded, _ := json.Marshal(params)
			header = http.Header{}
			for k, v := range mcp.StandardHeaders(v, mcp.MethodToolsList, encoded) {
				header.Set(k, v)
			}
		}
		if state, ok := ctx.Value(callStateKey{}).(*callState); ok {
			state.retry() // each page is an attempt of its own: its status is what counts
		}
		resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId(b.reqID.Add(1)),
			Method:  string(mcp.MethodToolsList),
			Params:  params,
			Header:  header,
		})
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, resp.Error.AsError()
		}
		next, err := l.readPage(resp.Result)
		if err != nil {
			return nil, fmt.Errorf("tools/list answer: %w", err)
		}
		if next == "" || next == cursor {
			break
		}
		if l.reason != "" {
			l.more = true
			break
		}
		cursor = next
	}
	b.noteRefusal(l)
	return l.tools, nil
}

// readPage reads one tools/list result and returns its nextCursor.
func (l *toolList) readPage(result json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", errors.New("the result is not an object")
	}
	next := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch tok {
		case "tools":
			if err := l.readTools(dec); err != nil {
				return "", err
			}
		case "nextCursor":
			if err := dec.Decode(&next); err != nil {
				return "", err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	return next, nil
}

func (l *toolList) readTools(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err // null: no tools
	}
	if tok != json.Delim('[') {
		return errors.New("tools is not an array")
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if l.reason != "" {
			l.refused++
			continue
		}
		l.add(raw)
	}
	_, err = dec.Token()
	return err
}

// add keeps one tool if it is exposed and within the bounds.
func (l *toolList) add(raw json.RawMessage) {
	cfg := &l.b.cfg
	if l.size += int64(len(raw)); l.size > cfg.MaxToolsSize {
		l.refuse(fmt.Sprintf("the tool list is larger than max_tools_size (%s)", upstream.FormatSize(cfg.MaxToolsSize)))
		return
	}
	var t struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Name == "" || !l.b.exposed(t.Name) {
		return
	}
	if len(l.tools) == cfg.MaxTools {
		l.refuse(fmt.Sprintf("the backend lists more than max_tools (%d) tools", cfg.MaxTools))
		return
	}
	// Hints of the wrong shape count as absent, not as a bad tool.
	var hints struct {
		ReadOnly   bool `json:"readOnlyHint"`
		Idempotent bool `json:"idempotentHint"`
	}
	_ = json.Unmarshal(t.Annotations, &hints)
	l.tools = append(l.tools, RemoteTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		Replayable: hints.ReadOnly || hints.Idempotent})
}

func (l *toolList) refuse(reason string) {
	l.reason = reason
	l.refused++
}

// noteRefusal logs a listing that refused tools, once for as long as the
// listings refuse the same.
func (b *Backend) noteRefusal(l *toolList) {
	key := ""
	if l.reason != "" {
		key = fmt.Sprintf("%s/%d/%d/%t", l.reason, len(l.tools), l.refused, l.more)
	}
	b.mu.Lock()
	changed := key != b.refusal
	b.refusal = key
	b.mu.Unlock()
	if changed && key != "" {
		b.logger.Load().Warn("backend tools refused", zap.String("backend", b.cfg.Name), zap.String("reason", l.reason),
			zap.Int("kept", len(l.tools)), zap.Int("refused", l.refused), zap.Bool("more_pages_unread", l.more))
	}
}

// askRefresh asks the connection loop to list the tools again; asking
// while a request waits adds nothing.
func (b *Backend) askRefresh() {
	select {
	case b.refresh <- struct{}{}:
	default:
	}
}

// relist lists the tools again on the current connection, within the
// backend's timeout.
func (b *Backend) relist() {
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
	defer cancel()
	b.Relist(ctx)
}

// Relist lists the tools again now, if the backend is connected, within
// ctx. A config reload may have changed a backend served by the same
// Caddy, whose list was read from the previous config.
func (b *Backend) Relist(ctx context.Context) {
	b.mu.Lock()
	cn := b.conn
	b.mu.Unlock()
	if cn == nil {
		return
	}
	state := &callState{replayable: true}
	tools, err := b.listTools(context.WithValue(ctx, callStateKey{}, state), cn.Client)
	if err != nil {
		refused := eraRefused(err, state, cn.ProtocolVersion())
		if refused {
			b.forgetEra(cn)
		}
		if refused || staleSession(err, state) || unreachable(err) {
			b.drop(cn, err)
		}
		return
	}
	b.mu.Lock()
	b.setTools(tools)
	b.mu.Unlock()
}

// setTools stores a new tool list; b.mu is held.
func (b *Backend) setTools(tools []RemoteTool) {
	b.listedAt = time.Now()
	if !sameTools(b.tools, tools) {
		b.tools = tools
		b.version.Add(1)
	}
}

func sameTools(a, b []RemoteTool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || a[i].Replayable != b[i].Replayable ||
			string(a[i].InputSchema) != string(b[i].InputSchema) || string(a[i].OutputSchema) != string(b[i].OutputSchema) {
			return false
		}
	}
	return true
}

// exposed reports whether the tools globs let a tool through.
func (b *Backend) exposed(name string) bool {
	if len(b.cfg.Tools) == 0 {
		return true
	}
	for _, g := range b.cfg.Tools {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
