package codemode

import (
	"fmt"

	"github.com/caddy-mcp/caddy-mcp/codemode/declarations"
)

// sandboxGlobals are the globals a backend name must not shadow: the
// ECMAScript globals, what the sandbox adds, and what models reach for out
// of habit but the sandbox leaves out on purpose (a backend by that name
// would make a missing runtime look present).
var sandboxGlobals = nameSet(
	// ECMAScript globals.
	"globalThis", "Object", "Function", "Array", "Number", "Boolean",
	"String", "Symbol", "BigInt", "Date", "RegExp", "Promise", "Proxy",
	"Reflect", "JSON", "Math", "Intl", "Atomics", "Iterator",
	"Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry",
	"DisposableStack", "AsyncDisposableStack",
	"Error", "AggregateError", "EvalError", "RangeError", "ReferenceError",
	"SyntaxError", "TypeError", "URIError", "SuppressedError",
	"ArrayBuffer", "SharedArrayBuffer", "DataView",
	"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array",
	"Uint16Array", "Int32Array", "Uint32Array", "Float16Array",
	"Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
	"parseInt", "parseFloat", "isNaN", "isFinite",
	"encodeURI", "encodeURIComponent", "decodeURI", "decodeURIComponent",
	"escape", "unescape", "eval", "undefined", "NaN", "Infinity",
	// The sandbox's own (tools holds tools.search).
	"console", "setTimeout", "clearTimeout", "tools",
	// Absent on purpose.
	"fetch", "require", "process", "module", "exports", "import", "window",
	"self", "global", "Deno", "Bun",
	"setInterval", "clearInterval", "setImmediate", "clearImmediate",
	"queueMicrotask", "structuredClone", "Buffer", "atob", "btoa",
	"TextEncoder", "TextDecoder", "URL", "URLSearchParams",
)

func nameSet(names ...string) map[string]struct{} {
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	return set
}

// SandboxGlobal reports whether name is a global of the sandbox that a
// backend name must not shadow: an ECMAScript global, one the sandbox adds
// (console, setTimeout, clearTimeout, tools), or one that models expect from other
// runtimes but which is absent on purpose (fetch, require, process, ...).
func SandboxGlobal(name string) bool {
	_, ok := sandboxGlobals[name]
	return ok
}

// CheckBackendName returns nil if name can be a backend global, else an
// error saying why.
func CheckBackendName(name string) error {
	switch {
	case !declarations.IdentifierName(name):
		return fmt.Errorf("backend name %q is not a JavaScript identifier (use ASCII letters, digits, _ and $, not starting with a digit)", name)
	case declarations.ReservedWord(name):
		return fmt.Errorf("backend name %q is a reserved word in JavaScript", name)
	case SandboxGlobal(name):
		return fmt.Errorf("backend name %q shadows the sandbox global %s", name, name)
	}
	return nil
}
