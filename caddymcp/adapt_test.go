package caddymcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"
)

// updateGolden rewrites the expected half of every golden file with what
// the adapter produces now. Review the diff before committing it.
var updateGolden = os.Getenv("UPDATE_GOLDEN") == "1"

// TestCaddyfileAdapt adapts each testdata/adapt/*.caddyfiletest: a
// Caddyfile, a line of ten dashes, then either the expected JSON config
// (as caddytest.CompareAdapt prints it) or text the adapter's error must
// contain. This is the format of Caddy's own caddyfile_adapt tests.
func TestCaddyfileAdapt(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "adapt", "*.caddyfiletest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files in testdata/adapt")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
			input, expected, ok := strings.Cut(string(data), "----------")
			if !ok {
				t.Fatalf("%s has no ---------- line", file)
			}
			// The newline matches what the Caddyfile formatter expects.
			input, expected = strings.TrimSpace(input)+"\n", strings.TrimSpace(expected)

			if updateGolden {
				writeGolden(t, file, input)
				return
			}

			if strings.HasPrefix(expected, "{") {
				if !caddytest.CompareAdapt(t, file, input, "caddyfile", expected) {
					t.Errorf("adapted JSON differs from %s (diff printed above)", file)
				}
				checkAdaptedHandlersLoad(t, input)
				return
			}

			_, _, err = caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
			if err == nil {
				t.Fatalf("adapted without error, want one containing %q", expected)
			}
			if !strings.Contains(err.Error(), expected) {
				t.Errorf("error\n%s\ndoes not contain\n%s", err, expected)
			}
		})
	}
}

// checkAdaptedHandlersLoad requires a clean adaptation (no warnings: the
// golden Caddyfiles are formatted, and a handler that fails to marshal is
// only a warning) and every mcp handler in it to load as Caddy would load
// it, so no golden file records a config Caddy would refuse.
func checkAdaptedHandlersLoad(t *testing.T, input string) {
	t.Helper()
	handlers := adaptMCPHandlers(t, input)
	if len(handlers) == 0 {
		t.Error("the adapted config has no mcp handler")
	}
	for i, raw := range handlers {
		if _, err := loadMCP(t, string(raw)); err != nil {
			t.Errorf("mcp handler %d does not load: %v", i, err)
		}
	}
}

// writeGolden replaces the expected half of file with the adapter's
// current output for input, in the form the test reads back.
func writeGolden(t *testing.T, file, input string) {
	t.Helper()
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	var expected string
	if err != nil {
		expected = err.Error()
	} else {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, out, "", "\t"); err != nil {
			t.Fatal(err)
		}
		expected = pretty.String()
	}
	if err := os.WriteFile(file, []byte(input+"----------\n"+expected+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", file)
}

// mcp is ordered before respond (and so before reverse_proxy), whatever the
// order of the lines in the site block: a catch-all respond or
// reverse_proxy written first must not hide the MCP endpoint.
func TestDirectiveOrder(t *testing.T) {
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(`:8080 {
	reverse_proxy 127.0.0.1:9000
	respond "fallback"
	mcp /mcp {
		tool ping {
			description "Ping."
			get /ping
		}
	}
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Routes []struct {
						Handle []struct {
							Handler string `json:"handler"`
						} `json:"handle"`
					} `json:"routes"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, route := range cfg.Apps.HTTP.Servers["srv0"].Routes {
		for _, h := range route.Handle {
			order = append(order, h.Handler)
		}
	}
	want := []string{"mcp", "static_response", "reverse_proxy"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("handler order %q, want %q", order, want)
	}
}
