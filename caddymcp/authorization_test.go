package caddymcp

import (
	"strings"
	"testing"
)

// The JSON config is checked as Caddy loads it: the authorization block
// through authz's rules, tool scopes only with a block to check them, and
// the introspection secret resolved at Provision without ever being shown.
func TestAuthorizationConfigLoad(t *testing.T) {
	t.Setenv("AUTHZ_TEST_SECRET", "s3cret-value")
	t.Setenv("AUTHZ_TEST_EMPTY", "")
	tool := func(scopes string) string {
		return `{"name":"t","description":"d","method":"GET","path":"/x"` + scopes + `}`
	}
	load := func(authorization, toolJSON string) error {
		config := `{"upstream":"http://127.0.0.1:9","tools":[` + toolJSON + `]` + authorization + `}`
		_, err := loadMCP(t, config)
		return err
	}
	for _, tc := range []struct {
		name          string
		authorization string
		tool          string
		wantErr       string // "" loads
	}{
		{"jwt", `,"authorization":{"issuers":["https://auth.example.com"],"resource":"https://api.example.com/mcp","cache_ttl":"2m"}`, tool(`,"scopes":["orders:read"]`), ""},
		{"introspection secret from env", `,"authorization":{"issuers":["https://auth.example.com"],"introspect":{"url":"https://auth.example.com/i","client_id":"rs","client_secret":"{env.AUTHZ_TEST_SECRET}"}}`, tool(""), ""},
		{"introspection secret empty", `,"authorization":{"issuers":["https://auth.example.com"],"introspect":{"url":"https://auth.example.com/i","client_id":"rs","client_secret":"{env.AUTHZ_TEST_EMPTY}"}}`, tool(""), `client_secret {env.AUTHZ_TEST_EMPTY} resolves to empty text`},
		{"no issuer", `,"authorization":{"resource":"https://api.example.com/mcp"}`, tool(""), `authorization: issuer: at least one is required`},
		{"clear-text resource", `,"authorization":{"issuers":["https://auth.example.com"],"resource":"http://api.example.com/mcp"}`, tool(""), `resource "http://api.example.com/mcp": must be https://`},
		{"tool scopes without authorization", "", tool(`,"scopes":["orders:read"]`), `tool "t": scopes need an authorization block`},
		{"tool scope not a token", `,"authorization":{"issuers":["https://auth.example.com"]}`, tool(`,"scopes":["a b"]`), `tool "t": scopes: "a b" is not a scope token`},
		{"unknown field", `,"authorization":{"issuers":["https://auth.example.com"],"audience":"x"}`, tool(""), `unknown field "audience"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := load(tc.authorization, tc.tool)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("does not load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret-value") {
				t.Fatalf("the error shows the client secret: %v", err)
			}
		})
	}
}

// A literal client secret is never named in an error about it.
func TestAuthorizationSecretNotShown(t *testing.T) {
	a := &AuthorizationConfig{Issuers: []string{"http://auth.example.com"}, Introspect: &IntrospectConfig{URL: "https://auth.example.com/i", ClientID: "rs", ClientSecret: "literal-s3cret"}}
	for _, err := range []error{a.validate(), func() error { _, err := a.newVerifier(); return err }()} {
		if err == nil || strings.Contains(err.Error(), "literal-s3cret") {
			t.Fatalf("want an error without the secret, got %v", err)
		}
	}
}
