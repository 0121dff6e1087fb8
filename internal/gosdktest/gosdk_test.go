package gosdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	_ "github.com/caddy-mcp/caddy-mcp"
	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// endpoints is the one Caddy of this package's tests: an `mcp` endpoint
// over go-httpbin at /bin, and a `codemode` endpoint at /code whose
// backends are /bin, a server of 2026-07-28 alone and one of 2025-11-25.
type endpoints struct {
	base                 string
	modern, legacy       *Counts
	modernSrv, legacySrv *Switchable
}

// startCaddy runs the Caddy of a test (caddy.Load replaces the config of
// the whole process, so the tests of this package run one at a time) and
// the servers behind it, all stopped when the test ends.
func startCaddy(t *testing.T) endpoints {
	t.Helper()
	httpbin := mcptest.StartHTTPBin(t)
	var modern, legacy Counts
	modernSrv := StartSwitchable(t, ModernOnly(&modern))
	legacySrv := StartSwitchable(t, LegacyOnly(&legacy))
	port := incaddy.FreePort(t)
	text := fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%[1]s {
	mcp /bin {
		name httpbin
		upstream %[2]s
		tool anything {
			description "Echo the query back."
			get /anything
			arg word string required "A word"
			arg n integer "A number"
		}
		tool status {
			description "Answer with an HTTP status."
			get /status/{code}
			arg code integer required "The status"
		}
	}
	codemode /code {
		name eras
		# The clients read every declaration: past 2 KB, auto would offer search.
		discovery all
		backend bin http://127.0.0.1:%[1]s/bin
		backend modern %[3]s
		backend legacy %[4]s
		timeout 20s
		# One execution at a time here: one worker starts, not four, on
		# machines where the tests share two cores.
		workers 1
	}
}
`, port, httpbin, modernSrv.URL, legacySrv.URL)
	incaddy.Run(t, "gosdktest", text, nil)
	return endpoints{base: "http://127.0.0.1:" + port, modern: &modern, legacy: &legacy, modernSrv: modernSrv, legacySrv: legacySrv}
}

// client is a Go SDK client session and the progress notifications it got.
type client struct {
	*sdk.ClientSession
	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
}

func (c *client) notes() []*sdk.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*sdk.ProgressNotificationParams(nil), c.progress...)
}

// waitNotes returns the progress notifications once there are n, or
// after 5 seconds.
func (c *client) waitNotes(n int) []*sdk.ProgressNotificationParams {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if notes := c.notes(); len(notes) >= n {
			return notes
		}
	}
	return c.notes()
}

// connect connects the Go SDK's client to url asking for version ("" is
// the SDK's default) and checks that version is the one negotiated.
func connect(t *testing.T, url, version, want string) *client {
	t.Helper()
	c := &client{}
	sc := sdk.NewClient(&sdk.Implementation{Name: "gosdk-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, req.Params)
			c.mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var opts *sdk.ClientSessionOptions
	if version != "" {
		opts = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := sc.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, opts)
	if err != nil {
		t.Fatalf("connecting to %s (%q): %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("%s: negotiated %s, want %s", url, got, want)
	}
	c.ClientSession = cs
	return c
}

// call calls a tool, with a progress token when token is not empty.
func (c *client) call(t *testing.T, name string, args any, token string) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if token != "" {
		params.SetProgressToken(token)
	}
	res, err := c.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// toolNames lists the endpoint's tools.
func (c *client) toolNames(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// eras are the protocol versions the Go SDK client asks for: its default
// (2026-07-28, after server/discover) and the newest of the handshake.
var eras = []struct{ ask, want string }{
	{"", Modern},
	{Legacy, Legacy},
}

func structured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("structuredContent %s: %v", raw, err)
	}
}
