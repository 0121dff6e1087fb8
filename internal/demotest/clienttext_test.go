package demotest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// maxClientText is what Claude Code and the clients that copy it show of
// a tool description and of a server's instructions.
const maxClientText = 2048

// TestDemoFitsClients measures what every endpoint of the demo gives a
// client to show the model: each description and the instructions are
// within 2 KB. Code mode's declarations do not fit in it, so its execute
// description names the backends and the flow, and its search tool
// answers with what matches, once.
func TestDemoFitsClients(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	d := startDemo(t)
	for _, ep := range []struct{ path, server string }{{"/mcp", "shop"}, {"/route-mcp", "shop-route"}, {"/code", "shop-code"}} {
		c, init := mcptest.Connect(t, d.mcpBase+ep.path, mcptest.Options{Name: "demotest"})
		if n := len(init.Instructions); n > maxClientText {
			t.Errorf("%s: instructions of %d bytes", ep.path, n)
		}
		list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			t.Logf("%s %s: description of %d bytes", ep.path, tool.Name, len(tool.Description))
			if n := len(tool.Description); n > maxClientText || n == 0 {
				t.Errorf("%s %s: description of %d bytes:\n%s", ep.path, tool.Name, n, tool.Description)
			}
		}
		if ep.path != "/code" {
			continue
		}
		if len(list.Tools) != 2 || list.Tools[0].Name != "execute" || list.Tools[1].Name != "search" {
			t.Fatalf("code mode lists %d tools, want execute and search", len(list.Tools))
		}
		desc := list.Tools[0].Description
		for _, want := range []string{"- shop: 6 tools: ", "- refunds: 1 tools: refund_order", "call the search tool once", "tools.cut(r)"} {
			if !strings.Contains(desc, want) {
				t.Errorf("the execute description lacks %q:\n%s", want, desc)
			}
		}
		const query = "list the orders of a customer"
		res, err := mcptest.CallTool(c, "search", map[string]any{"query": query})
		if err != nil || res.IsError {
			t.Fatalf("search: %v %s", err, mcptest.ResultText(res))
		}
		text := mcptest.ResultText(res)
		if !regexp.MustCompile(`^\d of 7 tools match "`+query+`"`).MatchString(text) || !strings.Contains(text, "- shop.list_customer_orders\n") {
			t.Errorf("search answer:\n%s", text)
		}
		// Each declaration once, and each description once in it.
		for _, once := range []string{"list_customer_orders(input", "declare const shop", "List one customer's orders"} {
			if n := strings.Count(text, once); n != 1 {
				t.Errorf("%q is %d times in the answer:\n%s", once, n, text)
			}
		}
		if res.StructuredContent != nil {
			t.Errorf("the search answer is sent twice, as structuredContent too")
		}
	}
}
