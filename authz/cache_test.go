package authz

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
)

// A verified JWT is kept, by the hash of its resource and itself, until
// its exp or cache_ttl, whichever is first; a refused one is not kept, and
// a kept one is not taken for another resource.
func TestVerifiedTokenCache(t *testing.T) {
	as := newAuthServer(t, oauthMetadata)
	v, clock := newTestVerifier(t, Config{Issuers: []string{as.issuer}, Resource: testResource, CacheTTL: 5 * time.Minute})
	ctx := context.Background()
	now := clock.Now()

	short := sign(t, as.rsa, jwa.RS256(), claims(as, now, map[string]any{"exp": now.Add(time.Minute)}))
	long := sign(t, as.ec, jwa.ES256(), claims(as, now, map[string]any{"exp": now.Add(time.Hour)}))
	for _, token := range []string{short, long} {
		if _, err := v.Verify(ctx, token); err != nil {
			t.Fatal(err)
		}
	}
	if got := v.verified.len(); got != 2 {
		t.Fatalf("%d verified tokens kept, want 2", got)
	}
	if _, err := v.VerifyFor(ctx, long, "https://other.example.com/mcp"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("a token kept for one resource, checked for another: %v, want ErrInvalidToken", err)
	}
	if _, err := v.Verify(ctx, "not-a-jwt"); err == nil || v.verified.len() != 2 {
		t.Fatalf("a refused token: %v, %d kept", err, v.verified.len())
	}

	// Past exp and the leeway, the short token is refused, not answered
	// from the cache.
	clock.advance(time.Minute + leeway + time.Second)
	if _, err := v.Verify(ctx, short); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("an expired token: %v, want ErrInvalidToken", err)
	}

	// Past cache_ttl, the long token is checked again: with its key gone
	// from the issuer's set, it is refused.
	as.setKeys(t, as.rsa)
	if _, err := v.Verify(ctx, long); err != nil {
		t.Fatalf("within cache_ttl: %v", err)
	}
	clock.advance(3 * time.Minute)
	if _, err := v.Verify(ctx, long); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("past cache_ttl, signed by a key no longer published: %v, want ErrInvalidToken", err)
	}
}
