package mcpbackend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// defaultAnswer is a well-behaved server's answer to msg: it speaks
// 2025-11-25 (the probe for 2026-07-28 finds no such method) and has two
// tools, echo and charge.
func defaultAnswer(msg mcptest.RPCRequest) string {
	switch msg.Method {
	case "initialize":
		return rpcResult(msg.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
	case "tools/list":
		return rpcResult(msg.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"charge","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		return rpcResult(msg.ID, `{"content":[{"type":"text","text":"done"}]}`)
	default:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID)
	}
}

func rpcResult(id json.RawMessage, result string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// rawBackend is a streamable HTTP MCP server written by hand, so that a
// test can make it answer anything. It gives out sessions (unless
// sessionless) and answers a request on a session it does not know with
// staleStatus, as a restarted server does. The test's call and list write
// the answers to tools/call and tools/list.
type rawBackend struct {
	srv         *httptest.Server
	sessionless bool
	staleStatus int
	call        func(w http.ResponseWriter, msg mcptest.RPCRequest) // nil: defaultAnswer
	list        func(w http.ResponseWriter, msg mcptest.RPCRequest) // nil: defaultAnswer
	get         func(w http.ResponseWriter, r *http.Request)        // nil: 405
	reply       func(w http.ResponseWriter, msg mcptest.RPCRequest) // the client's answers to the server's requests; nil: 202

	mu       sync.Mutex
	sessions map[string]bool
	issued   int
	received int // tools/calls that came in
	ran      int // tools/calls that reached call
	lists    int // tools/list pages asked for
}

func startRawBackend(t *testing.T, rb *rawBackend) *rawBackend {
	t.Helper()
	rb.sessions = map[string]bool{}
	if rb.staleStatus == 0 {
		rb.staleStatus = http.StatusNotFound
	}
	rb.srv = httptest.NewServer(rb)
	t.Cleanup(rb.srv.Close)
	return rb
}

func (rb *rawBackend) url() string { return rb.srv.URL + "/mcp" }

// forget drops every session, as a restart does.
func (rb *rawBackend) forget() {
	rb.mu.Lock()
	rb.sessions = map[string]bool{}
	rb.mu.Unlock()
}

func (rb *rawBackend) counts() (received, ran int) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	return rb.received, rb.ran
}

func (rb *rawBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		if rb.get != nil {
			rb.get(w, r)
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		return
	}
	var msg mcptest.RPCRequest
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	if msg.Method == "" && msg.ID != nil && rb.reply != nil {
		rb.reply(w, msg)
		return
	}
	rb.mu.Lock()
	if msg.Method == "tools/call" {
		rb.received++
	}
	known := rb.sessions[r.Header.Get(transport.HeaderKeySessionID)]
	rb.mu.Unlock()
	if !rb.sessionless && msg.Method != "initialize" && msg.Method != "server/discover" && !known {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rb.staleStatus)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
		return
	}
	if msg.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case msg.Method == "initialize" && !rb.sessionless:
		rb.mu.Lock()
		rb.issued++
		id := fmt.Sprintf("session-%d", rb.issued)
		rb.sessions[id] = true
		rb.mu.Unlock()
		w.Header().Set(transport.HeaderKeySessionID, id)
	case msg.Method == "tools/list" && rb.list != nil:
		rb.mu.Lock()
		rb.lists++
		rb.mu.Unlock()
		rb.list(w, msg)
		return
	case msg.Method == "tools/call":
		rb.mu.Lock()
		rb.ran++
		rb.mu.Unlock()
		if rb.call != nil {
			rb.call(w, msg)
			return
		}
	}
	io.WriteString(w, defaultAnswer(msg))
}

func connectedBackend(t *testing.T, cfg Config) *Backend {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	b := New(cfg)
	t.Cleanup(func() { b.Close() })
	if _, err := b.Tools(context.Background(), time.Now().Add(5*time.Second)); err != nil {
		t.Fatalf("connecting: %v", err)
	}
	return b
}

