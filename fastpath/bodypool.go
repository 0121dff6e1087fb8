package fastpath

import (
	"io"
	"net/http"
	"sync"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// The buffers of a request that the fast path answers: its body and the
// decoded envelope. What a call allocates decides how long it waits
// when the collector's mark phase catches it (it must help mark in
// proportion), so the per-call buffers are kept. A body goes back to the
// pool only when the fast path answered the request: handing a body to
// mcp-go hands it to code that may keep it.

// pooledBodyMax is the size of a pooled body buffer: larger bodies, and
// those of unknown length, are read as before and left to the collector,
// so no buffer in the pool is ever larger.
const pooledBodyMax = 4 << 10

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, pooledBodyMax); return &b }}

// ReadBody reads a request body of at most limit bytes, into a pooled
// buffer when the client gave a length that fits one; buf is that buffer,
// for ReleaseBody once nothing holds the body, or nil. Exactly the declared length is read, at most
// pooledBodyMax and within limit, so no byte of an earlier body is in it
// and the read needs no MaxBytesReader.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, buf *[]byte, err error) {
	n := r.ContentLength
	if n < 0 || n > pooledBodyMax || n > limit {
		body, err = readBody(w, r, limit)
		return body, nil, err
	}
	buf = bodyBuffers.Get().(*[]byte)
	body = (*buf)[:n]
	if _, err = io.ReadFull(r.Body, body); err != nil {
		ReleaseBody(buf)
		return nil, nil, err
	}
	return body, buf, nil
}

// ReleaseBody gives a body's buffer back to the pool.
func ReleaseBody(buf *[]byte) {
	if buf != nil && cap(*buf) == pooledBodyMax {
		bodyBuffers.Put(buf)
	}
}

// readBody reads a request body of at most limit bytes, in one exact
// allocation when the client gave a small length. A large one is not
// taken on trust: memory follows the bytes that arrive. A declared length
// over the limit is refused before a byte is read, rather than after that
// many bytes arrived.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n >= 0 && n <= limit && n <= upstream.ExactReadMax {
		body := make([]byte, n)
		_, err := io.ReadFull(rd, body)
		return body, err
	}
	return io.ReadAll(rd)
}
