package caddymcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// The metadata handler loads from the JSON the directives write, and
// refuses a config with nothing to show.
func TestResourceMetadataLoad(t *testing.T) {
	for _, tc := range []struct {
		config, wantErr string
	}{
		{`{"allow_origins":["https://app.example.com"],"authorization":{"issuers":["https://auth.example.com"],"scopes":["a"]}}`, ""},
		{`{}`, "mcp_resource_metadata needs an authorization block"},
		{`{"authorization":{"issuers":["http://auth.example.com"]}}`, `issuer "http://auth.example.com": must be https://`},
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		_, err := ctx.LoadModuleByID("http.handlers.mcp_resource_metadata", json.RawMessage(tc.config))
		cancel()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want %q", tc.config, err, tc.wantErr)
		}
	}
}
