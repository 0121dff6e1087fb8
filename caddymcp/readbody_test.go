package caddymcp

import (
	"io"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// TestReadBodyDoesNotTrustALargeLength: a client that declares a body of
// max_request_size and sends a few bytes gets memory for those bytes, not
// for what it declared; a small declared length is read whole.
func TestReadBodyDoesNotTrustALargeLength(t *testing.T) {
	r := httptest.NewRequest("POST", "/mcp", io.MultiReader(strings.NewReader(`{"jsonrpc"`), failingReader{}))
	r.ContentLength = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := readBody(httptest.NewRecorder(), r, 1<<20)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a body cut short read as a success")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("reading 10 bytes of a declared 1 MiB allocated %d bytes", n)
	}

	r = httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"a":1}`))
	if body, err := readBody(httptest.NewRecorder(), r, 1<<20); err != nil || string(body) != `{"a":1}` {
		t.Fatalf("readBody: %q, %v", body, err)
	}
	r = httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"a":1}`))
	if _, err := readBody(httptest.NewRecorder(), r, 3); err == nil {
		t.Fatal("a body over the limit was read")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
