package authz

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
)

func TestDiscovery(t *testing.T) {
	tests := []struct {
		style    string
		jwksURL  bool
		metadata []string // the paths asked, in order
	}{
		{oauthMetadata, false, []string{"/.well-known/oauth-authorization-server/tenant"}},
		{oidcInserted, false, []string{"/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant"}},
		{oidcAppended, false, []string{"/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant", "/tenant/.well-known/openid-configuration"}},
		{noMetadata, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.style, func(t *testing.T) {
			as := newAuthServer(t, tt.style)
			config := Config{Issuers: []string{as.issuer}, Resource: testResource}
			if tt.jwksURL {
				config.JWKSURL = as.URL + "/jwks"
			}
			v, clock := newTestVerifier(t, config)
			if _, err := v.Verify(context.Background(), sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil))); err != nil {
				t.Fatal(err)
			}
			as.mu.Lock()
			defer as.mu.Unlock()
			for _, path := range tt.metadata {
				if as.hits[path] != 1 {
					t.Errorf("%s asked %d times, want once", path, as.hits[path])
				}
			}
			if want := len(tt.metadata) + 1; len(as.hits) != want || as.hits["/jwks"] != 1 {
				t.Errorf("hits %v, want the metadata paths and /jwks once each", as.hits)
			}
		})
	}
}

func TestMetadataLocations(t *testing.T) {
	tests := []struct {
		issuer string
		want   []string
	}{
		{"https://as.example.com", []string{"https://as.example.com/.well-known/oauth-authorization-server", "https://as.example.com/.well-known/openid-configuration"}},
		{"https://as.example.com/", []string{"https://as.example.com/.well-known/oauth-authorization-server", "https://as.example.com/.well-known/openid-configuration"}},
		{"https://as.example.com/realms/a b", []string{
			"https://as.example.com/.well-known/oauth-authorization-server/realms/a%20b",
			"https://as.example.com/.well-known/openid-configuration/realms/a%20b",
			"https://as.example.com/realms/a%20b/.well-known/openid-configuration",
		}},
	}
	for _, tt := range tests {
		if got := metadataLocations(tt.issuer); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("metadataLocations(%q) = %q, want %q", tt.issuer, got, tt.want)
		}
	}
}

func TestKeyCache(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource, CacheTTL: 10 * time.Minute})
	verify := func(t *testing.T, token string) error {
		t.Helper()
		_, err := v.Verify(context.Background(), token)
		return err
	}
	for range 5 {
		if err := verify(t, sign(t, as.ec, jwa.ES256(), claims(as, clock.Now(), nil))); err != nil {
			t.Fatal(err)
		}
	}
	if got := as.count("/jwks"); got != 1 {
		t.Fatalf("five tokens read the keys %d times, want once", got)
	}

	// The server rotates to a new key: a token with its kid is refused
	// until a minute has passed since the last read, then accepted.
	rotated := privateKey(t, mustRSA(t), "rsa-2")
	as.setKeys(t, as.rsa, as.ec, rotated)
	clock.advance(10 * time.Second)
	if err := verify(t, sign(t, rotated, jwa.RS256(), claims(as, clock.Now(), nil))); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("new kid within a minute: %v, want a refusal", err)
	}
	if got := as.count("/jwks"); got != 1 {
		t.Fatalf("unknown kid within a minute read the keys again (%d reads)", got)
	}
	clock.advance(51 * time.Second)
	if err := verify(t, sign(t, rotated, jwa.RS256(), claims(as, clock.Now(), nil))); err != nil {
		t.Fatalf("new kid after a minute: %v", err)
	}
	if got := as.count("/jwks"); got != 2 {
		t.Fatalf("keys read %d times, want 2", got)
	}

	// Made-up kids cannot drive traffic: one read a minute at most.
	for i := range 20 {
		clock.advance(time.Second)
		bogus := privateKey(t, mustEC(t), "made-up")
		if err := verify(t, sign(t, bogus, jwa.ES256(), claims(as, clock.Now(), nil))); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("made-up kid %d: %v", i, err)
		}
	}
	if got := as.count("/jwks"); got != 2 {
		t.Fatalf("twenty made-up kids over 20 s read the keys %d times, want no new read", got-2)
	}

	// After cache_ttl, both metadata and keys are read again.
	clock.advance(10 * time.Minute)
	if err := verify(t, sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil))); err != nil {
		t.Fatal(err)
	}
	if got, meta := as.count("/jwks"), as.count("/.well-known/oauth-authorization-server/tenant"); got != 3 || meta != 2 {
		t.Fatalf("after cache_ttl: keys read %d times (want 3), metadata %d (want 2)", got, meta)
	}
}

