package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// unreachableURL is a backend nobody listens on: port 1 on loopback
// refuses at once.
const unreachableURL = "http://127.0.0.1:1/mcp"

// loadCodeMode loads a codemode handler from its JSON config the way Caddy
// does when a config is loaded: strict decoding, then Provision and
// Validate. unload cancels the handler's context, which runs its Cleanup,
// as Caddy does when the config is replaced; it runs at most once, and at
// the end of the test if the test did not call it.
func loadCodeMode(t testing.TB, config string) (cm *CodeMode, unload func(), err error) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	// Caddy cancels a context once; a second cancel would run Cleanup again.
	unload = sync.OnceFunc(cancel)
	t.Cleanup(unload)
	mod, err := ctx.LoadModuleByID("http.handlers.codemode", json.RawMessage(config))
	if err != nil {
		return nil, unload, err
	}
	return mod.(*CodeMode), unload, nil
}

// loadCodeModeCaddyfile parses a codemode Caddyfile snippet, turns it into
// JSON as the adapter does, and loads that.
func loadCodeModeCaddyfile(t *testing.T, input string) (*CodeMode, func(), error) {
	t.Helper()
	cm, err := unmarshalCodeMode(input)
	if err != nil {
		t.Fatalf("the Caddyfile does not parse: %v", err)
	}
	config, err := json.Marshal(cm)
	if err != nil {
		t.Fatalf("the parsed handler does not marshal: %v", err)
	}
	return loadCodeMode(t, string(config))
}

// poolRefs is how many loaded handlers hold the pooled backend under key.
func poolRefs(key string) int {
	n, _ := backendPool.References(key)
	return n
}

func TestCodeModeProvisionReportsConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		// Exactly one of json and caddyfile is set.
		json      string
		caddyfile string
		wantErr   []string
	}{
		{
			name:      "backend name that is not an identifier",
			caddyfile: "codemode {\n backend my-api " + unreachableURL + "\n}",
			wantErr:   []string{`backend "my-api"`, "is not a JavaScript identifier"},
		},
		{
			name:      "backend name starting with a digit",
			caddyfile: "codemode {\n backend 2fa " + unreachableURL + "\n}",
			wantErr:   []string{`backend "2fa"`, "is not a JavaScript identifier"},
		},
		{
			name:      "backend name with a dot",
			caddyfile: "codemode {\n backend api.v2 " + unreachableURL + "\n}",
			wantErr:   []string{`backend "api.v2"`, "is not a JavaScript identifier"},
		},
		{
			name:    "non-ASCII backend name",
			json:    `{"backends":[{"name":"météo","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`backend "météo"`, "is not a JavaScript identifier"},
		},
		{
			name:    "empty backend name",
			json:    `{"backends":[{"name":"","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`backend ""`, "is not a JavaScript identifier"},
		},
		{
			name:      "reserved word",
			caddyfile: "codemode {\n backend class " + unreachableURL + "\n}",
			wantErr:   []string{`backend "class"`, "is a reserved word"},
		},
		{
			name:      "strict-mode reserved word",
			caddyfile: "codemode {\n backend let " + unreachableURL + "\n}",
			wantErr:   []string{`backend "let"`, "is a reserved word"},
		},
		{
			name:      "backend named console",
			caddyfile: "codemode {\n backend console " + unreachableURL + "\n}",
			wantErr:   []string{`backend "console"`, "shadows the sandbox global console"},
		},
		{
			name:      "backend named JSON",
			caddyfile: "codemode {\n backend JSON " + unreachableURL + "\n}",
			wantErr:   []string{`backend "JSON"`, "shadows the sandbox global JSON"},
		},
		{
			name:      "backend named fetch",
			caddyfile: "codemode {\n backend fetch " + unreachableURL + "\n}",
			wantErr:   []string{`backend "fetch"`, "shadows the sandbox global fetch"},
		},
		{
			name:      "backend named setTimeout",
			caddyfile: "codemode {\n backend setTimeout " + unreachableURL + "\n}",
			wantErr:   []string{`backend "setTimeout"`, "shadows the sandbox global setTimeout"},
		},
		{
			name: "bad name after a good backend",
			caddyfile: "codemode {\n backend shop " + unreachableURL + "\n backend my-api " + unreachableURL +
				"\n}",
			wantErr: []string{`backend "my-api"`, "is not a JavaScript identifier"},
		},
		{
			name:      "duplicate backend names",
			caddyfile: "codemode {\n backend shop http://127.0.0.1:1/a\n backend shop http://127.0.0.1:1/b\n}",
			wantErr:   []string{`backend "shop" is defined twice`},
		},
		{
			name:      "duplicate backends with the same settings",
			caddyfile: "codemode {\n backend shop " + unreachableURL + "\n backend shop " + unreachableURL + "\n}",
			wantErr:   []string{`backend "shop" is defined twice`},
		},
		{
			name:    "ftp URL",
			json:    `{"backends":[{"name":"files","url":"ftp://files.example.com/mcp"}]}`,
			wantErr: []string{`backend "files"`, `url "ftp://files.example.com/mcp": want an http:// or https:// URL`},
		},
		{
			name:    "URL without a scheme",
			json:    `{"backends":[{"name":"shop","url":"127.0.0.1:8080/mcp"}]}`,
			wantErr: []string{`backend "shop"`, `url "127.0.0.1:8080/mcp"`, "want an http:// or https:// URL"},
		},
		{
			name:    "URL without a host",
			json:    `{"backends":[{"name":"shop","url":"http:///mcp"}]}`,
			wantErr: []string{`backend "shop"`, `url "http:///mcp"`, "want an http:// or https:// URL"},
		},
		{
			name:    "ws URL",
			json:    `{"backends":[{"name":"shop","url":"ws://127.0.0.1:8080/mcp"}]}`,
			wantErr: []string{`backend "shop"`, `url "ws://127.0.0.1:8080/mcp"`},
		},
		{
			name:    "missing URL in JSON config",
			json:    `{"backends":[{"name":"shop"}]}`,
			wantErr: []string{`backend "shop"`, `url ""`, "want an http:// or https:// URL"},
		},
		{
			name:    "unknown transport in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","transport":"websocket"}]}`,
			wantErr: []string{`backend "shop"`, `transport "websocket": want streamable_http or sse`},
		},
		{
			name:    "negative backend timeout in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","timeout":"-1s"}]}`,
			wantErr: []string{`backend "shop"`, "timeout must not be negative"},
		},
		{
			name:    "negative backend max_tools in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","max_tools":-1}]}`,
			wantErr: []string{`backend "shop"`, "max_tools must not be negative"},
		},
		{
			name:    "negative backend max_stream_size in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","max_stream_size":-5}]}`,
			wantErr: []string{`backend "shop"`, "max_stream_size must not be negative"},
		},
		{
			name:      "no backends",
			caddyfile: "codemode {\n name gateway\n}",
			wantErr:   []string{"codemode needs at least one backend"},
		},
		{
			name:    "empty backend list",
			json:    `{"backends":[]}`,
			wantErr: []string{"codemode needs at least one backend"},
		},
		{
			name:    "only null backends",
			json:    `{"backends":[null]}`,
			wantErr: []string{"codemode needs at least one backend"},
		},
		{
			name:      "tool_name with a space",
			caddyfile: "codemode {\n tool_name \"run code\"\n backend shop " + unreachableURL + "\n}",
			wantErr:   []string{`tool_name "run code"`, "letters, digits"},
		},
		{
			name:    "tool_name too long",
			json:    `{"tool_name":"` + strings.Repeat("x", 129) + `","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`tool_name "xxxx`, "1 to 128"},
		},
		{
			name:    "tool_name with a slash",
			json:    `{"tool_name":"run/code","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`tool_name "run/code"`},
		},
		{
			name:    "negative max_tool_calls",
			json:    `{"max_tool_calls":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_tool_calls must not be negative"},
		},
		{
			name:    "negative max_output",
			json:    `{"max_output":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_output must not be negative"},
		},
		{
			name:    "negative max_code_size",
			json:    `{"max_code_size":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_code_size must not be negative"},
		},
		{
			name:    "negative max_concurrent",
			json:    `{"max_concurrent":-2,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_concurrent must not be negative"},
		},
		{
			name:    "negative max_memory",
			json:    `{"max_memory":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_memory must not be negative"},
		},
		{
			name:    "max_memory too small for a worker",
			json:    `{"max_memory":1048576,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_memory 1 MiB: a worker process needs at least 64 MiB"},
		},
		{
			name:    "unknown isolation",
			json:    `{"isolation":"v8","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`isolation "v8": want process or in_process`},
		},
		{
			name:    "workers in process",
			json:    `{"isolation":"in_process","workers":2,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"workers: only with isolation process"},
		},
		{
			name:    "negative workers",
			json:    `{"workers":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"workers must not be negative"},
		},
		{
			name:    "negative timeout",
			json:    `{"timeout":"-5s","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"timeout must not be negative"},
		},
		{
			name:    "negative max_request_size",
			json:    `{"max_request_size":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_request_size must not be negative"},
		},
		{
			name:      "allow_origins entry that is not an origin",
			caddyfile: "codemode {\n backend shop " + unreachableURL + "\n allow_origins app.example.com\n}",
			wantErr:   []string{"allow_origins", "app.example.com"},
		},
		{
			name:    "allow_hosts entry that is not a host",
			json:    `{"allow_hosts":["gateway.lan/x"],"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`allow_hosts: "gateway.lan/x" is not a host name`},
		},
		{
			name:    "unknown backend field in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","header":{"X":["y"]}}]}`,
			wantErr: []string{`"header"`},
		},
		{
			name:    "unknown handler field in JSON config",
			json:    `{"backend":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`"backend"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.caddyfile != "" {
				_, _, err = loadCodeModeCaddyfile(t, tc.caddyfile)
			} else {
				_, _, err = loadCodeMode(t, tc.json)
			}
			if err == nil {
				t.Fatalf("loaded without error, want one containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// Valid names just beside the refused ones load.
func TestCodeModeProvisionAcceptsIdentifierNames(t *testing.T) {
	for _, name := range []string{"api", "my_api", "$api", "_private", "api2", "Weather", "consoleApi", "classes", "json"} {
		t.Run(name, func(t *testing.T) {
			cm, _, err := loadCodeMode(t, `{"backends":[{"name":"`+name+`","url":"`+unreachableURL+`"}]}`)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if len(cm.backends) != 1 || cm.backends[0].name != name {
				t.Errorf("backends %v, want one named %s", cm.backends, name)
			}
		})
	}
}

// A config that sets nothing gets the documented defaults.
func TestCodeModeProvisionDefaults(t *testing.T) {
	cm, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend shop "+unreachableURL+"\n}")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if cm.Name != "caddy-mcp-codemode" {
		t.Errorf("name %q, want caddy-mcp-codemode", cm.Name)
	}
	if cm.ToolName != "execute" {
		t.Errorf("tool_name %q, want execute", cm.ToolName)
	}
	if cm.Timeout != caddy.Duration(30*time.Second) {
		t.Errorf("timeout %v, want 30s", time.Duration(cm.Timeout))
	}
	if cm.MaxRequestSize != 1<<20 {
		t.Errorf("max_request_size %d, want 1MiB", cm.MaxRequestSize)
	}
	want := codemode.Limits{
		Timeout:       30 * time.Second,
		MaxToolCalls:  100,
		MaxOutput:     24 << 10,
		MaxCodeSize:   64 << 10,
		MaxConcurrent: 2 * runtime.GOMAXPROCS(0),
		MaxMemory:     256 << 20, // one worker's, in process isolation
	}
	got := cm.runner.Limits()
	if got.Timeout != want.Timeout || got.MaxToolCalls != want.MaxToolCalls || got.MaxOutput != want.MaxOutput ||
		got.MaxCodeSize != want.MaxCodeSize || got.MaxConcurrent != want.MaxConcurrent || got.MaxMemory != want.MaxMemory {
		t.Errorf("runner limits\n%s\nwant\n%s", asJSON(got), asJSON(want))
	}
	if len(cm.backends) != 1 || cm.backends[0].name != "shop" {
		t.Fatalf("backends %v, want shop", cm.backends)
	}
	// Workers of the default pool: one per execution max_concurrent allows.
	if cm.poolKey != fmt.Sprintf("%d/%d", 256<<20, 2*runtime.GOMAXPROCS(0)) {
		t.Errorf("worker pool %q, want 256 MiB workers, max_concurrent of them", cm.poolKey)
	}
}

// In process the sandbox keeps the first stage's ceiling on the heap, and
// no worker pool is made.
func TestCodeModeProvisionInProcessDefaults(t *testing.T) {
	cm, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend shop "+unreachableURL+"\n isolation in_process\n}")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if got := cm.runner.Limits().MaxMemory; got != 1<<30 {
		t.Errorf("max_memory %d, want 1GiB", got)
	}
	if cm.poolKey != "" {
		t.Errorf("worker pool %q in in_process isolation", cm.poolKey)
	}
}

// Every subdirective reaches what it configures: the runner's limits, the
// endpoint, the backends in order.
func TestCodeModeProvisionAppliesSettings(t *testing.T) {
	cm, _, err := loadCodeModeCaddyfile(t, `codemode {
		name gateway
		instructions "Chain the calls in code."
		tool_name run_code
		backend shop http://127.0.0.1:1/shop {
			header Authorization "Bearer {env.API_TOKEN}"
			transport streamable_http
			tools list_* get_order
			timeout 5s
		}
		backend weather http://127.0.0.1:1/weather {
			transport sse
		}
		timeout 20s
		max_tool_calls 7
		max_output 8KiB
		max_code_size 4KiB
		max_concurrent 3
		max_memory 128MiB
		workers 2
		max_request_size 64KiB
		allow_origins https://app.example.com
		allow_hosts gateway.lan
	}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	l := cm.runner.Limits()
	if l.Timeout != 20*time.Second || l.MaxToolCalls != 7 || l.MaxOutput != 8<<10 || l.MaxCodeSize != 4<<10 ||
		l.MaxConcurrent != 3 || l.MaxMemory != 128<<20 {
		t.Errorf("runner limits %s", asJSON(l))
	}
	if cm.poolKey != fmt.Sprintf("%d/2", 128<<20) {
		t.Errorf("worker pool %q, want two workers of 128 MiB", cm.poolKey)
	}
	if cm.MaxRequestSize != 64<<10 || !cm.origins["https://app.example.com"] || !cm.hosts["gateway.lan"] {
		t.Errorf("endpoint: max_request_size %d, origins %v, hosts %v", cm.MaxRequestSize, cm.origins, cm.hosts)
	}
	if len(cm.backends) != 2 || cm.backends[0].name != "shop" || cm.backends[1].name != "weather" {
		t.Fatalf("backends %v, want shop then weather", cm.backends)
	}
	if cm.backends[0].key == cm.backends[1].key || cm.backends[0].backend == cm.backends[1].backend {
		t.Error("two different backends share one pooled client")
	}
	// The pool key is a hash of the settings: no header value in it.
	for _, ref := range cm.backends {
		if strings.Contains(ref.key, "API_TOKEN") || strings.Contains(ref.key, "Bearer") {
			t.Errorf("pool key %q carries a header value", ref.key)
		}
	}
	// The rules the description opens with, from these backends and limits.
	apis := make([]*codemode.BackendAPI, len(cm.backends))
	for i, ref := range cm.backends {
		apis[i] = codemode.NewBackendAPI(codemode.APIBackend{Name: ref.name})
	}
	rules := codemode.NewAPI(apis).Rules(cm.runner.Limits())
	for _, want := range []string{"(shop, weather)", "await shop.<tool>", "cut at 8192 bytes", "20s per run", "7 tool calls per run"} {
		if !strings.Contains(rules, want) {
			t.Errorf("sandbox rules do not mention %q:\n%s", want, rules)
		}
	}
}

// Provisioning never waits on a backend: one that refuses connections
// loads at once, and the endpoint describes it as unavailable.
func TestCodeModeProvisionDoesNotBlockOnUnreachableBackend(t *testing.T) {
	start := time.Now()
	cm, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend down "+unreachableURL+" {\n  timeout 1m\n }\n}")
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("load with an unreachable backend: %v", err)
	}
	// A guard against blocking on the network, not a performance check.
	if elapsed > 2*time.Second {
		t.Errorf("Provision took %v with an unreachable backend; it must not wait for it", elapsed)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	text := cm.describe.current(ctx)
	if !strings.Contains(text, "declare const down") || !strings.Contains(text, "unavailable right now") {
		t.Errorf("the tool description should declare the backend and call it unavailable:\n%s", text)
	}
	bindings := cm.bindings(ctx)
	if len(bindings) != 1 || bindings[0].Name != "down" || bindings[0].Unavailable == "" {
		t.Errorf("bindings %s, want down marked unavailable", asJSON(bindings))
	}
}

// Two handlers with the same backend settings (as during a config reload,
// when the new config is provisioned before the old one is cleaned up)
// share one pooled client, and the client closes only when the last of
// them is cleaned up.
func TestCodeModeBackendPoolSharesAndReleases(t *testing.T) {
	const config = `{"backends":[{"name":"pooled","url":"http://127.0.0.1:1/pool-test","headers":{"Authorization":["Bearer {env.API_TOKEN}"]}}]}`
	first, unloadFirst, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatalf("load the first handler: %v", err)
	}
	key := first.backends[0].key
	if n := poolRefs(key); n != 1 {
		t.Fatalf("after one handler: %d references, want 1", n)
	}

	second, unloadSecond, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatalf("load the second handler: %v", err)
	}
	if second.backends[0].key != key {
		t.Errorf("same settings, different pool keys: %q and %q", key, second.backends[0].key)
	}
	if second.backends[0].backend != first.backends[0].backend {
		t.Error("same settings, but the second handler got its own client")
	}
	if n := poolRefs(key); n != 2 {
		t.Fatalf("after two handlers: %d references, want 2", n)
	}

	// Any other setting makes another client.
	other, _, err := loadCodeMode(t, `{"backends":[{"name":"pooled","url":"http://127.0.0.1:1/pool-test","headers":{"Authorization":["Bearer {env.OTHER_TOKEN}"]}}]}`)
	if err != nil {
		t.Fatalf("load the handler with another header: %v", err)
	}
	if other.backends[0].key == key || other.backends[0].backend == first.backends[0].backend {
		t.Error("a backend with another header shares the client")
	}
	if n := poolRefs(key); n != 2 {
		t.Errorf("another backend changed the count to %d, want 2", n)
	}

	shared := first.backends[0].backend
	unloadFirst()
	if n := poolRefs(key); n != 1 {
		t.Fatalf("after cleaning up one handler: %d references, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := shared.Call(ctx, "anything", json.RawMessage(`{}`)); err == nil || strings.Contains(err.Error(), "shutting down") {
		t.Errorf("with a handler still using it, the client must stay open; call error: %v", err)
	}

	unloadSecond()
	if n, ok := backendPool.References(key); ok {
		t.Errorf("after cleaning up both handlers the pool still holds the client (%d references)", n)
	}
	if _, err := shared.Call(ctx, "anything", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("the released client should be closed; call error: %v", err)
	}

	// Loading the settings again starts a fresh client.
	again, _, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatalf("load again: %v", err)
	}
	if again.backends[0].backend == shared {
		t.Error("a closed client was handed out again")
	}
	if n := poolRefs(key); n != 1 {
		t.Errorf("after loading again: %d references, want 1", n)
	}
}

// A config that fails to load gives back the clients it took before it
// failed (Caddy runs Cleanup after a failed Provision).
func TestCodeModeFailedProvisionReleasesBackends(t *testing.T) {
	const good = `{"name":"kept","url":"http://127.0.0.1:1/release-test"}`
	holder, _, err := loadCodeMode(t, `{"backends":[`+good+`]}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	key := holder.backends[0].key

	for name, bad := range map[string]string{
		"bad url":        `{"name":"broken","url":"ftp://127.0.0.1/mcp"}`,
		"bad name":       `{"name":"my-api","url":"http://127.0.0.1:1/mcp"}`,
		"duplicate name": good,
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := loadCodeMode(t, `{"backends":[`+good+`,`+bad+`]}`); err == nil {
				t.Fatal("loaded without error")
			}
			if n := poolRefs(key); n != 1 {
				t.Errorf("after the failed load: %d references, want 1 (the failed config kept its hold)", n)
			}
		})
	}

	_, _, err = loadCodeMode(t, `{"max_tool_calls":-1,"backends":[`+good+`]}`)
	if err == nil {
		t.Fatal("loaded a negative max_tool_calls without error")
	}
	if n := poolRefs(key); n != 1 {
		t.Errorf("after a failed load before the backends: %d references, want 1", n)
	}
}

// A backend header whose field name is not a valid HTTP field name can
// never be sent; like mcp's `header`, it should be refused at load time,
// naming the backend, instead of leaving the backend unavailable forever.
func TestCodeModeProvisionRejectsInvalidHeaderField(t *testing.T) {
	_, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend shop "+unreachableURL+" {\n  header \"X Key\" v\n }\n}")
	if err == nil {
		t.Fatal("loaded without error, want one naming the backend and the header field")
	}
	for _, want := range []string{`backend "shop"`, `"X Key"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// Every codemode handler in the codemode_* golden files loads as Caddy
// would load it. (TestCaddyfileAdapt loads only the mcp handlers.)
func TestCodeModeAdaptGoldensLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "adapt", "codemode_*.caddyfiletest"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no codemode golden files in testdata/adapt")
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
			if !strings.HasPrefix(strings.TrimSpace(expected), "{") {
				t.Skip("an error golden: nothing to load")
			}
			handlers := adaptCodeModeHandlers(t, strings.TrimSpace(input)+"\n")
			if len(handlers) == 0 {
				t.Fatal("the adapted config has no codemode handler")
			}
			for i, raw := range handlers {
				if _, _, err := loadCodeMode(t, string(raw)); err != nil {
					t.Errorf("codemode handler %d does not load: %v", i, err)
				}
			}
		})
	}
}

// adaptCodeModeHandlers adapts a whole Caddyfile and returns the JSON of
// every codemode handler in it, without the "handler" key.
func adaptCodeModeHandlers(t *testing.T, input string) []json.RawMessage {
	t.Helper()
	out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	for _, w := range warnings {
		t.Errorf("adapt warning: %s:%d: %s", w.File, w.Line, w.Message)
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("adapted JSON: %v", err)
	}
	var found []json.RawMessage
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["handler"] == "codemode" {
				delete(v, "handler")
				raw, _ := json.Marshal(v)
				found = append(found, raw)
				return
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(doc)
	return found
}
