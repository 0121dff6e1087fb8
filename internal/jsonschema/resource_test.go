package jsonschema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// nested is a schema of items under items, depth deep, each with a
// $dynamicAnchor when anchored.
func nested(depth int, anchored bool) string {
	var b strings.Builder
	for i := range depth {
		b.WriteString(`{"items":`)
		if anchored {
			fmt.Fprintf(&b, `{"$dynamicAnchor":"a%d","items":`, i)
		}
	}
	b.WriteString(`{}`)
	for range depth {
		b.WriteString(`}`)
		if anchored {
			b.WriteString(`}`)
		}
	}
	return b.String()
}

// The subresources listed for their dynamic anchors are those v5 listed,
// also once a reference to a place no keyword names has added more.
func TestListAnchoredListsWhatV5Did(t *testing.T) {
	t.Parallel()
	docs := []string{
		nested(5, true),
		`{"$ref":"#/x/y","x":{"y":{"$dynamicAnchor":"a","properties":{"z":{"$dynamicAnchor":"b","items":{"$ref":"#/x/w"}}}},"w":{"$dynamicAnchor":"c"}}}`,
		`{"$dynamicAnchor":"node","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}}},"$defs":{"strict":{"$ref":"#","$dynamicAnchor":"node","unevaluatedProperties":false}}}`,
	}
	for _, doc := range docs {
		c := NewCompiler()
		c.LoadURL = noLoad
		if err := c.AddResource("mem://s.json", strings.NewReader(doc)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Compile("mem://s.json"); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		r := c.resources["mem://s.json"]
		for _, res := range append(slices.Collect(maps.Values(r.subresources)), r) {
			var want []string // v5's listResources, those with $dynamicAnchor
			for _, sr := range r.subresources {
				if strings.HasPrefix(sr.floc, res.floc+"/") && hasDynamicAnchor(sr.doc) {
					want = append(want, sr.floc)
				}
			}
			var got []string
			for _, sr := range r.listAnchored(res) {
				got = append(got, sr.floc)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: under %s: listed %q, want %q", doc, res.floc, got, want)
			}
		}
	}
}

// BenchmarkCompileWide compiles an object schema of 5,000 properties,
// each with a few subschemas: v5 looked through every subresource for
// each schema compiled.
func BenchmarkCompileWide(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"type":"object","properties":{`)
	for i := range 5000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"p%d":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer"}]}}`, i)
	}
	sb.WriteString(`}}`)
	doc := []byte(sb.String())
	for b.Loop() {
		if _, err := compileString(doc); err != nil {
			b.Fatal(err)
		}
	}
}
