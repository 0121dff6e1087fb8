package mcpbackend

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// mcp-go's client parses a tools/call result three times over, and every
// content item twice more, before Call reads it; for a list of 50 orders
// that was most of a binding call's CPU. So the transports hand Call the
// result's bytes and the client a placeholder it parses at once: Call
// reads the texts, the structured content and isError in one pass
// (resultOf). A result that asks for more input (input_required, which
// the client answers itself), or that holds anything but text content, or
// that does not decode as the client would decode it, goes to the client
// as it came: what Call makes of it, or the error the client gives, is as
// before.

// placeholder is the result the client parses in place of one Call read.
var placeholder = json.RawMessage(`{"content":[]}`)

// streamable and sse are mcp-go's transports with tools/call results
// taken for Call. Embedding keeps every other method, so the client sees
// the same optional interfaces (HTTPConnection, BidirectionalInterface
// and the rest) as on the transport itself.
type streamable struct{ *transport.StreamableHTTP }

func (t streamable) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.StreamableHTTP.SendRequest(ctx, req)
	takeResult(ctx, req, resp)
	return resp, err
}

type sse struct{ *transport.SSE }

func (t sse) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.SSE.SendRequest(ctx, req)
	takeResult(ctx, req, resp)
	return resp, err
}

// takeResult keeps what Call reads of a tools/call result in the call's
// state, and leaves the client the placeholder.
func takeResult(ctx context.Context, req transport.JSONRPCRequest, resp *transport.JSONRPCResponse) {
	if resp == nil || resp.Error != nil || req.Method != string(mcp.MethodToolsCall) {
		return
	}
	state, _ := ctx.Value(callStateKey{}).(*callState)
	if state == nil {
		return
	}
	if r, ok := resultOf(resp.Result); ok {
		state.setResult(r)
		resp.Result = placeholder
	}
}

// toolResult is what Call reads of a tool result.
type toolResult struct {
	texts      []string
	content    []mcp.Content // when there is content other than text
	isError    bool
	structured json.RawMessage // nil when absent or null
	cut        json.RawMessage // the backend's record of a cut (upstream.CutMetaKey)
}

// resultOf reads a result's bytes as the client would, or reports false
// for one the client must have (see above).
func resultOf(raw json.RawMessage) (toolResult, bool) {
	var r struct {
		Meta              *mcp.Meta       `json:"_meta"`
		ResultType        string          `json:"resultType"`
		Content           *textItems      `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		InputRequests     json.RawMessage `json:"inputRequests"`
		RequestState      json.RawMessage `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Content == nil || r.InputRequests != nil || r.RequestState != nil ||
		(r.ResultType != "" && r.ResultType != string(mcp.ResultTypeComplete)) || outOfRange(r.StructuredContent) {
		return toolResult{}, false
	}
	res := toolResult{isError: r.IsError, texts: make([]string, 0, len(*r.Content))}
	for _, c := range *r.Content {
		if c.Type != mcp.ContentTypeText {
			return toolResult{}, false
		}
		res.texts = append(res.texts, c.Text)
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		res.structured = r.StructuredContent
	}
	res.cut = cutRecord(r.Meta)
	return res, true
}

// cutRecord is the record of a cut in a result's _meta, as JSON: set by
// a backend that is an mcp endpoint of this module with max_result_size.
// It is kept only when it is an object.
func cutRecord(meta *mcp.Meta) json.RawMessage {
	if meta == nil {
		return nil
	}
	rec, ok := meta.AdditionalFields[upstream.CutMetaKey].(map[string]any)
	if !ok {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return nil
	}
	return b
}

// textItems decodes a content array afresh each time: a second "content"
// key replaces the first, as in the client, instead of being decoded over
// its items.
type textItems []mcp.TextContent

func (t *textItems) UnmarshalJSON(b []byte) error {
	var items []mcp.TextContent
	err := json.Unmarshal(b, &items)
	*t = items
	return err
}

// outOfRange reports a number in JSON text that a float64 cannot hold
// (1e400): the client, which decodes structured content into Go values,
// refuses it.
func outOfRange(text []byte) bool {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"':
			i = upstream.StringEnd(text, i) - 1
		case c == '-' || c >= '0' && c <= '9':
			start := i
			for i < len(text) && strings.IndexByte("+-.0123456789eE", text[i]) >= 0 {
				i++
			}
			num := text[start:i]
			i--
			if (len(num) > 300 || bytes.ContainsAny(num, "eE")) && !fits(num) {
				return true
			}
		}
	}
	return false
}

func fits(num []byte) bool {
	_, err := strconv.ParseFloat(string(num), 64)
	return err == nil
}

// resultFrom is what Call reads of a result the client parsed.
func resultFrom(res *mcp.CallToolResult) (toolResult, error) {
	r := toolResult{isError: res.IsError, cut: cutRecord(res.Meta)}
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			r.texts = append(r.texts, tc.Text)
		} else {
			r.content = res.Content
		}
	}
	// A tool's error is its text: structured content beside it is not
	// written out.
	if res.StructuredContent != nil && !res.IsError {
		if len(res.RawStructuredContent) > 0 {
			// The bytes the backend sent, which mcp-go keeps: keys stay in
			// the backend's order, and the value is not written again from
			// the map mcp-go decoded it into.
			r.structured = res.RawStructuredContent
		} else {
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				return r, err
			}
			r.structured = b
		}
	}
	return r, nil
}
