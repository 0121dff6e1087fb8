package upstream

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"syscall"
)

// retryStaleConn sends a request once more, on a new connection, when it
// failed on a pooled connection that the backend had closed (it
// restarted, or dropped idle connections) before answering anything.
// net/http does this itself only for requests it deems idempotent, and
// every MCP request is a POST. A tools/call is sent again only if the
// backend had closed the connection before the request went out: one that
// broke later may have run the tool, which must not run twice.
//
// The second attempt goes out on a new connection, never a pooled one: a
// backend that closed one idle connection has usually closed them all (a
// restart, or the shutdown of its servers on every Caddy reload), and
// another pooled connection would fail the same way.
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
	if err == nil || !reused || req.GetBody == nil || req.Context().Err() != nil || !staleConnection(err) {
		return resp, err
	}
	if state, ok := req.Context().Value(callStateKey{}).(*callState); ok && !closedBefore && !state.replayable {
		return resp, err
	}
	body, gerr := req.GetBody()
	if gerr != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	return t.fresh.RoundTrip(again)
}

func (t retryStaleConn) CloseIdleConnections() {
	t.base.CloseIdleConnections()
	t.fresh.CloseIdleConnections()
}

func staleConnection(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "server closed idle connection")
}
