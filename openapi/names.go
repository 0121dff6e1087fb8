package openapi

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// maxToolName is the longest generated tool name: the limit of the most
// restrictive model APIs.
const maxToolName = 64

// maxArgName bounds a generated argument name likewise.
const maxArgName = 64

// toolNameRule is what a generated tool name matches; renameRule is what
// a rename may choose, the rule of inline tools.
var (
	toolNameRule = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	renameRule   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	// argNameRule is an argument name every client takes as it is: an
	// identifier in JavaScript and TypeScript, a property key every model
	// API accepts.
	argNameRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
)

// toolName is an operation's tool name: its operationId made valid, or,
// without one, the method and the words of the path.
func toolName(operationID, method, path string) string {
	if operationID != "" {
		return fitName(replaceInvalid(operationID, isToolNameByte), operationID, maxToolName)
	}
	words := []string{strings.ToLower(method)}
	for _, w := range strings.FieldsFunc(path, func(r rune) bool { return r > 127 || !isToolNameByte(byte(r)) || r == '-' || r == '_' }) {
		words = append(words, w)
	}
	return fitName(strings.Join(words, "_"), method+" "+path, maxToolName)
}

// argName is a parameter's or property's name as the model sees it: the
// wire name with what is not a letter, digit or '_' made '_', never
// starting with a digit, e.g. filter[status] -> filter_status, $top ->
// top, X-Api-Version -> X_Api_Version.
func argName(wire string) string {
	if argNameRule.MatchString(wire) {
		return wire
	}
	name := replaceInvalid(wire, isArgNameByte)
	name = strings.Trim(name, "_")
	for strings.Contains(name, "__") {
		name = strings.ReplaceAll(name, "__", "_")
	}
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "p_" + name
	}
	return fitName(name, wire, maxArgName)
}

// replaceInvalid replaces each byte that ok refuses with '_' (a
// multi-byte character with one).
func replaceInvalid(s string, ok func(byte) bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 128 && ok(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// fitName cuts name to max, ending it with a short hash of original so
// that two long names with one beginning stay apart.
func fitName(name, original string, max int) string {
	if len(name) <= max {
		return name
	}
	return name[:max-9] + "_" + shortHash(original)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

func isToolNameByte(c byte) bool {
	return isArgNameByte(c) || c == '-'
}

func isArgNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
