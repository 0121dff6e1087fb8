// The authorization block: the endpoint as an OAuth 2.1 resource server.
// Its configuration maps onto authz.Config; the checks of every request
// run in the endpoint, before any MCP processing, for both handlers.

package caddymcp

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-mcp/caddy-mcp/authz"
)

// AuthorizationConfig makes the endpoint an OAuth 2.1 resource server:
// every request needs a bearer token from one of the issuers, for this
// endpoint's resource.
type AuthorizationConfig struct {
	// Issuers are the authorization servers' issuer identifiers; a token's
	// iss must be one of them. At least one is required.
	Issuers []string `json:"issuers,omitempty"`

	// Resource is this endpoint's canonical URI, the audience tokens must
	// carry. Default: https://<host><endpoint path>, where host must be
	// one of the site's host names (see defaultResource).
	Resource string `json:"resource,omitempty"`

	// Scopes are advertised as scopes_supported in the resource metadata.
	// Default: none.
	Scopes []string `json:"scopes,omitempty"`

	// RequireScopes must all be carried by every request's token.
	// Default: none.
	RequireScopes []string `json:"require_scopes,omitempty"`

	// JWKSURL is where the issuers' signing keys are read. Default: the
	// jwks_uri of each issuer's metadata (RFC 8414, then OpenID discovery).
	JWKSURL string `json:"jwks_url,omitempty"`

	// Introspect sends every token to an RFC 7662 introspection endpoint
	// instead of checking it as a JWT. Default: none.
	Introspect *IntrospectConfig `json:"introspect,omitempty"`

	// CacheTTL is how long metadata, keys and introspection answers are
	// kept. Default: 5m.
	CacheTTL caddy.Duration `json:"cache_ttl,omitempty"`
}

// IntrospectConfig is an RFC 7662 introspection endpoint and the client
// credentials this endpoint authenticates to it with.
type IntrospectConfig struct {
	URL      string `json:"url,omitempty"`
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret may be a placeholder such as {env.INTROSPECT_SECRET},
	// resolved at Provision. It is never logged.
	ClientSecret string `json:"client_secret,omitempty"`
}

// authzConfig maps the JSON configuration onto authz's, with the client
// secret's placeholders resolved by repl (nil: left as written, for
// Validate, which must not need the environment).
func (a *AuthorizationConfig) authzConfig(repl *caddy.Replacer) authz.Config {
	c := authz.Config{
		Issuers:       a.Issuers,
		Resource:      a.Resource,
		Scopes:        a.Scopes,
		RequireScopes: a.RequireScopes,
		JWKSURL:       a.JWKSURL,
		CacheTTL:      time.Duration(a.CacheTTL),
	}
	if in := a.Introspect; in != nil {
		secret := in.ClientSecret
		if repl != nil {
			secret = repl.ReplaceKnown(secret, "")
		}
		c.Introspection = &authz.Introspection{URL: in.URL, ClientID: in.ClientID, ClientSecret: secret}
	}
	return c
}

// validate checks the block without the environment: the client secret
// is checked once resolved, at Provision.
func (a *AuthorizationConfig) validate() error {
	c := a.authzConfig(nil)
	if err := c.Validate(); err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	return nil
}

// newVerifier builds the verifier, resolving the client secret. No network.
func (a *AuthorizationConfig) newVerifier() (*authz.Verifier, error) {
	c := a.authzConfig(caddy.NewReplacer())
	if in := c.Introspection; in != nil && in.ClientSecret == "" {
		return nil, fmt.Errorf("authorization: introspect %q: client_secret %s resolves to empty text", in.URL, secretPlaceholder(a.Introspect.ClientSecret))
	}
	v, err := authz.NewVerifier(c)
	if err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	return v, nil
}

// secretPlaceholder names a secret in an error: its placeholder, or
// nothing of a literal value.
func secretPlaceholder(secret string) string {
	if strings.HasPrefix(secret, "{") && strings.HasSuffix(secret, "}") && !strings.ContainsAny(secret[1:len(secret)-1], "{}") {
		return secret
	}
	return "(a literal)"
}

// checkScopes refuses what is not a scope token (RFC 6749 section 3.3).
func checkScopes(scopes []string) error {
	for _, s := range scopes {
		if !authz.IsScopeToken(s) {
			return fmt.Errorf("%q is not a scope token (RFC 6749 section 3.3)", s)
		}
	}
	return nil
}

// parseAuthorization reads an authorization block:
//
//	authorization {
//		issuer         <url>
//		resource       <url>
//		scopes         <scope...>
//		require_scopes <scope...>
//		jwks_url       <url>
//		introspect     <url> {
//			client_id     <id>
//			client_secret <secret>
//		}
//		cache_ttl      <duration>
//	}
func parseAuthorization(d *caddyfile.Dispenser) (*AuthorizationConfig, error) {
	start := d.Token()
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	a := &AuthorizationConfig{}
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "issuer" {
			if seen[key] {
				return nil, d.Errf("authorization: %s is set twice", key)
			}
			seen[key] = true
		}
		var err error
		switch key {
		case "issuer":
			var issuer string
			if err = oneArg(d, &issuer); err == nil {
				a.Issuers = append(a.Issuers, issuer)
			}
		case "resource":
			err = oneArg(d, &a.Resource)
		case "scopes", "require_scopes":
			scopes := d.RemainingArgs()
			if len(scopes) == 0 {
				return nil, d.ArgErr()
			}
			if err := checkScopes(scopes); err != nil {
				return nil, d.Errf("authorization: %s: %v", key, err)
			}
			if key == "scopes" {
				a.Scopes = scopes
			} else {
				a.RequireScopes = scopes
			}
		case "jwks_url":
			err = oneArg(d, &a.JWKSURL)
		case "introspect":
			a.Introspect, err = parseIntrospect(d)
		case "cache_ttl":
			err = durationArg(d, &a.CacheTTL)
		default:
			return nil, d.Errf("authorization: unknown subdirective %q", key)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := a.validate(); err != nil {
		return nil, errorAt(start, err)
	}
	return a, nil
}

func parseIntrospect(d *caddyfile.Dispenser) (*IntrospectConfig, error) {
	in := &IntrospectConfig{}
	if err := oneArg(d, &in.URL); err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if seen[key] {
			return nil, d.Errf("authorization: introspect: %s is set twice", key)
		}
		seen[key] = true
		var err error
		switch key {
		case "client_id":
			err = oneArg(d, &in.ClientID)
		case "client_secret":
			err = oneArg(d, &in.ClientSecret)
		default:
			return nil, d.Errf("authorization: introspect: unknown subdirective %q", key)
		}
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// errScopesWithoutAuthorization refuses tool scopes nothing would check.
var errScopesWithoutAuthorization = errors.New("scopes need an authorization block on the endpoint: without one, no token is checked")
