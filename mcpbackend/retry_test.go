package mcpbackend

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// droppingServer reads each request whole and then either answers it or
// closes the connection without an answer, as drop decides from the
// request's place among all requests and on its connection: a backend
// that went away after the request reached it.
type droppingServer struct {
	ln       net.Listener
	drop     func(total, onConn int) bool
	raw      func(total, onConn int) string // when set and not "", written as the answer, and the connection closed
	mu       sync.Mutex
	received []string // bodies, in order
}

// startDroppingServer starts a server that drops the second request of
// every connection.
func startDroppingServer(t *testing.T) *droppingServer {
	return startDropping(t, func(_, onConn int) bool { return onConn == 1 })
}

func startDropping(t *testing.T, drop func(total, onConn int) bool) *droppingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &droppingServer{ln: ln, drop: drop}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(conn)
		}
	}()
	return s
}

func (s *droppingServer) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		total := len(s.received)
		s.received = append(s.received, string(body))
		s.mu.Unlock()
		if s.drop(total, n) {
			return
		}
		if s.raw != nil {
			if answer := s.raw(total, n); answer != "" {
				io.WriteString(conn, answer)
				return
			}
		}
		status := "200 OK"
		if string(body) == "fail" {
			status = "500 Internal Server Error"
		}
		io.WriteString(conn, "HTTP/1.1 "+status+"\r\nContent-Length: 2\r\n\r\nok")
	}
}

func (s *droppingServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

// TestRetryStaleConnAfterTheRequestWentOut: a request lost on a pooled
// connection after it was sent goes out again on a new connection only if
// running it twice is harmless: not a tools/call, or a call of a tool the
// backend marks read-only or idempotent. Any other call fails, and the
// backend has seen it once.
func TestRetryStaleConnAfterTheRequestWentOut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		state     *callState
		wantAgain bool
	}{
		{"tools/list", nil, true},
		{"replayable tools/call", &callState{replayable: true}, true},
		{"other tools/call", &callState{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startDroppingServer(t)
			rt := newRetryStaleConn(&http.Transport{})
			defer rt.CloseIdleConnections()
			send := func(body string) (*http.Response, error) {
				ctx := context.Background()
				if tt.state != nil {
					ctx = context.WithValue(ctx, callStateKey{}, tt.state)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.ln.Addr().String()+"/mcp", strings.NewReader(body))
				return rt.RoundTrip(req)
			}
			resp, err := send("first")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()

			resp, err = send("second")
			if tt.wantAgain {
				if err != nil {
					t.Fatalf("not sent again: %v", err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != "ok" {
					t.Errorf("answer %q", b)
				}
				if n := s.count(); n != 3 {
					t.Errorf("the server got %d requests, want 3 (the second sent twice)", n)
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatal("a call that may have run was sent again")
			}
			if n := s.count(); n != 2 {
				t.Errorf("the server got %d requests, want 2", n)
			}
		})
	}
}

// TestRetryStaleConnSendsAgainAtMostOnce: which failures send a request
// again, and that one more attempt is all it gets. Only a request whose
// body can be read again goes out again, a call that may not run twice
// only from a pooled connection; an answer of any status is an answer.
func TestRetryStaleConnSendsAgainAtMostOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		drop         func(total, onConn int) bool
		pooled       int              // connections in the pool before the request
		body         func() io.Reader // nil: one that can be read again
		call         bool             // a tools/call that may not run twice
		wantStatus   int              // 0: an error
		wantReceived int
	}{
		// A request that may run twice goes again, wherever it was lost:
		// the backend may have read it and closed the connection
		// unanswered, shutting down.
		{name: "dropped on a new connection", drop: func(total, _ int) bool { return total == 0 }, wantStatus: 200, wantReceived: 2},
		{name: "a call dropped on a new connection", drop: func(total, _ int) bool { return total == 0 }, call: true, wantReceived: 1},
		{name: "dropped on the new connection too", pooled: 1, drop: func(total, _ int) bool { return total > 0 }, wantReceived: 3},
		{name: "dropped on a pooled connection", pooled: 1, drop: func(_, onConn int) bool { return onConn == 1 }, wantStatus: 200, wantReceived: 3},
		// The second attempt takes a new connection, not the next pooled
		// one, which the backend closed as well.
		{name: "dropped on every pooled connection", drop: func(_, onConn int) bool { return onConn == 1 }, pooled: 2, wantStatus: 200, wantReceived: 4},
		{name: "an error status", pooled: 1, drop: func(int, int) bool { return false }, body: func() io.Reader { return strings.NewReader("fail") }, wantStatus: 500, wantReceived: 2},
		{name: "a body that cannot be read again", pooled: 1, drop: func(_, onConn int) bool { return onConn == 1 },
			body: func() io.Reader { return io.NopCloser(strings.NewReader("second")) }, wantReceived: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pooled := tt.pooled
			// The requests that fill the pool are answered together, each
			// on a connection of its own.
			var arrived sync.WaitGroup
			arrived.Add(pooled)
			s := startDropping(t, func(total, onConn int) bool {
				if total < pooled {
					arrived.Done()
					arrived.Wait()
					return false
				}
				return tt.drop(total, onConn)
			})
			rt := newRetryStaleConn(&http.Transport{})
			defer rt.CloseIdleConnections()
			url := "http://" + s.ln.Addr().String() + "/mcp"
			var filled sync.WaitGroup
			for range pooled {
				filled.Go(func() {
					req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("first"))
					resp, err := rt.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				})
			}
			filled.Wait()
			body := io.Reader(strings.NewReader("second"))
			if tt.body != nil {
				body = tt.body()
			}
			ctx := context.Background()
			if tt.call {
				ctx = context.WithValue(ctx, callStateKey{}, &callState{})
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
			resp, err := rt.RoundTrip(req)
			if tt.wantStatus == 0 {
				if err == nil {
					resp.Body.Close()
					t.Errorf("status %d, want an error", resp.StatusCode)
				}
			} else if err != nil || resp.StatusCode != tt.wantStatus {
				t.Errorf("%v, want status %d", err, tt.wantStatus)
			} else {
				resp.Body.Close()
			}
			if n := s.count(); n != tt.wantReceived {
				t.Errorf("the server got %d requests, want %d", n, tt.wantReceived)
			}
		})
	}
}

// TestStaleConnection: the failures of a pooled connection that the
// backend had closed: it ended the stream, reset the connection, or
// net/http saw it close while idle. A refused dial or a timeout is not
// one.
func TestStaleConnection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the stream ended", fmt.Errorf("net/http: %w", io.EOF), true},
		{"the stream ended within an answer", io.ErrUnexpectedEOF, true},
		{"a reset", readAfterReset(t), true},
		{"closed while idle", errors.New("http: server closed idle connection"), true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false},
		{"the time ran out", context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		if got := staleConnection(tt.err); got != tt.want {
			t.Errorf("%s: staleConnection(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