// TestCallNeverSentTwice: a tools/call that reached the backend, whatever
// its answer says about sessions, is not sent again: the backend runs the
// tool once. Only a 404 or 400 to a request that carried a session means
// the backend refused it.
func TestCallNeverSentTwice(t *testing.T) {
	jsonError := func(status int, message string) func(http.ResponseWriter, mcptest.RPCRequest) {
		return func(w http.ResponseWriter, msg mcptest.RPCRequest) {
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%q}}`, msg.ID, message)
		}
	}
	type test struct {
		name        string
		sessionless bool
		call        func(http.ResponseWriter, mcptest.RPCRequest)
		get         func(http.ResponseWriter, *http.Request)
		reply       func(http.ResponseWriter, mcptest.RPCRequest)
		wantErr     string
	}
	tests := []test{
		{name: "a JSON-RPC error naming the session", call: jsonError(http.StatusOK, "invalid session token"), wantErr: "invalid session token"},
		{name: "a JSON-RPC error saying the session is unknown", call: jsonError(http.StatusOK, "Bad Request: unknown session, 400"), wantErr: "unknown session"},
		{name: "a tool error naming the session", call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
			io.WriteString(w, rpcResult(msg.ID, `{"isError":true,"content":[{"type":"text","text":"invalid session token"}]}`))
		}, wantErr: "invalid session token"},
		{name: "an event stream with the error", call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32000,\"message\":\"session expired\"}}\n\n", msg.ID)
		}, wantErr: "session expired"},
		{name: "a 500 naming the session", call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "invalid session: the token expired")
		}, wantErr: "status 500"},
		{name: "a 400 to a request without a session", sessionless: true, call: jsonError(http.StatusBadRequest, "Bad Request: invalid session"), wantErr: "invalid session"},
		{
			// The answer stream ends before the answer, asking to be
			// resumed; the resuming GET gets 404. The POST reached the tool.
			name: "an answer stream that cannot be resumed",
			call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "id: 1\nretry: 10\n\n")
			},
			get:     func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) },
			wantErr: "resume",
		},
	}
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound} {
		// The tool runs, asks the client something on the answer stream,
		// refuses the client's answer as a restarted server would, and
		// ends the stream without a result. The refusal was of the
		// client's answer, not of the call.
		replied := make(chan struct{}, 1)
		tests = append(tests, test{
			name: fmt.Sprintf("a %d to the client's answer to a server request", status),
			call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n")
				w.(http.Flusher).Flush()
				select {
				case <-replied:
					// Let the refusal reach the client before the stream ends.
					time.Sleep(100 * time.Millisecond)
				case <-time.After(5 * time.Second):
				}
			},
			reply: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
				w.WriteHeader(status)
				w.(http.Flusher).Flush()
				select {
				case replied <- struct{}{}:
				default:
				}
			},
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := startRawBackend(t, &rawBackend{sessionless: tt.sessionless, call: tt.call, get: tt.get, reply: tt.reply})
			b := connectedBackend(t, Config{URL: rb.url()})
			_, err := b.Call(context.Background(), "charge", json.RawMessage(`{}`))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err %v, want %q", err, tt.wantErr)
			}
			if received, ran := rb.counts(); received != 1 || ran != 1 {
				t.Errorf("the backend received the call %d times and ran it %d times, want once", received, ran)
			}
		})
	}
}

// TestCallAgainOnStaleSession: a backend that restarted refuses the old
// session with 404 (mcp-go) or 400 (server-everything) before running
// anything; the call re-initializes, goes again, and the tool runs once.
func TestCallAgainOnStaleSession(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			rb := startRawBackend(t, &rawBackend{staleStatus: status})
			b := connectedBackend(t, Config{URL: rb.url()})
			if _, err := b.Call(context.Background(), "echo", nil); err != nil {
				t.Fatal(err)
			}
			rb.forget()
			ans, err := b.Call(context.Background(), "charge", json.RawMessage(`{}`))
			if err != nil || string(ans.Value) != `"done"` {
				t.Fatalf("after the restart: %s, %v", ans.Value, err)
			}
			// 3, or 4 when a connection made in the background just before
			// the restart was refused too.
			if received, ran := rb.counts(); received < 3 || received > 4 || ran != 2 {
				t.Errorf("the backend received %d calls and ran %d, want 3 (or 4) and 2 (the refused one sent again)", received, ran)
			}
		})
	}
}

// TestCallRefusedOnEveryNewSession: a backend that refuses the call as
// stale on the new session too is not asked a third time: the call fails
// as unavailable after one reconnection.
func TestCallRefusedOnEveryNewSession(t *testing.T) {
	t.Parallel()
	rb := startRawBackend(t, &rawBackend{call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"session not found"}}`)
	}})
	b := connectedBackend(t, Config{URL: rb.url()})
	_, err := b.Call(context.Background(), "charge", json.RawMessage(`{}`))
	if err == nil || !strings.HasPrefix(err.Error(), "unavailable: ") {
		t.Errorf("err %v, want the backend unavailable", err)
	}
	// 2: once more on a new session. 1 when the new session's client
	// already knew its session was refused (a message it answered got the
	// same 404) and did not send the call: still not a third time.
	if received, _ := rb.counts(); received < 1 || received > 2 {
		t.Errorf("the backend received the call %d times, want 2 (once more on a new session), at most", received)
	}
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s", what)
		}
	}
}

