package jsonschema

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

// metaKeywords are the keywords the draft 2020-12 metaschema names, in
// itself and in its vocabulary schemas.
func metaKeywords(t testing.TB) []string {
	var kws []string
	add := func(s *Schema) {
		for kw := range s.Properties {
			kws = append(kws, kw)
		}
	}
	add(Draft2020.metaFor(NewCompiler()))
	for _, s := range Draft2020.metaFor(NewCompiler()).AllOf {
		if s.Ref == nil {
			t.Fatalf("an allOf of the metaschema is not a reference: %s", s.Location)
		}
		add(s.Ref)
	}
	slices.Sort(kws)
	if len(kws) < 50 {
		t.Fatalf("only %d keywords found in the metaschema: %q", len(kws), kws)
	}
	return kws
}

// metaValues are values for a keyword: schemas valid and not, numbers of
// each kind, strings that are and are not regexes, lists with and without
// repeats.
var metaValues = []string{
	`true`, `false`, `null`, `0`, `3`, `-1`, `1.5`, `-0.5`, `1e2`, `1.0`, `0.0`, `1e-400`, `"string"`, `"a("`, `"^a+$"`, `""`,
	`{}`, `[]`, `[{}]`, `[true,{"type":"string"}]`, `[{"type":"nope"}]`, `["a","b"]`, `["a","a"]`, `["string","null"]`, `["string","string"]`, `["nope"]`, `[1]`,
	`{"a":{}}`, `{"a":{"type":1}}`, `{"a(":{}}`, `{"^x":{"minLength":2}}`, `{"a":["b"]}`, `{"a":["b","b"]}`, `{"a":1}`,
	`{"type":"object","properties":{"a":{"type":"integer","minimum":0}},"required":["a"]}`,
	`{"type":"object","properties":{"a":{"type":"integer","minimum":"0"}}}`,
	`{"items":{"items":{"maxLength":-1}}}`, `{"anyOf":[]}`, `{"$ref":"#"}`, `{"$id":"#a"}`,
}

// What the walk finds valid, the metaschema finds valid, for each keyword
// it names and each kind of value; and the walk finds valid the values of
// the schemas tools are made of.
func TestMetaValid2020ImpliesTheMetaschema(t *testing.T) {
	t.Parallel()
	kws := append(metaKeywords(t), "x-extension", "nullable")
	accepted := 0
	for _, kw := range kws {
		for _, text := range metaValues {
			doc := map[string]any{kw: decode(t, []byte(text))}
			valid := Draft2020.metaFor(NewCompiler()).validateValue(doc, "", Kept) == nil
			if metaValid2020(doc) {
				accepted++
				if !valid {
					t.Errorf("{%q: %s}: the walk finds it valid, the metaschema does not", kw, text)
				}
			}
		}
	}
	t.Logf("%d keywords, %d values each: %d accepted by the walk", len(kws), len(metaValues), accepted)
	for _, text := range append(slices.Clone(fuzzSchemas[:4]), `true`, `false`,
		`{"type":["string","null"],"title":"t","description":"d","format":"date-time","enum":["a",null],"default":"a","deprecated":true,"readOnly":true,"writeOnly":false,
			"minimum":1.5,"exclusiveMaximum":10,"multipleOf":0.5,"minLength":1,"maxLength":100,"pattern":"^[a-z]+$","contentMediaType":"text/plain","contentEncoding":"base64",
			"minItems":1,"maxItems":3,"uniqueItems":true,"minProperties":0,"maxProperties":9,"const":{"a":[1]},
			"properties":{"a":{"not":{}}},"patternProperties":{"^x-":{}},"additionalProperties":false,"allOf":[{}],"oneOf":[true,{}],"prefixItems":[{}],"contains":{}}`) {
		doc := decode(t, []byte(text))
		if !metaValid2020(doc) {
			t.Errorf("%s: the walk leaves it to the metaschema", text)
		}
		if err := Draft2020.metaFor(NewCompiler()).validateValue(doc, "", Kept); err != nil {
			t.Errorf("%s: %v", text, err)
		}
	}
}

// The same on random schemas of the shapes tools use, and on them with one
// value put in the wrong place.
func TestMetaValid2020ImpliesTheMetaschemaOnRandomSchemas(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	g := &schemaGen{rng: rand.New(rand.NewPCG(seed, 2))}
	kws := metaKeywords(t)
	accepted, walked := 0, 0
	for range 2000 {
		data, err := json.Marshal(g.document())
		if err != nil {
			t.Fatal(err)
		}
		doc := decode(t, data)
		if g.pick(2) == 0 {
			// One keyword somewhere takes a value of any kind.
			m := doc.(map[string]any)
			for depth := 0; depth < 4; depth++ {
				props, ok := m["properties"].(map[string]any)
				if !ok || len(props) == 0 {
					break
				}
				for _, p := range props {
					if sub, ok := p.(map[string]any); ok {
						m = sub
					}
					break
				}
			}
			m[kws[g.pick(len(kws))]] = decode(t, []byte(metaValues[g.pick(len(metaValues))]))
		}
		walked++
		valid := Draft2020.metaFor(NewCompiler()).validateValue(doc, "", Kept) == nil
		if metaValid2020(doc) {
			accepted++
			if !valid {
				t.Fatalf("%s: the walk finds it valid, the metaschema does not", data)
			}
		}
	}
	t.Logf("%d schemas, %d accepted by the walk", walked, accepted)
	if accepted < walked/4 {
		t.Errorf("the walk accepted %d of %d schemas, leaving most to the metaschema", accepted, walked)
	}
}

// FuzzMetaValid2020 checks the walk against the metaschema on any JSON.
func FuzzMetaValid2020(f *testing.F) {
	for _, s := range fuzzSchemas {
		f.Add([]byte(s))
	}
	for _, v := range metaValues {
		f.Add([]byte(`{"type":"object","properties":{"a":` + v + `},"required":` + v + `,"pattern":` + v + `}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var doc any
		if dec.Decode(&doc) != nil {
			return
		}
		if metaValid2020(doc) {
			if err := Draft2020.metaFor(NewCompiler()).validateValue(doc, "", Kept); err != nil {
				t.Fatalf("%s: the walk finds it valid, the metaschema does not: %v", data, err)
			}
		}
	})
}
