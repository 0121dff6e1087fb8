// The authorization block: the endpoint as an OAuth 2.1 resource server.
// Its configuration maps onto authz.Config; the checks of every request
// run in the endpoint, before any MCP processing, for both handlers.

package caddymcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

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

// errNoAuthorization: the metadata handler has nothing to show without.
var errNoAuthorization = errors.New("mcp_resource_metadata needs an authorization block")

// errScopesWithoutAuthorization refuses tool scopes nothing would check.
var errScopesWithoutAuthorization = errors.New("scopes need an authorization block on the endpoint: without one, no token is checked")

// endpointAuth is what an endpoint with an authorization block builds.
type endpointAuth struct {
	verifier  *authz.Verifier
	siteHosts atomic.Pointer[siteHostSet]
	// toolScopes are the scopes each tool needs beyond require_scopes.
	toolScopes map[string][]string
	// One line per logInterval while tokens cannot be checked.
	unavailableLog, noResourceLog logLimit
}

// identityKey carries the *authorized of a request.
type identityKey struct{}

// authorized is who a request's token speaks for, and the resource it
// was checked for, for a later challenge.
type authorized struct {
	id       *authz.Identity
	resource string
}

// metadataURL is where a challenge sends the client for resource's
// metadata. resource is a configured one (checked at load) or one made of
// the request's host: both are absolute http(s) URLs.
func metadataURL(resource string) string {
	u, _ := authz.MetadataURL(resource)
	return u
}

// callerOf is the authorization of the request of ctx; nil on an
// endpoint without an authorization block.
func callerOf(ctx context.Context) *authorized {
	a, _ := ctx.Value(identityKey{}).(*authorized)
	return a
}

// mayCall reports whether the caller of ctx holds the scopes of tool.
// Without authorization, every tool may be called.
func (e *Endpoint) mayCall(ctx context.Context, tool string) bool {
	if e.auth == nil {
		return true
	}
	needed := e.auth.toolScopes[tool]
	if len(needed) == 0 {
		return true
	}
	caller := callerOf(ctx)
	return caller != nil && len(caller.id.Missing(needed)) == 0
}

// refuseTool answers a tools/call of a tool whose scopes the caller lacks
// with 403 insufficient_scope, naming every scope a new token needs (the
// endpoint's and the tool's), so the client can step up; it reports
// whether it did.
func (e *Endpoint) refuseTool(w http.ResponseWriter, r *http.Request, tool string) bool {
	if e.mayCall(r.Context(), tool) {
		return false
	}
	needed := slices.Clone(e.Authorization.RequireScopes)
	for _, scope := range e.auth.toolScopes[tool] {
		if !slices.Contains(needed, scope) {
			needed = append(needed, scope)
		}
	}
	var metadata string
	if caller := callerOf(r.Context()); caller != nil {
		metadata = metadataURL(caller.resource)
	}
	e.challenge(w, r, http.StatusForbidden, "insufficient_scope", authz.InsufficientScope(metadata, needed),
		fmt.Sprintf("insufficient scope: tool %s needs %s", tool, strings.Join(e.auth.toolScopes[tool], " ")))
	return true
}

// filterTools leaves out of a tools/list the tools the caller may not
// call.
func (e *Endpoint) filterTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if e.auth == nil || len(e.auth.toolScopes) == 0 {
		return tools
	}
	return slices.DeleteFunc(tools, func(t mcp.Tool) bool { return !e.mayCall(ctx, t.Name) })
}

// authorize checks the bearer token of r, a request to the MCP endpoint.
// It answers the request itself (401, 403, or 500 for a site it cannot
// name a resource for) and returns nil when r may not go on; otherwise r
// with the caller's identity in its context.
func (e *Endpoint) authorize(w http.ResponseWriter, r *http.Request) *http.Request {
	a := e.Authorization
	resource, err := e.resource(r)
	if err != nil {
		if ok, held := e.auth.noResourceLog.allow(time.Now()); ok {
			e.logger.Error("authorization: no resource for the request; refused", zap.String("host", r.Host), zap.Error(err),
				zap.Int("refused_since_last_line", held))
		}
		e.reject(w, r, http.StatusInternalServerError, "unauthorized", "the server cannot check tokens for this host; set resource in its authorization block")
		return nil
	}
	if r.URL.RawQuery != "" && queryHasName(r.URL.RawQuery, "access_token") {
		e.challenge(w, r, http.StatusUnauthorized, "unauthorized", authz.Challenge{
			Error:            "invalid_request",
			Description:      "send the token in the Authorization header, not in the URL",
			Scope:            a.RequireScopes,
			ResourceMetadata: metadataURL(resource),
		}, "unauthorized: send the token in the Authorization header, not in the URL")
		return nil
	}
	id, err := e.checkToken(r, resource)
	if err != nil {
		reason := "invalid token"
		if refusal := (*authz.Error)(nil); errors.As(err, &refusal) {
			reason = refusal.Reason
		}
		if errors.Is(err, authz.ErrUnavailable) {
			if ok, held := e.auth.unavailableLog.allow(time.Now()); ok {
				e.logger.Warn("authorization server unavailable; request refused", zap.Error(err),
					zap.Int("refused_since_last_line", held))
			}
		}
		e.challenge(w, r, http.StatusUnauthorized, "unauthorized", authz.Unauthorized(metadataURL(resource), a.RequireScopes, err), "unauthorized: "+reason)
		return nil
	}
	if missing := id.Missing(a.RequireScopes); len(missing) > 0 {
		e.challenge(w, r, http.StatusForbidden, "insufficient_scope", authz.InsufficientScope(metadataURL(resource), a.RequireScopes),
			"insufficient scope: the token lacks "+strings.Join(missing, " "))
		return nil
	}
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		setIdentityPlaceholders(repl, id)
	}
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, &authorized{id: id, resource: resource}))
}

