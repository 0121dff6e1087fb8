package mcpbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

func TestAnswerBodyTotal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		size    int
		wantErr bool
	}{{0, false}, {9, false}, {10, false}, {11, true}, {1 << 20, true}} {
		state := new(callState)
		body := &answerBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("x", tt.size))), limit: 10, state: state,
			frame: eventFrame{maxLine: 10, maxEvent: 10}}
		got, err := io.ReadAll(body)
		var tooLarge *AnswerTooLargeError
		if tt.wantErr != errors.As(err, &tooLarge) || tt.wantErr != (state.broken() != nil) {
			t.Errorf("%d bytes: err %v, flagged %v", tt.size, err, state.broken())
		}
		if len(got) > 10 {
			t.Errorf("%d bytes: read %d past the limit", tt.size, len(got))
		}
		if !tt.wantErr && len(got) != tt.size {
			t.Errorf("%d bytes: read %d", tt.size, len(got))
		}
	}
}

// TestEventFrame reads event streams through the bounds of a 16-byte
// message: lines, events and their data lines as mcp-go splits them, read
// whole and one byte at a time.
func TestEventFrame(t *testing.T) {
	t.Parallel()
	many := func(line string, n int) string { return strings.Repeat(line, n) }
	tests := []struct {
		name, stream string
		wantErr      string // "" when the stream passes whole
	}{
		{"an event of 16 bytes", "event: message\ndata: 0123456789abcdef\n\n", ""},
		{"an event of 17 bytes", "data: 0123456789abcdefX\n\n", "the backend sent an event larger than 16 bytes"},
		{"no space after the colon", "data:0123456789abcdef\n\n", ""},
		{"two data lines of 16 bytes joined", "data: 01234567\ndata: 0123456\n\n", ""},
		{"two data lines of 17 bytes joined", "data: 01234567\ndata: 01234567\n\n", "an event larger than 16 bytes"},
		{"two events of 16 bytes", "data: 0123456789abcdef\n\ndata: 0123456789abcdef\n\n", ""},
		{"events ended by CRLF", "data: 0123456789abcdef\r\n\r\ndata: 0123456789abcde\r\n\r\n", ""},
		{"an event not ended by a blank line", "data: 0123456789abcdef\ndata: 0\n", "an event larger than 16 bytes"},
		{"a comment of 16 bytes", ": 0123456789abcd\n", ""},
		{"a comment of 17 bytes", ": 0123456789abcde\n", "the backend sent an event stream line longer than 16 bytes"},
		{"an event field of 17 bytes", "event: 0123456789\n", "line longer than 16 bytes"},
		{"a line with no newline", many("x", 1000), "line longer than 16 bytes"},
		{"a data line with no newline", "data: " + many("x", 1000), "an event larger than 16 bytes"},
		{"a data prefix without its colon", "data 0123456789abcdef\n", "line longer than 16 bytes"},
		{"blank lines", many("\n", 1000) + many("\r\n", 1000), ""},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/one byte at a time %v", tt.name, oneByte), func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.stream)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				body := &answerBody{ReadCloser: io.NopCloser(r), limit: 1 << 30, frame: eventFrame{maxLine: 16, maxEvent: 16}}
				got, err := io.ReadAll(body)
				if tt.wantErr == "" {
					if err != nil || string(got) != tt.stream {
						t.Fatalf("read %d of %d bytes: %v", len(got), len(tt.stream), err)
					}
					return
				}
				var bound *StreamLimitError
				if !errors.As(err, &bound) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if _, again := body.Read(make([]byte, 8)); again != err {
					t.Errorf("a read after the bound: %v", again)
				}
			})
		}
	}
}

// TestEventFrameSplitEvents: mcp-go copies an event's data on each of its
// data lines, so an event of many short lines is refused once the copying
// passes 64 times its size and 1MiB, long before its size bound.
func TestEventFrameSplitEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, stream string
		wantErr      bool
	}{
		{"a pretty-printed answer of 200 lines", strings.Repeat(`data:     "key": "a value of some length",`+"\n", 200) + "\n", false},
		{"one line per byte", strings.Repeat("data:x\n", 20000) + "\n", true},
		{"empty data lines", strings.Repeat("data:\n", 20000) + "\n", true},
		{"many small events", strings.Repeat("data:x\n\n", 20000), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &answerBody{ReadCloser: io.NopCloser(strings.NewReader(tt.stream)), limit: 1 << 30,
				frame: eventFrame{maxLine: 16 << 20, maxEvent: 16 << 20}}
			_, err := io.ReadAll(body)
			if tt.wantErr != (err != nil) {
				t.Fatalf("err %v, want an error %v", err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), "the backend split an event of") {
				t.Errorf("err %v", err)
			}
		})
	}
}

// sseFlood is an MCP server of the SSE transport, written by hand, whose
// event stream turns hostile: it streams junk in one of several shapes,
// up to floodCap bytes, and counts what it managed to write before the
// client hung up.
type sseFlood struct {
	shape   string
	floodAt string // "start": before the endpoint event; "call": on a tools/call
	srv     *httptest.Server

	answers   chan string
	flood     chan struct{}
	floodOnce sync.Once
	once      sync.Once
	written   atomic.Int64
	done      chan struct{} // closed once the flood ended
}

// floodCap bounds what a flood writes: far past every bound of the tests,
// and small enough that the code without the bounds survives it.
const floodCap = 128 << 20

