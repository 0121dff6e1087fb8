package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// quickTools are arg lines of every type, with and without enums.
func quickTools() []Definition {
	raw := func(vs ...string) []json.RawMessage {
		out := make([]json.RawMessage, len(vs))
		for i, v := range vs {
			out[i] = json.RawMessage(v)
		}
		return out
	}
	var tools []Definition
	words := []string{"", "string", "integer", "number", "boolean", "object", "array", "string[]", "integer[]", "number[]", "boolean[]", "object[]"}
	for i, w := range words {
		tools = append(tools, Definition{Name: fmt.Sprintf("t%d", i), Method: "POST", Path: "/x", Args: []Arg{
			{Name: "a", Type: w, Required: true},
			{Name: "b", Type: w},
		}})
	}
	tools = append(tools,
		Definition{Name: "enum", Method: "POST", Path: "/x", Args: []Arg{
			{Name: "s", Type: "string", Enum: raw(`"open"`, `"closed"`), Required: true},
			{Name: "l", Type: "string[]", Enum: raw(`"a"`, `"b"`)},
		}},
		Definition{Name: "numenum", Method: "POST", Path: "/x", Args: []Arg{
			{Name: "n", Type: "integer", Enum: raw(`1`, `2`)},
			{Name: "s", Type: "string"},
		}},
		Definition{Name: "defaults", Method: "POST", Path: "/x", Args: []Arg{
			{Name: "n", Type: "integer", Default: json.RawMessage(`3`)},
			{Name: "f", Type: "number", Default: json.RawMessage(`2.5`)},
		}},
		Definition{Name: "nullenum", Method: "POST", Path: "/x", Args: []Arg{
			{Name: "s", Type: "string", Enum: raw(`"open"`, `null`)},
		}},
		Definition{Name: "nullable", Method: "POST", Path: "/x", Args: []Arg{
			{Name: "s", Type: "string", Enum: raw(`"open"`, `"closed"`), Required: true, Nullable: true, WireName: "filter[state]"},
			{Name: "l", Type: "string[]", Enum: raw(`"a"`, `"b"`), Nullable: true, WireName: "$top"},
			{Name: "n", Type: "integer", Enum: raw(`1`, `2`), Nullable: true},
			{Name: "f", Type: "number", Nullable: true, Default: json.RawMessage(`null`), WireName: "perPage"},
		}},
	)
	for i, w := range words {
		tools = append(tools, Definition{Name: fmt.Sprintf("null%d", i), Method: "POST", Path: "/x", Args: []Arg{
			{Name: "a", Type: w, Required: true, Nullable: true, WireName: "A"},
			{Name: "b", Type: w, Nullable: true, WireName: "a"},
		}})
	}
	return tools
}

var quickValues = []string{
	`"x"`, `""`, `"open"`, `"closed"`, `"a"`, `"b"`, `"1"`, `0`, `1`, `2`, `-7`, `1.0`, `1.5`, `-0`, `1e3`, `2E-1`,
	`123456789012345678901234567890`, `true`, `false`, `null`, `{}`, `{"k":1}`, `[]`, `["a"]`, `["a","b"]`, `["x"]`,
	`[1,2]`, `[1.5]`, `[true]`, `[{}]`, `[null]`, `[[1]]`, `["a",1]`,
}

// decodeObject decodes tool arguments as a caller does, keeping numbers as
// json.Number; nil when they are not an object.
func decodeObject(argsJSON string) map[string]any {
	if !json.Valid([]byte(argsJSON)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(argsJSON)))
	dec.UseNumber()
	var args map[string]any
	if dec.Decode(&args) != nil {
		return nil
	}
	return args
}

// checkQuick reports, for the arguments in JSON, whether op's quickCheck
// accepted them and whether the validator did.
func checkQuick(t testing.TB, op *Operation, argsJSON string) (quick, valid bool) {
	args := decodeObject(argsJSON)
	if args == nil {
		t.Fatalf("not an object: %s", argsJSON)
	}
	args = op.plan.applyDefaults(args)
	input, err := op.input.compiled()
	if err != nil {
		panic(err)
	}
	return op.quick.accepts(args), input.Validate(args) == nil
}

// TestQuickCheckNeverAcceptsWhatTheValidatorRefuses: across every type
// and random argument objects, quickCheck accepts nothing the JSON Schema
// validator refuses, and accepts most of what it takes.
func TestQuickCheckNeverAcceptsWhatTheValidatorRefuses(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "s", "l", "n", "f", "extra"}
	var valid, quick int
	for _, tool := range quickTools() {
		op, err := NewOperation(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		for i := 0; i < 3000; i++ {
			var b bytes.Buffer
			b.WriteByte('{')
			for j, n := 0, r.IntN(4); j < n; j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q:%s", names[r.IntN(len(names))], quickValues[r.IntN(len(quickValues))])
			}
			b.WriteByte('}')
			q, v := checkQuick(t, op, b.String())
			if q && !v {
				t.Fatalf("tool %s: quickCheck accepted %s, which the validator refuses", tool.Name, b.String())
			}
			if v {
				valid++
			}
			if q {
				quick++
			}
		}
	}
	// Not a test that cannot fail the other way: the check must take the
	// usual calls, or it saves nothing.
	if quick < valid*3/4 {
		t.Errorf("quickCheck accepted %d of %d valid argument objects", quick, valid)
	}
	t.Logf("valid %d, accepted by quickCheck %d", valid, quick)
}

