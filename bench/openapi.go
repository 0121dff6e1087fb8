package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"
)

// importedConfig is the configuration name of the row whose tool is
// imported from an OpenAPI document. It is compared with "mcp upstream" of
// the same protocol, measured together with it.
const importedConfig = "mcp upstream, imported from OpenAPI"

// importedCPUBudget is the most CPU per call an imported tool may cost
// beyond the same tool written inline.
const importedCPUBudget = 5 * time.Microsecond

// orderOperation is orderDocument's one operation, renamed to the inline
// tool's name by orderImport.
const orderOperation = "getOrder"

// orderDocument describes exactly the REST endpoint of orderTool, with
// the same description and argument. Its operationId, orderOperation, is
// renamed to the inline tool's name (orderImport), so that the clients
// call the same get_order with the same arguments. Its answer has no JSON schema, so
// the tool has no output schema, as the inline one has none.
const orderDocument = `{
  "openapi": "3.0.3",
  "info": {"title": "Orders", "version": "1"},
  "paths": {
    "/orders/{id}": {
      "get": {
        "operationId": "getOrder",
        "summary": "Get one order by id.",
        "parameters": [
          {"name": "id", "in": "path", "required": true, "description": "Order id", "schema": {"type": "string"}}
        ],
        "responses": {"200": {"description": "The order."}}
      }
    }
  }
}
`

// orderImport is the mcp handler's lines that import orderDocument from
// file, in place of orderTool.
func orderImport(file string) string {
	return fmt.Sprintf(`
		openapi %s {
			rename %s get_order
		}`, file, orderOperation)
}

// writeOrderDocument writes orderDocument into dir and returns its path.
func writeOrderDocument(dir string) (string, error) {
	file := filepath.Join(dir, "orders.openapi.json")
	return file, os.WriteFile(file, []byte(orderDocument), 0o644)
}

// listedTool is a tool of a tools/list answer, as far as a call depends
// on it.
type listedTool struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema"`
}

// findTool returns the tool named name in a tools/list answer.
func findTool(answer []byte, name string) (listedTool, error) {
	var a struct {
		Result struct{ Tools []listedTool }
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return listedTool{}, fmt.Errorf("tools/list answer is not JSON-RPC: %w: %.200s", err, answer)
	}
	if a.Error != nil {
		return listedTool{}, fmt.Errorf("tools/list failed: %s", a.Error.Message)
	}
	for _, t := range a.Result.Tools {
		if t.Name == name {
			return t, nil
		}
	}
	return listedTool{}, fmt.Errorf("tools/list has no tool %q: %.200s", name, answer)
}

// sameTool checks that the tool called by the load is the same in two
// tools/list answers: the same name, description, input schema and
// output schema. (Annotations may differ: an imported GET is read-only.)
func sameTool(inline, imported []byte, name string) error {
	a, err := findTool(inline, name)
	if err != nil {
		return fmt.Errorf("inline: %w", err)
	}
	b, err := findTool(imported, name)
	if err != nil {
		return fmt.Errorf("imported: %w", err)
	}
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return fmt.Errorf("tool %q differs: inline %s, imported %s", name, ja, jb)
	}
	return nil
}

// listTools asks the MCP endpoint at url for its tools.
func listTools(url, protocol string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := newSession(ctx, Target{URL: url, Protocol: protocol, Tool: "get_order", Args: `{}`})
	if err != nil {
		return nil, err
	}
	resp, body, err := s.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("tools/list: %d %.200s", resp.StatusCode, body)
	}
	return body, nil
}

// checkImported starts the inline and the imported configuration and
// checks that they offer the same get_order, so that the two rows measure
// the same call.
func checkImported(s *settings, protocol string) error {
	var answers [2][]byte
	for i, kind := range []string{"mcp-upstream", "mcp-upstream-openapi"} {
		srv, base, err := caddyConfig(s, kind)()
		if err != nil {
			return err
		}
		answers[i], err = listTools(base+"/mcp", protocol)
		srv.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return sameTool(answers[0], answers[1], "get_order")
}

// importedCosts pairs each measurement of the imported row with the one
// of "mcp upstream" of its protocol and concurrency, in the order
// measured.
func (r *report) importedCosts() []pairedCost { return r.pairedCosts(importedConfig) }
