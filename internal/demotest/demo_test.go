// Package demotest runs Caddyfile.example, the offline demo, for real and
// calls every demo tool over MCP on both of its endpoints.
//
// It is a package of its own so that it runs in its own test binary:
// caddy.Load replaces the running config of the whole process, which would
// pull the rug from under other live tests running in the same one.
package demotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	_ "github.com/caddy-mcp/caddy-mcp"
	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// The ports Caddyfile.example uses; the test swaps them for free ones.
const (
	exampleMCPPort = "8080"
	exampleAPIPort = "8081"
)

var demoTools = []string{"get_customer", "get_order", "list_customer_orders", "list_customers", "list_orders", "refund_order"}

// demo is the running demo: its MCP and API base URLs.
type demo struct {
	mcpBase, apiBase string
}

// startDemo runs Caddyfile.example in this process, from the repository
// root as the README says, on free loopback ports and without the admin
// endpoint. It stops when the test ends.
func startDemo(t *testing.T) demo {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "Caddyfile.example")
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	mcpPort, apiPort := incaddy.FreePort(t), incaddy.FreePort(t)
	for _, p := range []struct{ from, to string }{{exampleMCPPort, mcpPort}, {exampleAPIPort, apiPort}} {
		if !strings.Contains(text, ":"+p.from) {
			t.Fatalf("Caddyfile.example no longer uses port %s; update this test", p.from)
		}
		text = strings.ReplaceAll(text, ":"+p.from, ":"+p.to)
	}

	// The file_server root (demo/api) is relative to the repository root.
	t.Chdir(root)
	incaddy.Run(t, path, text, nil)
	return demo{
		mcpBase: "http://127.0.0.1:" + mcpPort,
		apiBase: "http://127.0.0.1:" + apiPort,
	}
}

// TestDemo runs the demo and calls every tool on both MCP endpoints, in
// both protocol eras, with and without the API key variable set.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	d := startDemo(t)
	checkAPI(t, d)

	for _, key := range []string{"", "demo-secret-5b1f0c"} {
		name := "without DEMO_API_KEY"
		if key != "" {
			name = "with DEMO_API_KEY"
		}
		t.Run(name, func(t *testing.T) {
			if key == "" {
				t.Setenv("DEMO_API_KEY", "") // restored after the test
				os.Unsetenv("DEMO_API_KEY")
			} else {
				t.Setenv("DEMO_API_KEY", key)
			}
			for _, ep := range []struct{ path, server string }{{"/mcp", "shop"}, {"/route-mcp", "shop-route"}} {
				for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
					t.Run(strings.TrimPrefix(ep.path, "/")+"/"+version, func(t *testing.T) {
						s := newSession(t, d.mcpBase+ep.path, ep.server, version)
						s.secret = key
						s.checkTools(t)
					})
				}
			}
		})
	}
}

// TestReadmeCodeMode runs the README's code-mode example against the demo
// and checks that the output is the one the README shows.
func TestReadmeCodeMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := func(marker string) string {
		_, after, ok := strings.Cut(string(readme), marker+"\n```")
		if !ok {
			t.Fatalf("README has no block after %s", marker)
		}
		_, after, _ = strings.Cut(after, "\n")
		body, _, ok := strings.Cut(after, "\n```")
		if !ok {
			t.Fatalf("README's block after %s is not closed", marker)
		}
		return body
	}
	code, want := block("<!-- demo-code -->"), block("<!-- demo-output -->")
	d := startDemo(t)
	for _, version := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		t.Run(version, func(t *testing.T) {
			s := newSession(t, d.mcpBase+"/code", "shop-code", version)
			if got := s.ok(t, "execute", map[string]any{"code": code}); got != want {
				t.Errorf("the README's example gives\n%s\nbut the README shows\n%s", got, want)
			}
		})
	}
}

