package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/boundedfetch"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// kidRefetchInterval is how often at most a token signed with a key the
// cached set lacks makes the set be read again: a key rotation is picked up
// within a minute, and tokens with made-up kids cannot drive traffic to the
// authorization server.
const kidRefetchInterval = time.Minute

// failureRetryInterval is how long a failed fetch answers for the fetches
// after it: while the authorization server is down, tokens are refused at
// once instead of each request asking it again.
const failureRetryInterval = 2 * time.Second

// keySource holds one issuer's signing keys (or those of a configured
// jwks_url, which every issuer then shares). Keys and the issuer's metadata
// are fetched on first use and kept for ttl. At most one fetch runs at a
// time; callers wait for it, bounded by their context and the fetch's own
// time limit.
type keySource struct {
	issuer  string // whose metadata names the JWKS; "" when jwksURL is fixed
	jwksURL string // the configured jwks_url, or ""
	ttl     time.Duration
	client  *boundedfetch.Client
	now     func() time.Time

	mu        sync.Mutex
	set       jwk.Set
	keysAt    time.Time // when set was read
	attemptAt time.Time // when the last fetch of keys began
	metaJWKS  string    // jwks_uri from the metadata
	metaAt    time.Time
	inflight  *keyFetch
	failed    error     // the last fetch's error, until one succeeds
	failedAt  time.Time // when it ended
}

// keyFetch is one fetch in progress; done closes when set and err are final.
type keyFetch struct {
	done chan struct{}
	set  jwk.Set
	err  error
}

// keys returns the key set to check a token signed with kid ("" when the
// token names none). A fresh set that holds kid is returned at once; an
// unknown kid reads the set again unless that happened within
// kidRefetchInterval.
func (s *keySource) keys(ctx context.Context, kid string) (jwk.Set, error) {
	s.mu.Lock()
	now := s.now()
	if s.set != nil && now.Sub(s.keysAt) < s.ttl {
		_, known := s.set.LookupKeyID(kid)
		if kid == "" || known || now.Sub(s.attemptAt) < kidRefetchInterval {
			set := s.set
			s.mu.Unlock()
			return set, nil
		}
	}
	call := s.inflight
	if call == nil && s.failed != nil && now.Sub(s.failedAt) < failureRetryInterval {
		err := s.failed
		s.mu.Unlock()
		return nil, err
	}
	if call == nil {
		call = &keyFetch{done: make(chan struct{})}
		s.inflight = call
		s.attemptAt = now
		go s.refresh(call)
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		return call.set, call.err
	case <-ctx.Done():
		return nil, unavailable("checking the token was cancelled", ctx.Err())
	}
}

// refresh reads the metadata (when stale) and the key set. It runs apart
// from any one caller, so a caller that gives up does not spoil the fetch
// for the others; its own deadline ends it.
func (s *keySource) refresh(call *keyFetch) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*fetchTimeout)
	defer cancel()
	set, err := s.fetch(ctx)

	s.mu.Lock()
	if err == nil {
		s.set, s.keysAt, s.failed = set, s.now(), nil
	} else {
		s.failed, s.failedAt = err, s.now()
	}
	s.inflight = nil
	s.mu.Unlock()

	call.set, call.err = set, err
	close(call.done)
}

func (s *keySource) fetch(ctx context.Context) (jwk.Set, error) {
	location, err := s.jwksLocation(ctx)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := getJSON(ctx, s.client, location, &raw); err != nil {
		return nil, unavailable("the authorization server's keys could not be read", err)
	}
	set, err := parseKeySet(raw)
	if err != nil {
		return nil, unavailable("the authorization server's keys are unusable", fmt.Errorf("%s: %w", location, err))
	}
	return set, nil
}

// parseKeySet reads a JWKS and keeps only public keys. A set that offers a
// symmetric key is refused whole: such a key is a shared secret published
// to everyone, and nothing it signs proves anything.
func parseKeySet(raw []byte) (jwk.Set, error) {
	set, err := jwk.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a JWKS: %w", err)
	}
	for i := range set.Len() {
		key, _ := set.Key(i)
		if key.KeyType() == jwa.OctetSeq() {
			return nil, errors.New("the key set holds a symmetric (oct) key")
		}
	}
	return jwk.PublicSetOf(set)
}

// jwksLocation is the configured jwks_url, or the jwks_uri of the issuer's
// metadata, which is read when missing or older than ttl.
func (s *keySource) jwksLocation(ctx context.Context) (string, error) {
	if s.jwksURL != "" {
		return s.jwksURL, nil
	}
	s.mu.Lock()
	cached, at := s.metaJWKS, s.metaAt
	s.mu.Unlock()
	if cached != "" && s.now().Sub(at) < s.ttl {
		return cached, nil
	}
	location, err := discoverJWKS(ctx, s.client, s.issuer)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.metaJWKS, s.metaAt = location, s.now()
	s.mu.Unlock()
	return location, nil
}

// serverMetadata is the part of RFC 8414 (or OpenID Connect discovery)
// metadata this package reads.
type serverMetadata struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// discoverJWKS reads the issuer's metadata from the well-known locations,
// RFC 8414 first, then OpenID Connect discovery, and returns its jwks_uri.
// A location that answers with an error status or no usable document
// passes to the next; an unreachable server ends the search, since the
// next location is on the same server.
func discoverJWKS(ctx context.Context, client *boundedfetch.Client, issuer string) (string, error) {
	var failures []error
	for _, location := range metadataLocations(issuer) {
		var meta serverMetadata
		err := getJSON(ctx, client, location, &meta)
		var transport *url.Error
		if errors.As(err, &transport) {
			return "", unavailable("the authorization server is unreachable", err)
		}
		if err != nil {
			failures = append(failures, err)
			continue
		}
		if meta.Issuer != issuer {
			// RFC 8414 section 3.3: a document for another issuer must not be used.
			return "", unavailable("the authorization server's metadata is for another issuer",
				fmt.Errorf("%s names issuer %q, not %q", location, meta.Issuer, issuer))
		}
		if err := checkServerURL(meta.JWKSURI); err != nil {
			return "", unavailable("the authorization server's metadata has no usable jwks_uri",
				fmt.Errorf("%s: jwks_uri %q: %w", location, meta.JWKSURI, err))
		}
		return meta.JWKSURI, nil
	}
	return "", unavailable("the authorization server publishes no metadata", errors.Join(failures...))
}

// metadataLocations are the URLs where an issuer's metadata may be, in the
// order the MCP authorization specification tries them: RFC 8414 with the
// issuer's path after the well-known part, then OpenID Connect discovery
// the same way, then OpenID Connect discovery appended to the issuer.
func metadataLocations(issuer string) []string {
	u, _ := url.Parse(issuer)
	origin := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + path,
		origin + "/.well-known/openid-configuration" + path,
		origin + path + "/.well-known/openid-configuration",
	}
}
