package caddymcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// unhandledError reports that the handlers after mcp did not answer a tool
// request, or failed it.
type unhandledError struct{ msg string }

func (e *unhandledError) Error() string { return e.msg }

// serveRoute sends a tool request through the handlers that follow mcp in
// its route, as a fresh request: prepared like a new incoming one, with its
// own replacer and vars, so placeholders in those handlers ({path}, {uri})
// describe the tool request, not the MCP request; answered into a
// standalone recorder with a size cap.
func serveRoute(ctx context.Context, route *routeInfo, req *http.Request, call upstream.Target, tool string, limit int64) (resp *upstream.Response, err error) {
	label := call.Label
	if route == nil || route.next == nil {
		return nil, &unhandledError{msg: fmt.Sprintf("nothing after mcp handled %s (no upstream is configured)", label)}
	}
	// The handlers after mcp (reverse_proxy) pass the traceparent on.
	req, span := upstream.StartRequestSpan(req)
	defer func() {
		status := 0
		if resp != nil {
			status = resp.Status
		}
		span.End(status, err)
	}()
	orig := route.request
	req.Host = orig.Host
	req.RemoteAddr = orig.RemoteAddr
	req.TLS = orig.TLS
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.1", 1, 1
	if req.Body == nil {
		req.Body = http.NoBody // as a server request has, for the handlers after mcp
	}
	// Later handlers log the request by its RequestURI (reverse_proxy does,
	// at warn, when it aborts an answer): the tool's path, as configured,
	// without the query or resolved placeholders, which may hold keys.
	req.RequestURI = call.Path

	repl := caddy.NewReplacer()
	rec := newRecorder(limit)
	srv, _ := orig.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	req = caddyhttp.PrepareRequest(req, repl, rec, srv)
	repl.Set("http.mcp.method", "tools/call")
	repl.Set("http.mcp.tool", tool)

	defer func() {
		if p := recover(); p != nil {
			resp = nil
			switch {
			case rec.overflow:
				err = &upstream.TooLargeError{Limit: limit}
			case ctx.Err() != nil:
				err = ctx.Err()
			case p == http.ErrAbortHandler:
				err = &unhandledError{msg: fmt.Sprintf("%s: the handler after mcp aborted the response", label)}
			default:
				err = &unhandledError{msg: fmt.Sprintf("%s: the handler after mcp panicked: %v", label, p)}
			}
		}
	}()

	if herr := route.next.ServeHTTP(rec, req); herr != nil {
		switch {
		case rec.overflow:
			return nil, &upstream.TooLargeError{Limit: limit}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		var he caddyhttp.HandlerError
		if errors.As(herr, &he) && he.StatusCode != 0 {
			msg := fmt.Sprintf("%s: the handler after mcp failed with status %d", label, he.StatusCode)
			if he.Err != nil {
				msg += ": " + he.Err.Error()
			}
			return nil, &unhandledError{msg: msg}
		}
		return nil, &unhandledError{msg: fmt.Sprintf("%s: the handler after mcp failed: %v", label, herr)}
	}
	if rec.overflow {
		return nil, &upstream.TooLargeError{Limit: limit}
	}
	if rec.resp.Status == 0 {
		return nil, &unhandledError{msg: fmt.Sprintf("nothing after mcp handled %s", label)}
	}
	rec.resp.Body = rec.body.Bytes()
	return &rec.resp, nil
}

// recorder is a standalone response writer that keeps the answer in memory,
// at most limit bytes. Flush does nothing: the answer is read whole. The
// answer it builds is part of it, one allocation less per call.
type recorder struct {
	resp     upstream.Response
	body     bytes.Buffer
	limit    int64
	overflow bool
}

func newRecorder(limit int64) *recorder {
	return &recorder{resp: upstream.Response{Header: make(http.Header)}, limit: limit}
}

func (r *recorder) Header() http.Header { return r.resp.Header }

func (r *recorder) WriteHeader(status int) {
	if r.resp.Status != 0 || status < 200 {
		return // informational answers and repeated calls change nothing
	}
	r.resp.Status = status
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.resp.Status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if int64(r.body.Len()+len(p)) > r.limit {
		r.overflow = true
		return 0, &upstream.TooLargeError{Limit: r.limit}
	}
	if r.body.Cap() == 0 {
		r.body.Grow(r.declared(len(p)))
	}
	return r.body.Write(p)
}

// declared is the room the first write makes for the body: its declared
// length, when that is small and within the limit, so that an answer
// copied in chunks (reverse_proxy's are 32 KiB) fills one allocation made
// once, as upstream.ReadResponse reads one. A larger or missing length is
// not taken on trust: memory follows the bytes that arrive.
func (r *recorder) declared(first int) int {
	n, err := strconv.ParseInt(r.resp.Header.Get("Content-Length"), 10, 64)
	if err != nil || n < int64(first) || n > r.limit || n > upstream.ExactReadMax {
		return first
	}
	return int(n)
}

func (r *recorder) Flush() {}
