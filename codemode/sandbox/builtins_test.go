package sandbox_test

import "testing"

// TestEmptySearchString replaces the empty string in strings that are not
// ASCII: goja's replaceAll found it again past the end of the string,
// forever, and grew its list of matches until the process died.
func TestEmptySearchString(t *testing.T) {
	runEscapes(t, []escapeCase{
		{name: "replaceAll", code: `return ["\u4241a".replaceAll("", "-"), "\u4241".replaceAll("", (m, i) => i), "".replaceAll("", "x")]`,
			want: `["-䉁-a-","0䉁1","x"]`},
		{name: "replace", code: `return ["\u4241a".replace("", "-"), "\u4241a".replace("", "$'$$")]`, want: `["-䉁a","䉁a$䉁a"]`},
		{name: "a long string", code: `return "\u4241".repeat(1 << 12).replaceAll("", "").length`, want: `4096`},
	})
}
