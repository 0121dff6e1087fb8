package fastpath

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// marshalAnswer is what the fast path wrote before appendAnswer, and what
// it still writes for results appendAnswer does not take.
func marshalAnswer(t testing.TB, rawID json.RawMessage, res *mcp.CallToolResult, info *mcp.Implementation) string {
	if info != nil {
		res.EnsureResultMeta().SetServerInfo(*info)
	}
	b, err := json.Marshal(mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(rawID), Result: res})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameAnswer checks that appendAnswer writes what json.Marshal writes, or
// declines.
func sameAnswer(t testing.TB, rawID string, res func() *mcp.CallToolResult, modern bool) (took bool) {
	var meta []byte
	var info *mcp.Implementation
	if modern {
		info = &mcp.Implementation{Name: "shop <api> & co", Version: "1.0\u2028"}
		meta = serverMeta(*info)
	}
	r := res()
	if modern {
		r.SetResultType(mcp.ResultTypeComplete)
	}
	got, ok := appendAnswer([]byte("kept"), json.RawMessage(rawID), r, meta)
	if string(got[:4]) != "kept" {
		t.Fatalf("appendAnswer lost what dst held: %q", got)
	}
	if !ok {
		if len(got) != 4 {
			t.Fatalf("appendAnswer declined but wrote %q", got[4:])
		}
		return false
	}
	r = res()
	if modern {
		r.SetResultType(mcp.ResultTypeComplete)
	}
	if want := marshalAnswer(t, json.RawMessage(rawID), r, info); string(got[4:]) != want {
		t.Fatalf("id %s, modern %v:\nappendAnswer: %s\njson.Marshal: %s", rawID, modern, got[4:], want)
	}
	return true
}

var answerTexts = []string{
	"", "plain", `{"id":"1001","status":"shipped"}`, "<script>&amp;</script>", "quote \" backslash \\ slash /",
	"\x00\x01\x07\b\t\n\v\f\r\x1b\x1f\x7f", "héllo wörld ✓ 日本語 😀", "line\u2028sep\u2029para",
	"bad utf-8 \xff\xfe here", "truncated \xe2\x80", "\xe2\x80\xa8", "\xed\xa0\x80 surrogate", "\ufffd",
}

func TestAppendAnswerIsJSONMarshal(t *testing.T) {
	t.Parallel()
	ids := []string{`7`, `-1`, `0`, `1.5e3`, `12345678901234567890`, `"abc"`, `"<id>&"`, `"a\"b"`, `"\u00e9"`, `"é\u2028"`, `"tab\there"`}
	for _, id := range ids {
		for _, text := range answerTexts {
			for _, modern := range []bool{false, true} {
				if !sameAnswer(t, id, func() *mcp.CallToolResult {
					return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}}
				}, modern) {
					t.Errorf("declined a text result: id %s, text %q", id, text)
				}
				sameAnswer(t, id, func() *mcp.CallToolResult {
					return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text), mcp.NewTextContent("second")}, IsError: true}
				}, modern)
			}
		}
	}
	structured := []string{`{"a":1}`, `{ "a" : [1, 2, {"b": "<&>"}] }`, "{\"s\":\"\u2028\"}", `[]`, `"x"`, `null`}
	for _, sc := range structured {
		for _, modern := range []bool{false, true} {
			if !sameAnswer(t, `1`, func() *mcp.CallToolResult {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(sc)}, StructuredContent: json.RawMessage(sc)}
			}, modern) {
				t.Errorf("declined structured content %s", sc)
			}
			sameAnswer(t, `1`, func() *mcp.CallToolResult {
				return &mcp.CallToolResult{Content: []mcp.Content{}, RawStructuredContent: json.RawMessage(sc)}
			}, modern)
		}
	}
	sameAnswer(t, `1`, func() *mcp.CallToolResult { return &mcp.CallToolResult{} }, true)

	// What it does not write itself, it declines.
	declines := map[string]func() *mcp.CallToolResult{
		"a result with _meta": func() *mcp.CallToolResult {
			r := upstream.TextResult("x")
			r.Meta = mcp.NewMetaFromMap(map[string]any{"k": "v"})
			return r
		},
		"image content": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("AAAA", "image/png")}}
		},
		"annotated text": func() *mcp.CallToolResult {
			c := mcp.NewTextContent("x")
			c.Annotations = &mcp.Annotations{Priority: new(1.0)}
			return &mcp.CallToolResult{Content: []mcp.Content{c}}
		},
		"structured content as a map": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"a": 1}}
		},
		"invalid raw structured content": func() *mcp.CallToolResult {
			return &mcp.CallToolResult{StructuredContent: json.RawMessage(`{"a":`)}
		},
		"input requests": func() *mcp.CallToolResult {
			r := upstream.TextResult("x")
			r.RequestState = "s"
			return r
		},
	}
	for name, res := range declines {
		if sameAnswer(t, `1`, res, false) {
			t.Errorf("%s: appendAnswer wrote it; it should leave it to json.Marshal", name)
		}
	}
}

// FuzzAppendAnswer: for any text and id, appendAnswer writes exactly what
// json.Marshal writes.
func FuzzAppendAnswer(f *testing.F) {
	for _, s := range answerTexts {
		f.Add(s, "7", false)
		f.Add(s, `"x"`, true)
	}
	f.Fuzz(func(t *testing.T, text, id string, modern bool) {
		if !plainID(json.RawMessage(id)) || !json.Valid([]byte(id)) {
			return
		}
		if !sameAnswer(t, id, func() *mcp.CallToolResult { return upstream.TextResult(text) }, modern) {
			t.Fatalf("declined a text result: id %s, text %q", id, text)
		}
	})
}
