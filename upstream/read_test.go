package upstream

import (
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadResponseDoesNotTrustALargeLength: an answer that declares 8 MiB
// and stops after a few bytes costs memory for the bytes that came, not
// for the length it claimed; a small declared length is read whole.
func TestReadResponseDoesNotTrustALargeLength(t *testing.T) {
	var err error
	n := allocated(func() {
		resp := &http.Response{StatusCode: 200, ContentLength: 8 << 20, Header: http.Header{},
			Body: io.NopCloser(io.MultiReader(strings.NewReader("{\"a\":"), errReader{}))}
		_, err = ReadResponse(resp, 10<<20)
	})
	if err == nil {
		t.Fatal("a body cut short read as a success")
	}
	if n > 1<<20 {
		t.Errorf("reading 5 bytes of a declared 8 MiB allocated %d bytes", n)
	}

	resp := &http.Response{StatusCode: 200, ContentLength: 7, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"a":1}`))}
	got, err := ReadResponse(resp, 1024)
	if err != nil || string(got.Body) != `{"a":1}` {
		t.Fatalf("ReadResponse: %q, %v", got.Body, err)
	}
	resp = &http.Response{StatusCode: 200, ContentLength: 7, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"a"`))}
	if _, err := ReadResponse(resp, 1024); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a body shorter than its length: %v, want unexpected EOF", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
