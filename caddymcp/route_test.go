package caddymcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// Route mode: without upstream, a tool call goes through the handlers that
// follow mcp, as a fresh request, so reverse_proxy serves it.
func TestLiveRouteMode(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	tools := fmt.Sprintf(restTools, "")
	layouts := []struct {
		name string
		site string
	}{
		{"inside route", fmt.Sprintf(`http://:{$LIVE_PORT} {
	route {
		mcp /mcp {
			%s
		}
		reverse_proxy %s {
			header_up X-Seen-Path {path}
			header_up X-Seen-Tool {http.mcp.tool}
		}
	}
}`, tools, bin)},
		{"at site level", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		%s
	}
	reverse_proxy %s {
		header_up X-Seen-Path {path}
		header_up X-Seen-Tool {http.mcp.tool}
	}
}`, tools, bin)},
		{"with handle blocks", fmt.Sprintf(`http://:{$LIVE_PORT} {
	handle /mcp {
		mcp {
			%s
		}
	}
	handle {
		reverse_proxy %s {
			header_up X-Seen-Path {path}
			header_up X-Seen-Tool {http.mcp.tool}
		}
	}
}`, tools, bin)},
	}
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			loadCaddyfile(t, "", layout.site)
			for _, era := range eras {
				t.Run(era, func(t *testing.T) {
					c := connect(t, "/mcp", era, restClientHeaders)
					t.Run("placeholders describe the tool request", func(t *testing.T) {
						e := parseEcho(t, callTool(t, c, "repo", map[string]any{"owner": "o", "repo": "r"}))
						if got := strings.Join(e.Headers["X-Seen-Path"], ""); got != "/anything/repos/o/r" {
							t.Errorf("{path} in the following handler is %q, want the tool's path", got)
						}
						if got := strings.Join(e.Headers["X-Seen-Tool"], ""); got != "repo" {
							t.Errorf("{http.mcp.tool} in the following handler is %q", got)
						}
					})
					runRESTScenarios(t, c, "/mcp")
				})
			}
		})
	}
}

func TestLiveRouteModeFailures(t *testing.T) {
	t.Run("nothing after mcp", func(t *testing.T) {
		loadCaddyfile(t, "", `http://:{$LIVE_PORT} {
	route {
		mcp /mcp {
			tool orders {
				description "List orders."
				get /orders
			}
		}
	}
}`)
		for _, era := range eras {
			c := connect(t, "/mcp", era, nil)
			wantToolError(t, callTool(t, c, "orders", nil), "nothing after mcp handled GET /orders")
			stillServing(t, "/mcp")
		}
	})

	t.Run("reverse_proxy to an upstream that is down", func(t *testing.T) {
		loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	route {
		mcp /mcp {
			tool orders {
				description "List orders."
				get /orders
			}
		}
		reverse_proxy %s
	}
}`, mcptest.ClosedAddr(t)))
		for _, era := range eras {
			c := connect(t, "/mcp", era, nil)
			wantToolError(t, callTool(t, c, "orders", nil), "GET /orders", "502")
			stillServing(t, "/mcp")
		}
	})

	t.Run("a handler that answers nothing for the path", func(t *testing.T) {
		loadCaddyfile(t, "", `http://:{$LIVE_PORT} {
	mcp /mcp {
		tool orders {
			description "List orders."
			get /orders
		}
	}
	respond /other "not for tools"
}`)
		c := connect(t, "/mcp", eras[0], nil)
		wantToolError(t, callTool(t, c, "orders", nil), "nothing after mcp handled GET /orders")
	})

	t.Run("handler answer over the cap aborts cleanly", func(t *testing.T) {
		bin := mcptest.StartHTTPBin(t)
		loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	route {
		mcp /mcp {
			max_response_size 1KiB
			tool bytes {
				description "n bytes"
				get /stream-bytes/{n}
				arg n integer required
			}
		}
		reverse_proxy %s
	}
}`, bin))
		for _, era := range eras {
			c := connect(t, "/mcp", era, nil)
			wantToolError(t, callTool(t, c, "bytes", map[string]any{"n": 50000}), "max_response_size (1KiB)")
			wantOK(t, callTool(t, c, "bytes", map[string]any{"n": 100}))
		}
	})
}

// TestLiveSecretsRouteModeAbortLog: in route mode, reverse_proxy logs the
// request it proxied, at warn, when it aborts an answer (over
// max_response_size, or an upstream that breaks off the body). Caddy
// redacts the credential headers there (Authorization, Cookie,
// Proxy-Authorization) but no other; docs/mcp.md says to put a route-mode
// secret in Authorization, or filter the log. This checks that the
// recommended form keeps the secret out of the log.
func TestLiveSecretsRouteModeAbortLog(t *testing.T) {
	const secret = "abort-log-secret-6a2f"
	t.Setenv("CADDY_MCP_SE_ABORT", secret)
	f := startFaultServer(t)
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
	}`, logFile), fmt.Sprintf(`http://:{$LIVE_PORT} {
	route /route {
		mcp {
			max_response_size 1MiB
			header Authorization "Bearer {env.CADDY_MCP_SE_ABORT}"
			tool big {
				description "A 50 MB body."
				get /big
			}
			tool reset {
				description "Reset mid-body."
				get /reset
			}
		}
		reverse_proxy %s
	}
}`, f.addr()))
	c := connect(t, "/route", eras[0], nil)
	wantToolError(t, callTool(t, c, "big", nil), "max_response_size")
	wantToolError(t, callTool(t, c, "reset", nil), "aborted")
	logs, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(logs), secret); i >= 0 {
		t.Errorf("the log holds the header secret: …%s…", logs[max(0, i-300):i+len(secret)])
	}
}
