package jsonschema

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// allocatedBy is how many bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Validating costs memory in proportion to the instance, where v5 built a
// string of the whole path for every value and every error: the square of
// a long property name times the items under it, the cube of the depth of
// an instance under a recursive schema.
func TestValidationAllocatesInProportion(t *testing.T) {
	cases := []struct {
		name, schema string
		instance     func() (any, int) // and the size of its JSON
		valid        bool
	}{
		{"4,000 items under a 100 KB property name", `{"additionalProperties":{"type":"array","items":{"type":"string"}}}`,
			func() (any, int) {
				items := make([]any, 4000)
				for i := range items {
					items[i] = "a"
				}
				name := strings.Repeat("n", 100_000)
				return map[string]any{name: items}, len(name) + 4*len(items)
			}, true},
		{"the same, each item wrong", `{"additionalProperties":{"type":"array","items":{"type":"string"}}}`,
			func() (any, int) {
				items := make([]any, 4000)
				for i := range items {
					items[i] = 1.0
				}
				name := strings.Repeat("n", 100_000)
				return map[string]any{name: items}, len(name) + 2*len(items)
			}, false},
		{"arrays 1,000 deep under a recursive schema", `{"type":"array","items":{"$ref":"#"}}`,
			func() (any, int) {
				var v any
				json.Unmarshal([]byte(strings.Repeat("[", 1000)+"1"+strings.Repeat("]", 1000)), &v)
				return v, 2001
			}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := MustCompileString("mem://s.json", c.schema)
			v, size := c.instance()
			var err error
			n := allocatedBy(func() { err = s.Validate(v) })
			if (err == nil) != c.valid {
				t.Fatalf("valid %v: %v", c.valid, err)
			}
			// v5: 400 MB, 400 MB and 3.7 GB.
			if n > uint64(1000*size) {
				t.Fatalf("validating %d bytes of JSON allocated %d", size, n)
			}
			t.Logf("validating %d bytes of JSON allocated %d", size, n)
		})
	}
}
