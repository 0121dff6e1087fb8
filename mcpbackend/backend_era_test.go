package mcpbackend

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/gosdktest"
)

// callEra calls the era tool of an era server through b and checks that
// the era that answered is want.
func callEra(t *testing.T, b *Backend, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ans, err := b.Call(ctx, "era", json.RawMessage(`{"text":"hi"}`))
	got := ans.Value
	if err != nil {
		t.Fatalf("calling era (%s): %v", want, err)
	}
	var out gosdktest.EraOutput
	if err := json.Unmarshal(got, &out); err != nil || out != (gosdktest.EraOutput{Era: want, Text: "hi"}) {
		t.Fatalf("era answered %s (%v), want the era %s and the text back", got, err, want)
	}
	if p := b.Protocol(); p != want {
		t.Fatalf("the backend spoke %s, want %s", p, want)
	}
}

// wantCounts checks what an era server received, by method.
func wantCounts(t *testing.T, what string, c *gosdktest.Counts, want map[string]int) {
	t.Helper()
	for method, n := range want {
		if got := c.Get(method); got != n {
			t.Errorf("%s: %d %s requests, want %d", what, got, method, n)
		}
	}
}

// TestBackendOfEachEra: a backend that speaks only 2026-07-28 is learned
// with server/discover alone, never sent initialize; one that speaks only
// 2025-11-25 is probed once, then initialized. Both serve calls, and
// their instructions come through.
func TestBackendOfEachEra(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		era          string
		handler      func(*gosdktest.Counts) http.Handler
		counts       map[string]int
		instructions string
	}{
		{gosdktest.Modern, gosdktest.ModernOnly, map[string]int{"server/discover": 1, "initialize": 0}, "A server of 2026-07-28 alone."},
		{gosdktest.Legacy, gosdktest.LegacyOnly, map[string]int{"server/discover": 1, "initialize": 1}, "A server of 2025-11-25."},
	} {
		t.Run(tc.era, func(t *testing.T) {
			var counts gosdktest.Counts
			srv := gosdktest.StartSwitchable(t, tc.handler(&counts))
			b := connectedBackend(t, Config{Name: "era", URL: srv.URL})
			callEra(t, b, tc.era)
			callEra(t, b, tc.era)
			wantCounts(t, tc.era, &counts, tc.counts)
			wantCounts(t, tc.era, &counts, map[string]int{"tools/call": 2, "tools/list": 1})
			if got := b.Instructions(); got != tc.instructions {
				t.Errorf("instructions %q, want %q", got, tc.instructions)
			}
		})
	}
}

// TestBackendFallsBackOnLegacyAnswers: each answer a server predating
// 2026-07-28 gives to server/discover (the spec: any error that does not
// come from a server of 2026-07-28) leads to the initialize handshake.
func TestBackendFallsBackOnLegacyAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"method not found", http.StatusOK, ""},
		{"no session", http.StatusBadRequest, "Bad Request: Mcp-Session-Id header is required\n"},
		{"not found", http.StatusNotFound, "404 page not found\n"},
		{"method not allowed", http.StatusMethodNotAllowed, ""},
		{"invalid request", http.StatusOK, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
		{"only old versions", http.StatusBadRequest, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25","2025-06-18"]}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counts gosdktest.Counts
			body := tc.body
			if tc.name == "method not allowed" {
				body = "Method Not Allowed\n"
			}
			srv := gosdktest.StartSwitchable(t, gosdktest.LegacyAnswering(&counts, tc.status, body))
			b := connectedBackend(t, Config{Name: "era", URL: srv.URL})
			callEra(t, b, gosdktest.Legacy)
			wantCounts(t, tc.name, &counts, map[string]int{"server/discover": 1, "initialize": 1})
		})
	}
}

// TestBackendRemembersEra: a backend of 2025-11-25 that restarts (it
// forgets its sessions) is initialized again directly, without a second
// server/discover; one of 2026-07-28 needs no new connection at all.
func TestBackendRemembersEra(t *testing.T) {
	t.Parallel()
	var first, second gosdktest.Counts
	srv := gosdktest.StartSwitchable(t, gosdktest.LegacyOnly(&first))
	b := connectedBackend(t, Config{Name: "era", URL: srv.URL})
	callEra(t, b, gosdktest.Legacy)
	srv.Switch(gosdktest.LegacyOnly(&second))
	callEra(t, b, gosdktest.Legacy)
	wantCounts(t, "the restarted server", &second, map[string]int{"server/discover": 0, "initialize": 1, "tools/call": 2})

	var modern, again gosdktest.Counts
	srv = gosdktest.StartSwitchable(t, gosdktest.ModernOnly(&modern))
	b = connectedBackend(t, Config{Name: "era", URL: srv.URL})
	callEra(t, b, gosdktest.Modern)
	srv.Switch(gosdktest.ModernOnly(&again))
	callEra(t, b, gosdktest.Modern)
	callEra(t, b, gosdktest.Modern)
	wantCounts(t, "the restarted server", &again, map[string]int{"server/discover": 0, "initialize": 0, "tools/call": 2})
}

