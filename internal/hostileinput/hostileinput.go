// Package hostileinput makes what a hostile upstream or document server
// sends: JSON answers nested nearly as deep as JSON is read, text that is
// not UTF-8, YAML whose anchors alias each other, and OpenAPI documents
// whose one schema thousands of references write out. The tests of the
// package that owns each defence and the tests through a built Caddy use
// the same inputs.
package hostileinput

import (
	"bytes"
	"fmt"
	"strings"
)

// Answer is one hostile upstream answer: Name says what it is, Path is
// where a test upstream serves it.
type Answer struct {
	Name, Path string
	Body       []byte
}

// Chain is open repeated depth times around inner, then close as often.
func Chain(depth int, open, close, inner string) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Repeat(open, depth))
	b.WriteString(inner)
	b.WriteString(strings.Repeat(close, depth))
	return b.Bytes()
}

// DeepAnswers are JSON answers of about 2 MB whose cut once cost memory
// in the square of their depth: objects under 100-byte keys and arrays
// nested 9,900 deep (encoding/json reads 10,000), and a chain 2,000
// objects deep above 2,000 strings to shorten.
func DeepAnswers() []Answer {
	key := strings.Repeat("k", 100)
	leaf := `"` + strings.Repeat("v", 1<<20) + `"`
	strs := make([]string, 2000)
	for i := range strs {
		strs[i] = `"` + strings.Repeat("s", 1000) + `"`
	}
	return []Answer{
		{"objects 9,900 deep under 100-byte keys", "/objects", Chain(9900, `{"`+key+`":`, `}`, leaf)},
		{"arrays 9,900 deep", "/arrays", Chain(9900, `[`, `,"`+strings.Repeat("a", 100)+`"]`, leaf)},
		{"2,000 objects deep above 2,000 strings", "/strings", Chain(2000, `{"`+key+`":`, `}`, `[`+strings.Join(strs, ",")+`]`)},
	}
}

// NotUTF8 is 3,000 bytes of text, half of them bytes that are not UTF-8,
// each of which is sent as the three bytes of U+FFFD.
func NotUTF8() string { return strings.Repeat("\xffa", 1500) }

// AliasBomb is an OpenAPI document in YAML whose schemas alias each
// other levels deep, width aliases a level, the last one an operation's
// answer: width^levels values once expanded, from a few hundred bytes
// (1.2 KB for 7 levels of 10).
func AliasBomb(levels, width int) []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: bomb, version: \"1\"}\ncomponents:\n  schemas:\n")
	b.WriteString("    l0: &l0 {type: string, description: leaf}\n")
	for l := 1; l <= levels; l++ {
		fmt.Fprintf(&b, "    l%d: &l%d {type: object, properties: {", l, l)
		for w := range width {
			if w > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "p%d: *l%d", w, l-1)
		}
		b.WriteString("}}\n")
	}
	fmt.Fprintf(&b, "paths:\n  /x:\n    get:\n      operationId: bomb\n      responses:\n        \"200\":\n          description: ok\n          content:\n            application/json:\n              schema: *l%d\n", levels)
	return []byte(b.String())
}

// SchemaBomb is an OpenAPI document in JSON of ops operations (bomb0,
// bomb1, ...) each of which writes out one schema with a description of
// description bytes props times: as the properties of its request body
// (where "input") or of its answer (where "output"). 3 operations of
// 4,000 properties and 100 KiB is 268 KB that once made three input
// schemas of 400 MB.
func SchemaBomb(ops, props, description int, where string) []byte {
	properties := make([]string, props)
	for i := range properties {
		properties[i] = fmt.Sprintf(`"p%d":{"$ref":"#/components/schemas/Big"}`, i)
	}
	paths := make([]string, ops)
	for i := range paths {
		op := `"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Body"}}}},"responses":{"200":{"description":"ok"}}`
		if where == "output" {
			op = `"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Body"}}}}}`
		}
		paths[i] = fmt.Sprintf(`"/op%d":{"post":{"operationId":"bomb%d",%s}}`, i, i, op)
	}
	return []byte(`{"openapi":"3.0.3","info":{"title":"bomb","version":"1"},"paths":{` + strings.Join(paths, ",") +
		`},"components":{"schemas":{"Big":{"type":"string","description":"` + strings.Repeat("d", description) +
		`"},"Body":{"type":"object","properties":{` + strings.Join(properties, ",") + `}}}}}`)
}
