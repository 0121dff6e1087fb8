package mcpbackend

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// restartable is a real mcp-go MCP server, of either transport, that a
// test can restart: the new server has none of the old one's sessions.
type restartable struct {
	srv       *httptest.Server
	transport string
	handler   atomic.Pointer[http.Handler]
}

func startRestartable(t *testing.T, transportName string) *restartable {
	t.Helper()
	r := &restartable{transport: transportName}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.handler.Load()).ServeHTTP(w, req)
	}))
	r.restart()
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

// restart replaces the server with a new one, as a restarted backend.
func (r *restartable) restart() {
	srv := server.NewMCPServer("restartable", "1")
	srv.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo"), nil
	})
	srv.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("the tool broke")
	})
	var h http.Handler
	if r.transport == TransportSSE {
		h = server.NewSSEServer(srv, server.WithBaseURL("http://"+r.srv.Listener.Addr().String()))
	} else {
		// Stateful and of the session era: sessions die with the server.
		h = server.NewStreamableHTTPServer(srv, server.WithStateful(true), server.WithStreamableHTTPProtocolVersions("2025-11-25"),
			server.WithDisableLocalhostProtection(true))
	}
	r.serve(h)
}

// serve makes h the server from now on.
func (r *restartable) serve(h http.Handler) { r.handler.Store(&h) }

func (r *restartable) url() string {
	if r.transport == TransportSSE {
		return r.srv.URL + "/sse"
	}
	return r.srv.URL + "/mcp"
}

// sessionTo starts an mcp-go client of url through the backend's own HTTP
// stack (its bounds and its retry of stale connections), initialized when
// the server is up. Its background connection is the backend's; the test
// uses its own.
func sessionTo(t *testing.T, url, transportName string) (*client.Client, error) {
	t.Helper()
	b := New(Config{URL: url, Transport: transportName, Timeout: 5 * time.Second})
	t.Cleanup(func() { b.Close() })
	c, err := b.newClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil {
		return c, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = clientInfo
	_, err = c.Initialize(ctx, init)
	return c, err
}

// callThrough calls tool as Backend.Call does, and returns what the
// transport saw of the answer and the error.
func callThrough(c *client.Client, tool string) (*callState, error) {
	state := new(callState)
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callStateKey{}, state), 5*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	_, err := c.CallTool(ctx, req)
	return state, err
}

// TestCallErrorsFromMCPGo: the classification of the errors that real
// mcp-go clients return for real answers of mcp-go servers (or for none):
// which refusals the call may go again after (the request never ran), and
// which make the tool list worth reading again.
func TestCallErrorsFromMCPGo(t *testing.T) {
	t.Parallel()
	reset := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	})
	badGateway := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>bad gateway</html>")
	})
	tests := []struct {
		name                                  string
		transport                             string               // default: streamable HTTP
		then                                  func(r *restartable) // what the server does once the session began
		tool                                  string               // default: echo
		closed                                bool                 // nothing listens: the error is the session's
		wantStale, wantUnreachable, wantTools bool
	}{
		{name: "streamable HTTP: the server restarted (404)", then: (*restartable).restart, wantStale: true},
		{name: "SSE: the server restarted (400 to the message endpoint)", transport: TransportSSE, then: (*restartable).restart, wantStale: true},
		{name: "an unknown tool", tool: "nope", wantTools: true},
		{name: "the tool's handler failed", tool: "fail"},
		{name: "nothing listens", closed: true, wantUnreachable: true},
		{name: "the server reset the connection after the call went out", then: func(r *restartable) { r.serve(reset) }},
		{name: "a 502 with a page of HTML", then: func(r *restartable) { r.serve(badGateway) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			transportName, tool := cmp.Or(tt.transport, TransportStreamableHTTP), cmp.Or(tt.tool, "echo")
			var err error
			state := new(callState)
			if tt.closed {
				_, err = sessionTo(t, "http://"+mcptest.ClosedAddr(t)+"/mcp", transportName)
			} else {
				r := startRestartable(t, transportName)
				c, serr := sessionTo(t, r.url(), transportName)
				if serr != nil {
					t.Fatal(serr)
				}
				if tt.then != nil {
					tt.then(r)
					defer r.restart() // a server for the clients' closing requests
				}
				state, err = callThrough(c, tool)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if got := staleSession(err, state); got != tt.wantStale {
				t.Errorf("staleSession = %v, want %v (%v)", got, tt.wantStale, err)
			}
			if got := unreachable(err); got != tt.wantUnreachable {
				t.Errorf("unreachable = %v, want %v (%v)", got, tt.wantUnreachable, err)
			}
			if got := unknownTool(err); got != tt.wantTools {
				t.Errorf("unknownTool = %v, want %v (%v)", got, tt.wantTools, err)
			}
		})
	}
}

