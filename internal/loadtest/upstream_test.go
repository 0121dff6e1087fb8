//go:build linux

package loadtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// restAPI is the REST upstream every test's tools call: a small shop API
// served from this process on 127.0.0.1.
type restAPI struct {
	srv      *httptest.Server
	requests atomic.Int64
}

// The answers the tests look for in tool results.
const (
	customerName = "Ada Lovelace"
	stockMarker  = "in_stock"
)

func startREST(t *testing.T) *restAPI {
	t.Helper()
	api := &restAPI{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"customer_id":"cus_7","status":"shipped","total":42.5,"currency":"EUR"}`, r.PathValue("id"))
	})
	mux.HandleFunc("GET /customers/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%q,"name":%q,"city":"London"}`, r.PathValue("id"), customerName)
	})
	mux.HandleFunc("GET /stock/{sku}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"sku":%q,%q:true}`, r.PathValue("sku"), stockMarker)
	})
	// /slow?ms=N answers after N milliseconds (at most 5 s).
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(time.Duration(min(ms, 5000)) * time.Millisecond):
		case <-r.Context().Done():
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"slept_ms":%d}`, ms)
	})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	api.srv = srv
	return api
}

// addr is the upstream's host:port.
func (a *restAPI) addr() string { return a.srv.Listener.Addr().String() }

// closeConnections closes every connection Caddy has open to the
// upstream, once a load run is over, so that Caddy's goroutines can be
// compared with the start: its transports keep idle connections for a
// minute or more, and some they dialed but never used. Timeouts on this
// server would do it too, but would race with Caddy reusing a connection
// when this process is starved of CPU (as under -race on a busy machine).
func (a *restAPI) closeConnections() { a.srv.CloseClientConnections() }
