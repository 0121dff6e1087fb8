package mcpbackend

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// goUnread is what Go's net/http server writes to a request it could not
// read, byte for byte.
const goUnread = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"

// TestRetryStaleConnUnreadRequest: a Go server's own 400 for a request it
// could not read, on a pooled connection or a new one, sends the request
// again on a new one, even a tools/call that may not run twice: it ran
// nowhere. An answer that only looks like it is the backend's answer,
// body and all.
func TestRetryStaleConnUnreadRequest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		answer    string
		pooled    bool
		wantAgain bool
	}{
		{"Go's answer on a pooled connection", goUnread, true, true},
		{"Go's answer on a new connection", goUnread, false, true},
		{"with a Content-Length", "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 15\r\nConnection: close\r\n\r\n400 Bad Request", true, false},
		{"a longer body", "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request: bad id", true, false},
		{"another type", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n400 Bad Request", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startDropping(t, func(int, int) bool { return false })
			// The request under test is the first one on its connection
			// if none was pooled, the second one otherwise.
			at := 0
			if tt.pooled {
				at = 1
			}
			s.raw = func(total, onConn int) string {
				if total == at {
					return tt.answer
				}
				return ""
			}
			rt := newRetryStaleConn(&http.Transport{})
			defer rt.CloseIdleConnections()
			send := func(body string) (*http.Response, error) {
				ctx := context.WithValue(context.Background(), callStateKey{}, &callState{})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.ln.Addr().String()+"/mcp", strings.NewReader(body))
				return rt.RoundTrip(req)
			}
			if tt.pooled {
				resp, err := send("first")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			resp, err := send("call")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want, wantStatus, wantReceived := tt.answer[strings.Index(tt.answer, "\r\n\r\n")+4:], 400, at+1
			if tt.wantAgain {
				want, wantStatus, wantReceived = "ok", 200, at+2
			}
			if resp.StatusCode != wantStatus || string(body) != want {
				t.Errorf("answer %d %q, want %d %q", resp.StatusCode, body, wantStatus, want)
			}
			if n := s.count(); n != wantReceived {
				t.Errorf("the server got %d requests, want %d", n, wantReceived)
			}
		})
	}
}