// TestQuickCheckDefersTheRest: what is not plainly valid goes to the
// validator, which words the error.
func TestQuickCheckDefersTheRest(t *testing.T) {
	t.Parallel()
	tools := map[string]*Operation{}
	for _, tool := range quickTools() {
		op, err := NewOperation(tool)
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = op
	}
	cases := []struct {
		tool, args string
		quick      bool
	}{
		{"t1", `{"a":"x"}`, true},
		{"t1", `{"a":"x","b":""}`, true},
		{"t1", `{}`, false},                // required missing
		{"t1", `{"a":"x","c":"y"}`, false}, // unknown argument
		{"t1", `{"a":1}`, false},           // wrong type
		{"t1", `{"a":null}`, false},
		{"t2", `{"a":42}`, true},
		{"t2", `{"a":-1}`, true},
		{"t2", `{"a":1.0}`, false}, // an integer to JSON Schema; the validator says so
		{"t2", `{"a":1.5}`, false},
		{"t3", `{"a":1.5}`, true},
		{"t3", `{"a":"1.5"}`, false},
		{"t4", `{"a":false}`, true},
		{"t5", `{"a":{"k":[1]}}`, true},
		{"t6", `{"a":[1,"x",null]}`, true},
		{"t7", `{"a":["x","y"]}`, true},
		{"t7", `{"a":["x",1]}`, false},
		{"t8", `{"a":[1,2]}`, true},
		{"t8", `{"a":[1,2.5]}`, false},
		{"enum", `{"s":"open","l":["a","b","a"]}`, true},
		{"enum", `{"s":"pending"}`, false},
		{"enum", `{"s":"open","l":["c"]}`, false},
		{"numenum", `{"s":"x"}`, true},
		{"numenum", `{"n":1}`, false}, // a numeric enum is the validator's
		{"defaults", `{}`, true},
		{"defaults", `{"n":4,"f":1}`, true},
		{"nullenum", `{"s":""}`, false}, // null in the enum lets no "" through
		{"nullenum", `{"s":"open"}`, false},
		{"nullable", `{"s":null}`, true},
		{"nullable", `{"s":"open","l":null,"n":null,"f":null}`, true},
		{"nullable", `{"s":"open","l":[null]}`, false},
		{"nullable", `{"s":"open","n":1}`, false}, // a numeric enum is still the validator's
		{"nullable", `{"s":"pending"}`, false},
		{"nullable", `{}`, false},
		{"null2", `{"a":null,"b":7}`, true},
		{"null5", `{"a":null,"b":{}}`, true},
		{"null7", `{"a":["x"],"b":null}`, true},
		{"null7", `{"a":[null]}`, false},
	}
	for _, c := range cases {
		q, v := checkQuick(t, tools[c.tool], c.args)
		if q != c.quick {
			t.Errorf("%s %s: quickCheck %v, want %v", c.tool, c.args, q, c.quick)
		}
		if q && !v {
			t.Errorf("%s %s: quickCheck accepted what the validator refuses", c.tool, c.args)
		}
	}
	if newQuickCheck(Definition{InputSchema: json.RawMessage(`{"type":"object"}`)}) != nil {
		t.Error("a tool with an input_schema got a quickCheck")
	}
}

// FuzzQuickCheck: for any argument object, quickCheck accepts nothing the
// validator refuses.
func FuzzQuickCheck(f *testing.F) {
	for _, v := range quickValues {
		f.Add(`{"a":` + v + `}`)
		f.Add(`{"a":"x","b":` + v + `}`)
		f.Add(`{"s":` + v + `,"l":[` + v + `]}`)
		f.Add(`{"s":` + v + `,"l":null,"n":` + v + `,"f":null}`)
	}
	var tools []*Operation
	for _, tool := range quickTools() {
		op, err := NewOperation(tool)
		if err != nil {
			f.Fatal(err)
		}
		tools = append(tools, op)
	}
	f.Fuzz(func(t *testing.T, argsJSON string) {
		if len(argsJSON) > 4096 || decodeObject(argsJSON) == nil {
			return
		}
		for _, op := range tools {
			if q, v := checkQuick(t, op, argsJSON); q && !v {
				t.Fatalf("tool %s: quickCheck accepted %s, which the validator refuses", op.name, argsJSON)
			}
		}
	})
}
