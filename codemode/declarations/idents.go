package declarations

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// alias names the output type of a tool: PascalCase of backend and tool
// plus "Output", with a number added if that name is taken.
func (d *declWriter) alias(backend, tool string) string {
	return d.uniqueName(declPascalCase(backend) + declPascalCase(tool) + "Output")
}

// uniqueName is base, or base with a number added if that name is taken
// by another declared type or by one of TypeScript's own.
func (d *declWriter) uniqueName(base string) string {
	if base == "" || (base[0] >= '0' && base[0] <= '9') {
		base = "_" + base
	}
	name := base
	if d.nameTaken(name) {
		// As in AssignNames: the search goes on where the last one for
		// this base stopped, so thousands of tools of one name stay linear.
		n := d.nextAlias[base]
		if n == 0 {
			n = 2
		}
		for ; ; n++ {
			name = base + strconv.Itoa(n)
			if !d.nameTaken(name) {
				break
			}
		}
		d.nextAlias[base] = n + 1
	}
	d.aliases[name] = struct{}{}
	return name
}

func (d *declWriter) nameTaken(name string) bool {
	_, taken := d.aliases[name]
	return taken || tsGlobalTypes[name]
}

// tsGlobalTypes are type names of TypeScript's standard library (ES2022)
// that a declared type must not shadow.
var tsGlobalTypes = func() map[string]bool {
	m := make(map[string]bool)
	for _, n := range strings.Fields(`Array ArrayBuffer ArrayBufferLike ArrayBufferView ArrayLike AsyncGenerator
		AsyncGeneratorFunction AsyncIterable AsyncIterableIterator AsyncIterator Atomics Awaited BigInt
		BigInt64Array BigUint64Array Boolean Capitalize ClassDecorator ConcatArray ConstructorParameters
		DataView Date Error EvalError Exclude Extract FinalizationRegistry Float32Array Float64Array Function
		Generator GeneratorFunction InstanceType Int16Array Int32Array Int8Array Intl Iterable
		IterableIterator Iterator IteratorResult JSON Lowercase Map Math MethodDecorator NoInfer NonNullable
		Number Object Omit OmitThisParameter ParameterDecorator Parameters Partial Pick Promise
		PromiseConstructorLike PromiseLike PropertyDecorator PropertyDescriptor PropertyDescriptorMap
		PropertyKey Proxy ProxyHandler RangeError Readonly ReadonlyArray ReadonlyMap ReadonlySet Record
		ReferenceError Reflect RegExp Required ReturnType Set SharedArrayBuffer String Symbol SyntaxError
		TemplateStringsArray ThisParameterType ThisType TypeError TypedPropertyDescriptor URIError
		Uint16Array Uint32Array Uint8Array Uint8ClampedArray Uncapitalize Uppercase WeakMap WeakRef WeakSet`) {
		m[n] = true
	}
	return m
}()

// declHintName turns a property name into PascalCase words: letters and
// digits kept, anything else separating words.
func declHintName(hint string) string {
	var b strings.Builder
	up := true
	for i := 0; i < len(hint); i++ {
		c := hint[i]
		switch {
		case c >= 'a' && c <= 'z':
			if up {
				c -= 'a' - 'A'
			}
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			up = true
			continue
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

// declSingular is a plural English word made singular, roughly: the
// items of "labels" are a label.
func declSingular(word string) string {
	switch {
	case strings.HasSuffix(word, "ies") && len(word) > 4:
		return word[:len(word)-3] + "y"
	case strings.HasSuffix(word, "ss"), strings.HasSuffix(word, "us"), len(word) <= 3:
		return word
	case strings.HasSuffix(word, "s"):
		return word[:len(word)-1]
	}
	return word
}

func declPascalCase(ident string) string {
	var b strings.Builder
	up := true
	for i := 0; i < len(ident); i++ {
		c := ident[i]
		if c == '_' || c == '$' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

// tsPropertyKey is a property name as TypeScript accepts it: bare when it is
// an identifier name (reserved words are fine there), quoted otherwise.
func tsPropertyKey(key string) string {
	if IdentifierName(key) {
		return key
	}
	return quoteTS(key)
}

// paramAccessor is how a @param line names a property of input.
func paramAccessor(key string) string {
	if IdentifierName(key) {
		return "." + key
	}
	return "[" + quoteTS(key) + "]"
}

// quoteTS quotes s as a JSON string, which is also a valid JavaScript and
// TypeScript string literal.
func quoteTS(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
