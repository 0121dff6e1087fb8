package authz

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// wellKnownResource is where RFC 9728 puts protected resource metadata.
const wellKnownResource = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the RFC 9728 protected resource metadata document.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// Metadata is the document for resource (the configured Resource, or the
// one the handler derived for the request).
func (c Config) Metadata(resource string) ResourceMetadata {
	return ResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   c.Issuers,
		ScopesSupported:        c.Scopes,
		BearerMethodsSupported: []string{"header"},
	}
}

// MetadataURL is where RFC 9728 section 3.1 puts resource's metadata: the
// well-known path inserted between its host and its path.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fmt.Errorf("resource %q: not an absolute http(s) URL", resource)
	}
	metadata := u.Scheme + "://" + u.Host + wellKnownResource + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		metadata += "?" + u.RawQuery
	}
	return metadata, nil
}

// Challenge is a WWW-Authenticate value of the Bearer scheme (RFC 6750
// section 3, with RFC 9728's resource_metadata).
type Challenge struct {
	// Error is "", "invalid_token", "invalid_request" or
	// "insufficient_scope". RFC 6750 says a request with no token gets none.
	Error string
	// Description is a short human-readable reason.
	Description string
	// Scope lists the scopes the request needs.
	Scope []string
	// ResourceMetadata is the URL of the protected resource metadata.
	ResourceMetadata string
}

// Unauthorized is the challenge of a 401: err says why (nil, or an
// ErrNoToken refusal, for a request that carried no token).
func Unauthorized(metadataURL string, requireScopes []string, err error) Challenge {
	c := Challenge{ResourceMetadata: metadataURL, Scope: requireScopes}
	if err == nil || errors.Is(err, ErrNoToken) {
		return c
	}
	c.Error = "invalid_token"
	var refusal *Error
	if errors.As(err, &refusal) {
		c.Description = refusal.Reason
	}
	return c
}

// InsufficientScope is the challenge of a 403 for a token that lacks
// scopes: the client may ask for a token carrying them (step-up).
func InsufficientScope(metadataURL string, needed []string) Challenge {
	return Challenge{
		Error:            "insufficient_scope",
		Description:      "the token lacks a scope this request needs",
		Scope:            needed,
		ResourceMetadata: metadataURL,
	}
}

// String renders the header value, every parameter a quoted string.
func (c Challenge) String() string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(name, value string) {
		b.WriteString(sep)
		b.WriteString(name)
		b.WriteString("=")
		writeQuoted(&b, value)
		sep = ", "
	}
	if c.Error != "" {
		param("error", c.Error)
	}
	if c.Description != "" {
		param("error_description", c.Description)
	}
	if len(c.Scope) > 0 {
		param("scope", strings.Join(c.Scope, " "))
	}
	if c.ResourceMetadata != "" {
		param("resource_metadata", c.ResourceMetadata)
	}
	return b.String()
}

// writeQuoted writes s as an RFC 9110 quoted-string: a backslash before
// '"' and '\', and anything that is not printable ASCII (control
// characters, which could split the header, and non-ASCII) replaced by '?'.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r >= 0x7f:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// BearerToken takes the token from an Authorization header value. The
// scheme is case-insensitive (RFC 9110 section 11.1); anything but one
// "Bearer <token68>" is refused, and an empty header is ErrNoToken. Tokens
// in the query string or a form body are never looked at, as the MCP
// authorization specification requires.
func BearerToken(header string) (string, error) {
	if header == "" {
		return "", &Error{kind: ErrNoToken, Reason: "no bearer token"}
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", invalid("the Authorization header is not of the Bearer scheme")
	}
	token = strings.TrimLeft(token, " ")
	if !isToken68(token) {
		return "", invalid("the Authorization header's bearer token is malformed")
	}
	return token, nil
}

// isToken68 reports whether s is the b64token of RFC 6750 section 2.1:
// 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func isToken68(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		b := body[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case b == '-' || b == '.' || b == '_' || b == '~' || b == '+' || b == '/':
		default:
			return false
		}
	}
	return true
}
