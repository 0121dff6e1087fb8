package caddymcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
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

// TestReadBodyRefusesALargeDeclaredLength: a declared length over the
// limit is refused before anything is read.
func TestReadBodyRefusesALargeDeclaredLength(t *testing.T) {
	body := &countingReader{r: strings.NewReader(strings.Repeat("x", 2048))}
	r := httptest.NewRequest("POST", "/mcp", body)
	r.ContentLength = 1025
	_, err := readBody(httptest.NewRecorder(), r, 1024)
	var tooLarge *http.MaxBytesError
	if !errors.As(err, &tooLarge) || tooLarge.Limit != 1024 {
		t.Fatalf("readBody: %v, want a *http.MaxBytesError with the limit", err)
	}
	if body.n != 0 {
		t.Errorf("read %d bytes of a body declared over the limit", body.n)
	}
}

// TestServeAnswersALargeDeclaredLengthAtOnce: a client that declares a
// body over max_request_size and sends none of it gets its 413 without
// sending a byte of the body, whether the declared length is under what
// net/http would read to drain a body (256KiB) or far over it.
func TestServeAnswersALargeDeclaredLengthAtOnce(t *testing.T) {
	h, err := loadMCP(t, `{"max_request_size":1024,"tools":[{"name":"t","description":"d","method":"GET","path":"/"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, r, nil); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	for _, length := range []int{1025, 100 << 10, 10 << 20} {
		wantRefusedAtOnce(t, srv.Listener.Addr().String(), length)
	}
}

// wantRefusedAtOnce posts headers declaring a body of length bytes to addr,
// sends none of it, and wants a 413 naming max_request_size that closes the
// connection.
func wantRefusedAtOnce(t *testing.T, addr string, length int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n",
		addr, length)
	// Only a guard against a hang: the answer is read before any body byte
	// is sent, so it came without one.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Errorf("Content-Length %d and no body: no answer (%v)", length, err)
		return
	}
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "max_request_size") {
		t.Errorf("Content-Length %d: %d %s, want 413 naming max_request_size", length, resp.StatusCode, msg)
	}
	if !resp.Close {
		t.Errorf("Content-Length %d: the connection stays open for a body that is not wanted", length)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
