package mcpbackend

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// clientValue is what Call made of a result before the transports took
// results: the client's parse, then valueOf. It says "error: ..." for an
// error.
func clientValue(raw []byte) string {
	msg := json.RawMessage(raw)
	res, err := mcp.ParseCallToolResult(&msg)
	if err != nil {
		return "error: " + err.Error()
	}
	if res.NeedsInput() {
		return "input required"
	}
	return describeValue(valueOf(res))
}

func describeValue(a Answer, err error) string {
	v := a.Value
	var be *BackendError
	switch {
	case errors.As(err, &be):
		return "tool error: " + be.Message
	case err != nil:
		return "error: " + err.Error()
	}
	return string(v)
}

// TestResultOfAgreesWithClient: a result Call reads itself gives the value
// the client's parse gave; one it leaves to the client is one the client
// must see (more input asked for, content other than text, bytes that do
// not decode as a result).
func TestResultOfAgreesWithClient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   string
		taken bool
	}{
		{"a JSON text", `{"content":[{"type":"text","text":"{\"b\":1,\"a\":[1,2.50,\"x\"]}"}]}`, true},
		{"a plain text", `{"content":[{"type":"text","text":"hello"}]}`, true},
		{"texts joined", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, true},
		{"text with annotations and meta", `{"_meta":{"k":1},"content":[{"type":"text","text":" [1] ","annotations":{"priority":0.5},"_meta":{"m":2}}],"resultType":"complete"}`, true},
		{"empty content", `{"content":[]}`, true},
		{"structured content wins", `{"content":[{"type":"text","text":"ignored"}],"structuredContent":{"z":2,"a":1}}`, true},
		{"null structured content", `{"content":[{"type":"text","text":"[1]"}],"structuredContent":null}`, true},
		{"the tool's error", `{"content":[{"type":"text","text":"no such order"},{"type":"text","text":"try again"}],"isError":true}`, true},
		{"the tool's error without text", `{"content":[],"isError":true}`, true},
		{"spaces between members", "{ \"content\" : [ { \"type\" : \"text\" , \"text\" : \"7\" } ] }", true},
		{"a number in range in structured content", `{"content":[],"structuredContent":{"a":1e300,"b":-2.5E-3,"c":"1e400"}}`, true},
		{"a second content key", `{"content":[{"type":"text","text":"a"}],"content":[{"type":"text"}]}`, true},
		{"a number out of range in structured content", `{"content":[],"structuredContent":{"n":[1,-1e400]}}`, false},
		{"a request state", `{"content":[],"requestState":5}`, false},
		{"an image besides text", `{"content":[{"type":"text","text":"see"},{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, false},
		{"more input asked for", `{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}},"requestState":"s"}`, false},
		{"no content", `{}`, false},
		{"a text that is not a string", `{"content":[{"type":"text","text":7}]}`, false},
		{"a type that is not a string", `{"content":[{"type":1,"text":"x"}]}`, false},
		{"isError not a boolean", `{"content":[],"isError":"yes"}`, false},
		{"not an object", `[1,2]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := resultOf([]byte(tt.raw))
			if ok != tt.taken {
				t.Fatalf("taken = %v, want %v", ok, tt.taken)
			}
			if !ok {
				return
			}
			if got, want := describeValue(r.value()), clientValue([]byte(tt.raw)); got != want {
				t.Errorf("read by Call: %s\nby the client: %s", got, want)
			}
		})
	}
}

// TestTakeResult: the transport takes a tools/call result for the call
// whose state is in the context, and only that: the client then parses
// the placeholder to an empty result.
func TestTakeResult(t *testing.T) {
	t.Parallel()
	const result = `{"content":[{"type":"text","text":"{\"id\":\"a1\"}"}]}`
	call := transport.JSONRPCRequest{Method: string(mcp.MethodToolsCall)}
	state := &callState{}
	ctx := context.WithValue(context.Background(), callStateKey{}, state)

	resp := &transport.JSONRPCResponse{Result: json.RawMessage(result)}
	takeResult(ctx, call, resp)
	if r := state.takenResult(); r == nil || describeValue(r.value()) != `{"id":"a1"}` {
		t.Fatalf("taken: %+v", r)
	}
	res, err := mcp.ParseCallToolResult(&resp.Result)
	if err != nil || len(res.Content) != 0 || res.IsError || res.NeedsInput() {
		t.Fatalf("the client parses the placeholder to %+v, %v", res, err)
	}
	state.retry()
	if state.takenResult() != nil {
		t.Fatal("a retry keeps the last attempt's result")
	}

	for name, tt := range map[string]struct {
		ctx  context.Context
		req  transport.JSONRPCRequest
		resp *transport.JSONRPCResponse
	}{
		"another method":      {ctx, transport.JSONRPCRequest{Method: string(mcp.MethodToolsList)}, &transport.JSONRPCResponse{Result: json.RawMessage(result)}},
		"no call state":       {context.Background(), call, &transport.JSONRPCResponse{Result: json.RawMessage(result)}},
		"a JSON-RPC error":    {ctx, call, &transport.JSONRPCResponse{Result: json.RawMessage(result), Error: &mcp.JSONRPCErrorDetails{Code: -32602, Message: "no"}}},
		"a result left to it": {ctx, call, &transport.JSONRPCResponse{Result: json.RawMessage(`{"content":[{"type":"image","data":"AA","mimeType":"image/png"}]}`)}},
		"no response":         {ctx, call, nil},
	} {
		before := ""
		if tt.resp != nil {
			before = string(tt.resp.Result)
		}
		takeResult(tt.ctx, tt.req, tt.resp)
		if state.takenResult() != nil {
			t.Errorf("%s: taken", name)
		}
		if tt.resp != nil && string(tt.resp.Result) != before {
			t.Errorf("%s: the client gets %s, not the result", name, tt.resp.Result)
		}
	}
}

// FuzzResultOf: whatever the bytes, a result Call reads itself gives what
// the client's parse and valueOf gave.
func FuzzResultOf(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"{\"a\":1}"}]}`,
		`{"content":[{"type":"text","text":"x"}],"isError":true}`,
		`{"content":[],"structuredContent":{"n":[1,2]}}`,
		`{"content":[{"type":"text","text":" 1 "}],"structuredContent":null,"_meta":{}}`,
		`{"resultType":"complete","content":[{"type":"text","text":"[]","annotations":{"audience":["user"]}}]}`,
		`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text"}],"structuredContent":{"x":1e3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the transport hands over only what decoded as JSON
		}
		r, ok := resultOf(raw)
		if !ok {
			return
		}
		if got, want := describeValue(r.value()), clientValue(raw); got != want {
			t.Errorf("%s\nread by Call: %s\nby the client: %s", raw, got, want)
		}
	})
}

// BenchmarkToolResult: what Call makes of a result whose text is a list of
// 50 orders, about 30 KB of JSON, read by Call itself and, for
// comparison, parsed by mcp-go's client first.
func BenchmarkToolResult(b *testing.B) {
	raw, err := json.Marshal(mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(ordersList())}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("read by Call", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			r, ok := resultOf(raw)
			if !ok {
				b.Fatal("not taken")
			}
			if _, err := r.value(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parsed by the client", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			msg := json.RawMessage(raw)
			res, err := mcp.ParseCallToolResult(&msg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := valueOf(res); err != nil {
				b.Fatal(err)
			}
		}
	})
}
