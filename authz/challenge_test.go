package authz

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestMetadataURL(t *testing.T) {
	tests := []struct {
		resource, want string
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com/", "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com:8443/a/b/", "https://mcp.example.com:8443/.well-known/oauth-protected-resource/a/b"},
		{"https://mcp.example.com/a%20b?x=1", "https://mcp.example.com/.well-known/oauth-protected-resource/a%20b?x=1"},
		{"http://127.0.0.1:9000/mcp", "http://127.0.0.1:9000/.well-known/oauth-protected-resource/mcp"},
		{"/mcp", ""},
		{"mailto:a@example.com", ""},
	}
	for _, tt := range tests {
		got, err := MetadataURL(tt.resource)
		if tt.want == "" {
			if err == nil {
				t.Errorf("MetadataURL(%q) = %q, want an error", tt.resource, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("MetadataURL(%q) = %q, %v; want %q", tt.resource, got, err, tt.want)
		}
	}
}

func TestResourceMetadata(t *testing.T) {
	config := Config{Issuers: []string{"https://as.example.com"}, Scopes: []string{"a", "b"}}
	tests := []struct {
		config Config
		want   string
	}{
		{config, `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"scopes_supported":["a","b"],"bearer_methods_supported":["header"]}`},
		{Config{Issuers: config.Issuers}, `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],"bearer_methods_supported":["header"]}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.config.Metadata("https://mcp.example.com/mcp"))
		if err != nil || string(got) != tt.want {
			t.Errorf("metadata %s, %v; want %s", got, err, tt.want)
		}
	}
}

func TestChallenge(t *testing.T) {
	const meta = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	tests := []struct {
		name      string
		challenge Challenge
		want      string
	}{
		{"no token", Unauthorized(meta, nil, nil), `Bearer resource_metadata="` + meta + `"`},
		{"no token, required scopes", Unauthorized(meta, []string{"a", "b"}, &Error{kind: ErrNoToken, Reason: "no bearer token"}),
			`Bearer scope="a b", resource_metadata="` + meta + `"`},
		{"invalid token", Unauthorized(meta, nil, invalid("the token has expired")),
			`Bearer error="invalid_token", error_description="the token has expired", resource_metadata="` + meta + `"`},
		{"invalid token without a reason", Unauthorized(meta, nil, errors.New("x")),
			`Bearer error="invalid_token", resource_metadata="` + meta + `"`},
		{"insufficient scope", InsufficientScope(meta, []string{"refunds:write"}),
			`Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="refunds:write", resource_metadata="` + meta + `"`},
		{"quoting", Challenge{Description: "a \"quoted\" \\ back\r\nSet-Cookie: x\u00e9", ResourceMetadata: `https://h/"x`},
			`Bearer error_description="a \"quoted\" \\ back??Set-Cookie: x?", resource_metadata="https://h/\"x"`},
		{"empty", Challenge{}, `Bearer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.challenge.String(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	tests := []struct {
		header string
		want   string
		kind   error
	}{
		{"Bearer abc.def-ghi_~+/==", "abc.def-ghi_~+/==", nil},
		{"bearer abc", "abc", nil},
		{"BEARER abc", "abc", nil},
		{"Bearer   abc", "abc", nil},
		{"", "", ErrNoToken},
		{"Bearer", "", ErrInvalidToken},
		{"Bearer ", "", ErrInvalidToken},
		{"Bearer ===", "", ErrInvalidToken},
		{"Basic dXNlcjpwYXNz", "", ErrInvalidToken},
		{"Bearer abc def", "", ErrInvalidToken},
		{"Bearer abc,Bearer def", "", ErrInvalidToken},
		{"Bearer a=b", "", ErrInvalidToken},
		{"Bearer\tabc", "", ErrInvalidToken},
		{"Token abc", "", ErrInvalidToken},
	}
	for _, tt := range tests {
		got, err := BearerToken(tt.header)
		if tt.kind == nil {
			if err != nil || got != tt.want {
				t.Errorf("BearerToken(%q) = %q, %v; want %q", tt.header, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, tt.kind) || got != "" {
			t.Errorf("BearerToken(%q) = %q, %v; want %v", tt.header, got, err, tt.kind)
		}
	}
}
