package fastpath

import (
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Message is the part of a JSON-RPC message the endpoint looks at before
// mcp-go does: for placeholders, logs, metrics, scopes and the fast path.
type Message struct {
	JSONRPC   string          `json:"jsonrpc"`
	RawID     json.RawMessage `json:"id"`
	Method    string          `json:"method"`
	RawParams json.RawMessage `json:"params"`
	// Params is RawParams decoded, for tools/call; paramsDecoded says
	// whether all of it decoded.
	Params        CallParams `json:"-"`
	paramsDecoded bool
}

// CallParams are the params of a tools/call.
type CallParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      callMeta        `json:"_meta"`
}

// ID is the request id for an error answer.
func (m *Message) ID() mcp.RequestId {
	if len(m.RawID) == 0 {
		return mcp.RequestId{}
	}
	return mcp.NewRequestId(json.RawMessage(m.RawID))
}

var messages = sync.Pool{New: func() any { return new(Message) }}

// NewMessage is an empty Message, for Release when the request is
// answered.
func NewMessage() *Message { return messages.Get().(*Message) }

// Release empties m, which holds slices of the body, and gives it back.
func (m *Message) Release() {
	*m = Message{}
	messages.Put(m)
}
