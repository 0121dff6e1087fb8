package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSessionsCarryTheirTokens: with Tokens, every request of a session
// (initialize, the notification, the load requests) carries that
// session's own bearer token; without, none carries one.
func TestSessionsCarryTheirTokens(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{} // Authorization header -> requests
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.Header.Get("Authorization")]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(string(body), `"initialize"`):
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}`)
		case strings.Contains(string(body), `"notifications/initialized"`):
			w.WriteHeader(http.StatusAccepted)
		default:
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)
		}
	}))
	defer srv.Close()
	is, err := startIssuer()
	if err != nil {
		t.Fatal(err)
	}
	defer is.stop()

	const clients, calls = 2, 3
	for _, c := range []struct {
		name, protocol string
		tokens         *issuer
		perCall        int // requests per session besides the calls
	}{
		{"2025-11-25 with tokens", "2025-11-25", is, 2},
		{"2026-07-28 with tokens", "2026-07-28", is, 0},
		{"REST with tokens", "REST", is, 0},
		{"2025-11-25 without", "2025-11-25", nil, 2},
		{"2026-07-28 without", "2026-07-28", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			clear(seen)
			ss, err := sessions(Target{URL: srv.URL + "/mcp", Protocol: c.protocol, Tool: "get_order", Args: `{}`, Tokens: c.tokens}, clients)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			want := map[string]int{}
			for _, s := range ss {
				for i := 0; i < calls; i++ {
					if err := s.call(ctx); err != nil {
						t.Fatal(err)
					}
				}
				s.raw.close()
				header := ""
				if c.tokens != nil {
					header = "Bearer " + s.token
				}
				want[header] += calls + c.perCall
			}
			mu.Lock()
			defer mu.Unlock()
			if len(want) != len(ss) && c.tokens != nil {
				t.Errorf("%d sessions share tokens", len(ss))
			}
			for header, n := range want {
				if seen[header] != n {
					t.Errorf("%d requests with Authorization %.20q..., want %d (all seen: %d kinds)", seen[header], header, n, len(seen))
				}
			}
			if len(seen) != len(want) {
				t.Errorf("%d kinds of Authorization header seen, want %d", len(seen), len(want))
			}
		})
	}
}
