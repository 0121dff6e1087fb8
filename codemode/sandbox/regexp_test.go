package sandbox_test

import (
	"math"
	"testing"
	"time"

	"github.com/dlclark/regexp2/v2"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// TestRegexpTimeoutIsTheSandboxsOwn: the sandbox bounds its own regexp2
// matches and leaves regexp2's package default, which every other user
// of regexp2 in the process gets, as it was.
func TestRegexpTimeoutIsTheSandboxsOwn(t *testing.T) {
	res := codemodetest.Run(t, codemode.Limits{}, `return [/(?<=a)b/.test("ab"), /^(?=(a+)+b)/.test("a".repeat(40))]`)
	codemodetest.WantError(t, res, codemode.KindLimit, "regular expression")
	if regexp2.DefaultMatchTimeout != time.Duration(math.MaxInt64) {
		t.Errorf("regexp2.DefaultMatchTimeout is %s, not regexp2's own default", regexp2.DefaultMatchTimeout)
	}
	if rx := regexp2.MustCompile(`^(?=(a+)+b)`, regexp2.ECMAScript); rx.MatchTimeout != time.Duration(math.MaxInt64) {
		t.Errorf("a regexp compiled outside the sandbox times out after %s", rx.MatchTimeout)
	}
}

// TestCatastrophicRegexpsStop: every way a match reaches regexp2 is
// bounded, including a pattern Go's regexp could run, which goja hands to
// regexp2 when the match starts past the beginning.
func TestCatastrophicRegexpsStop(t *testing.T) {
	for _, tt := range []struct{ name, code string }{
		{"lookahead", `/^(?=(a+)+b)/.exec("a".repeat(40))`},
		{"backreference", `/(a*)*\1b/.test("a".repeat(40))`},
		{"past the beginning, with lastIndex", `const re = /(a+)+b/g; re.lastIndex = 1; re.exec("a".repeat(40))`},
		{"past the beginning, sticky", `const re = /(a+)+b/y; re.lastIndex = 1; re.test("a".repeat(40))`},
		{"matchAll", `[..."x" + "a".repeat(40)].length; [...("x" + "a".repeat(40)).matchAll(/(?=(a+)+b)/g)]`},
		{"split", `("x" + "a".repeat(40)).split(/(?=(a+)+b)/)`},
		{"a RegExp made by the constructor", `new RegExp("^(?=(a+)+b)", "i").test("A".repeat(40))`},
		{"a pattern string given to search", `"a".repeat(40).search("^(?=(a+)+b)")`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := codemodetest.Run(t, codemode.Limits{}, tt.code)
			codemodetest.WantError(t, res, codemode.KindLimit, "regular expression match ran for more than")
			codemodetest.Healthy(t)
		})
	}
	// Bounded matches still match as goja's own would.
	codemodetest.WantValue(t, codemodetest.Run(t, codemode.Limits{}, `const re = /a(b)/g; re.lastIndex = 2;
return [re.exec("xabab").index, /(?<=x)a/.test("xa"), "a1b2".replace(/(\d)/g, "<$1>"), /(a)\1/i.test("aA")]`), `[3,true,"a<1>b<2>",true]`)
}
