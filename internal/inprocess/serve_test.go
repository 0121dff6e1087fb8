package inprocess

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

var loopback = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}

func localGet(t *testing.T, h http.Handler, stopped context.Context, method, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1:8080/mcp?x=1", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer t")
	resp, err := Serve(h, loopback, stopped, req, zap.NewNop())
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return resp
}

// The server's request is what net/http would have read off a loopback
// connection, and carries nothing of the caller's context but its end.
func TestServeLocalRequest(t *testing.T) {
	type key struct{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		for _, bad := range []bool{r.URL.Host != "", r.Host != "127.0.0.1:8080", r.RequestURI != "/mcp?x=1",
			r.RemoteAddr != "127.0.0.1:0", r.Header.Get("Authorization") != "Bearer t", r.ContentLength != 4,
			string(body) != "ping", local == nil || local.String() != "127.0.0.1:8080", r.Context().Value(key{}) != nil} {
			if bad {
				t.Errorf("server request %+v, body %q, local %v", r, body, local)
				break
			}
		}
		w.Header().Set("X-Before", "1")
		w.WriteHeader(http.StatusAccepted)
		w.Header().Set("X-After", "1") // too late, as over the network
		_, _ = io.WriteString(w, "pong")
	})
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), key{}, "caller's"),
		http.MethodPost, "http://127.0.0.1:8080/mcp?x=1", strings.NewReader("ping"))
	req.Header.Set("Authorization", "Bearer t")
	resp, err := Serve(h, loopback, context.Background(), req, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 202 || string(body) != "pong" || resp.ContentLength != 4 ||
		resp.Header.Get("X-Before") != "1" || resp.Header.Get("X-After") != "" || resp.Header.Get("Content-Type") == "" {
		t.Fatalf("answer %d %v %d %q", resp.StatusCode, resp.Header, resp.ContentLength, body)
	}
}

// An event stream reaches the client event by event, and closing the
// body ends the handler's request.
func TestServeLocalStreams(t *testing.T) {
	next, ended := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next
		_, _ = io.WriteString(w, "data: two\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(ended)
	})
	resp := localGet(t, h, context.Background(), http.MethodGet, "")
	rd := bufio.NewReader(resp.Body)
	if line, _ := rd.ReadString('\n'); line != "data: one\n" {
		t.Fatalf("first line %q", line)
	}
	close(next)
	_, _ = rd.ReadString('\n')
	if line, _ := rd.ReadString('\n'); line != "data: two\n" {
		t.Fatalf("second event %q", line)
	}
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the body did not end the handler's request")
	}
}

// A large answer written without a flush is read while it is written,
// in order.
func TestServeLocalLargeAnswer(t *testing.T) {
	chunk := strings.Repeat("x", 1000) + "\n"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 300; i++ {
			_, _ = io.WriteString(w, chunk)
		}
	})
	resp := localGet(t, h, context.Background(), http.MethodPost, "")
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != strings.Repeat(chunk, 300) || resp.ContentLength != -1 {
		t.Fatalf("%d bytes, length %d, err %v", len(body), resp.ContentLength, err)
	}
}

// When the config of the server stops, an event stream (a GET) ends, as
// the server's shutdown ends it, and a POST runs to its end.
func TestServeLocalConfigStop(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		stopped, stop := context.WithCancel(context.Background())
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				_, _ = io.WriteString(w, "ended")
			case <-release:
				_, _ = io.WriteString(w, "finished")
			}
		})
		resp := localGet(t, h, stopped, method, "")
		stop()
		if method == http.MethodPost {
			time.Sleep(50 * time.Millisecond)
			close(release)
		}
		body, _ := io.ReadAll(resp.Body)
		want := map[string]string{http.MethodGet: "ended", http.MethodPost: "finished"}[method]
		if string(body) != want {
			t.Errorf("%s: %q, want %q", method, body, want)
		}
	}
}

