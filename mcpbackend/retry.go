package mcpbackend

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"syscall"
)

// retryStaleConn sends a request once more, on a new connection, when the
// backend closed its connection before answering it. net/http does this
// itself only for requests it deems idempotent, and every MCP request is a
// POST. A request that running twice leaves as once (any but a tools/call,
// or a call of a tool the backend marks read-only or idempotent) goes
// again whatever connection it was lost on. Another tools/call goes again
// only if it was lost on a pooled connection that the backend had closed
// before the request went out: one that broke later may have run the
// tool, which must not run twice.
//
// Both happen when the backend is a Caddy being reloaded. Its old servers
// close their idle connections; and one of them may still accept a new
// connection, read the request on it, and close it unanswered, since it
// is shutting down: the request ran nowhere, but only a request that may
// run twice can be sent again on that evidence.
//
// So does the 400 Go's net/http server writes, before any handler, to a
// request it could not read (seen from a Caddy being reloaded, whose read
// of a new connection failed while the request arrived): the request ran
// nowhere, whatever it is, and goes again.
//
// The second attempt goes out on a new connection, never a pooled one: a
// backend that closed one idle connection has usually closed them all (a
// restart, or the shutdown of its servers on every Caddy reload), and
// another pooled connection would fail the same way. There is no third.
type retryStaleConn struct {
	base  *http.Transport
	fresh *http.Transport // base's settings, without keep-alive
}

func newRetryStaleConn(base *http.Transport) retryStaleConn {
	fresh := base.Clone()
	fresh.DisableKeepAlives = true
	return retryStaleConn{base: base, fresh: fresh}
}

func (t retryStaleConn) RoundTrip(req *http.Request) (*http.Response, error) {
	reused, closedBefore := false, false
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		reused = info.Reused
		if reused {
			conn := info.Conn
			if tc, ok := conn.(*tls.Conn); ok {
				conn = tc.NetConn()
			}
			closedBefore = closedByPeer(conn)
		}
	}}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if req.GetBody == nil || req.Context().Err() != nil {
		return resp, err
	}
	switch {
	case err == nil:
		if !unreadRequest(resp) {
			return resp, nil
		}
	case !staleConnection(err):
		return resp, err
	default:
		state, isCall := req.Context().Value(callStateKey{}).(*callState)
		twiceIsOnce := !isCall || state.replayable
		if !twiceIsOnce && !(reused && closedBefore) {
			return resp, err
		}
	}
	body, gerr := req.GetBody()
	if gerr != nil {
		if err == nil {
			return nil, fmt.Errorf("the backend could not read the request (%s), and it cannot be sent again: %w", unreadAnswer, gerr)
		}
		return nil, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	return t.fresh.RoundTrip(again)
}

// unreadAnswer is the whole answer, status line and body, that Go's
// net/http server writes to a request it could not read, with no
// Content-Length and the connection closed after it.
const unreadAnswer = "400 Bad Request"

// unreadRequest reports whether resp is a Go server's answer to a request
// it could not read, and then closes it. Any other answer is left as it
// came, its body whole.
func unreadRequest(resp *http.Response) bool {
	if resp.StatusCode != http.StatusBadRequest || resp.Status != unreadAnswer || !resp.Close ||
		resp.ContentLength != -1 || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(unreadAnswer))+1))
	if err == nil && string(head) == unreadAnswer {
		resp.Body.Close()
		return true
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return false
}

func (t retryStaleConn) CloseIdleConnections() {
	t.base.CloseIdleConnections()
	t.fresh.CloseIdleConnections()
}

func staleConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "server closed idle connection")
}