func TestKeysConcurrentFirstUse(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource})
	token := sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := v.Verify(context.Background(), token); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := as.count("/jwks"); got != 1 {
		t.Fatalf("20 concurrent first tokens read the keys %d times, want once", got)
	}
}

// While the authorization server is down, a failed fetch answers for the
// next two seconds: requests are refused at once, and the server is not
// asked again by each of them. Once it is back, the next fetch after that
// succeeds.
func TestKeysFailureBacksOff(t *testing.T) {
	as := newAuthServer(t, noMetadata)
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource})
	metadata := "/.well-known/oauth-authorization-server/tenant"
	for range 5 {
		token := sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil))
		if _, err := v.Verify(context.Background(), token); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("server without metadata: %v, want ErrUnavailable", err)
		}
	}
	if got := as.count(metadata); got != 1 {
		t.Fatalf("five tokens within two seconds asked for the metadata %d times, want once", got)
	}
	as.mu.Lock()
	as.style = oauthMetadata
	as.mu.Unlock()
	clock.advance(failureRetryInterval)
	token := sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil))
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("server back: %v", err)
	}
	if got := as.count(metadata); got != 2 {
		t.Fatalf("metadata asked %d times, want 2", got)
	}
}

// TestUnusableAuthorizationServer: whatever goes wrong with the server,
// the token is refused as ErrUnavailable, soon, with a reason.
func TestUnusableAuthorizationServer(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(t *testing.T, as *authServer) Config
		ctx    time.Duration // caller's deadline; 0 for none
		reason string
		within time.Duration
		detail string // in the error for the log
	}{
		{"down", func(t *testing.T, as *authServer) Config {
			as.Close()
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "unreachable", time.Second, "connection refused"},
		{"metadata for another issuer", func(t *testing.T, as *authServer) Config {
			as.metaIss = "https://evil.example"
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "another issuer", time.Second, "evil.example"},
		{"no metadata anywhere", func(t *testing.T, as *authServer) Config {
			as.style = noMetadata
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "no metadata", time.Second, "status 404"},
		{"jwks larger than the limit", func(t *testing.T, as *authServer) Config {
			as.setJWKS([]byte(`{"keys":[],"padding":"` + strings.Repeat("x", maxDocument) + `"}`))
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "keys could not be read", time.Second, "larger than"},
		{"jwks offering a symmetric key", func(t *testing.T, as *authServer) Config {
			as.setJWKS([]byte(`{"keys":[{"kty":"oct","kid":"rsa-1","k":"c2VjcmV0"}]}`))
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "unusable", time.Second, "symmetric"},
		{"jwks not json", func(t *testing.T, as *authServer) Config {
			as.setJWKS([]byte(`<html>`))
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "keys could not be read", time.Second, "not a JSON"},
		{"jwks hangs, caller gives up", func(t *testing.T, as *authServer) Config {
			as.hangJWKS = true
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 200 * time.Millisecond, "cancelled", 2 * time.Second, "deadline exceeded"}, // ten times the caller's deadline, under fetchTimeout
		{"jwks hangs", func(t *testing.T, as *authServer) Config {
			as.hangJWKS = true
			return Config{Issuers: []string{as.issuer}, Resource: testResource}
		}, 0, "keys could not be read", fetchTimeout + 2*time.Second, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t, oauthMetadata)
			token := sign(t, as.rsa, jwa.RS256(), claims(as, time.Now(), nil))
			v, _ := newTestVerifier(t, tt.setup(t, as))
			ctx := context.Background()
			if tt.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctx)
				defer cancel()
			}
			start := time.Now()
			id, err := v.Verify(ctx, token)
			elapsed := time.Since(start)
			var refusal *Error
			if !errors.Is(err, ErrUnavailable) || !errors.As(err, &refusal) {
				t.Fatalf("got %+v, %v; want ErrUnavailable", id, err)
			}
			if !strings.Contains(refusal.Reason, tt.reason) {
				t.Fatalf("reason %q, want it to say %q (error %v)", refusal.Reason, tt.reason, err)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Fatalf("error %q, want it to say %q", err, tt.detail)
			}
			if elapsed > tt.within {
				t.Fatalf("took %s, want at most %s", elapsed, tt.within)
			}
		})
	}
}

// TestRedirectToClearText: a metadata location may not send the fetch to a
// clear-text URL off the machine.
func TestRedirectToClearText(t *testing.T) {
	as := newAuthServer(t, noMetadata)
	redirector := httptest.NewServer(http.RedirectHandler("http://keys.example.com/jwks", http.StatusFound))
	defer redirector.Close()
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource, JWKSURL: redirector.URL})
	_, err := v.Verify(context.Background(), sign(t, as.rsa, jwa.RS256(), claims(as, clock.Now(), nil)))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "must be https://") {
		t.Fatalf("error %v, want the redirect refused", err)
	}
}
