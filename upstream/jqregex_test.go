package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/itchyny/gojq"

	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

// jqCalls are the built-ins the prelude takes over, called as a filter
// would, with $re, $flags and $x bound.
var jqCalls = []string{
	`[match($re)]`, `[match($re; $flags)]`, `[match([$re, $flags])]`,
	`test($re)`, `test($re; $flags)`,
	`[capture($re; $flags)]`, `[scan($re)]`, `[scan($re; $flags)]`,
	`[splits($re)]`, `[splits($re; $flags)]`, `split($re; $flags)`,
	`sub($re; "<\(.)>")`, `sub($re; "[\(.name?)]"; $flags)`, `[sub($re; "a", "bb"; $flags)]`,
	`gsub($re; "-")`, `gsub($re; "\(.)"; $flags)`, `[gsub($re; "x", "yz")]`,
	`_match($re; $flags; false)`, `_match($re; $flags; true)`,
	`indices($x)`, `index($x)`, `rindex($x)`, `contains($x)`, `inside($x)`,
	`[.[]?] | indices([$x])`, `[explode[]] | contains([$x | explode[]?])`,
}

// jqCodes are the calls compiled through the prelude (ours) and with
// gojq's own built-ins (theirs), with $re, $flags and $x bound.
var jqCodes = sync.OnceValue(func() map[string][2]*gojq.Code {
	vars := []string{"$re", "$flags", "$x"}
	codes := make(map[string][2]*gojq.Code)
	for _, src := range jqCalls {
		q, err := gojq.Parse(src)
		if err != nil {
			panic(err)
		}
		theirs, err := gojq.Compile(q, gojq.WithVariables(vars))
		if err != nil {
			panic(err)
		}
		q, _ = gojq.Parse(src)
		opts := append((&jqRegexps{}).options()[1:], gojq.WithVariables(append([]string{jqRunVar}, vars...)))
		ours, err := gojq.Compile(withPrelude(q), opts...)
		if err != nil {
			panic(err)
		}
		codes[src] = [2]*gojq.Code{ours, theirs}
	}
	return codes
})

// runJq runs a call on in, through the prelude or gojq's own built-ins,
// and returns every output, an error as its text.
func runJq(src string, ours bool, in any, re, flags, x any) []any {
	code := jqCodes()[src][1]
	values := []any{re, flags, x}
	if ours {
		code = jqCodes()[src][0]
		values = append([]any{&jqRun{ctx: context.Background()}}, values...)
	}
	var out []any
	iter := code.RunWithContext(context.Background(), in, values...)
	for range 1000 {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			out = append(out, "error: "+err.Error())
			break
		}
		out = append(out, v)
	}
	return out
}

// sameAsGojq checks one call through the prelude against gojq's own.
func sameAsGojq(t *testing.T, src string, in any, re, flags, x any) {
	t.Helper()
	want := runJq(src, false, in, re, flags, x)
	got := runJq(src, true, in, re, flags, x)
	if !reflect.DeepEqual(normalJSON(got), normalJSON(want)) {
		t.Errorf("%s on %q with $re %q, $flags %v, $x %q:\n got  %v\n want %v", src, in, re, flags, x, got, want)
	}
}

// normalJSON is v as JSON reads it back: ints and floats alike.
func normalJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func TestJqRegexpsMatchGojq(t *testing.T) {
	if racetest.Enabled {
		t.Skip("a differential of thousands of filters: long under the race detector, for no concurrency")
	}
	t.Parallel()
	inputs := []any{"", "a,b,,c", "aaa", "xaxbxc", "héllo wörld", "😀a😀", "foo bar  baz", "abcabc", "a\nb", "\xffa\xfe", 12, nil, []any{"a", "b"}}
	res := []any{",", "a*", "", "x?", "^", "$", `\b`, `\B`, "(a)(b)?", "(?P<n>o)", "[aeiou]+", "é|ö", ".", `\s+`, "(", 3, "a|", "(?i)A", `\Ab`, `b\z`}
	flags := []any{nil, "g", "gi", "m", "x", 1}
	for _, in := range inputs {
		for _, re := range res {
			for _, f := range flags {
				for _, call := range jqCalls {
					sameAsGojq(t, call, in, re, f, "b")
				}
			}
		}
	}
}