// A handler that panics gives the client an error, as a broken
// connection does; the process goes on.
func TestServeLocalPanic(t *testing.T) {
	for _, flushed := range []bool{false, true} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "partial")
			if flushed {
				w.(http.Flusher).Flush()
			}
			panic(http.ErrAbortHandler)
		})
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
		resp, err := Serve(h, loopback, context.Background(), req, zap.NewNop())
		if !flushed {
			if !errors.Is(err, http.ErrAbortHandler) {
				t.Errorf("unflushed: err %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); !errors.Is(err, http.ErrAbortHandler) {
			t.Errorf("flushed: read error %v", err)
		}
	}
}

// Another panic is a broken answer, as over the network: what the
// handler panicked with stays out of the error, which the sandbox reads.
func TestServeLocalPanicValue(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("secret-value") })
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	_, err := Serve(h, loopback, context.Background(), req, zap.NewNop())
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "secret-value") {
		t.Fatalf("err %v", err)
	}
}

// A caller that cancels while an answer streams reads the cancellation,
// not a clean end, even from a handler that ignores its context.
func TestServeLocalCancelCutsStream(t *testing.T) {
	// The handler writes again a second after the first byte; before the
	// cut, the reader then got "ab" and a clean end.
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("a"))
		w.(http.Flusher).Flush()
		<-release
		_, _ = w.Write([]byte("b"))
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:8080/mcp", nil)
	resp, err := Serve(h, loopback, context.Background(), req, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "a" {
		t.Fatalf("first byte %q, %v", first, err)
	}
	cancel()
	time.AfterFunc(time.Second, func() { close(release) })
	if rest, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %q, %v", rest, err)
	}
}

// An answer without a body drops what the handler writes, whether it
// flushed or not, and the handler never waits for a reader.
func TestServeLocalBodilessNeverBlocks(t *testing.T) {
	for _, tc := range []struct {
		method string
		status int
	}{{http.MethodHead, http.StatusOK}, {http.MethodGet, http.StatusNoContent}} {
		returned := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(returned)
			w.WriteHeader(tc.status)
			w.(http.Flusher).Flush()
			_, _ = w.Write(bytes.Repeat([]byte("x"), 2*localBuffer))
		})
		req, _ := http.NewRequest(tc.method, "http://127.0.0.1:8080/mcp", nil)
		resp, err := Serve(h, loopback, context.Background(), req, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s %d: the handler is still writing", tc.method, tc.status)
		}
		if b, _ := io.ReadAll(resp.Body); resp.StatusCode != tc.status || len(b) != 0 {
			t.Fatalf("%s: %d, %d bytes", tc.method, resp.StatusCode, len(b))
		}
	}
}

// A caller that gives up before the answer gets its context's error.
func TestServeLocalCallerGivesUp(t *testing.T) {
	done := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(done)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	if _, err := Serve(h, loopback, context.Background(), req, zap.NewNop()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's request did not end with the caller's")
	}
}

// A handler that streams after its caller gave up does not block on a
// reader that is gone.
func TestServeLocalStreamAfterCallerGaveUp(t *testing.T) {
	wrote := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		w.(http.Flusher).Flush()
		_, err := io.WriteString(w, "data: late\n\n")
		wrote <- err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:8080/mcp", nil)
	if _, err := Serve(h, loopback, context.Background(), req, zap.NewNop()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	select {
	case err := <-wrote:
		if err == nil {
			t.Error("a write to nobody succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's write blocked")
	}
}

// BenchmarkLocalTransportOverhead is what the way a request goes costs,
// with a handler that does nothing: in process (Serve) and over a
// loopback connection (net/http's transport and server).
func BenchmarkLocalTransportOverhead(b *testing.B) {
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}]}}`)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get","arguments":{"id":"a1"}}}`
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	network := &http.Transport{MaxIdleConnsPerHost: 4}
	defer network.CloseIdleConnections()
	for _, way := range []struct {
		name string
		rt   func(*http.Request) (*http.Response, error)
	}{
		{"http", network.RoundTrip},
		{"in_process", func(req *http.Request) (*http.Response, error) {
			return Serve(h, loopback, context.Background(), req, zap.NewNop())
		}},
	} {
		b.Run(way.name, func(b *testing.B) {
			b.ReportAllocs()
			url := "http://" + ln.Addr().String() + "/mcp"
			for i := 0; i < b.N; i++ {
				req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := way.rt(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