// checkAPI checks the demo REST API directly: data, and JSON 404s.
func checkAPI(t *testing.T, d demo) {
	t.Helper()
	for _, c := range []struct {
		method, path string
		status       int
		contains     string
	}{
		{"GET", "/api/orders/ord_1001", 200, `"customer_id": "cus_003"`},
		{"GET", "/api/orders?status=shipped", 200, `"status": "shipped"`},
		{"GET", "/api/customers/cus_003", 200, `"name": "Léa Moreau"`},
		{"GET", "/api/orders/ord_9999", 404, `"error"`},
		{"GET", "/api/customers/cus_999", 404, `"error"`},
		{"GET", "/api/customers/cus_999/orders", 404, `"error"`},
		{"POST", "/api/orders/ord_9999/refunds", 404, `"error"`},
		{"GET", "/elsewhere", 404, `"error"`},
	} {
		req, _ := http.NewRequest(c.method, d.apiBase+c.path, strings.NewReader(`{}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.contains) {
			t.Errorf("%s %s: %d %s\nwant %d with %s", c.method, c.path, resp.StatusCode, body, c.status, c.contains)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q, want application/json", c.method, c.path, ct)
		}
		if resp.StatusCode != 200 && !json.Valid(body) {
			t.Errorf("%s %s: the error body is not JSON: %s", c.method, c.path, body)
		}
	}
}

type session struct {
	c      *client.Client
	ctx    context.Context
	secret string
}

func newSession(t *testing.T, url, server, version string) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	c, res := mcptest.Connect(t, url, mcptest.Options{Era: version, Name: "demotest"})
	if res.ServerInfo.Name != "" && res.ServerInfo.Name != server {
		t.Errorf("server name %q, want %q", res.ServerInfo.Name, server)
	}
	return &session{c: c, ctx: ctx}
}

// call calls a tool and returns its result; failures of the call itself
// (not tool errors) end the test.
func (s *session) call(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := s.c.CallTool(s.ctx, req)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	if s.secret != "" && strings.Contains(fmt.Sprint(res.Content, string(res.RawStructuredContent)), s.secret) {
		t.Errorf("%s: the API key shows in the result", tool)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func (s *session) ok(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	res := s.call(t, tool, args)
	text := mcptest.ResultText(res)
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", tool, args, text)
	}
	return text
}

// fails calls a tool that must fail and checks the error text.
func (s *session) fails(t *testing.T, tool string, args map[string]any, want string) {
	t.Helper()
	res := s.call(t, tool, args)
	text := mcptest.ResultText(res)
	if !res.IsError || !strings.Contains(text, want) {
		t.Errorf("%s %v: isError=%v %q, want a tool error with %q", tool, args, res.IsError, text, want)
	}
}

type orderList struct {
	Count  int `json:"count"`
	Orders []struct {
		ID           string  `json:"id"`
		Status       string  `json:"status"`
		CustomerID   string  `json:"customer_id"`
		CustomerName string  `json:"customer_name"`
		Total        float64 `json:"total"`
	} `json:"orders"`
}

func (s *session) checkTools(t *testing.T) {
	tools, err := s.c.ListTools(s.ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]mcp.Tool{}
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
	}
	slices.Sort(names)
	if !slices.Equal(names, demoTools) {
		t.Fatalf("tools %q, want %q", names, demoTools)
	}
	if h := byName["refund_order"].Annotations.DestructiveHint; h == nil || *h {
		t.Errorf("refund_order: destructiveHint %v, want false", h)
	}
	if h := byName["get_order"].Annotations.ReadOnlyHint; h == nil || !*h {
		t.Errorf("get_order: readOnlyHint %v, want true", h)
	}

	t.Run("list_orders", func(t *testing.T) {
		var all orderList
		unmarshal(t, s.ok(t, "list_orders", nil), &all)
		if all.Count != 50 || len(all.Orders) != 50 || all.Orders[0].ID != "ord_1050" {
			t.Errorf("list_orders: %d orders (count %d), first %+v; want 50, newest (ord_1050) first", len(all.Orders), all.Count, all.Orders[0])
		}
		res := s.call(t, "list_orders", map[string]any{"status": "shipped"})
		var shipped orderList
		unmarshal(t, mcptest.ResultText(res), &shipped)
		if shipped.Count == 0 || shipped.Count != len(shipped.Orders) {
			t.Errorf("list_orders shipped: count %d, %d orders", shipped.Count, len(shipped.Orders))
		}
		for _, o := range shipped.Orders {
			if o.Status != "shipped" {
				t.Errorf("list_orders shipped: %s is %s", o.ID, o.Status)
			}
		}
		// output_schema: the same answer as structuredContent.
		var structured orderList
		unmarshal(t, string(res.RawStructuredContent), &structured)
		if !reflect.DeepEqual(structured, shipped) {
			t.Errorf("list_orders: structuredContent differs from the text content")
		}
		s.fails(t, "list_orders", map[string]any{"status": "lost"}, "status")
	})

	t.Run("get_order and get_customer", func(t *testing.T) {
		// The whole record, as the API serves it.
		text := s.ok(t, "get_order", map[string]any{"id": "ord_1001"})
		sameJSON(t, text, filepath.Join("demo", "api", "orders", "ord_1001.json"))
		var order struct {
			CustomerID string  `json:"customer_id"`
			Total      float64 `json:"total"`
			Items      []struct {
				SKU string `json:"sku"`
			} `json:"items"`
		}
		res := s.call(t, "get_order", map[string]any{"id": "ord_1001"})
		unmarshal(t, string(res.RawStructuredContent), &order)
		if order.CustomerID != "cus_003" || order.Total != 82.80 || len(order.Items) != 1 || order.Items[0].SKU != "KIT-KETL-10" {
			t.Errorf("get_order ord_1001: structuredContent %+v", order)
		}

		var customer struct {
			Name    string `json:"name"`
			Email   string `json:"email"`
			Address struct {
				City string `json:"city"`
			} `json:"address"`
		}
		text = s.ok(t, "get_customer", map[string]any{"id": order.CustomerID})
		sameJSON(t, text, filepath.Join("demo", "api", "customers", "cus_003.json"))
		unmarshal(t, text, &customer)
		if customer.Name != "Léa Moreau" || customer.Email != "lea.moreau@example.com" || customer.Address.City != "Lyon" {
			t.Errorf("get_customer %s: %+v, want Léa Moreau of Lyon", order.CustomerID, customer)
		}

		s.fails(t, "get_order", map[string]any{"id": "ord_9999"}, "404")
		s.fails(t, "get_order", map[string]any{}, "id")
		s.fails(t, "get_customer", map[string]any{"id": "cus_999"}, "404")
		s.fails(t, "get_customer", map[string]any{"id": "ord_1001"}, "pattern")
	})

	t.Run("list_customers", func(t *testing.T) {
		var list struct {
			Count     int `json:"count"`
			Customers []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"customers"`
		}
		unmarshal(t, s.ok(t, "list_customers", nil), &list)
		if list.Count != 20 || len(list.Customers) != 20 || list.Customers[2].ID != "cus_003" || list.Customers[2].Name != "Léa Moreau" {
			t.Errorf("list_customers: %+v", list)
		}
	})

	t.Run("list_customer_orders", func(t *testing.T) {
		var list orderList
		unmarshal(t, s.ok(t, "list_customer_orders", map[string]any{"customer_id": "cus_003"}), &list)
		found := false
		for _, o := range list.Orders {
			if o.CustomerID != "cus_003" || o.CustomerName != "Léa Moreau" {
				t.Errorf("list_customer_orders cus_003: %+v", o)
			}
			found = found || o.ID == "ord_1001"
		}
		if !found || list.Count != len(list.Orders) {
			t.Errorf("list_customer_orders cus_003: %+v, want ord_1001 among them", list)
		}
		s.fails(t, "list_customer_orders", map[string]any{"customer_id": "cus_999"}, "404")
	})

	t.Run("refund_order", func(t *testing.T) {
		var refund struct {
			Refund struct {
				ID      string         `json:"id"`
				OrderID string         `json:"order_id"`
				Status  string         `json:"status"`
				Request map[string]any `json:"request"`
			} `json:"refund"`
		}
		text := s.ok(t, "refund_order", map[string]any{"id": "ord_1001", "amount": 12.5, "reason": "damaged", "request_id": "demotest-1"})
		unmarshal(t, text, &refund)
		r := refund.Refund
		// The API echoes the JSON body: the body args, with the default
		// for notify_customer; id went in the path, request_id in a header.
		wantBody := map[string]any{"amount": 12.5, "reason": "damaged", "notify_customer": true}
		if !strings.HasPrefix(r.ID, "re_") || r.OrderID != "ord_1001" || r.Status != "pending" || !reflect.DeepEqual(r.Request, wantBody) {
			t.Errorf("refund_order: %+v, want a pending refund of ord_1001 with body %v", r, wantBody)
		}
		s.fails(t, "refund_order", map[string]any{"id": "ord_9999", "amount": 1, "reason": "late"}, "404")
		s.fails(t, "refund_order", map[string]any{"id": "ord_1001", "amount": "all", "reason": "because"}, "reason")
	})
}

func unmarshal(t *testing.T, text string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), v); err != nil {
		t.Fatalf("not the expected JSON (%v): %s", err, text)
	}
}

// sameJSON checks that text is the JSON document in file.
func sameJSON(t *testing.T, text, file string) {
	t.Helper()
	body, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	unmarshal(t, text, &got)
	unmarshal(t, string(body), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the tool result is not %s:\n%s", file, text)
	}
}
