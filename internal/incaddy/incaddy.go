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
// the admin endpoint and config autosave, so that nothing else of this
// process and no other Caddy on the machine is touched, lets edit change
// the JSON config if it is not nil, and runs it. Caddy stops when the test
// ends.
func Run(t testing.TB, filename, text string, edit func(cfg map[string]any)) {
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
	if edit != nil {
		edit(cfg)
	}
	if cfgJSON, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := caddy.Load(cfgJSON, true); err != nil {
		t.Fatalf("running %s: %v", filename, err)
	}
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
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