// TestSetLogger: after SetLogger the backend's lines go to the new logger,
// and no longer to the one it was made with.
func TestSetLogger(t *testing.T) {
	t.Parallel()
	first, firstLogs := observer.New(zap.DebugLevel)
	second, secondLogs := observer.New(zap.DebugLevel)
	b := New(Config{Name: "down", URL: "http://" + mcptest.ClosedAddr(t) + "/mcp", Logger: zap.New(first)})
	t.Cleanup(func() { b.Close() })
	waitFor(t, "line on the first logger", func() bool { return firstLogs.FilterMessage("backend unavailable").Len() > 0 })
	b.SetLogger(zap.New(second))
	waitFor(t, "line on the new logger", func() bool { return secondLogs.Len() > 0 })
	// The loop, which writes these lines, has taken the new logger: what it
	// writes next goes there too, and the first logger gets nothing more.
	before := firstLogs.Len()
	waitFor(t, "second line on the new logger", func() bool { return secondLogs.Len() > 1 })
	if after := firstLogs.Len(); after != before {
		t.Errorf("the first logger got %d lines after the new one had its first", after-before)
	}
	if line := secondLogs.All()[0]; line.Message != "backend unavailable" || line.ContextMap()["backend"] != "down" {
		t.Errorf("the line: %s %v", line.Message, line.ContextMap())
	}
}

// TestCallGivesStructuredContentAsSent: the value of a call with
// structured content is the backend's own text of it, keys in its order,
// and a result whose structured content is null gives its text.
func TestCallGivesStructuredContentAsSent(t *testing.T) {
	t.Parallel()
	const sc = `{"zeta":1,"alpha":{"y":[3,"<&>",1.50],"b":null},"mid":"é"}`
	rb := startRawBackend(t, &rawBackend{call: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
		if msg.Params.Name == "charge" {
			io.WriteString(w, rpcResult(msg.ID, `{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":null}`))
			return
		}
		io.WriteString(w, rpcResult(msg.ID, `{"content":[{"type":"text","text":"ignored"}],"structuredContent":`+sc+`}`))
	}})
	b := connectedBackend(t, Config{URL: rb.url()})
	for tool, want := range map[string]string{"echo": sc, "charge": `[1,2]`} {
		ans, err := b.Call(context.Background(), tool, json.RawMessage(`{}`))
		if err != nil || string(ans.Value) != want {
			t.Errorf("%s: %s, %v; want %s", tool, ans.Value, err, want)
		}
	}
}
