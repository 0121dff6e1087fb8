package upstream

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// droppingServer answers the first request on each connection and, on a
// connection's second request, reads it whole and closes without an answer:
// a backend that went away after the request reached it.
type droppingServer struct {
	ln       net.Listener
	mu       sync.Mutex
	received []string // bodies, in order
}

func startDroppingServer(t *testing.T) *droppingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &droppingServer{ln: ln}
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
		s.received = append(s.received, string(body))
		s.mu.Unlock()
		if n == 1 {
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
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
