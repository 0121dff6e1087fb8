package caddymcp

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(ResourceMetadata{})
}

// ResourceMetadata serves the protected resource metadata (RFC 9728) of an
// mcp or codemode endpoint with an authorization block, at
// /.well-known/oauth-protected-resource<endpoint path>, with the
// endpoint's Origin and Host policy. The mcp and codemode directives add
// it in a route of its own when their matcher is a path; the endpoints
// serve the same document themselves when a request for it reaches them.
type ResourceMetadata struct {
	// Endpoint holds the endpoint's allow_origins, allow_hosts and the
	// part of its authorization block the document shows (issuers,
	// resource, scopes).
	Endpoint
}

// CaddyModule returns the Caddy module information.
func (ResourceMetadata) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.mcp_resource_metadata",
		New: func() caddy.Module { return new(ResourceMetadata) },
	}
}

// newResourceMetadata is the metadata handler of e: its policy and what
// of its authorization block the document shows (no credentials).
func newResourceMetadata(e *Endpoint) *ResourceMetadata {
	a := e.Authorization
	return &ResourceMetadata{Endpoint: Endpoint{
		AllowOrigins:  e.AllowOrigins,
		AllowHosts:    e.AllowHosts,
		Authorization: &AuthorizationConfig{Issuers: a.Issuers, Resource: a.Resource, Scopes: a.Scopes},
	}}
}

// Provision sets up the Origin and Host policy.
func (m *ResourceMetadata) Provision(ctx caddy.Context) error {
	metrics, err := newMetrics(ctx.GetMetricsRegistry())
	if err != nil {
		return err
	}
	return m.provisionPolicy("mcp_resource_metadata", ctx.Logger(), metrics)
}

// Validate checks the settings.
func (m *ResourceMetadata) Validate() error {
	if m.Authorization == nil {
		return errNoAuthorization
	}
	return m.Endpoint.validate()
}

// ServeHTTP serves the document, and the CORS preflight for it.
func (m *ResourceMetadata) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if _, ok := metadataPath(r); !ok {
		return caddyhttp.Error(http.StatusNotFound, nil)
	}
	return m.serveEndpoint(w, r, nil, nil)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*ResourceMetadata)(nil)
	_ caddy.Validator             = (*ResourceMetadata)(nil)
	_ caddyhttp.MiddlewareHandler = (*ResourceMetadata)(nil)
)