// TestBackendRelearnsEra: the same URL restarts with a server of the other
// era, twice; the call made after each restart reaches the new server,
// which runs it once, and the backend speaks the new era from then on.
func TestBackendRelearnsEra(t *testing.T) {
	t.Parallel()
	var legacy gosdktest.Counts
	srv := gosdktest.StartSwitchable(t, gosdktest.LegacyOnly(&legacy))
	b := connectedBackend(t, Config{Name: "era", URL: srv.URL})
	callEra(t, b, gosdktest.Legacy)

	var modern gosdktest.Counts
	srv.Switch(gosdktest.ModernOnly(&modern))
	callEra(t, b, gosdktest.Modern)
	callEra(t, b, gosdktest.Modern)
	// The old session's call was refused for its version, so the backend
	// forgot the era and found the new one with server/discover.
	wantCounts(t, "2026-07-28 after 2025-11-25", &modern, map[string]int{"server/discover": 1, "initialize": 0, "tools/call": 3})

	var back gosdktest.Counts
	srv.Switch(gosdktest.LegacyOnly(&back))
	callEra(t, b, gosdktest.Legacy)
	callEra(t, b, gosdktest.Legacy)
	wantCounts(t, "2025-11-25 after 2026-07-28", &back, map[string]int{"server/discover": 1, "initialize": 1, "tools/call": 3})
}

// TestBackendRelearnsEraOnReconnect: a backend of 2025-11-25 replaced by
// one of 2026-07-28 while no call was made is reconnected in the era it
// spoke before; the refused handshake makes the same attempt learn the
// era again, with no call failing.
func TestBackendRelearnsEraOnReconnect(t *testing.T) {
	t.Parallel()
	var legacy, modern gosdktest.Counts
	srv := gosdktest.StartSwitchable(t, gosdktest.LegacyOnly(&legacy))
	b := connectedBackend(t, Config{Name: "era", URL: srv.URL})
	srv.Switch(gosdktest.ModernOnly(&modern))
	b.mu.Lock()
	cn := b.conn
	b.mu.Unlock()
	b.drop(cn, errors.New("the connection broke"))
	waitFor(t, "connection in the new era", func() bool { return b.Protocol() == gosdktest.Modern })
	wantCounts(t, "the new server", &modern, map[string]int{"initialize": 1, "server/discover": 1, "tools/list": 1})
	callEra(t, b, gosdktest.Modern)
	wantCounts(t, "the new server", &modern, map[string]int{"tools/call": 1})
}

// TestBackendOfSilentEra: a server of 2025-11-25 that never answers
// server/discover costs the probe's time once, half the attempt's at
// most, so that the handshake still fits in it; after a restart the
// backend goes straight to initialize and the call takes no probe's time.
func TestBackendOfSilentEra(t *testing.T) {
	t.Parallel()
	var first, second gosdktest.Counts
	srv := gosdktest.StartSwitchable(t, gosdktest.LegacyAnswering(&first, 0, ""))
	b := connectedBackend(t, Config{Name: "era", URL: srv.URL, Timeout: 2 * time.Second})
	callEra(t, b, gosdktest.Legacy)
	wantCounts(t, "the silent server", &first, map[string]int{"server/discover": 1, "initialize": 1})
	srv.Switch(gosdktest.LegacyAnswering(&second, 0, ""))
	// The call on the forgotten session is refused and goes again on a new
	// one. Under load the old server's event stream, still open, can make
	// that race lose (its ping answered to the new server ends the new
	// session's first call too): the call is then made once more, as a
	// caller would. What is under test is that no probe is sent.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.Call(ctx, "era", json.RawMessage(`{"text":"hi"}`)); err != nil {
		t.Logf("the first call after the restart: %v; calling again", err)
	}
	callEra(t, b, gosdktest.Legacy)
	if n := second.Get("server/discover"); n != 0 {
		t.Errorf("the restarted silent server: %d server/discover requests, want 0", n)
	}
	if n := second.Get("initialize"); n < 1 {
		t.Errorf("the restarted silent server: %d initialize requests, want at least 1", n)
	}
}

// TestBackendRelearnsEraOnRelist: listing the tools again, with no call,
// finds that a backend of 2026-07-28 was replaced by one of 2025-11-25
// (it refuses the version of the request) and connects in the new era.
func TestBackendRelearnsEraOnRelist(t *testing.T) {
	t.Parallel()
	var modern, legacy gosdktest.Counts
	srv := gosdktest.StartSwitchable(t, gosdktest.ModernOnly(&modern))
	b := connectedBackend(t, Config{Name: "era", URL: srv.URL})
	srv.Switch(gosdktest.LegacyOnly(&legacy))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.Relist(ctx)
	waitFor(t, "connection in the new era", func() bool { return b.Protocol() == gosdktest.Legacy })
	wantCounts(t, "the new server", &legacy, map[string]int{"server/discover": 1, "initialize": 1, "tools/call": 0})
}
