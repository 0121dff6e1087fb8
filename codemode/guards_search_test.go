package codemode

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestStringSearchAttacks searches strings that are not all ASCII for long
// needles. goja's search steps one byte on past each match that falls
// between two code units, and "\u4241"... holds one at every odd byte:
// before the guard each of these ran for minutes in one native call.
func TestStringSearchAttacks(t *testing.T) {
	const setup = `const s = "\u4241".repeat(1 << 21), t = "\u4142".repeat(1 << 20);`
	runEscapes(t, []escapeCase{
		{name: "indexOf", code: setup + `return s.indexOf(t)`, want: `-1`},
		{name: "lastIndexOf", code: setup + `return s.lastIndexOf(t)`, want: `-1`},
		{name: "includes", code: setup + `return s.includes(t)`, want: `false`},
		{name: "split", code: setup + `return s.split(t).length`, want: `1`},
		{name: "replace", code: setup + `return s.replace(t, "x") === s`, want: `true`},
		{name: "replaceAll", code: setup + `return s.replaceAll(t, () => "x") === s`, want: `true`},
		{name: "an ASCII needle", code: `return "\u4100".repeat(1 << 21).indexOf("A".repeat(1 << 20))`, want: `-1`},
		{name: "a needle that a toString returns", code: setup + `return s.indexOf({toString: () => t})`, want: `-1`},
		{name: "found at the end", code: setup + `return [(s + t).indexOf(t), (s + t).lastIndexOf(t), (t + s).lastIndexOf(t)]`,
			want: `[2097152,2097152,0]`},
	})
}

// TestReplacerOutputCounted has replacer functions return long strings for
// many matches. What they returned was not counted: with the default
// limits, a million matches of a 32 KiB string asked for 32 GiB in one
// native call. Here 4096 matches of 1 KiB pass a limit of 1 MiB.
func TestReplacerOutputCounted(t *testing.T) {
	const big = `const big = "y".repeat(1 << 10), s = "ab".repeat(1 << 12);`
	runEscapes(t, []escapeCase{
		{name: "replaceAll with a string pattern", limits: escapeSmall, code: big + `s.replaceAll("a", () => big)`,
			kind: KindLimit, msg: "String.prototype.replaceAll"},
		{name: "replace with a global regular expression", limits: escapeSmall, code: big + `s.replace(/a/g, () => big)`,
			kind: KindLimit, msg: "RegExp.prototype[Symbol.replace]"},
		{name: "on a string that is not ASCII", limits: escapeSmall, code: big + `("\u4241" + s).replaceAll("a", () => big)`,
			kind: KindLimit, msg: "String.prototype.replaceAll"},
		{name: "Symbol.replace called directly", limits: escapeSmall, code: big + `RegExp.prototype[Symbol.replace].call(/b/g, s, () => big)`,
			kind: KindLimit, msg: "RegExp.prototype[Symbol.replace]"},
		{name: "a replacer that stays small", code: `return "a-b-c".replaceAll("-", (m, i) => i) + "\u4241".replace("\u4241", () => "z")`,
			want: `"a1b3cz"`},
	})
}

// TestStringSearchMatchesGoja compares the searches with goja's own on
// small random strings, with lone surrogates and pairs, and every way of
// passing a position. Replacement patterns ($&, $', $`) get strings
// without lone surrogates: guards_strings.go expands them, and join, as Go
// strings, where a lone surrogate becomes U+FFFD.
func TestStringSearchMatchesGoja(t *testing.T) {
	r := newTwoRuntimes(t)
	rng := rand.New(rand.NewSource(1))
	lone := []uint16{'a', 'b', 0x4241, 0x4142, 0xD83D, 0xDE00, 0xDC00}
	paired := []uint16{'a', 'b', 0x4241, 0x4142, 0xFFFF}
	positions := []string{"undefined", "0", "1", "3", "-1", "100", "NaN", "Infinity", "-Infinity", "2.7", "{valueOf: () => 2}", "null"}
	for i := 0; i < 400; i++ {
		units := lone
		if i%2 == 1 {
			units = paired
		}
		// Not empty: goja's replaceAll of "" loops forever on a string
		// that is not ASCII (see TestEmptySearchString).
		s, n := randomString(rng, units, 12), randomString(rng, units, 3)
		if n == `""` {
			n = `"a"`
		}
		p := positions[rng.Intn(len(positions))]
		code := fmt.Sprintf(`const s = %s, t = %s, p = %s; [s.indexOf(t), s.indexOf(t, p), s.lastIndexOf(t), s.lastIndexOf(t, p),
			s.includes(t), s.includes(t, p), s.split(t), s.split(t, 2), s.split(t, p), s.split(t, 0), s.indexOf(t.charAt(0)),
			s.lastIndexOf(t + t), s.replace(t, (m, i, all) => "<" + m + i + (all === s) + ">"),
			s.replaceAll(t, (m, i, all) => "<" + m + i + (all === s) + ">"), s.replace(t, "[$$|$1]"), s.replaceAll(t, "")`, s, n, p)
		if i%2 == 1 {
			code += ", s.replace(t, \"[$&|$`|$']\"), s.replaceAll(t, \"<$&$'>\")"
		}
		r.same(t, code+"]")
	}
	for _, c := range []string{
		`"\u4241a".indexOf("")`, `"\u4241a".indexOf("", 5)`, `"\u4241a".lastIndexOf("")`, `"\u4241a".lastIndexOf("", 1)`,
		`"\u4241a".split("")`, `"\u4241a".split("", 1)`, `"\u4241a".replace("", "x")`,
		`"\u4241ab".split(undefined)`, `"\u4241ab".split(null)`, `"\u4241nullb".split(null)`, `"\u42411b".split(1)`,
		`"\u4241a".includes(/a/)`, `"\u4241a".includes({[Symbol.match]: false, toString: () => "a"})`,
		`"\u4241a".indexOf(Symbol())`, `String.prototype.indexOf.call(null, "a")`, `String.prototype.split.call(undefined, "a")`,
		`String.prototype.indexOf.call({toString: () => "x\u4241y"}, "y")`,
		`"x\u4241y".split({[Symbol.split]: (s, l) => [s, l]}, 3)`, `"\u4241a\u4241".replaceAll("\u4241", "$'")`,
		`"\u4241a".split("a", -1)`, `"\u4241a".split("a", 2 ** 32 + 1)`, `"\uD83D\uDE00\uD83D".split("\uD83D")`,
	} {
		r.same(t, c)
	}
}

// TestEmptySearchString replaces the empty string in strings that are not
// ASCII: goja's replaceAll found it again past the end of the string,
// forever, and grew its list of matches until the process died.
func TestEmptySearchString(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "replaceAll", code: `return ["\u4241a".replaceAll("", "-"), "\u4241".replaceAll("", (m, i) => i), "".replaceAll("", "x")]`,
			want: `["-䉁-a-","0䉁1","x"]`},
		{name: "replace", code: `return ["\u4241a".replace("", "-"), "\u4241a".replace("", "$'$$")]`, want: `["-䉁a","䉁a$䉁a"]`},
		{name: "a long string", code: `return "\u4241".repeat(1 << 16).replaceAll("", "").length`, want: `65536`},
	})
}

// randomString is a JavaScript string literal of up to max code units.
func randomString(rng *rand.Rand, units []uint16, max int) string {
	var b strings.Builder
	b.WriteByte('"')
	for n := rng.Intn(max + 1); n > 0; n-- {
		fmt.Fprintf(&b, `\u%04x`, units[rng.Intn(len(units))])
	}
	b.WriteByte('"')
	return b.String()
}
