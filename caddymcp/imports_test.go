package caddymcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestImportOnce: a second config with the same document and options
// takes the first one's import rather than parsing the document again; a
// change in either is a new import; the pool lets an import go once no
// config holds it.
func TestImportOnce(t *testing.T) {
	load := func(config string) (*Handler, context.CancelFunc) {
		t.Helper()
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		mod, err := ctx.LoadModuleByID("http.handlers.mcp", json.RawMessage(config))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		return mod.(*Handler), cancel
	}
	src := `{"openapi":[{"source":"` + petsDocument + `","include":["listPets","showPetById"]}]}`
	first, unloadFirst := load(src)
	second, unloadSecond := load(src)
	if len(first.importKeys) != 1 || len(second.importKeys) != 1 || first.importKeys[0] != second.importKeys[0] {
		t.Fatalf("import keys %v and %v, want one and the same", first.importKeys, second.importKeys)
	}
	key := first.importKeys[0]
	if n, _ := imports.References(key); n != 2 {
		t.Errorf("%d references to the import, want 2", n)
	}
	if first.tools["listPets"].op != second.tools["listPets"].op {
		t.Error("the second config built its own operations: the document was imported twice")
	}
	changed, unloadChanged := load(`{"openapi":[{"source":"` + petsDocument + `","include":["listPets"]}]}`)
	if changed.importKeys[0] == key || changed.tools["listPets"].op == first.tools["listPets"].op {
		t.Error("other options took the same import")
	}
	unloadChanged()
	unloadFirst()
	if n, _ := imports.References(key); n != 1 {
		t.Errorf("%d references after the first config is done, want 1", n)
	}
	unloadSecond()
	if n, ok := imports.References(key); ok || n != 0 {
		t.Errorf("the import is still held (%d references) after every config is done", n)
	}
}
