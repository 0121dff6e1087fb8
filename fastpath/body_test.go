package fastpath

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

func TestReadPooledBody(t *testing.T) {
	read := func(body string, length int64, limit int64) ([]byte, *[]byte, error) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", io.NopCloser(strings.NewReader(body)))
		r.ContentLength = length
		return ReadBody(httptest.NewRecorder(), r, limit)
	}
	long := strings.Repeat("y", 3000)
	body, buf, err := read(long, 3000, 1<<20)
	if err != nil || buf == nil || string(body) != long {
		t.Fatalf("pooled read of 3000 bytes: %v %v", buf != nil, err)
	}
	ReleaseBody(buf)
	if body, buf, err = read(`{"a":1}`, 7, 1<<20); err != nil || buf == nil || !bytes.Equal(body, []byte(`{"a":1}`)) {
		t.Fatalf("pooled read after a longer one: %q %v", body, err)
	}
	ReleaseBody(buf)

	// Short of its declared length: an error, as readBody gives.
	if _, _, err := read(`{"a":`, 7, 1<<20); err == nil {
		t.Error("a body short of its length read without error")
	}
	// Larger than a pooled buffer, of no declared length, or over the
	// limit: read as before, not pooled.
	big := strings.Repeat("z", pooledBodyMax+1)
	if body, buf, err := read(big, int64(len(big)), 1<<20); err != nil || buf != nil || string(body) != big {
		t.Errorf("a body over the pooled size: pooled %v, %v", buf != nil, err)
	}
	if body, buf, err := read(`{}`, -1, 1<<20); err != nil || buf != nil || string(body) != `{}` {
		t.Errorf("a body of no declared length: pooled %v, %v", buf != nil, err)
	}
	if _, buf, err := read(`{"a":1}`, 7, 3); err == nil || buf != nil {
		t.Errorf("a body over the limit: pooled %v, %v", buf != nil, err)
	}
	// A buffer of another size is not kept.
	other := make([]byte, 2*pooledBodyMax)
	ReleaseBody(&other)
	for range 4 {
		if b := bodyBuffers.Get().(*[]byte); cap(*b) != pooledBodyMax {
			t.Fatalf("the pool holds a buffer of %d bytes", cap(*b))
		}
	}
}

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
	t.Parallel()
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