func startSSEFlood(t *testing.T, shape, floodAt string) *sseFlood {
	f := &sseFlood{shape: shape, floodAt: floodAt, answers: make(chan string, 16), flood: make(chan struct{}), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", f.stream)
	mux.HandleFunc("POST /message", f.message)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *sseFlood) url() string { return f.srv.URL + "/sse" }

func (f *sseFlood) stream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if f.floodAt == "start" {
		f.pour(w)
		return
	}
	fmt.Fprintf(w, "event: endpoint\ndata: /message?sessionId=1\n\n")
	w.(http.Flusher).Flush()
	for {
		select {
		case a := <-f.answers:
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", a)
			w.(http.Flusher).Flush()
		case <-f.flood:
			f.pour(w)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// pour writes the flood, and then holds the stream open: a client that
// did not hang up keeps what it read.
func (f *sseFlood) pour(w http.ResponseWriter) {
	var chunk string
	switch f.shape {
	case "line":
		chunk = strings.Repeat("x", 32<<10) // a line that never ends
	case "data":
		io.WriteString(w, "data: ")
		chunk = strings.Repeat("x", 32<<10)
	case "split":
		chunk = strings.Repeat("data:x\n", 32<<10/7) // one event, ever longer
	case "comments":
		chunk = strings.Repeat(": keep-alive\n", 32<<10/13)
	}
	n := int64(0)
	for n < floodCap {
		m, err := io.WriteString(w, chunk)
		n += int64(m)
		if err != nil {
			break
		}
	}
	f.written.Store(n)
	f.once.Do(func() { close(f.done) })
	if n >= floodCap {
		time.Sleep(5 * time.Second)
	}
}

func (f *sseFlood) message(w http.ResponseWriter, r *http.Request) {
	var msg mcptest.RPCRequest
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	w.WriteHeader(http.StatusAccepted)
	if msg.ID == nil {
		return
	}
	if msg.Method == "tools/call" && f.floodAt == "call" {
		f.floodOnce.Do(func() { close(f.flood) })
		return
	}
	f.answers <- defaultAnswer(msg)
}

// TestSSEBackendFlood: an SSE backend whose event stream never ends a
// line, an event, or itself. The client stops reading at the bound, the
// backend is reported unavailable with the bound it broke, and the
// memory it held is given back. Before these bounds, mcp-go read the
// whole flood into one string.
func TestSSEBackendFlood(t *testing.T) {
	tests := []struct {
		shape, floodAt string
		streamSize     int64
		wantErr        string
		bound          int64 // what the client may read, beside the kernel's buffers
	}{
		{"line", "start", 0, "the backend sent an event stream line longer than 1MiB", 1 << 20},
		{"line", "call", 0, "the backend sent an event stream line longer than 1MiB", 1 << 20},
		{"data", "call", 0, "the backend sent an event larger than 1MiB", 1 << 20},
		{"split", "call", 0, "the backend split an event of", 1 << 20},
		{"comments", "call", 4 << 20, "the backend's event stream passed max_stream_size (4MiB)", 4 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.shape+" at "+tt.floodAt, func(t *testing.T) {
			f := startSSEFlood(t, tt.shape, tt.floodAt)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			peak := watchHeap(t)

			b := New(Config{Name: "flood", URL: f.url(), Transport: TransportSSE, Timeout: 10 * time.Second,
				MaxResponseSize: 1 << 20, MaxStreamSize: tt.streamSize})
			defer b.Close()
			if tt.floodAt == "call" {
				if _, err := b.Tools(context.Background(), time.Now().Add(10*time.Second)); err != nil {
					t.Fatalf("before the flood: %v", err)
				}
				_, err := b.Call(context.Background(), "echo", nil)
				if err == nil || !strings.Contains(err.Error(), "unavailable: "+tt.wantErr) {
					t.Fatalf("the call waiting on the stream: %v", err)
				}
			}
			err := waitUnavailable(t, b, tt.wantErr)
			select {
			case <-f.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the client still reads the flood")
			}
			written := f.written.Load()
			t.Logf("%s: the backend wrote %d bytes before the client hung up; peak heap %d MiB over the start; %v",
				tt.shape, written, (peak()-before.HeapAlloc)>>20, err)
			if written > tt.bound+32<<20 {
				t.Errorf("the client read %d bytes of a flood; its bound is %d", written, tt.bound)
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 32<<20 {
				t.Errorf("the heap kept %d MiB after the flood", grown>>20)
			}
			if _, err := b.Call(context.Background(), "echo", nil); err == nil || !strings.Contains(err.Error(), "unavailable") {
				t.Errorf("a call after the flood: %v", err)
			}
		})
	}
}

// waitUnavailable waits for the backend to report an error containing
// want, and returns it.
func waitUnavailable(t *testing.T, b *Backend, want string) error {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := b.Tools(context.Background(), time.Time{})
		if err != nil && strings.Contains(err.Error(), want) {
			return err
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backend reports %v, want %q", err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watchHeap samples the heap until the test ends; the function returns
// the highest figure seen so far.
func watchHeap(t *testing.T) func() uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return peak.Load
}

// BenchmarkAnswerBody reads a 1MiB answer through its bounds, as one
// JSON body and as one event; "plain" reads it with no bounds.
func BenchmarkAnswerBody(b *testing.B) {
	json := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}`
	for _, bc := range []struct {
		name, body string
		bounded    bool
	}{{"plain", json, false}, {"json", json, true}, {"event", "event: message\ndata: " + json + "\n\n", true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			buf := make([]byte, 32<<10)
			for b.Loop() {
				var r io.Reader = struct{ io.Reader }{strings.NewReader(bc.body)} // read, not WriteTo
				if bc.bounded {
					r = &answerBody{ReadCloser: io.NopCloser(r), limit: DefaultMaxBackendResponse,
						frame: eventFrame{maxLine: DefaultMaxBackendResponse, maxEvent: DefaultMaxBackendResponse}}
				}
				if _, err := io.CopyBuffer(io.Discard, r, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