// queryHasName reports whether the raw query has a parameter name. Every
// pair counts, split at '&' or ';': url.Values leaves out a pair with a
// ';' or a bad escape in its value, and a token must not slip through so.
func queryHasName(raw, name string) bool {
	for pair := range strings.FieldsFuncSeq(raw, func(r rune) bool { return r == '&' || r == ';' }) {
		key, _, _ := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(key); err == nil && decoded == name {
			return true
		}
	}
	return false
}

// setIdentityPlaceholders names the caller as Caddy's authentication
// handler does: {http.auth.user.id} is the sub, {http.auth.user.scopes}
// the scopes (space-separated), {http.auth.user.<claim>} each top-level
// string claim. id and scopes win over claims of those names.
func setIdentityPlaceholders(repl *caddy.Replacer, id *authz.Identity) {
	for name, value := range id.Claims {
		repl.Set("http.auth.user."+name, value)
	}
	repl.Set("http.auth.user.id", id.Subject)
	repl.Set("http.auth.user.scopes", strings.Join(id.Scopes, " "))
}

func (e *Endpoint) checkToken(r *http.Request, resource string) (*authz.Identity, error) {
	token, err := authz.BearerToken(r.Header.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	return e.auth.verifier.VerifyFor(r.Context(), token, resource)
}

// challenge refuses r with status, the WWW-Authenticate challenge c and a
// JSON-RPC error saying reason.
func (e *Endpoint) challenge(w http.ResponseWriter, r *http.Request, status int, label string, c authz.Challenge, reason string) {
	w.Header().Set("WWW-Authenticate", c.String())
	e.reject(w, r, status, label, reason)
}

// resource is the audience r's token must carry: the configured resource,
// or https://<host><endpoint path>. The host comes from the request, so it
// is taken only when it is one of the site's own host names (a host
// matcher of the server's routes); on a site that answers any host, a
// client could otherwise name another endpoint's host and have a token
// for that endpoint accepted here. The path is the one the client asked
// for, before any rewrite. Plain http is kept for loopback hosts (local
// development), as authz accepts http only there.
func (e *Endpoint) resource(r *http.Request) (string, error) {
	return e.resourceAt(r, requestPath(r))
}

// resourceAt is resource for an endpoint at path.
func (e *Endpoint) resourceAt(r *http.Request, path string) (string, error) {
	if e.Authorization.Resource != "" {
		return e.Authorization.Resource, nil
	}
	host := strings.ToLower(hostOnly(r.Host))
	if !e.siteHost(r, host) {
		return "", fmt.Errorf("host %q is not one of the site's host names, and no resource is configured", r.Host)
	}
	scheme := "https"
	if r.TLS == nil {
		// Behind a proxy that ends TLS, the client's URL is not this
		// request's: only the operator can name it.
		if !isLoopbackName(host) {
			return "", fmt.Errorf("a plain-HTTP request for host %q, and no resource is configured", r.Host)
		}
		scheme = "http"
	}
	port, err := resourcePort(r, scheme)
	if err != nil {
		return "", err
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host + path, nil
}

// resourcePort is the port of the default resource: the one the
// connection came to, "" when it is the scheme's default. The Host must
// name that port (or, naming none, the scheme's default must be it): host
// matchers ignore ports, so a client naming another port (where another
// endpoint may listen) must not move the audience there, and a port that
// a proxy or NAT translated is not the client's URL either.
func resourcePort(r *http.Request, scheme string) (string, error) {
	defaultPort := "443"
	if scheme == "http" {
		defaultPort = "80"
	}
	named := defaultPort
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		named = port
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return "", errors.New("the connection's port is not known, and no resource is configured")
	}
	_, port, err := net.SplitHostPort(local.String())
	if err != nil {
		return "", fmt.Errorf("the connection's address %q: %v", local, err)
	}
	if port != named {
		return "", fmt.Errorf("host %q names port %s, the connection came to port %s, and no resource is configured", r.Host, named, port)
	}
	if port == defaultPort {
		return "", nil
	}
	return port, nil
}

// requestPath is the path the client asked for, before any rewrite.
func requestPath(r *http.Request) string {
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil {
		return orig.URL.EscapedPath()
	}
	return r.URL.EscapedPath()
}

// wellKnownResource is where RFC 9728 puts protected resource metadata:
// the endpoint's path follows it.
const wellKnownResource = "/.well-known/oauth-protected-resource"

// metadataPath reports whether r asks for protected resource metadata,
// and for the endpoint at which path.
func metadataPath(r *http.Request) (string, bool) {
	rest, ok := strings.CutPrefix(requestPath(r), wellKnownResource)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	return rest, true
}

// serveMetadata answers a GET of the endpoint's protected resource
// metadata (RFC 9728), which needs no token.
func (e *Endpoint) serveMetadata(w http.ResponseWriter, r *http.Request, endpointPath string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		e.reject(w, r, http.StatusMethodNotAllowed, "method", fmt.Sprintf("method %s: the protected resource metadata is read with GET", r.Method))
		return
	}
	resource, err := e.resourceAt(r, endpointPath)
	if err != nil {
		e.logger.Error("authorization: no resource for the metadata request", zap.String("host", r.Host), zap.Error(err))
		e.reject(w, r, http.StatusInternalServerError, "unauthorized", "the server cannot name its resource for this host; set resource in its authorization block")
		return
	}
	body, err := json.Marshal(e.Authorization.authzConfig(nil).Metadata(resource))
	if err != nil {
		e.reject(w, r, http.StatusInternalServerError, "unauthorized", "the metadata document could not be written")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// registerEndpointDirective registers the directive name as Caddy's
// RegisterHandlerDirective does. When the endpoint has an authorization
// block and its matcher is only a path matcher, a second route serves the
// protected resource metadata of each exact path, so that it needs no
// other Caddyfile line. (The endpoint's own route keeps its one path:
// Caddy orders routes by the length of a single path.)
func registerEndpointDirective(name string, parse func(httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error)) {
	httpcaddyfile.RegisterDirective(name, func(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
		if !h.Next() {
			return nil, h.ArgErr()
		}
		matcherSet, err := h.ExtractMatcherSet()
		if err != nil {
			return nil, err
		}
		handler, err := parse(h)
		if err != nil {
			return nil, err
		}
		routes := h.NewRoute(matcherSet, handler)
		e, ok := handler.(interface{ endpoint() *Endpoint })
		if !ok || e.endpoint().Authorization == nil {
			return routes, nil
		}
		paths := metadataPaths(matcherSet)
		if len(paths) == 0 {
			return routes, nil
		}
		raw, err := json.Marshal(paths)
		if err != nil {
			return nil, err
		}
		return append(routes, h.NewRoute(caddy.ModuleMap{"path": raw}, newResourceMetadata(e.endpoint()))...), nil
	})
}

// endpoint is the Endpoint an mcp or codemode handler embeds.
func (e *Endpoint) endpoint() *Endpoint { return e }

// metadataPaths are the metadata paths of the exact paths of a matcher
// set that is only a path matcher; none for any other matcher set (the
// README says what to add then).
func metadataPaths(set caddy.ModuleMap) []string {
	raw, ok := set["path"]
	if len(set) != 1 || !ok {
		return nil
	}
	var paths, metadata []string
	if json.Unmarshal(raw, &paths) != nil {
		return nil
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "*{") || strings.HasPrefix(p, wellKnownResource) {
			continue
		}
		if m := wellKnownResource + strings.TrimSuffix(p, "/"); !slices.Contains(metadata, m) {
			metadata = append(metadata, m)
		}
	}
	return metadata
}

// siteHost reports whether host is named by a host matcher of a route of
// the server serving r. The names are gathered once per server.
func (e *Endpoint) siteHost(r *http.Request, host string) bool {
	srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	if !ok || srv == nil {
		return false
	}
	hosts := e.auth.siteHosts.Load()
	if hosts == nil || hosts.server != srv {
		hosts = &siteHostSet{server: srv, names: serverHostNames(srv)}
		e.auth.siteHosts.Store(hosts)
	}
	return hosts.names[host]
}

// siteHostSet are the host names of one server's routes.
type siteHostSet struct {
	server *caddyhttp.Server
	names  map[string]bool
}

// serverHostNames are the exact (not wildcard, not placeholder) host
// names of the host matchers of srv's routes, lowercased.
func serverHostNames(srv *caddyhttp.Server) map[string]bool {
	names := make(map[string]bool)
	for _, route := range srv.Routes {
		for _, set := range route.MatcherSets {
			for _, m := range set {
				hosts, ok := m.(caddyhttp.MatchHost)
				if !ok {
					if p, isPtr := m.(*caddyhttp.MatchHost); isPtr && p != nil {
						hosts, ok = *p, true
					}
				}
				for _, h := range hosts {
					if ok && !strings.ContainsAny(h, "*{") {
						names[strings.ToLower(h)] = true
					}
				}
			}
		}
	}
	return names
}
