package fastpath

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// testEndpoint is an mcp-go server of one tool, get_item, whose handler
// gives what run gives, and the fast path beside it.
type testEndpoint struct {
	transport *server.StreamableHTTPServer
	path      *Path
}

func newTestEndpoint(run CallFunc) *testEndpoint {
	srv := server.NewMCPServer("t", "1", server.WithToolCapabilities(false), server.WithRecovery())
	tool := mcp.NewToolWithRawSchema("get_item", "Get an item.",
		json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}}}`))
	srv.AddTool(tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, _ := run(ctx, req.Params.Name, req.GetArguments())
		return res, nil
	})
	quiet := slog.New(slog.DiscardHandler)
	transport := NewTransport(srv, quiet)
	path := New(run, srv, transport, mcp.Implementation{Name: "t", Version: "1"}, quiet)
	path.PrepareList(srv)
	return &testEndpoint{transport: transport, path: path}
}

// echo is get_item: it gives the arguments back as the result's text.
func echo(_ context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool) {
	if name != "get_item" {
		return nil, false
	}
	b, err := json.Marshal(args)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), true
	}
	return mcp.NewToolResultText(string(b)), true
}

// serve answers one POST as an endpoint does: by the fast path when fast
// is set and it takes the request, by mcp-go otherwise.
func (e *testEndpoint) serve(t testing.TB, body string, header map[string]string, fast bool) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	b, buf, err := ReadBody(w, req, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMessage()
	defer m.Release()
	if fast && m.Decode(b) {
		switch m.Method {
		case string(mcp.MethodToolsList):
			if e.path.ServeList(w, req, b, m) {
				ReleaseBody(buf)
				return w
			}
		case string(mcp.MethodToolsCall):
			if e.path.ServeCall(w, req, b, m) {
				ReleaseBody(buf)
				return w
			}
		}
	}
	HandOn(req.Context(), e.transport, w, req, b)
	return w
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

var (
	legacyHeader = map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	modernCall   = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_item"}
	modernList   = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
)

// TestPathAnswersAsMCPGoDoes sends each request with the fast path and
// through mcp-go alone: the same answer, byte for byte, and the fast path
// takes what it should, calls and lists alike.
func TestPathAnswersAsMCPGoDoes(t *testing.T) {
	t.Parallel()
	e := newTestEndpoint(echo)
	tests := []struct {
		name, body string
		header     map[string]string
		fast       bool
	}{
		{"legacy call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"a"}}}`, legacyHeader, true},
		{"modern call", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"get_item","arguments":{"id":"a"},` + modernMeta + `}}`, modernCall, true},
		{"legacy list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, legacyHeader, true},
		{"modern list", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta + `}}`, modernList, true},
		{"unknown tool", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, legacyHeader, false},
		{"modern call, header of another version", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_item",` + modernMeta + `}}`, legacyHeader, false},
		{"modern list without Mcp-Method", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{` + modernMeta + `}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, false},
		{"list of an unknown version", `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, false},
		{"list with a member in other letters", `{"jsonrpc":"2.0","id":7,"method":"tools/list","Params":{}}`, legacyHeader, false},
		{"call with a null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_item"}}`, legacyHeader, false},
		{"progress asked", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_item","_meta":{"progressToken":"p"}}}`, legacyHeader, false},
	}
	for _, tt := range tests {
		calls, lists := e.path.Answered(), e.path.Listed()
		fast, slow := e.serve(t, tt.body, tt.header, true), e.serve(t, tt.body, tt.header, false)
		if took := e.path.Answered()+e.path.Listed() > calls+lists; took != tt.fast {
			t.Errorf("%s: taken by the fast path: %v, want %v", tt.name, took, tt.fast)
		}
		if fast.Code != slow.Code || fast.Body.String() != slow.Body.String() ||
			fast.Header().Get("Content-Type") != slow.Header().Get("Content-Type") {
			t.Errorf("%s: answers differ:\nfast:   %d %s\nmcp-go: %d %s", tt.name, fast.Code, fast.Body, slow.Code, slow.Body)
		}
	}
}

// TestPathRunsAToolOnce gives the fast path what mcp-go's encoder or
// handler would choke on: it answers as mcp-go does with that (200 and no
// body for a result that cannot be encoded, an internal error for a
// panic) without handing the request on, so the tool runs once.
func TestPathRunsAToolOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		spoil  func(*mcp.CallToolResult)
		answer string
	}{
		{"a result json.Marshal refuses", func(res *mcp.CallToolResult) { res.StructuredContent = math.NaN() }, ""},
		{"a panic", func(*mcp.CallToolResult) { panic("boom") },
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"panic recovered in get_item tool handler: boom"}}` + "\n"},
	}
	for _, tt := range tests {
		var runs atomic.Int64
		e := newTestEndpoint(func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool) {
			runs.Add(1)
			res, ok := echo(ctx, name, args)
			tt.spoil(res)
			return res, ok
		})
		w := e.serve(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item"}}`, nil, true)
		if n := runs.Load(); n != 1 {
			t.Errorf("%s: the tool ran %d times, want 1", tt.name, n)
		}
		if e.path.Answered() != 1 {
			t.Errorf("%s: the fast path did not answer", tt.name)
		}
		if w.Code != http.StatusOK || w.Body.String() != tt.answer || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: answer %d %q %q, want mcp-go's: 200, application/json, %q", tt.name, w.Code, w.Header().Get("Content-Type"), w.Body, tt.answer)
		}
	}
}

// TestPooledBuffersKeepNothingOfAnEarlierCall answers a short call, a long
// one and the short one again on one goroutine, where the pools hand the
// long call's buffers (body, envelope, arguments, answer) to the second
// short call: its answer is the first's, byte for byte, in both eras.
func TestPooledBuffersKeepNothingOfAnEarlierCall(t *testing.T) {
	e := newTestEndpoint(echo)
	long := strings.Repeat("x", 1400)
	for _, c := range []struct {
		header map[string]string
		meta   string
	}{
		{legacyHeader, ""},
		{modernCall, "," + modernMeta},
	} {
		call := func(id, args string) string {
			body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_item","arguments":{` + args + `}` + c.meta + `}}`
			if len(body) > pooledBodyMax {
				t.Fatalf("a body of %d bytes is not pooled", len(body))
			}
			w := e.serve(t, body, c.header, true)
			if w.Code != http.StatusOK {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			return w.Body.String()
		}
		answered := e.path.Answered()
		first := call("1", `"id":"a"`)
		if !strings.Contains(first, `{\"id\":\"a\"}`) {
			t.Fatalf("unexpected answer %s", first)
		}
		if got := call(`"`+long+`"`, `"id":"`+long+`","note":"`+long[:900]+`"`); strings.Count(got, long) != 2 || !strings.Contains(got, `\"note\"`) {
			t.Fatalf("the long call's answer lacks its id, item or note: %.200s", got)
		}
		if again := call("1", `"id":"a"`); again != first {
			t.Errorf("the short call answered\n%s\nafter the long one, and before it\n%s", again, first)
		}
		if n := e.path.Answered() - answered; n != 3 {
			t.Errorf("the fast path answered %d calls of 3", n)
		}
	}
}