// TestStaleSession: the classification goes by the status the transport
// saw and by error types, never by an error's text.
func TestStaleSession(t *testing.T) {
	t.Parallel()
	text := errors.New("transport error: request failed with status 400: invalid session, session not found, terminated")
	tests := []struct {
		name    string
		status  int
		session bool
		err     error
		want    bool
	}{
		{"404 to a request with a session", 404, true, transport.ErrSessionTerminated, true},
		{"400 to a request with a session", 400, true, text, true},
		{"not sent: the session had ended", 0, false, fmt.Errorf("failed to send request: %w", transport.ErrSessionTerminated), true},
		{"400 to a request without a session", 400, false, text, false},
		{"404 to a request without a session", 404, false, transport.ErrSessionTerminated, false},
		{"200 with an error naming the session", 200, true, errors.New("invalid session token"), false},
		{"202 on the SSE transport, the error from the stream", 202, true, errors.New("session expired"), false},
		{"500 naming the session", 500, true, text, false},
		{"401", 401, true, transport.ErrAuthorizationRequired, false},
		{"200, and the resume of its stream got 404", 200, true, fmt.Errorf("failed to resume the SSE stream for the response: %w", transport.ErrSessionTerminated), false},
		{"no answer, an error's text only", 0, false, errors.New("session terminated (404). need to re-initialize"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := new(callState)
			if tt.status != 0 {
				state.answered(tt.status, tt.session)
			}
			if got := staleSession(tt.err, state); got != tt.want {
				t.Errorf("staleSession = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUnreachable: only an error from dialing says the request never left;
// anything after the connection was made may have reached the server.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	dial := func(ctx context.Context, addr string) error {
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	refused := dial(context.Background(), mcptest.ClosedAddr(t))
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"connection refused, wrapped by net/http and mcp-go", fmt.Errorf("failed to send request: %w", &transport.Error{Err: fmt.Errorf("Post %q: %w", "http://x/mcp", refused)}), true},
		{"a dial that was canceled", dial(canceled, mcptest.ClosedAddr(t)), true},
		{"a reset after the request went out", readAfterReset(t), false},
		{"the call's time ran out", context.DeadlineExceeded, false},
		{"an error's text saying refused", errors.New("dial tcp: connection refused"), false},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		if got := unreachable(tt.err); got != tt.want {
			t.Errorf("%s: unreachable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

// readAfterReset is the error of a read on a connection that the other
// end reset after reading what was sent.
func readAfterReset(t *testing.T) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 4)
		_, _ = conn.Read(buf)
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("call")); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	return err
}

func TestUnknownTool(t *testing.T) {
	t.Parallel()
	rpcErr := func(code int, msg string) error {
		return (&mcp.JSONRPCErrorDetails{Code: code, Message: msg}).AsError()
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"-32602 from mcp-go", rpcErr(mcp.INVALID_PARAMS, "tool 'x' not found: tool not found"), true},
		{"-32601", rpcErr(mcp.METHOD_NOT_FOUND, "no such method"), true},
		{"-32000 saying the tool is unknown", rpcErr(-32000, "unknown tool: x"), false},
		{"a transport error saying the tool is not found", errors.New("tool not found"), false},
	}
	for _, tt := range tests {
		if got := unknownTool(tt.err); got != tt.want {
			t.Errorf("%s: unknownTool = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCleanMCPError: what is left of an error for the code and the log:
// no URL, no wrapper of mcp-go's transport, a cut preview of a long body,
// and the bounds' own errors as they are; errors.Is still sees the cause.
func TestCleanMCPError(t *testing.T) {
	t.Parallel()
	refused := func() error {
		_, err := http.Post("http://"+mcptest.ClosedAddr(t)+"/mcp?key=k3y", "application/json", strings.NewReader("{}"))
		return err
	}()
	long := errors.New("request failed with status 502: <html>" + strings.Repeat("<p>padding</p>", 1000))
	tooLarge := &AnswerTooLargeError{Limit: 1 << 20}
	streamBound := &StreamLimitError{"the backend's event stream passed max_stream_size (1MiB)"}
	tests := []struct {
		name   string
		err    error
		want   string // the whole text, or its start when cut
		cut    bool
		target error // what errors.Is still finds
	}{
		{"a refused connection from net/http", fmt.Errorf("failed to send request: %w", refused), "dial tcp ", false, syscall.ECONNREFUSED},
		{"mcp-go's transport wrapper", &transport.Error{Err: errors.New("request failed with status 500: oops")}, "request failed with status 500: oops", false, nil},
		{"the call's time ran out, through net/http", &url.Error{Op: "Post", URL: "http://x/mcp", Err: fmt.Errorf("reading: %w", context.DeadlineExceeded)}, "context deadline exceeded", false, context.DeadlineExceeded},
		{"a long body", long, "request failed with status 502: <html><p>padding</p>", true, long},
		{"a long body in mcp-go's wrapper", &transport.Error{Err: long}, "request failed with status 502: <html><p>padding</p>", true, long},
		{"an answer over its bound, deep down", fmt.Errorf("failed to send request: %w", &url.Error{Op: "Post", URL: "http://x", Err: tooLarge}), tooLarge.Error(), false, tooLarge},
		{"an event stream over its bound", &transport.Error{Err: fmt.Errorf("reading: %w", streamBound)}, streamBound.Error(), false, streamBound},
		{"invalid UTF-8 in a long text", errors.New(strings.Repeat("\xff", 2*upstream.PreviewSize)), "\uFFFD", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cleanMCPError(tt.err)
			msg := got.Error()
			if tt.cut {
				if !strings.HasPrefix(msg, tt.want) || len(msg) > upstream.PreviewSize+64 || !utf8.ValidString(msg) {
					t.Errorf("%d bytes, want a valid cut of at most %d starting %q: %.100q", len(msg), upstream.PreviewSize+64, tt.want, msg)
				}
			} else if !strings.HasPrefix(msg, tt.want) || (tt.want != "dial tcp " && msg != tt.want) {
				t.Errorf("%q, want %q", msg, tt.want)
			}
			for _, leak := range []string{"http://", "k3y", "transport error"} {
				if strings.Contains(msg, leak) {
					t.Errorf("%q shows %s", msg, leak)
				}
			}
			if tt.target != nil && !errors.Is(got, tt.target) {
				t.Errorf("errors.Is(%v, %v) = false", got, tt.target)
			}
		})
	}
}

// TestValueOf: the value a tool result gives the code, or the tool's own
// error.
func TestValueOf(t *testing.T) {
	t.Parallel()
	text := func(s string) mcp.Content { return mcp.NewTextContent(s) }
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		want    string
		wantErr string
	}{
		{"structured content wins", &mcp.CallToolResult{Content: []mcp.Content{text("ignored")}, StructuredContent: map[string]any{"n": 1}}, `{"n":1}`, ""},
		{"structured content as sent", &mcp.CallToolResult{Content: []mcp.Content{text("ignored")}, StructuredContent: map[string]any{"a": 1, "z": 2},
			RawStructuredContent: json.RawMessage(`{"z":2,"a":1}`)}, `{"z":2,"a":1}`, ""},
		{"null structured content", &mcp.CallToolResult{Content: []mcp.Content{text(`[1]`)}, RawStructuredContent: json.RawMessage(`null`)}, `[1]`, ""},
		{"a JSON text", &mcp.CallToolResult{Content: []mcp.Content{text(` {"a":[1,2]} `)}}, `{"a":[1,2]}`, ""},
		{"a plain text", &mcp.CallToolResult{Content: []mcp.Content{text("hello")}}, `"hello"`, ""},
		{"texts joined", &mcp.CallToolResult{Content: []mcp.Content{text("a"), text("b")}}, `"a\nb"`, ""},
		{"no content", &mcp.CallToolResult{}, `""`, ""},
		{"an image besides text", &mcp.CallToolResult{Content: []mcp.Content{text("see"), mcp.NewImageContent("AAAA", "image/png")}},
			`[{"type":"text","text":"see"},{"type":"image","data":"AAAA","mimeType":"image/png"}]`, ""},
		{"the tool's error", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text("no such order"), text("try again")}}, "", "no such order\ntry again"},
		{"the tool's error without text", &mcp.CallToolResult{IsError: true}, "", "the tool failed and gave no message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, err := valueOf(tt.res)
			got := ans.Value
			if tt.wantErr != "" {
				var be *BackendError
				if !errors.As(err, &be) || be.Message != tt.wantErr {
					t.Fatalf("err %v, want the backend error %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !json.Valid(got) || string(got) != tt.want {
				t.Errorf("%s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// A result its backend cut reaches the code as the shortened value, with
// the backend's record beside it: the note after cut JSON text is not
// part of the value. Without the record, text is read as it comes. The
// results are those an mcp endpoint of this module sends for a REST
// answer over its max_result_size.
func TestValueOfCutResult(t *testing.T) {
	t.Parallel()
	orders := make([]map[string]any, 40)
	for i := range orders {
		orders[i] = map[string]any{"id": i, "note": strings.Repeat("x", 50)}
	}
	whole, _ := json.Marshal(orders)
	for _, tc := range []struct {
		name      string
		shape     upstream.Shaping
		structure bool
		want      string // the value's JSON kind: array, object or string
	}{
		{"JSON text", upstream.Shaping{MaxSize: 1024}, false, "array"},
		{"JSON text, summary text", upstream.Shaping{MaxSize: 1024, SummaryText: true}, false, "array"},
		{"structured content", upstream.Shaping{MaxSize: 1024}, true, "object"},
		{"plain text", upstream.Shaping{MaxSize: 1024}, false, "string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			def := upstream.Definition{Name: "orders", Method: "GET", Path: "/orders"}
			body := whole
			if tc.structure {
				// structuredContent is an object.
				def.OutputSchema = json.RawMessage(`{"type":"object"}`)
				body, _ = json.Marshal(map[string]any{"orders": orders})
			}
			op, err := upstream.NewOperation(def)
			if err != nil {
				t.Fatal(err)
			}
			answer := &upstream.Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
			text := string(whole)
			if tc.want == "string" {
				text = strings.Repeat("plain words ", 200)
				answer.Header.Set("Content-Type", "text/plain")
				answer.Body = []byte(text)
			}
			res := op.Result(context.Background(), upstream.Target{Label: "GET /orders"}, answer, tc.shape)
			ans, err := valueOf(roundTrip(t, res))
			if err != nil {
				t.Fatal(err)
			}
			if ans.Cut == nil {
				t.Fatalf("no cut record: %s", ans.Value)
			}
			var rec upstream.Cut
			if err := json.Unmarshal(ans.Cut, &rec); err != nil || rec.Limit != 1024 || rec.Size == 0 {
				t.Errorf("record %s (%v)", ans.Cut, err)
			}
			var v any
			if err := json.Unmarshal(ans.Value, &v); err != nil {
				t.Fatalf("value %.200s: %v", ans.Value, err)
			}
			if obj, ok := v.(map[string]any); ok && tc.want == "object" {
				v = obj["orders"]
			}
			switch v := v.(type) {
			case []any:
				if tc.want == "string" || len(v) == 0 || len(v) >= len(orders) {
					t.Errorf("an array of %d items, want %s", len(v), tc.want)
				}
			case string:
				if at := upstream.CutNoteStart(v); tc.want != "string" || at < 0 || !strings.HasPrefix(text, v[:at]) {
					t.Errorf("the string %.100q, want %s", v, tc.want)
				}
			default:
				t.Errorf("value %T", v)
			}
		})
	}
	// Text that looks like a note, from a backend that cut nothing, stays
	// as it came.
	note := "[1,2]\n\n[cut to max_result_size, 1 bytes]"
	ans, err := valueOf(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(note)}})
	if want, _ := json.Marshal(note); err != nil || string(ans.Value) != string(want) || ans.Cut != nil {
		t.Errorf("uncut text: %s %s, %v", ans.Value, ans.Cut, err)
	}
}

// roundTrip is res as a client reads it off the wire.
func roundTrip(t *testing.T, res *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out, err := mcp.ParseCallToolResult((*json.RawMessage)(&b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkValueOf: the value of a result whose structured content is a
// list of 50 orders, about 30 KB, as mcp-go's client hands it over.
func BenchmarkValueOf(b *testing.B) {
	text := `{"content":[{"type":"text","text":"see structuredContent"}],"structuredContent":` + ordersList() + `}`
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(text), &res); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		if _, err := valueOf(&res); err != nil {
			b.Fatal(err)
		}
	}
}

// ordersList is a list of 50 orders, about 30 KB of JSON: {"orders":[...]}.
func ordersList() string {
	var sb strings.Builder
	sb.WriteString(`{"orders":[`)
	for i := 0; i < 50; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"id":"ord-%04d","status":"shipped","total":%d.5,"customer":{"id":"cus-%d","name":"Customer %d"},"items":[`, i, 100+i, i%17, i)
		for j := 0; j < 5; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"sku":"sku-%d-%d","name":"Item with a longer name","qty":%d,"price":%d.99}`, i, j, j+1, j*3)
		}
		sb.WriteString(`]}`)
	}
	sb.WriteString(`]}`)
	return sb.String()
}
