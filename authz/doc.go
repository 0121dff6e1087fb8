// Package authz makes an endpoint an OAuth 2.1 resource server, as the MCP
// authorization specification asks: it checks bearer tokens (JWTs against
// the issuer's published keys, or opaque tokens through RFC 7662
// introspection), builds the RFC 9728 protected resource metadata document
// and the WWW-Authenticate challenges that send a client to its
// authorization server. It imports neither Caddy nor mcp-go; caddymcp turns
// its Caddyfile block into a Config and the Verifier's errors into HTTP
// answers.
package authz
