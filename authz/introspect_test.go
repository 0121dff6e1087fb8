package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
)

func introspectionConfig(as *authServer) Config {
	return Config{
		Issuers:  []string{as.issuer},
		Resource: testResource,
		Introspection: &Introspection{
			URL: as.URL + "/introspect", ClientID: introspectClient, ClientSecret: introspectSecret,
		},
	}
}

func TestIntrospection(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, introspectionConfig(as))
	now := clock.Now()
	good := func(changes map[string]any) map[string]any {
		answer := map[string]any{
			"active": true, "iss": as.issuer, "aud": testResource, "sub": "user-7",
			"scope": "tools:read", "exp": now.Add(time.Hour).Unix(), "client_id": "app",
		}
		return changed(answer, changes)
	}
	tests := []struct {
		name   string
		answer map[string]any // nil: the server does not know the token
		reason string
	}{
		{"active", good(nil), ""},
		{"audience list", good(map[string]any{"aud": []string{"https://x.example", testResource}}), ""},
		{"no iss", good(map[string]any{"iss": nil}), ""},
		{"unknown to the server", nil, "not active"},
		{"inactive", map[string]any{"active": false}, "not active"},
		{"active as a string", good(map[string]any{"active": "true"}), "not active"},
		{"foreign audience", good(map[string]any{"aud": "https://other.example/mcp"}), "not for " + testResource},
		{"no audience", good(map[string]any{"aud": nil}), "not for"},
		{"foreign issuer", good(map[string]any{"iss": "https://evil.example"}), "issuer"},
		{"expired", good(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}), "expired"},
		{"not valid yet", good(map[string]any{"nbf": now.Add(2 * time.Minute).Unix()}), "not valid yet"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := "opaque-" + string(rune('a'+i))
			if tt.answer != nil {
				as.setAnswer(token, tt.answer)
			}
			id, err := v.Verify(context.Background(), token)
			if tt.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if id.Subject != "user-7" || !slices.Equal(id.Scopes, []string{"tools:read"}) || id.Claims["client_id"] != "app" {
					t.Fatalf("identity %+v", id)
				}
				return
			}
			var refusal *Error
			if !errors.Is(err, ErrInvalidToken) || !errors.As(err, &refusal) {
				t.Fatalf("got %+v, %v; want an invalid-token refusal", id, err)
			}
			if !strings.Contains(refusal.Reason, tt.reason) {
				t.Fatalf("reason %q, want it to say %q", refusal.Reason, tt.reason)
			}
		})
	}
}

func TestIntrospectionCache(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	config := introspectionConfig(as)
	config.CacheTTL = time.Minute
	v, clock := newTestVerifier(t, config)
	as.setAnswer("live", map[string]any{"active": true, "aud": testResource, "exp": clock.Now().Add(time.Hour).Unix()})
	for _, token := range []string{"live", "live", "revoked", "revoked", "live"} {
		v.Verify(context.Background(), token)
	}
	if got := as.count("/introspect"); got != 2 {
		t.Fatalf("two tokens asked %d times, want twice", got)
	}
	// The server revokes "live"; the cached answer holds until cache_ttl.
	as.setAnswer("live", map[string]any{"active": false})
	if _, err := v.Verify(context.Background(), "live"); err != nil {
		t.Fatalf("within cache_ttl: %v", err)
	}
	clock.advance(time.Minute)
	if _, err := v.Verify(context.Background(), "live"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after cache_ttl: %v, want the revocation seen", err)
	}
	if got := as.count("/introspect"); got != 3 {
		t.Fatalf("asked %d times, want 3", got)
	}
	v.introspector.answers.mu.Lock()
	defer v.introspector.answers.mu.Unlock()
	for key := range v.introspector.answers.entries {
		if strings.Contains(string(key[:]), "live") {
			t.Fatal("the cache is keyed by the token itself")
		}
	}
}

func TestIntrospectionUnavailable(t *testing.T) {
	tests := []struct {
		name  string
		setup func(as *authServer, c *Config)
	}{
		{"wrong client secret", func(as *authServer, c *Config) { c.Introspection.ClientSecret = "wrong" }},
		{"server down", func(as *authServer, c *Config) { as.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t, oauthMetadata)
			as.setAnswer("tok", map[string]any{"active": true, "aud": testResource})
			config := introspectionConfig(as)
			tt.setup(as, &config)
			v, _ := newTestVerifier(t, config)
			_, err := v.Verify(context.Background(), "tok")
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("error %v, want ErrUnavailable", err)
			}
			if strings.Contains(err.Error(), introspectSecret) || strings.Contains(err.Error(), "tok\"") {
				t.Fatalf("the error shows a secret: %v", err)
			}
			// A failure is not cached as an answer.
			if v.introspector.answers.len() != 0 {
				t.Fatal("a failed introspection was cached")
			}
		})
	}
}

// While the introspection endpoint fails, its last failure answers for
// failureRetryInterval: tokens are refused at once, and the endpoint is
// not asked once per request; after that it is asked again.
func TestIntrospectionFailureBacksOff(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	config := introspectionConfig(as)
	config.Introspection.ClientSecret = "wrong"
	v, clock := newTestVerifier(t, config)
	for i := range 5 {
		if _, err := v.Verify(context.Background(), fmt.Sprintf("tok-%d", i)); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("token %d: %v, want ErrUnavailable", i, err)
		}
	}
	if got := as.count("/introspect"); got != 1 {
		t.Fatalf("five tokens within two seconds asked the endpoint %d times, want once", got)
	}
	clock.advance(failureRetryInterval)
	if _, err := v.Verify(context.Background(), "tok-5"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after the interval: %v, want ErrUnavailable", err)
	}
	if got := as.count("/introspect"); got != 2 {
		t.Fatalf("the endpoint was asked %d times, want 2", got)
	}
}

