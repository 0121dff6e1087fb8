package inprocess

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/stack"
)

// localBuffer is how much of an answer is kept before it is handed over
// as a stream, as a network server's write buffer would send it: a
// handler that writes much without flushing is read while it writes.
const localBuffer = 64 << 10

// Serve serves req through srv in process and returns its answer; local
// is the address the connection would have come to, stopped is done once
// the config of srv is stopped, and logger hears of a panic in srv. The
// server's request is built as net/http would have read it from a
// loopback connection; its context carries none of req's values,
// only its cancellation, so nothing of the caller's request (its
// replacer, its authorization) leaks into the server's.
func Serve(srv http.Handler, local net.Addr, stopped context.Context, req *http.Request, logger *zap.Logger) (*http.Response, error) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), http.LocalAddrContextKey, local))
	w := &localWriter{header: make(http.Header), req: req, cancel: cancel, answer: make(chan *http.Response, 1)}
	// A caller that gives up ends the handler's request and the answer's
	// stream: its reader sees the cancellation, not a clean end.
	stopCaller := context.AfterFunc(req.Context(), func() {
		cancel()
		w.cut(req.Context().Err())
	})
	// An event stream of a config that was replaced ends, as the server's
	// shutdown ends it over the network, and the client connects again,
	// to the new one. A POST runs to its end, as in the grace period.
	stopConfig := func() bool { return false }
	if req.Method == http.MethodGet {
		stopConfig = context.AfterFunc(stopped, cancel)
	}

	sreq := serverRequest(ctx, req, local)
	go func() {
		defer func() {
			stopCaller()
			stopConfig()
			if req.Body != nil {
				_ = req.Body.Close()
			}
			if p := recover(); p != nil {
				err := http.ErrAbortHandler
				if p != http.ErrAbortHandler {
					// As net/http does, the panic is logged with its stack
					// and the client sees a broken answer: what the handler
					// panicked with is not the caller's to read.
					logger.Error("panic serving an in-process request", zap.String("host", req.URL.Host),
						zap.String("path", req.URL.Path), zap.Any("panic", p), zap.Stack("stack"))
					err = fmt.Errorf("in-process request to %s: %w", req.URL.Host, io.ErrUnexpectedEOF)
				}
				w.abort(err)
			} else {
				w.finish()
			}
			cancel()
		}()
		stack.Grow()
		srv.ServeHTTP(w, sreq)
	}()
	select {
	case resp := <-w.answer:
		if resp == nil {
			return nil, w.err
		}
		return resp, nil
	case <-req.Context().Done():
		w.abandon()
		cancel()
		return nil, req.Context().Err()
	}
}

// serverRequest is req as the server would have read it.
func serverRequest(ctx context.Context, req *http.Request, local net.Addr) *http.Request {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	header := req.Header.Clone()
	if header == nil {
		header = make(http.Header)
	}
	body := req.Body
	if body == nil {
		body = http.NoBody
	}
	if req.ContentLength > 0 {
		header.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	}
	u := *req.URL
	u.Scheme, u.Host, u.User = "", "", nil
	remote := "127.0.0.1:0"
	if tcp, ok := local.(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		remote = net.JoinHostPort(tcp.IP.String(), "0")
	} else if ok && tcp.IP.To4() == nil {
		remote = "[::1]:0"
	}
	sreq := (&http.Request{
		Method:        req.Method,
		URL:           &u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          body,
		ContentLength: req.ContentLength,
		Host:          host,
		RemoteAddr:    remote,
		RequestURI:    u.RequestURI(),
	}).WithContext(ctx)
	if sreq.ContentLength == 0 && req.Body != nil && req.Body != http.NoBody {
		sreq.ContentLength = -1
	}
	return sreq
}

// localBody is an answer being streamed: closing it stops the handler.
type localBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *localBody) Close() error {
	err := b.PipeReader.Close()
	b.cancel()
	return err
}

// localWriter is the server's http.ResponseWriter. It keeps the answer
// until the handler flushes, returns, or writes past localBuffer; then
// it hands the answer over, whole or as a stream.
type localWriter struct {
	header http.Header
	req    *http.Request
	cancel context.CancelFunc // ends the server's request
	answer chan *http.Response
	err    error // when answer got nil

	mu        sync.Mutex // the handler may write from several goroutines
	status    int
	sent      http.Header // the header as it was at WriteHeader
	buf       bytes.Buffer
	wroteBody bool
	streaming bool
	pr        *io.PipeReader // once streaming
	pw        *io.PipeWriter
	abandoned bool // the caller gave up waiting for the answer
	done      bool
}