// FuzzJqRegexps: the prelude's built-ins give what gojq's own give.
func FuzzJqRegexps(f *testing.F) {
	f.Add("a,b,,c", ",", "g", "b", uint8(0))
	f.Add("xaxbxc", "x?", "g", "x", uint8(14))
	f.Add("héllo wörld", `\b`, "", "ö", uint8(15))
	f.Add("aaaa", "a*", "g", "aa", uint8(19))
	f.Fuzz(func(t *testing.T, in, re, flags, x string, call uint8) {
		if len(in) > 200 || len(re) > 40 {
			return
		}
		sameAsGojq(t, jqCalls[int(call)%len(jqCalls)], in, re, flags, x)
	})
}

// jqRunGuarded runs a filter with a deadline of timeout (none for 0) and
// fails the test if it has not ended after guard: a hang guard, far
// above what the run takes.
func jqRunGuarded(t *testing.T, filter string, doc []byte, timeout, guard time.Duration) ([]byte, error) {
	t.Helper()
	f, err := compileJq(filter)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		out, err := f.run(ctx, doc)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		t.Logf("%s: %s", filter, time.Since(start).Round(time.Millisecond))
		return r.out, r.err
	case <-time.After(guard):
		t.Fatalf("%s has not ended after %s", filter, guard)
		return nil, nil
	}
}

// TestJqRegexpsLinear: the built-ins do work in proportion to their
// input, whatever the number of matches: gsub(","; ";") over 180 KB held
// a core for 15 s past a 2 s timeout, and 4 MiB would have for hours.
func TestJqRegexpsLinear(t *testing.T) {
	if racetest.Enabled {
		t.Skip("half a minute under the race detector, for no concurrency")
	}
	t.Parallel()
	doc := []byte(`"` + strings.Repeat("a,", 1<<17) + `"`) // 256 KiB, 128 Ki commas
	for _, tt := range []struct{ filter, want string }{
		{`gsub(","; ";") | length`, "262144"},
		{`gsub(","; ";") | .[-4:]`, `"a;a;"`},
		{`[splits(",")] | length`, "131073"},
		{`[match(","; "g")] | .[-1].offset`, "262143"},
		{`[scan("a")] | length`, "131072"},
		{`[sub("(?<x>,)"; "<\(.x)>", "(\(.x))"; "g")] | map(length)`, "[524288,524288]"},
	} {
		// The quadratic replacement this guards against takes hours; a
		// linear one a second or two, and ten times that under the race
		// detector beside the package's other parallel tests on two cores.
		out, err := jqRunGuarded(t, tt.filter, doc, 0, 5*time.Minute)
		if err != nil || string(out) != tt.want {
			t.Errorf("%s: got %.100s, %v; want %s", tt.filter, out, err, tt.want)
		}
	}
}

// TestJqRegexpsEndAtTheDeadline: a filter over an answer too large to
// finish in its time ends at the deadline with the timeout's error, and
// one step of a built-in too large to be interrupted is refused.
func TestJqRegexpsEndAtTheDeadline(t *testing.T) {
	t.Parallel()
	doc := []byte(`"` + strings.Repeat("a,", 2<<20) + `"`) // 4 MiB
	for _, filter := range []string{
		`gsub(","; ";" * 100)`,
		`[range(1000)] | map(. as $i | "x,y" * 10000 | gsub(","; ";")) | length`,
		`[match("a|,"; "g")] | length`,
	} {
		_, err := jqRunGuarded(t, filter, doc, 100*time.Millisecond, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("%s: got %v, want the timeout", filter, err)
		}
	}
	for _, filter := range []string{
		`indices(.[:100000])`,
		`explode | contains(.[:100000])`,
		`test("(a|b|c|d|e|f|g|h|i|j){50}$")`,
	} {
		_, err := jqRunGuarded(t, filter, doc, 0, 20*time.Second)
		if err == nil || !strings.Contains(err.Error(), "more work than a filter may do") {
			t.Errorf("%s: got %v, want the step refused", filter, err)
		}
	}
}
