//go:build linux

package loadtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
)

// TestReloadKeepsImport: GitHub's whole document behind discovery
// search, reloaded 10 times through the admin API (a Caddyfile posted to
// /load, and `caddy reload`, in turn; each config a little different): each reload takes the import the running
// config holds rather than parsing the document again, and the process
// stays about the size it was after the first start. It prints the RSS
// and the time of each reload.
func TestReloadKeepsImport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	t.Parallel() // its own Caddy, whose RSS it reads
	doc := openapidocs.Path(t, openapidocs.GitHub)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	sites := func(round int) string {
		return fmt.Sprintf(`http://%s {
	mcp /mcp {
		name github-%d
		upstream https://api.github.com
		discovery search
		openapi %s
	}
}
`, addr, round, doc)
	}
	const reloads = 10
	p := startCaddy(t, "import", sites(0), nil, addr)
	pid := p.cmd.Process.Pid
	before, err := p.stats() // two collections, as before every reading
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := rss(pid)
	if err != nil {
		t.Skipf("no RSS to read: %v", err)
	}
	dir := t.TempDir()
	// Half the reloads post the Caddyfile to the admin API, which adapts
	// it in Caddy; half run caddy reload, which adapts it in its own
	// process (and imports the document there to check it).
	var api, cli []time.Duration
	for round := 1; round <= reloads; round++ {
		if round%2 == 1 {
			took, err := p.load(sites(round))
			if err != nil {
				t.Fatalf("reload %d: %v\n%s", round, err, tail(p.logPath, 20))
			}
			api = append(api, took.Round(time.Millisecond))
			continue
		}
		started, ended, err := p.reload(dir, sites(round), 2*time.Minute)
		if err != nil {
			t.Fatalf("reload %d: %v\n%s", round, err, tail(p.logPath, 20))
		}
		cli = append(cli, ended.Sub(started).Round(time.Millisecond))
	}
	// What the old configs held is free once collected, and the runtime
	// gives it back to the system in the background: read until it has,
	// for up to a minute.
	var stats runtimeStats
	var after int64
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		if stats, err = p.stats(); err != nil {
			t.Fatal(err)
		}
		if after, _, _ = rss(pid); after <= first+first/10 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("RSS after the first start %.0f MiB (%s), after %d reloads %.0f MiB (%s); reloads through the admin API took %v, with caddy reload %v",
		float64(first)/(1<<20), before, reloads, float64(after)/(1<<20), stats, api, cli)
	if after > first+first/10 {
		t.Errorf("RSS grew from %.0f to %.0f MiB over %d reloads, more than 10%%", float64(first)/(1<<20), float64(after)/(1<<20), reloads)
	}
	log, err := os.ReadFile(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	// The first start reuses the import made as its Caddyfile was adapted,
	// in the same process; each reload, the one made at the first start
	// (the caddy reload process adapts the Caddyfile, and imports the
	// document to check it, on its own).
	if reused := strings.Count(string(log), `"reused":true`); reused != reloads+1 {
		t.Errorf("%d of the first start and %d reloads reused the import, want every one", reused, reloads)
	}
}
