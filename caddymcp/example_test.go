package caddymcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/caddy-mcp/caddy-mcp/caddymcp"
	"github.com/caddy-mcp/caddy-mcp/internal/adapttest"
)

// exampleTools are the tools both MCP servers of Caddyfile.example offer.
var exampleTools = []string{"get_customer", "get_order", "list_customer_orders", "list_customers", "list_orders", "refund_order"}

// TestCaddyfileExample checks the runnable demo without starting it: it
// adapts with no warnings (formatting included), listens on loopback only,
// keeps its secret as a run-time placeholder, and provisions, both as a
// whole config and handler by handler. internal/demotest runs it for real.
func TestCaddyfileExample(t *testing.T) {
	path := filepath.Join("..", "Caddyfile.example")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	cfgJSON, warnings, err := adapter.Adapt(body, map[string]any{"filename": path})
	if err != nil {
		t.Fatalf("adapting %s: %v", path, err)
	}
	for _, w := range warnings {
		t.Errorf("adapting %s: warning: %s", path, w.String())
	}

	var cfg struct {
		Admin struct {
			Config struct {
				Persist *bool `json:"persist"`
			} `json:"config"`
		} `json:"admin"`
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen []string `json:"listen"`
				} `json:"servers"`
			} `json:"http"`
			TLS struct {
				DisableStorageCheck bool `json:"disable_storage_check"`
				DisableStorageClean bool `json:"disable_storage_clean"`
			} `json:"tls"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	if p := cfg.Admin.Config.Persist; p == nil || *p {
		t.Errorf("the demo should not autosave its config (persist_config off)")
	}
	if !cfg.Apps.TLS.DisableStorageCheck || !cfg.Apps.TLS.DisableStorageClean {
		t.Errorf("the demo should not run the TLS storage check and clean, which write to ~/.local/share/caddy (storage_check off, storage_clean_interval off)")
	}
	var listen []string
	for _, srv := range cfg.Apps.HTTP.Servers {
		listen = append(listen, srv.Listen...)
	}
	slices.Sort(listen)
	if want := []string{"127.0.0.1:8080", "127.0.0.1:8081"}; !slices.Equal(listen, want) {
		t.Errorf("listen addresses = %q, want %q (loopback only, the ports the comments name)", listen, want)
	}

	var doc any
	if err := json.Unmarshal(cfgJSON, &doc); err != nil {
		t.Fatal(err)
	}
	raws := adapttest.Handlers(doc, "mcp")
	if len(raws) != 2 {
		t.Fatalf("found %d mcp handlers in the adapted config, want 2 (upstream mode and route mode)", len(raws))
	}

	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	var upstreams []string
	for _, raw := range raws {
		mod, err := ctx.LoadModuleByID("http.handlers.mcp", raw)
		if err != nil {
			t.Fatalf("provisioning an mcp handler: %v\n%s", err, raw)
		}
		h := mod.(*caddymcp.Handler)
		upstreams = append(upstreams, h.Upstream)
		var names []string
		for _, tool := range h.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, exampleTools) {
			t.Errorf("handler %s: tools %q, want %q", h.Name, names, exampleTools)
		}
		// {env.X} is resolved per request; {$X} would have been replaced
		// by the adapter and the secret would sit in the JSON config.
		if got := h.Headers.Values("X-Api-Key"); !slices.Equal(got, []string{"{env.DEMO_API_KEY}"}) {
			t.Errorf("handler %s: X-Api-Key header %q, want the run-time placeholder {env.DEMO_API_KEY}", h.Name, got)
		}
	}
	slices.Sort(upstreams)
	if want := []string{"", "http://127.0.0.1:8081/api"}; !slices.Equal(upstreams, want) {
		t.Errorf("upstreams %q, want %q (route mode, then upstream mode)", upstreams, want)
	}

	// The whole config provisions and validates, as `caddy validate` does:
	// the demo API's matchers, file_server, rewrite, reverse_proxy, errors.
	var full caddy.Config
	if err := json.Unmarshal(cfgJSON, &full); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Validate(&full); err != nil {
		t.Fatalf("validating the adapted Caddyfile.example: %v", err)
	}
}
