package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/declarations"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// TestNewBackendAPI: the identifiers the declarations show are the ones
// the binding answers to, each calling the backend's own tool name, with
// the collisions (and only those) reported.
func TestNewBackendAPI(t *testing.T) {
	tools := []codemode.APITool{
		{Name: "get-x", Description: "First.", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
		{Name: "get_x", Description: "Second.", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)},
		{Name: "delete"},
		{Name: "get.x"},
	}
	api := codemode.NewBackendAPI(codemode.APIBackend{Name: "shop", Tools: tools, Instructions: "Use ids."})

	wantTools := map[string]string{"get_x": "get-x", "get_x_2": "get_x", "delete_": "delete", "get_x_3": "get.x"}
	if got := api.Tools(); !reflect.DeepEqual(got, wantTools) {
		t.Errorf("tools %v, want %v", got, wantTools)
	}
	wantCollisions := []declarations.Collision{{Tool: "get_x", Sanitized: "get_x", Assigned: "get_x_2"}, {Tool: "get.x", Sanitized: "get_x", Assigned: "get_x_3"}}
	if got := api.Collisions(); !reflect.DeepEqual(got, wantCollisions) {
		t.Errorf("collisions %v, want %v", got, wantCollisions)
	}

	decls := codemode.NewAPI([]*codemode.BackendAPI{api}).Declarations()
	// The same text as the tools named one by one with AssignNames.
	idents, _ := declarations.AssignNames([]string{"get-x", "get_x", "delete", "get.x"})
	byHand := declarations.Backend{Name: "shop", Instructions: "Use ids."}
	for i, tool := range tools {
		byHand.Tools = append(byHand.Tools, declarations.Tool{Name: tool.Name, Ident: idents[i], Description: tool.Description,
			InputSchema: tool.InputSchema, OutputSchema: tool.OutputSchema})
	}
	if want := declarations.Render([]declarations.Backend{byHand}); decls != want {
		t.Errorf("declarations:\n%s\nwant:\n%s", decls, want)
	}

	var mu sync.Mutex
	var called []string
	b := api.Binding(func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
		mu.Lock()
		defer mu.Unlock()
		called = append(called, tool)
		return codemode.Answer{Value: []byte(fmt.Sprintf("%q", tool))}, nil
	})
	if b.Name != "shop" || b.Unavailable != "" || !reflect.DeepEqual(b.Tools, wantTools) {
		t.Errorf("binding %q, unavailable %q, tools %v", b.Name, b.Unavailable, b.Tools)
	}
	var code strings.Builder
	code.WriteString("const out = [];\n")
	for _, ident := range slices.Sorted(maps.Keys(wantTools)) {
		if !strings.Contains(decls, "  "+ident+"(input") {
			t.Errorf("the declarations do not declare %s", ident)
		}
		code.WriteString("out.push(await shop." + ident + "({}));\n")
	}
	code.WriteString("return out;")
	codemodetest.WantValue(t, codemodetest.Run(t, codemode.Limits{}, code.String(), b), `["delete","get-x","get_x","get.x"]`)
	if strings.Join(called, " ") != "delete get-x get_x get.x" {
		t.Errorf("calls %v", called)
	}
}

// TestUnavailableBackendAPI: a backend that is down is declared as such,
// with no tools, and its binding takes whatever the code calls.
func TestUnavailableBackendAPI(t *testing.T) {
	api := codemode.NewBackendAPI(codemode.APIBackend{Name: "down", Unavailable: "connection refused",
		Tools: []codemode.APITool{{Name: "ignored"}}, Instructions: "ignored too"})
	if api.Tools() != nil || api.Collisions() != nil {
		t.Errorf("tools %v, collisions %v, want none", api.Tools(), api.Collisions())
	}
	want := "/** unavailable right now (connection refused); calls to it fail until it is back */\ndeclare const down: {};\n"
	if got := codemode.NewAPI([]*codemode.BackendAPI{api}).Declarations(); got != want {
		t.Errorf("declarations %q, want %q", got, want)
	}
	b := api.Binding(func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
		return codemode.Answer{Value: []byte(`"` + tool + ` is back"`)}, nil
	})
	if b.Name != "down" || b.Unavailable != "connection refused" || b.Tools != nil {
		t.Errorf("binding %q, unavailable %q, tools %v", b.Name, b.Unavailable, b.Tools)
	}
	codemodetest.WantValue(t, codemodetest.Run(t, codemode.Limits{}, `return await down.anything({})`, b), `"anything is back"`)
}

// TestAPIDescription pins the whole text a model reads: the rules with
// the backends' names and the limits, then the declarations.
func TestAPIDescription(t *testing.T) {
	shop := codemode.NewBackendAPI(codemode.APIBackend{Name: "shop", Tools: []codemode.APITool{{Name: "list-items", Description: "Lists the items."}}})
	weather := codemode.NewBackendAPI(codemode.APIBackend{Name: "weather", Unavailable: "timeout"})
	l := codemode.Limits{Timeout: 20 * time.Second, MaxOutput: 8192, MaxToolCalls: 7}
	want := "Run JavaScript or TypeScript that calls the tools declared below. Each backend is a global object (shop, weather); each tool an async function taking one object: const r = await shop.<tool>({...}).\n" +
		"\n" +
		"- The code is the body of an async function: await the calls, and return the result (it comes back as JSON).\n" +
		"- A call resolves to the tool's structured result, or its text parsed as JSON, or its text. A failure throws an Error with the backend's message.\n" +
		"- A result its backend cut to size is the shortened value: tools.cut(r) then says what was left out (else undefined).\n" +
		"- Run independent calls together with Promise.all; filter and compute in the code; return only what is needed.\n" +
		"- console.log output is returned too; result and output are cut at 8192 bytes. Limits: 20s and 7 tool calls per run; no network, fetch, modules or files.\n" +
		"\n" +
		"```ts\n" +
		"declare const shop: {\n" +
		"  /**\n" +
		"   * Lists the items.\n" +
		"   * Calls the backend tool \"list-items\".\n" +
		"   */\n" +
		"  list_items(input?: {}): Promise<unknown>;\n" +
		"};\n" +
		"\n" +
		"/** unavailable right now (timeout); calls to it fail until it is back */\n" +
		"declare const weather: {};\n" +
		"```"
	if got := codemode.NewAPI([]*codemode.BackendAPI{shop, weather}).Description(l); got != want {
		t.Errorf("description:\n%s\nwant:\n%s", got, want)
	}

	// With no backend the example still names a global.
	rules := codemode.NewAPI(nil).Rules(l)
	for _, w := range []string{"global object ()", "await api.<tool>"} {
		if !strings.Contains(rules, w) {
			t.Errorf("rules without backends lack %q:\n%s", w, rules)
		}
	}
}