func (w *localWriter) Header() http.Header { return w.header }

func (w *localWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeader(code)
}

func (w *localWriter) writeHeader(code int) {
	if w.status != 0 || code < 200 {
		// Informational answers are not passed on: mcp-go reads none.
		return
	}
	w.status = code
	w.sent = w.header.Clone()
}

func (w *localWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return 0, http.ErrHandlerTimeout
	}
	if w.status == 0 {
		w.writeHeader(http.StatusOK)
	}
	if w.bodiless() {
		// As net/http: a HEAD answer's body is dropped, and 204 and 304
		// take none.
		w.mu.Unlock()
		if w.req.Method == http.MethodHead {
			return len(p), nil
		}
		return 0, http.ErrBodyNotAllowed
	}
	if !w.wroteBody && len(p) > 0 {
		w.wroteBody = true
		if _, ok := w.sent["Content-Type"]; !ok {
			w.sent.Set("Content-Type", http.DetectContentType(p))
		}
	}
	if !w.streaming {
		w.buf.Write(p)
		if w.buf.Len() <= localBuffer {
			w.mu.Unlock()
			return len(p), nil
		}
		kept := w.startStream()
		w.mu.Unlock()
		if _, err := w.pw.Write(kept); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.mu.Unlock()
	// The pipe blocks until the client reads: a slow reader slows the
	// handler, as a full socket would.
	return w.pw.Write(p)
}

// startStream hands the answer over with the pipe as its body, and
// returns what was kept, for the caller to write into it once mu is
// released (the client reads only once it has the answer). Called with
// mu held.
func (w *localWriter) startStream() []byte {
	w.streaming = true
	w.pr, w.pw = io.Pipe()
	if w.abandoned {
		_ = w.pr.Close()
	}
	w.answer <- w.response(&localBody{PipeReader: w.pr, cancel: w.cancel}, -1)
	kept := w.buf.Bytes()
	w.buf = bytes.Buffer{}
	return kept
}

// Flush hands the answer over as a stream: an event stream's events
// must reach the client as they are written.
func (w *localWriter) Flush() { _ = w.FlushError() }

func (w *localWriter) FlushError() error {
	w.mu.Lock()
	if w.status == 0 {
		w.writeHeader(http.StatusOK)
	}
	if w.done {
		// A goroutine the handler left behind: the answer is over.
		w.mu.Unlock()
		return http.ErrHandlerTimeout
	}
	if w.streaming {
		w.mu.Unlock()
		return nil
	}
	kept := w.startStream()
	w.mu.Unlock()
	if len(kept) > 0 {
		_, err := w.pw.Write(kept)
		return err
	}
	return nil
}

// The deadlines guard a server against a slow peer; here the peer is
// this process, bounded by its own timeouts.
func (w *localWriter) SetReadDeadline(time.Time) error  { return nil }
func (w *localWriter) SetWriteDeadline(time.Time) error { return nil }
func (w *localWriter) EnableFullDuplex() error          { return nil }

// cut ends a streamed answer with err: its reader gets err, and the
// handler's next write fails rather than waiting for a reader.
func (w *localWriter) cut(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pw != nil {
		_ = w.pw.CloseWithError(err)
	}
}

// bodiless reports whether the answer takes no body. Called with mu held.
func (w *localWriter) bodiless() bool {
	return w.req.Method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified
}

// abandon makes whatever the handler writes from now on go nowhere.
func (w *localWriter) abandon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.abandoned = true
	if w.pr != nil {
		_ = w.pr.Close()
	}
}

// finish ends the answer once the handler returned.
func (w *localWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.streaming {
		_ = w.pw.Close()
		return
	}
	if w.status == 0 {
		w.writeHeader(http.StatusOK)
	}
	body := w.buf.Bytes()
	w.answer <- w.response(io.NopCloser(bytes.NewReader(body)), int64(len(body)))
}

// abort ends the answer of a handler that panicked: as over the network,
// the client sees a broken answer, or none.
func (w *localWriter) abort(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	if w.streaming {
		_ = w.pw.CloseWithError(err)
		return
	}
	w.err = err
	w.answer <- nil
}

func (w *localWriter) response(body io.ReadCloser, length int64) *http.Response {
	if w.bodiless() {
		if lb, ok := body.(*localBody); ok {
			_ = lb.PipeReader.Close() // nothing will read it
		}
		body, length = http.NoBody, 0
	}
	return &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          body,
		ContentLength: length,
		Request:       w.req,
	}
}
