package codemode

import (
	"strings"
	"testing"
)

func TestSandboxGlobal(t *testing.T) {
	for _, g := range []string{
		"Object", "Array", "JSON", "Math", "Promise", "globalThis", "Reflect",
		"Proxy", "Symbol", "Map", "Set", "WeakMap", "WeakSet", "Date", "RegExp",
		"Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError",
		"EvalError", "URIError", "AggregateError", "ArrayBuffer", "DataView",
		"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
		"Uint16Array", "Int32Array", "Uint32Array", "Float32Array",
		"Float64Array", "BigInt64Array", "BigUint64Array", "parseInt",
		"parseFloat", "isNaN", "isFinite", "encodeURI", "encodeURIComponent",
		"decodeURI", "decodeURIComponent", "escape", "unescape", "eval",
		"Function", "Boolean", "Number", "String", "BigInt", "Intl", "Atomics",
		"SharedArrayBuffer", "WeakRef", "FinalizationRegistry", "Iterator",
		"console", "setTimeout", "clearTimeout",
		"fetch", "require", "process", "module", "exports", "import", "window",
		"self", "global", "Deno", "Bun",
	} {
		if !SandboxGlobal(g) {
			t.Errorf("SandboxGlobal(%q) = false", g)
		}
	}
	for _, n := range []string{"weather", "github", "json", "math", "db", "document", "crypto", "slack", "files"} {
		if SandboxGlobal(n) {
			t.Errorf("SandboxGlobal(%q) = true", n)
		}
	}
}

func TestCheckBackendName(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  string // substring; "" for no error
	}{
		{"weather", ""},
		{"github", ""},
		{"my_api", ""},
		{"api2", ""},
		{"$svc", ""},
		{"json", ""}, // case matters: JSON is taken, json is not
		{"", "is not a JavaScript identifier"},
		{"my-api", `"my-api" is not a JavaScript identifier`},
		{"my.api", "is not a JavaScript identifier"},
		{"2fa", "is not a JavaScript identifier"},
		{"météo", "is not a JavaScript identifier"},
		{"delete", `"delete" is a reserved word`},
		{"let", "is a reserved word"},
		{"undefined", "is a reserved word"},
		{"eval", "is a reserved word"},
		{"__proto__", "is a reserved word"},
		{"JSON", `"JSON" shadows the sandbox global JSON`},
		{"console", "shadows the sandbox global console"},
		{"fetch", "shadows the sandbox global fetch"},
		{"process", "shadows the sandbox global process"},
		{"globalThis", "shadows the sandbox global globalThis"},
	} {
		err := CheckBackendName(tc.name)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CheckBackendName(%q) = %v, want nil", tc.name, err)
		case tc.err != "" && err == nil:
			t.Errorf("CheckBackendName(%q) = nil, want an error with %q", tc.name, tc.err)
		case tc.err != "" && !strings.Contains(err.Error(), tc.err):
			t.Errorf("CheckBackendName(%q) = %q, want it to contain %q", tc.name, err, tc.err)
		}
	}
}
