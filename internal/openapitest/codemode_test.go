//go:build unix

package openapitest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// codeMode runs code on the codemode endpoint whose backends are two mcp
// endpoints of imported tools: each call the code makes is a request
// Prism must find the document's.
func codeMode(t *testing.T, e *env) {
	c := e.client(t, "/code")
	pet, wire := e.prisms["petstore"], e.prisms["wire"]
	pm, wm := pet.Mark(), wire.Mark()
	res, err := mcptest.CallTool(c, "execute", map[string]any{"code": `
const pets = await petstore.findPetsByStatus({ status: ["available", "pending"] });
const note = await wire.createNote({ title: "From code", text: null, tags: ["codemode"] });
const item = await wire.getItem({ itemId: 9, X_Request_Id: "1e2d3c4b-5a69-4788-9a0b-1c2d3e4f5a6b" });
return { pets: Array.isArray(pets), note: note.name, item: item.id };
`})
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	if res.IsError {
		t.Fatalf("execute: isError: %s", mcptest.ResultText(res))
	}
	var out struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(res.RawStructuredContent, &out); err != nil {
		t.Fatalf("structuredContent %s: %v", res.RawStructuredContent, err)
	}
	if want := map[string]any{"pets": true, "note": "tea", "item": float64(1)}; !reflect.DeepEqual(out.Result, want) {
		t.Errorf("result %v, want %v", out.Result, want)
	}
	petReqs, petViolations := pet.Since(t, pm)
	wireReqs, wireViolations := wire.Since(t, wm)
	checkViolations(t, "the code's petstore calls", petViolations)
	checkViolations(t, "the code's wire calls", wireViolations)
	for _, r := range petReqs {
		e.declared["petstore"].check(t, "the code's petstore call", r)
	}
	for _, r := range wireReqs {
		e.declared["wire"].check(t, "the code's wire call", r)
	}
	if len(petReqs) != 1 || petReqs[0].URI() != "/pet/findByStatus?status=available&status=pending" {
		t.Errorf("petstore requests %+v, want GET /pet/findByStatus?status=available&status=pending", petReqs)
	}
	if len(wireReqs) != 2 || !sameJSON(wireReqs[0].Body, `{"title":"From code","text":null,"tags":["codemode"]}`) || wireReqs[1].Path != "/items/9" {
		t.Errorf("wire requests %+v, want the note with null text, then item 9", wireReqs)
	}
}
