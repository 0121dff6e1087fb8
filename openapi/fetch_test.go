package openapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFetch(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch r.URL.Path {
		case "/openapi.json":
			w.Write([]byte(minimal("")))
		case "/moved":
			http.Redirect(w, r, "/openapi.json", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, path := range []string{"/openapi.json", "/moved"} {
		requests.Store(0)
		data, err := Fetch(t.Context(), srv.URL+path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := Load(data); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if path == "/openapi.json" && requests.Load() != 1 {
			t.Errorf("%s: %d requests, want 1", path, requests.Load())
		}
	}
}

func TestFetchRefuses(t *testing.T) {
	var handler atomic.Value // http.HandlerFunc
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.Load().(http.HandlerFunc)(w, r)
	}))
	defer srv.Close()
	stop := make(chan struct{})
	defer close(stop)

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/openapi.json"
	l.Close()

	tests := []struct {
		name    string
		url     string
		handler http.HandlerFunc
		want    string
	}{
		{"a server that is down", down, nil, "connection refused"},
		{"a 500", srv.URL + "/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "the server answered 500 Internal Server Error"},
		{"a 404", srv.URL + "/openapi.json", http.NotFound, "the server answered 404 Not Found"},
		{"a slow server", srv.URL + "/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}, "no whole answer within 300ms"},
		{"a slow body", srv.URL + "/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"openapi":`))
			w.(http.Flusher).Flush()
			select {
			case <-stop:
			case <-r.Context().Done():
			}
		}, "no whole answer within 300ms"},
		{"20 MB declared", srv.URL + "/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			body := minimal(`"x-padding":"` + strings.Repeat("a", 20<<20) + `",`)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write([]byte(body))
		}, "more than the 16777216 allowed"},
		{"20 MB chunked", srv.URL + "/openapi.json", func(w http.ResponseWriter, r *http.Request) {
			chunk := []byte(strings.Repeat("a", 1<<20))
			for range 20 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}, "more than the 16777216 bytes allowed"},
		{"a redirect loop", srv.URL + "/loop", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/loop", http.StatusFound)
		}, "more than 5 redirects"},
		{"a redirect off loopback over http", srv.URL + "/away", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.com/openapi.json", http.StatusFound)
		}, "redirected to http://example.com/openapi.json: http is allowed only to a loopback host"},
		{"a redirect to a file", srv.URL + "/away", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}, `scheme "file"`},
		{"http off loopback", "http://example.com/openapi.json", nil, "http is allowed only to a loopback host"},
		{"a file URL", "file:///etc/passwd", nil, `scheme "file": want https`},
		{"credentials in the URL", "https://user:secret@example.com/openapi.json", nil, "credentials in the url are not sent"},
		{"not a URL", "http://[::1", nil, "not a valid URL"},
	}
	// The slow servers are cut off at 300ms; the rest get the whole
	// timeout, so that 20 MB on a loaded machine is refused for its size.
	const quick = 300 * time.Millisecond
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.handler != nil {
				handler.Store(tt.handler)
			}
			timeout := FetchTimeout
			if strings.Contains(tt.want, "no whole answer") {
				timeout = quick
			}
			start := time.Now()
			_, err := fetch(context.Background(), tt.url, timeout)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the password: %v", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

func TestFetchErrorHidesQuery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	_, err := Fetch(t.Context(), srv.URL+"/openapi.json?access_token=s3cr3t")
	if err == nil || strings.Contains(err.Error(), "s3cr3t") || !strings.Contains(err.Error(), "/openapi.json") {
		t.Errorf("error %v: want one naming the path without the query", err)
	}
}
