package declarations

import "strconv"

// The names of JavaScript: which are identifiers, which are reserved, and
// how a backend's tool name becomes one.

// reservedWords are the names that cannot be used as a binding name in
// strict-mode JavaScript or TypeScript, plus the global values that look like
// literals. A backend global or a tool method with one of these names would
// either not parse or be unusable in destructuring (`const { delete } = x`).
var reservedWords = nameSet(
	// ECMAScript reserved words.
	"await", "break", "case", "catch", "class", "const", "continue",
	"debugger", "default", "delete", "do", "else", "enum", "export",
	"extends", "false", "finally", "for", "function", "if", "import", "in",
	"instanceof", "new", "null", "return", "super", "switch", "this",
	"throw", "true", "try", "typeof", "var", "void", "while", "with", "yield",
	// Reserved in strict mode, which TypeScript and module code always are.
	"let", "static", "implements", "interface", "package", "private",
	"protected", "public", "arguments", "eval",
	// Globals that read as literals; rebinding them only confuses.
	"undefined", "NaN", "Infinity",
	// Assigning a property of this name replaces an object's prototype
	// instead of adding a property, so a tool must never be bound to it.
	"__proto__",
)

// ReservedWord reports whether name is a JavaScript or TypeScript reserved
// word (or a literal-like global such as undefined) that cannot be a binding
// name.
func ReservedWord(name string) bool {
	_, ok := reservedWords[name]
	return ok
}

// IdentifierName reports whether s is made of ASCII letters, digits, _ and
// $ and does not start with a digit. Non-ASCII identifiers are valid
// JavaScript but are left out: they are easy to mistype and to spoof.
func IdentifierName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$':
		case c >= '0' && c <= '9':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// IsIdentifier reports whether s is a valid JavaScript identifier name
// (ASCII letters, digits, _ and $, not starting with a digit) that is not a
// reserved word.
func IsIdentifier(s string) bool {
	return IdentifierName(s) && !ReservedWord(s)
}

// SanitizeIdentifier turns a backend tool name into an identifier:
// characters that cannot appear become '_' (get-weather and get.weather
// become get_weather), a leading digit gets a '_' prefix, a reserved word
// gets a '_' suffix (delete becomes delete_), and the empty name becomes '_'.
func SanitizeIdentifier(name string) string {
	if name == "" {
		return "_"
	}
	b := make([]byte, 0, len(name)+1)
	if name[0] >= '0' && name[0] <= '9' {
		b = append(b, '_')
	}
	// Ranging over the string maps each invalid UTF-8 byte to its own
	// RuneError, so every character becomes exactly one '_'.
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '$':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	s := string(b)
	if ReservedWord(s) {
		s += "_"
	}
	return s
}

func nameSet(names ...string) map[string]struct{} {
	set := make(map[string]struct{}, len(names))
	for _, n := range names {
		set[n] = struct{}{}
	}
	return set
}

// Collision is one tool renamed because its sanitized name was taken.
type Collision struct {
	Tool      string // the backend's own tool name
	Sanitized string // what SanitizeIdentifier made of it
	Assigned  string // the identifier it got instead
}

// AssignNames gives each tool (in the given order) a unique identifier:
// SanitizeIdentifier of its name, and for the second and later tools that
// sanitize to a name already taken, the name with the suffix _2, _3, ...
// (the first free one). It returns the identifiers in order and the
// collisions. It runs in time linear in the number of tools: a backend
// may list thousands of tools of one name.
func AssignNames(tools []string) (idents []string, collisions []Collision) {
	idents = make([]string, len(tools))
	taken := make(map[string]struct{}, len(tools))
	// next is, per sanitized name, the first suffix not yet tried. Names
	// are only ever added, so every suffix below it is still taken, and
	// starting there finds the same name as searching from 2.
	next := make(map[string]int)
	for i, tool := range tools {
		s := SanitizeIdentifier(tool)
		ident := s
		if _, dup := taken[ident]; dup {
			n := next[s]
			if n == 0 {
				n = 2
			}
			for ; ; n++ {
				ident = s + "_" + strconv.Itoa(n)
				if _, dup := taken[ident]; !dup {
					break
				}
			}
			next[s] = n + 1
			collisions = append(collisions, Collision{Tool: tool, Sanitized: s, Assigned: ident})
		}
		taken[ident] = struct{}{}
		idents[i] = ident
	}
	return idents, collisions
}
