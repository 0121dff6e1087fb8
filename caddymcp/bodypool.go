package caddymcp

import (
	"io"
	"net/http"
	"sync"
)

// The buffers of a tools/call that the fast path answers: its body and
// the decoded envelope. What a call allocates decides how long it waits
// when the collector's mark phase catches it (it must help mark in
// proportion), so the per-call buffers are kept. A body is pooled only
// when the fast path answered the call: handing a body to mcp-go hands it
// to code that may keep it.

// pooledBodyMax is the size of a pooled body buffer: larger bodies, and
// those of unknown length, are read as before and left to the collector,
// so no buffer in the pool is ever larger.
const pooledBodyMax = 4 << 10

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, pooledBodyMax); return &b }}

// readPooledBody is readBody, into a pooled buffer when the client gave a
// length that fits one; buf is that buffer, for releaseBody once nothing
// holds the body, or nil. Exactly the declared length is read, at most
// pooledBodyMax and within limit, so no byte of an earlier body is in it
// and the read needs no MaxBytesReader.
func readPooledBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, buf *[]byte, err error) {
	n := r.ContentLength
	if n < 0 || n > pooledBodyMax || n > limit {
		body, err = readBody(w, r, limit)
		return body, nil, err
	}
	buf = bodyBuffers.Get().(*[]byte)
	body = (*buf)[:n]
	if _, err = io.ReadFull(r.Body, body); err != nil {
		releaseBody(buf)
		return nil, nil, err
	}
	return body, buf, nil
}

// releaseBody gives a body's buffer back to the pool.
func releaseBody(buf *[]byte) {
	if buf != nil && cap(*buf) == pooledBodyMax {
		bodyBuffers.Put(buf)
	}
}

var rpcInfos = sync.Pool{New: func() any { return new(rpcInfo) }}

// newRPCInfo is an empty rpcInfo, for releaseRPCInfo when the request is
// answered.
func newRPCInfo() *rpcInfo { return rpcInfos.Get().(*rpcInfo) }

// releaseRPCInfo empties info, which holds slices of the body, and gives
// it back.
func releaseRPCInfo(info *rpcInfo) {
	*info = rpcInfo{}
	rpcInfos.Put(info)
}
