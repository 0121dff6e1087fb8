package authz

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	valid := func(change func(c *Config)) Config {
		c := Config{
			Issuers:  []string{"https://as.example.com/tenant"},
			Resource: "https://mcp.example.com/mcp",
			Scopes:   []string{"tools:read"},
		}
		if change != nil {
			change(&c)
		}
		return c
	}
	introspect := func(c *Config) {
		c.Introspection = &Introspection{URL: "https://as.example.com/introspect", ClientID: "rs", ClientSecret: "hunter2"}
	}
	tests := []struct {
		name   string
		config Config
		want   string // "" for valid
	}{
		{"minimal", valid(nil), ""},
		{"loopback http", valid(func(c *Config) {
			c.Issuers = []string{"http://127.0.0.1:9000", "http://localhost:8080/realms/x", "http://[::1]:1"}
			c.JWKSURL = "http://127.0.0.2/jwks"
		}), ""},
		{"introspection", valid(introspect), ""},
		{"no issuer", valid(func(c *Config) { c.Issuers = nil }), "issuer: at least one"},
		{"clear-text issuer", valid(func(c *Config) { c.Issuers = []string{"http://as.example.com"} }), `issuer "http://as.example.com": must be https://`},
		{"private address is not loopback", valid(func(c *Config) { c.Issuers = []string{"http://10.0.0.1"} }), "must be https://"},
		{"relative issuer", valid(func(c *Config) { c.Issuers = []string{"/tenant"} }), "not an absolute URL"},
		{"issuer with query", valid(func(c *Config) { c.Issuers = []string{"https://as.example.com?x=1"} }), "no query or fragment"},
		{"issuer twice", valid(func(c *Config) { c.Issuers = []string{"https://a.example", "https://a.example"} }), "given twice"},
		{"issuer of another scheme", valid(func(c *Config) { c.Issuers = []string{"ftp://a.example"} }), `scheme "ftp"`},
		{"credentials in a URL", valid(func(c *Config) { c.JWKSURL = "https://u:p@a.example/jwks" }), "credentials"},
		{"clear-text resource", valid(func(c *Config) { c.Resource = "http://mcp.example.com/mcp" }), `resource "http://mcp.example.com/mcp"`},
		{"resource with fragment", valid(func(c *Config) { c.Resource = "https://mcp.example.com/mcp#x" }), "no fragment"},
		{"clear-text jwks_url", valid(func(c *Config) { c.JWKSURL = "http://as.example.com/jwks" }), "jwks_url"},
		{"scope with a quote", valid(func(c *Config) { c.Scopes = []string{`a"b`} }), `scopes: "a\"b" is not a scope token`},
		{"required scope with a space", valid(func(c *Config) { c.RequireScopes = []string{"a b"} }), "require_scopes"},
		{"clear-text introspection", valid(func(c *Config) {
			introspect(c)
			c.Introspection.URL = "http://as.example.com/introspect"
		}), `introspect "http://as.example.com/introspect"`},
		{"introspection without client_id", valid(func(c *Config) {
			introspect(c)
			c.Introspection.ClientID = ""
		}), "client_id is required"},
		{"introspection without client_secret", valid(func(c *Config) {
			introspect(c)
			c.Introspection.ClientSecret = ""
		}), "client_secret is required"},
		{"introspection and jwks_url", valid(func(c *Config) {
			introspect(c)
			c.JWKSURL = "https://as.example.com/jwks"
		}), "choose one"},
		{"negative cache_ttl", valid(func(c *Config) { c.CacheTTL = -time.Second }), "cache_ttl -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.config.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("the error shows the client secret: %v", err)
			}
		})
	}
}

func TestConfigCacheTTL(t *testing.T) {
	if got := (Config{}).cacheTTL(); got != DefaultCacheTTL {
		t.Errorf("default cache_ttl %s, want %s", got, DefaultCacheTTL)
	}
	if got := (Config{CacheTTL: time.Minute}).cacheTTL(); got != time.Minute {
		t.Errorf("cache_ttl %s, want 1m", got)
	}
}
