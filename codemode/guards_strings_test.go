package codemode

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// TestNormalizeBounded normalizes strings that NFKD and NFKC expand 18
// times. goja did it in one native call: ten million U+FDFA ran past a 3 s
// timeout with 800 MB, and a result over MaxString was returned.
func TestNormalizeBounded(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "ten million U+FDFA", limits: Limits{Timeout: 30 * time.Second}, code: `"\uFDFA".repeat(10 << 20).normalize("NFKD")`,
			kind: KindLimit, msg: "is over the sandbox's limit of 33554432"},
		{name: "a result just over MaxString", limits: escapeSmall, code: `"\uFDFA".repeat(1 << 15).normalize("NFKC")`,
			kind: KindLimit, msg: "String.prototype.normalize"},
		{name: "a result within MaxString", limits: escapeSmall, code: `return "\uFDFA".repeat(1 << 14).normalize("NFKD").length`,
			want: `294912`},
		{name: "normal use", code: `return ["e\u0301".normalize() === "\u00e9", "\u00e9".normalize("NFD").length, "\uFB01".normalize("NFKC"), "abc".normalize("NFKD")]`,
			want: `[true,2,"fi","abc"]`},
	})
}

// TestNormalizeMatchesGoja compares normalize with goja's on random
// strings: compositions, compatibility characters, Hangul, lone
// surrogates, and every way of naming the form; and on long strings,
// which are normalized a chunk at a time.
func TestNormalizeMatchesGoja(t *testing.T) {
	r := newTwoRuntimes(t)
	rng := rand.New(rand.NewSource(4))
	units := []uint16{'a', 'e', 0x0301, 0x0323, 0x1E9B, 0x00E9, 0xFDFA, 0xFB01, 0x2460, 0x1100, 0x1161, 0x11A8, 0xAC00, 0xD83D, 0xDE00, 0xDC00, 0x0041}
	forms := []string{"", `"NFC"`, `"NFD"`, `"NFKC"`, `"NFKD"`, `"nfc"`, `undefined`, `{toString: () => "NFD"}`, `Symbol()`, `null`}
	for i := 0; i < 300; i++ {
		r.same(t, fmt.Sprintf(`%s.normalize(%s)`, randomString(rng, units, 10), forms[rng.Intn(len(forms))]))
	}
	// Runs of more than 30 combining marks (after which norm inserts
	// U+034F) and surrogate pairs across the chunk boundaries.
	const hash = `const h = s => { let x = 0; for (let i = 0; i < s.length; i++) x = (x * 31 + s.charCodeAt(i)) | 0; return [s.length, x] };`
	for _, f := range []string{"NFC", "NFD", "NFKC", "NFKD"} {
		r.same(t, hash+fmt.Sprintf(`const u = [0x61, 0x65, 0x301, 0x323, 0x1E9B, 0xFDFA, 0xAC00, 0x1100, 0x1161, 0xD83D, 0xDE00, 0xDC00, 0x2460];
			let s = ""; for (let i = 0; i < 40000; i++) s += String.fromCharCode(u[(i * 7919 + (i >> 5)) %% u.length]); h(s.normalize(%q))`, f))
		for _, at := range []int{32768 - 20, 32768 - 1, 32768, 65536 - 35} {
			r.same(t, hash+fmt.Sprintf(`h(("a".repeat(%d) + "\\u0301\\u0323".repeat(25) + "e\\uD83D\\uDE00" + "\\uFDFA".repeat(2000)).normalize(%q))`, at, f))
		}
	}
	r.same(t, `String.prototype.normalize.call(null)`)
	r.same(t, `String.prototype.normalize.call({toString: () => "e\u0301"}, "NFC")`)
}

// TestStringConcatBounded: concat is counted against MaxString by the
// guards of guards.go; the + operator, += and template literals are not
// (see guards_strings.go).
func TestStringConcatBounded(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "concat", limits: escapeSmall, code: `const s = "x".repeat(1 << 19); s.concat(s, s)`,
			kind: KindLimit, msg: "String.prototype.concat: a string of 1572864 characters"},
		{name: "concat on a string that is not ASCII", limits: escapeSmall, code: `const s = "\u4241".repeat(1 << 17); "".concat(s, s, s)`,
			kind: KindLimit, msg: "String.prototype.concat"},
	})
}
