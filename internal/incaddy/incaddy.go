// Package incaddy runs Caddy inside a test's own process, for the test
// packages that drive a whole Caddy from a Caddyfile. caddy.Load replaces
// the config of the whole process, so each such package is a test binary
// of its own and runs one Caddy at a time.
package incaddy

import (
	"encoding/json"
	"net"
	"strconv"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// Run adapts the Caddyfile text (filename names it in errors), turns off
// the admin endpoint, config autosave and the storage check and clean, so
// that nothing else of this process, no other Caddy on the machine and,
// for a config without certificates (no `tls internal`, no ACME), nothing
// in the home directory is touched, lets edit change
// the JSON config if it is not nil, and runs it. Caddy stops when the test
// ends.
func Run(t testing.TB, filename, text string, edit func(cfg map[string]any)) {
	t.Helper()
	Load(t, filename, text, edit)
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
}

// Load is Run without the stop: the config replaces the running one, as a
// reload does, and stays running after the test; the caller stops Caddy
// (caddy.Stop) when its tests are done. Listeners carry over a reload, so
// clients' idle connections from an earlier test still work.
func Load(t testing.TB, filename, text string, edit func(cfg map[string]any)) {
	t.Helper()
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	cfgJSON, warnings, err := adapter.Adapt([]byte(text), map[string]any{"filename": filename})
	if err != nil {
		t.Fatalf("adapting %s: %v\n%s", filename, err, text)
	}
	for _, w := range warnings {
		t.Logf("adapt warning: %s", w.String())
	}
	var cfg map[string]any
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["admin"] = map[string]any{"disabled": true, "config": map[string]any{"persist": false}}
	// The storage check and clean write instance.uuid, last_clean.json
	// and locks/ into ~/.local/share/caddy; no test needs them.
	apps, _ := cfg["apps"].(map[string]any)
	if apps == nil {
		apps = map[string]any{}
		cfg["apps"] = apps
	}
	tlsApp, _ := apps["tls"].(map[string]any)
	if tlsApp == nil {
		tlsApp = map[string]any{}
		apps["tls"] = tlsApp
	}
	tlsApp["disable_storage_check"] = true
	tlsApp["disable_storage_clean"] = true
	if edit != nil {
		edit(cfg)
	}
	if cfgJSON, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Load(cfgJSON, true); err != nil {
		t.Fatalf("running %s: %v", filename, err)
	}
}

// FreePort returns a port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
