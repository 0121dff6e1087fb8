package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/openapi"
)

// inlineList is Caddy's tools/list answer for orderTool, and importedList
// the one for orderImport (the document's GET annotated read-only),
// both as caddy-mcp wrote them.
const (
	inlineList   = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"annotations":{},"description":"Get one order by id.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"Order id"}},"required":["id"],"additionalProperties":false},"name":"get_order"}]}}`
	importedList = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"annotations":{"readOnlyHint":true},"description":"Get one order by id.","inputSchema":{"additionalProperties":false,"properties":{"id":{"description":"Order id","type":"string"}},"required":["id"],"type":"object"},"name":"get_order"}]}}`
)

// TestOrderDocumentIsTheInlineTool: the document, imported with the
// rename orderImport writes, is one tool, the inline tool's: its name,
// description, request and input schema, and no output schema.
func TestOrderDocumentIsTheInlineTool(t *testing.T) {
	doc, err := openapi.Load([]byte(orderDocument))
	if err != nil {
		t.Fatal(err)
	}
	res, err := doc.Tools(openapi.Curation{Rename: map[string]string{orderOperation: "get_order"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || len(res.Skipped) != 0 {
		t.Fatalf("%d tools, skipped %+v; want the one tool", len(res.Tools), res.Skipped)
	}
	tool := res.Tools[0]
	d := tool.Definition
	if tool.Name != "get_order" || tool.Description != "Get one order by id." || d.Method != "GET" || d.Path != "/orders/{id}" {
		t.Errorf("tool %q %q: %s %s; want get_order %q: GET /orders/{id}", tool.Name, tool.Description, d.Method, d.Path, "Get one order by id.")
	}
	if len(d.OutputSchema) != 0 {
		t.Errorf("output schema %s; the inline tool has none", d.OutputSchema)
	}
	inline, err := findTool([]byte(inlineList), "get_order")
	if err != nil {
		t.Fatal(err)
	}
	var schema any
	if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(schema, inline.InputSchema) {
		t.Errorf("input schema %s, want the inline tool's %v", d.InputSchema, inline.InputSchema)
	}
	if !strings.Contains(orderImport("/tmp/x.json"), "rename "+orderOperation+" get_order") {
		t.Errorf("orderImport does not rename %s: %s", orderOperation, orderImport("/tmp/x.json"))
	}
}

func TestSameTool(t *testing.T) {
	for _, c := range []struct {
		name, imported, wantErr string
	}{
		{"same, annotations aside", importedList, ""},
		{"another description", strings.Replace(importedList, "Get one order by id.", "Get an order.", 1), "differs"},
		{"an argument not required", strings.Replace(importedList, `"required":["id"],`, "", 1), "differs"},
		{"an argument of another type", strings.Replace(importedList, `"type":"string"`, `"type":"integer"`, 1), "differs"},
		{"an output schema", strings.Replace(importedList, `"name":"get_order"`, `"name":"get_order","outputSchema":{"type":"object"}`, 1), "differs"},
		{"another name", strings.Replace(importedList, `"get_order"`, `"getOrder"`, 1), `imported: tools/list has no tool "get_order"`},
		{"an error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found"}}`, "imported: tools/list failed: method not found"},
		{"not JSON", `event: message`, "imported: tools/list answer is not JSON-RPC"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := sameTool([]byte(inlineList), []byte(c.imported), "get_order")
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v, want one with %q", err, c.wantErr)
			}
		})
	}
}

// TestImportedTarget: the target compares the imported row with mcp
// upstream at c=16, is met up to the CPU budget, and shows p99 and the
// rounds' spread when there are.
func TestImportedTarget(t *testing.T) {
	us := time.Microsecond
	inline := Measurement{Config: "mcp upstream", Protocol: "2025-11-25", Concurrency: 16, Throughput: 7600, CPUPerRequest: 148 * us,
		P99: 2 * time.Millisecond, FixedRate: 4000, CPURounds: []time.Duration{146 * us, 148 * us, 151 * us}}
	for _, c := range []struct {
		name     string
		imported Measurement
		met      bool
		measured string
	}{
		{"within", Measurement{Throughput: 7500, CPUPerRequest: 151 * us, P99: 3 * time.Millisecond, FixedRate: 4000, CPURounds: []time.Duration{150 * us, 151 * us, 149 * us}},
			true, "+3 µs (151 vs 148 µs); throughput 0.99x (7500 vs 7600 req/s); p99 3.00 ms vs 2.00 ms; CPU per call by round 149-151 µs vs 146-151 µs"},
		{"at the budget", Measurement{Throughput: 7600, CPUPerRequest: 148*us + importedCPUBudget},
			true, "+5 µs (153 vs 148 µs); throughput 1.00x (7600 vs 7600 req/s)"},
		{"over", Measurement{Throughput: 7600, CPUPerRequest: 149*us + importedCPUBudget, CPURounds: []time.Duration{153 * us}},
			false, "+6 µs (154 vs 148 µs); throughput 1.00x (7600 vs 7600 req/s)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			imported := c.imported
			imported.Config, imported.Protocol, imported.Concurrency = importedConfig, "2025-11-25", 16
			r := &report{ms: []Measurement{
				{Config: "reverse_proxy", Protocol: "REST", Concurrency: 16, Throughput: 8000, CPUPerRequest: 150 * us},
				inline,
				{Config: importedConfig, Protocol: "2025-11-25", Concurrency: 64, Throughput: 1, CPUPerRequest: time.Second},
				imported,
			}}
			var found []target
			for _, tg := range r.targets() {
				if strings.HasPrefix(tg.name, "an imported tool") {
					found = append(found, tg)
				}
			}
			if len(found) != 1 {
				t.Fatalf("%d imported targets, want 1 (c=16 only): %+v", len(found), found)
			}
			if found[0].met != c.met || found[0].measured != c.measured {
				t.Errorf("%q met=%v, want %q met=%v", found[0].measured, found[0].met, c.measured, c.met)
			}
		})
	}
}
