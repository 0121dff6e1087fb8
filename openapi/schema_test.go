package openapi

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/caddy-mcp/caddy-mcp/internal/hostileinput"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		dir    direction
		want   string
	}{
		{"3.0 nullable", `{"type":"string","nullable":true,"enum":["a","b"]}`, request, `{"enum":["a","b",null],"type":["string","null"]}`},
		{"3.0 nullable composition", `{"nullable":true,"allOf":[{"type":"integer"}]}`, request, `{"anyOf":[{"allOf":[{"type":"integer"}]},{"type":"null"}]}`},
		{"3.1 union", `{"type":["integer","null"],"exclusiveMinimum":1,"maximum":5}`, request, `{"exclusiveMinimum":1,"maximum":5,"type":["integer","null"]}`},
		{"3.0 exclusive maximum", `{"type":"number","maximum":5,"exclusiveMaximum":true}`, request, `{"exclusiveMaximum":5,"type":"number"}`},
		{"readOnly left out of a request", `{"type":"object","required":["id","n"],"properties":{"id":{"type":"integer","readOnly":true},"n":{"type":"string"}}}`, request,
			`{"properties":{"n":{"type":"string"}},"required":["n"],"type":"object"}`},
		{"writeOnly left out of a response", `{"type":"object","required":["pw"],"properties":{"pw":{"type":"string","writeOnly":true},"n":{"type":"string"}}}`, response,
			`{"properties":{"n":{"type":"string"}},"type":"object"}`},
		{"additionalProperties", `{"type":"object","additionalProperties":{"type":"integer"}}`, request, `{"additionalProperties":{"type":"integer"},"type":"object"}`},
		{"no additionalProperties", `{"type":"object","additionalProperties":false}`, request, `{"additionalProperties":false,"type":"object"}`},
		{"patterns Go cannot read", `{"type":"object","pattern":"(?<=a)b","patternProperties":{"^x-":{"type":"string"},"(?!y)":{}}}`, request,
			`{"patternProperties":{"^x-":{"type":"string"}},"type":"object"}`},
		{"arrays", `{"type":"array","items":{"type":"string","format":"email"},"minItems":1,"maxItems":3,"uniqueItems":true}`, request,
			`{"items":{"format":"email","type":"string"},"maxItems":3,"minItems":1,"type":"array","uniqueItems":true}`},
		{"strings", `{"type":"string","minLength":1,"maxLength":9,"pattern":"^[a-z]+$","default":"ab","title":"T","description":"D","deprecated":true}`, request,
			`{"default":"ab","deprecated":true,"description":"D","maxLength":9,"minLength":1,"pattern":"^[a-z]+$","title":"T","type":"string"}`},
		{"composition", `{"oneOf":[{"type":"string"},{"type":"integer"}],"not":{"const":3}}`, request, `{"not":{"const":3},"oneOf":[{"type":"string"},{"type":"integer"}]}`},
		{"examples are not carried", `{"type":"string","example":"secret-looking","examples":["x"]}`, request, `{"type":"string"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s openapi3.Schema
			if err := json.Unmarshal([]byte(tt.schema), &s); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(newConverter(tt.dir).convert(&openapi3.SchemaRef{Value: &s}))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if _, err := upstream.CompileSchema(got); err != nil {
				t.Errorf("%s does not compile: %v", got, err)
			}
		})
	}
}

func TestConvertBounds(t *testing.T) {
	// A schema that is its own property: the second time round it is {}.
	self := &openapi3.Schema{Type: &openapi3.Types{"object"}}
	self.Properties = openapi3.Schemas{"next": {Value: self}}
	got, _ := json.Marshal(newConverter(request).convert(&openapi3.SchemaRef{Value: self}))
	if want := `{"properties":{"next":{}},"type":"object"}`; string(got) != want {
		t.Errorf("a self-referring schema: %s, want %s", got, want)
	}

	// A chain deeper than maxSchemaDepth, without a cycle.
	root := &openapi3.Schema{}
	s := root
	for range maxSchemaDepth * 2 {
		next := &openapi3.Schema{}
		s.Items = &openapi3.SchemaRef{Value: next}
		s = next
	}
	got, _ = json.Marshal(newConverter(request).convert(&openapi3.SchemaRef{Value: root}))
	if depth := strings.Count(string(got), `"items"`); depth != maxSchemaDepth {
		t.Errorf("a chain of %d schemas is written %d deep, want %d", maxSchemaDepth*2, depth, maxSchemaDepth)
	}

	// A schema used many times over, which written out in full would be
	// 2^20 subschemas: the node budget cuts it.
	wide := &openapi3.Schema{}
	for range 20 {
		wide = &openapi3.Schema{AllOf: openapi3.SchemaRefs{{Value: wide}, {Value: wide}}}
	}
	got, _ = json.Marshal(newConverter(response).convert(&openapi3.SchemaRef{Value: wide}))
	if n := strings.Count(string(got), `"allOf"`); n > maxOutputNodes || n < maxOutputNodes/2 {
		t.Errorf("%d subschemas written out, want at most %d (and about that many)", n, maxOutputNodes)
	}
	if _, err := upstream.CompileSchema(got); err != nil {
		t.Error(err)
	}
}

// TestSchemaBytesBounds: a schema referenced thousands of times is
// written out within MaxToolSchema per tool (past it, the operation is
// skipped, naming the schema) and MaxDocumentTools per document (past
// it, a config error), in memory that follows the bounds, not the
// references: a 268 KB document once made a 400 MB input schema.
func TestSchemaBytesBounds(t *testing.T) {
	// Not parallel: it measures the process's allocations, and the
	// parallel tests of the package load GitHub's whole document.
	for _, where := range []string{"input", "output"} {
		t.Run("one tool, "+where, func(t *testing.T) {
			data := hostileinput.SchemaBomb(3, 4000, 100<<10, where)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			d, err := Load(data)
			if err != nil {
				t.Fatal(err)
			}
			res, err := d.Tools(Curation{}, nil)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tools) != 0 || len(res.Skipped) != 3 {
				t.Fatalf("%d tools, %d skipped; want the 3 operations skipped", len(res.Tools), len(res.Skipped))
			}
			want := fmt.Sprintf("its %s schema would be more than 256 KiB (writing out #/components/schemas/Big where it is referenced)", where)
			for _, s := range res.Skipped {
				if s.Reason != want {
					t.Errorf("%s skipped: %q, want %q", s.OperationID, s.Reason, want)
				}
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("a document of %d KB allocated %d MB", len(data)>>10, alloc>>20)
			}
		})
	}
	t.Run("a document", func(t *testing.T) {
		// 120 tools of 200 KB each: every one within its bound, 24 MB in all.
		d, err := Load(hostileinput.SchemaBomb(120, 1, 200<<10, "input"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Tools(Curation{}, nil)
		if err == nil || !strings.Contains(err.Error(), "the tools of the document pass 16 MiB of schemas and descriptions in all (at POST /op") {
			t.Fatalf("got %v, want the document refused", err)
		}
		// Curated, it loads.
		res, err := d.Tools(Curation{Include: []string{"bomb1", "bomb2"}}, nil)
		if err != nil || len(res.Tools) != 2 {
			t.Fatalf("curated: %v, %+v", err, res)
		}
	})
}
