package authz

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// DefaultCacheTTL is how long metadata, keys and introspection answers are
// kept when Config.CacheTTL is zero.
const DefaultCacheTTL = 5 * time.Minute

// Config is what an endpoint's authorization block says. Building a
// Verifier from it never touches the network: metadata and keys are
// fetched when the first token arrives.
type Config struct {
	// Issuers are the authorization servers' issuer identifiers; a token's
	// iss must be one of them. At least one is required.
	Issuers []string

	// Resource is the endpoint's canonical URI, the audience tokens must
	// carry (RFC 8707). When empty the handler derives it per request and
	// calls VerifyFor.
	Resource string

	// Scopes are advertised as scopes_supported in the resource metadata.
	Scopes []string

	// RequireScopes must all be held by every request's token.
	RequireScopes []string

	// JWKSURL, when set, is where every issuer's signing keys are read,
	// instead of the jwks_uri of the issuer's metadata.
	JWKSURL string

	// Introspection, when set, sends every token to an RFC 7662
	// introspection endpoint instead of checking it as a JWT.
	Introspection *Introspection

	// CacheTTL is how long metadata, keys and introspection answers are
	// kept. Default: 5m.
	CacheTTL time.Duration
}

// Introspection is the RFC 7662 endpoint and the credentials this resource
// server authenticates with (HTTP Basic).
type Introspection struct {
	URL          string
	ClientID     string
	ClientSecret string
}

// Validate checks the configuration without touching the network. Its
// errors name the field and value at fault, never the client secret.
func (c Config) Validate() error {
	if len(c.Issuers) == 0 {
		return errors.New("issuer: at least one is required")
	}
	seen := make(map[string]bool, len(c.Issuers))
	for _, issuer := range c.Issuers {
		if err := checkServerURL(issuer); err != nil {
			return fmt.Errorf("issuer %q: %w", issuer, err)
		}
		u, _ := url.Parse(issuer)
		if u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("issuer %q: an issuer identifier has no query or fragment (RFC 8414)", issuer)
		}
		if seen[issuer] {
			return fmt.Errorf("issuer %q: given twice", issuer)
		}
		seen[issuer] = true
	}
	if c.Resource != "" {
		if err := checkServerURL(c.Resource); err != nil {
			return fmt.Errorf("resource %q: %w", c.Resource, err)
		}
		if u, _ := url.Parse(c.Resource); u.Fragment != "" {
			return fmt.Errorf("resource %q: a resource indicator has no fragment (RFC 8707)", c.Resource)
		}
	}
	for field, scopes := range map[string][]string{"scopes": c.Scopes, "require_scopes": c.RequireScopes} {
		for _, scope := range scopes {
			if !IsScopeToken(scope) {
				return fmt.Errorf("%s: %q is not a scope token (RFC 6749 section 3.3)", field, scope)
			}
		}
	}
	if c.JWKSURL != "" {
		if err := checkServerURL(c.JWKSURL); err != nil {
			return fmt.Errorf("jwks_url %q: %w", c.JWKSURL, err)
		}
	}
	if in := c.Introspection; in != nil {
		if err := checkServerURL(in.URL); err != nil {
			return fmt.Errorf("introspect %q: %w", in.URL, err)
		}
		if in.ClientID == "" {
			return fmt.Errorf("introspect %q: client_id is required", in.URL)
		}
		if in.ClientSecret == "" {
			return fmt.Errorf("introspect %q: client_secret is required", in.URL)
		}
		if c.JWKSURL != "" {
			return errors.New("jwks_url and introspect: choose one way to check tokens")
		}
	}
	if c.CacheTTL < 0 {
		return fmt.Errorf("cache_ttl %s: must not be negative", c.CacheTTL)
	}
	return nil
}

// cacheTTL is CacheTTL with its default applied.
func (c Config) cacheTTL() time.Duration {
	if c.CacheTTL == 0 {
		return DefaultCacheTTL
	}
	return c.CacheTTL
}

// checkServerURL accepts an absolute https URL, or an http one whose host
// is a loopback address: tokens and keys must not cross a network in clear.
func checkServerURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Host == "" || u.Opaque != "" {
		return errors.New("not an absolute URL")
	}
	if u.User != nil {
		return errors.New("credentials do not belong in the URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("must be https:// (http:// only for a loopback host)")
	default:
		return fmt.Errorf("scheme %q: must be https://", u.Scheme)
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsScopeToken reports whether s is a scope-token of RFC 6749 section 3.3:
// printable ASCII without space, double quote or backslash. Scopes that pass
// need no escaping inside a WWW-Authenticate quoted string.
func IsScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x21 || b > 0x7e || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}
