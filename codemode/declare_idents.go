package codemode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// alias names the output type of a tool: PascalCase of backend and tool
// plus "Output", with a number added if that name is taken.
func (d *declWriter) alias(backend, tool string) string {
	base := declPascalCase(backend) + declPascalCase(tool) + "Output"
	if base[0] >= '0' && base[0] <= '9' {
		base = "_" + base
	}
	name := base
	if _, taken := d.aliases[name]; taken {
		// As in AssignNames: the search goes on where the last one for
		// this base stopped, so thousands of tools of one name stay linear.
		n := d.nextAlias[base]
		if n == 0 {
			n = 2
		}
		for ; ; n++ {
			name = base + strconv.Itoa(n)
			if _, taken := d.aliases[name]; !taken {
				break
			}
		}
		d.nextAlias[base] = n + 1
	}
	d.aliases[name] = struct{}{}
	return name
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
	if identifierName(key) {
		return key
	}
	return quoteTS(key)
}

// paramAccessor is how a @param line names a property of input.
func paramAccessor(key string) string {
	if identifierName(key) {
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
