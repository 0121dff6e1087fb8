package incaddy

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

// TestRunLeavesNothingBehind runs a Caddy with its config and data
// directories pointed at empty temp dirs and checks that they stay empty:
// no autosave.json, no instance.uuid, no locks.
func TestRunLeavesNothingBehind(t *testing.T) {
	home := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		t.Setenv(v, filepath.Join(home, v))
	}
	port := FreePort(t)
	t.Run("run", func(t *testing.T) {
		Run(t, "Caddyfile", "{\n\tdefault_bind 127.0.0.1\n}\nhttp://:"+port+" {\n\trespond ok\n}\n", nil)
		resp, err := http.Get("http://127.0.0.1:" + port + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	err := filepath.Walk(home, func(path string, info os.FileInfo, err error) error {
		if err == nil && path != home {
			t.Errorf("caddy wrote %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