func TestIntrospectionCacheBound(t *testing.T) {
	clock := &fakeClock{now: time.Now()}
	in := newIntrospector(Introspection{}, nil, time.Minute, nil, clock.Now)
	for i := range maxCachedAnswers + 100 {
		in.keep([32]byte{byte(i), byte(i >> 8), byte(i >> 16)}, &introspection{})
	}
	if got := in.answers.len(); got != maxCachedAnswers {
		t.Fatalf("%d answers cached, want at most %d", got, maxCachedAnswers)
	}
	clock.advance(time.Minute)
	in.keep([32]byte{0xff, 0xff, 0xff}, &introspection{})
	if got := in.answers.len(); got != 1 {
		t.Fatalf("%d answers after all expired, want the new one only", got)
	}
}

// TestIntrospectionDecidesForJWTs: with introspect configured, even a well
// signed JWT is only what the endpoint says of it, so revocation holds.
func TestIntrospectionDecidesForJWTs(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, introspectionConfig(as))
	token := sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil))
	if _, err := v.Verify(context.Background(), token); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("revoked JWT: %v, want a refusal", err)
	}
	if as.count("/introspect") != 1 || as.count("/jwks") != 0 {
		t.Fatalf("introspect asked %d times and keys read %d times, want 1 and 0", as.count("/introspect"), as.count("/jwks"))
	}
}

// TestIntrospectionBounded: at most maxIntrospections questions are in
// flight to the endpoint; callers with one token share one question; a
// caller that leaves stops waiting at once, and a question no one waits
// for is dropped, or ended if asked, without counting as the endpoint's
// failure. 600 requests whose clients left once made 599 questions, up
// to 228 of them at once.
func TestIntrospectionBounded(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, oauthMetadata)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release) // before the server's Close, which waits for its handlers
	as.mu.Lock()
	as.gate = gate
	as.mu.Unlock()
	v, clock := newTestVerifier(t, introspectionConfig(as))
	in := v.introspector
	waiting := func() int {
		in.mu.Lock()
		defer in.mu.Unlock()
		n := 0
		for _, call := range in.inflight {
			n += call.waiters
		}
		return n
	}
	settle := func(cond func() bool, what string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s: %s", what)
			}
		}
	}

	// 600 clients with tokens of their own, then 50 with one token, all
	// waiting.
	const clients, sharing = 600, 50
	cancels := make(map[string][]context.CancelFunc)
	errs := make(chan error, clients+sharing)
	for i := range clients + sharing {
		token := fmt.Sprintf("opaque-%d", i)
		if i >= clients {
			token = "shared"
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancels[token] = append(cancels[token], cancel)
		go func() {
			_, err := v.Verify(ctx, token)
			errs <- err
		}()
	}
	settle(func() bool { return waiting() == clients+sharing }, "not every client waits")
	in.mu.Lock()
	calls := len(in.inflight)
	in.mu.Unlock()
	if calls != clients+1 {
		t.Errorf("%d questions for %d tokens", calls, clients+1)
	}
	settle(func() bool { return as.count("/introspect") == maxIntrospections }, "the endpoint is not asked maxIntrospections questions")

	// The clients whose questions wait for a slot leave first: their
	// questions are dropped, never asked. Then those whose questions are
	// in flight: these end.
	as.mu.Lock()
	held := slices.Clone(as.held)
	as.mu.Unlock()
	for token, cs := range cancels {
		if !slices.Contains(held, token) {
			for _, cancel := range cs {
				cancel()
			}
		}
	}
	settle(func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		return len(in.inflight) == maxIntrospections
	}, "questions no one waits for are still kept")
	for _, token := range held {
		for _, cancel := range cancels[token] {
			cancel()
		}
	}
	for range clients + sharing {
		if err := <-errs; !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("a client that left got %v, want a cancelled check", err)
		}
	}
	settle(func() bool {
		in.mu.Lock()
		defer in.mu.Unlock()
		return len(in.inflight) == 0
	}, "questions no one waits for are still kept")
	settle(func() bool {
		as.mu.Lock()
		defer as.mu.Unlock()
		return as.inFlight == 0
	}, "questions no one waits for are still in flight")
	as.mu.Lock()
	peak := as.peak
	as.mu.Unlock()
	if asked := as.count("/introspect"); asked != maxIntrospections || peak != maxIntrospections {
		t.Errorf("the endpoint was asked %d questions, %d at once; want %d", asked, peak, maxIntrospections)
	}

	// The questions dropped say nothing of the endpoint: the next token is
	// asked about, and admitted.
	release()
	as.setAnswer("good", map[string]any{"active": true, "iss": as.issuer, "aud": testResource, "sub": "u", "exp": clock.Now().Add(time.Hour).Unix()})
	if _, err := v.Verify(context.Background(), "good"); err != nil {
		t.Fatalf("after the clients left: %v", err)
	}
}
