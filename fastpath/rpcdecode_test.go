package fastpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// jsonRPC is Decode by encoding/json alone, as the endpoint decoded
// messages before.
func jsonRPC(body []byte) (Message, bool) {
	var info Message
	if json.Unmarshal(body, &info) != nil {
		return Message{}, false
	}
	if info.Method == "tools/call" {
		info.paramsDecoded = json.Unmarshal(info.RawParams, &info.Params) == nil
	}
	return info, true
}

// sameRPC reports how two decodings differ, or "".
func sameRPC(got, want Message, gotOK, wantOK bool) string {
	if gotOK != wantOK {
		return fmt.Sprintf("decoded %v, want %v", gotOK, wantOK)
	}
	if !wantOK {
		return ""
	}
	g := fmt.Sprintf("%q %s %q %s %v %q %s %q %s", got.JSONRPC, got.RawID, got.Method, got.RawParams, got.paramsDecoded,
		got.Params.Name, got.Params.Arguments, got.Params.Meta.ProtocolVersion, got.Params.Meta.Capabilities)
	w := fmt.Sprintf("%q %s %q %s %v %q %s %q %s", want.JSONRPC, want.RawID, want.Method, want.RawParams, want.paramsDecoded,
		want.Params.Name, want.Params.Arguments, want.Params.Meta.ProtocolVersion, want.Params.Meta.Capabilities)
	if g != w {
		return fmt.Sprintf("got  %s\nwant %s", g, w)
	}
	// Nil and empty raw members differ to the fast path (absent arguments).
	for _, pair := range [][2][]byte{{got.RawID, want.RawID}, {got.RawParams, want.RawParams}, {got.Params.Arguments, want.Params.Arguments}, {got.Params.Meta.Capabilities, want.Params.Meta.Capabilities}} {
		if (pair[0] == nil) != (pair[1] == nil) {
			return fmt.Sprintf("raw member %q nil %v, want nil %v", pair[1], pair[0] == nil, pair[1] == nil)
		}
	}
	return ""
}

var rpcSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":"1001"}}}`,
	`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"get_order","arguments":{"id":42,"x":[1,2,{"y":null}]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`,
	` { "jsonrpc" : "2.0" , "id" : 1e400 , "method" : "tools/list" , "params" : { } } `,
	`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"a","name":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u0041\n"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"caf\u00e9 ÿ"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"ſame":"x","name":"y"}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"a"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/\u0063all","params":{"name":"a"}}`,
	`{"jsonrpc":2,"id":1,"method":"tools/call"}`,
	`{"jsonrpc":"","id":1,"method":""}`,
	`{"id":1,"result":{},"extra":[{"method":"x"}]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/protocolversion":"x"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":null,"_meta":{"io.modelcontextprotocol/clientCapabilities":{"a":1e999}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"s":"\"}{"},"z":true,"f":false}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\xff\"}}",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
	`{}`, `[]`, `"x"`, `null`, `{"jsonrpc":"2.0"`, ``, `{"id":[1,2]}`,
}

func TestDecodeRPCMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, seed := range rpcSeeds {
		var got Message
		ok := got.Decode([]byte(seed))
		want, wantOK := jsonRPC([]byte(seed))
		if d := sameRPC(got, want, ok, wantOK); d != "" {
			t.Errorf("%s:\n%s", seed, d)
		}
	}
}

// TestDecodeRPCTakesTheUsual holds the usual messages to the quick
// reading, so the allocation it saves is not lost to a fallback.
func TestDecodeRPCTakesTheUsual(t *testing.T) {
	t.Parallel()
	for _, seed := range rpcSeeds[:2] {
		var info Message
		if !quickRPC([]byte(seed), &info) || !quickParams(info.RawParams, &info.Params) {
			t.Errorf("left to encoding/json: %s", seed)
		}
		// Raw members are slices of the body, not copies.
		if body := []byte(seed); info.Decode(body) {
			if i := bytes.Index(body, info.RawParams); i < 0 || &body[i] != &info.RawParams[0] {
				t.Errorf("params copied")
			}
		}
	}
}

func FuzzDecodeRPC(f *testing.F) {
	for _, seed := range rpcSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got Message
		ok := got.Decode(body)
		want, wantOK := jsonRPC(body)
		if d := sameRPC(got, want, ok, wantOK); d != "" {
			t.Errorf("%q:\n%s", body, d)
		}
	})
}
