package upstream

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// tagsSchema is what `arg tags string[] required` makes.
const tagsSchema = `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}},"required":["tags"],"additionalProperties":false}`

// tagsBody is a tools/call arguments object of n tags, each item given as
// item (a JSON value).
func tagsBody(n int, item string) []byte {
	var b strings.Builder
	b.WriteString(`{"tags":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// decodeArgs decodes arguments as mcp-go does, numbers as float64.
func decodeArgs(t testing.TB, body []byte) map[string]any {
	var args map[string]any
	if err := json.Unmarshal(body, &args); err != nil {
		t.Fatal(err)
	}
	return args
}

func compileTags(t testing.TB) interface{ Validate(any) error } {
	s, err := CompileSchema([]byte(tagsSchema))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestViolationsListTheFirstAndCount(t *testing.T) {
	t.Parallel()
	s := compileTags(t)
	for _, n := range []int{1, 20, 21, 450_000} {
		err := s.Validate(decodeArgs(t, tagsBody(n, "1")))
		got := Violations(err)
		var want []string
		for i := range min(n, 20) {
			want = append(want, fmt.Sprintf("/tags/%d: expected string, but got number", i))
		}
		if n > 20 {
			want = append(want, map[int]string{21: "and 1 more", 450_000: "and 449,980 more"}[n])
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%d integers: violations\n%s\nwant\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if text := strings.Join(got, "\n- "); len(text) > 2048 {
			t.Errorf("%d integers: %d bytes of violations", n, len(text))
		}
	}
}

// retainedBy is how much heap f's result holds once garbage is collected
// (the least of a few tries, so that a stray allocation does not count),
// and the result.
func retainedBy(f func() any) (least int64, v any) {
	least = 1 << 62
	for range 3 {
		v = nil // the last try's result is garbage before this one starts
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		v = f()
		runtime.GC()
		runtime.ReadMemStats(&after)
		least = min(least, int64(after.HeapAlloc)-int64(before.HeapAlloc))
	}
	return least, v
}

func TestValidationErrorRetainsLittle(t *testing.T) {
	s := compileTags(t)
	body := tagsBody(450_000, "1")
	args := decodeArgs(t, body)
	held, err := retainedBy(func() any { return s.Validate(args) })
	if err == nil {
		t.Fatal("450,000 integers for string[]: valid")
	}
	t.Logf("the error of a %d-byte body holds %d bytes", len(body), held)
	if held > 4*int64(len(body)) {
		t.Fatalf("the error of a %d-byte body holds %d bytes", len(body), held)
	}
	runtime.KeepAlive(args)
}

func TestCompileSchemaErrorIsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"text"}`, i)
	}
	b.WriteString(`}}`)
	_, err := CompileSchema([]byte(b.String()))
	if err == nil {
		t.Fatal("1000 properties of type text: compiled")
	}
	msg := err.Error()
	if len(msg) > 4096 || strings.Count(msg, "; ") != 20 || !strings.HasSuffix(msg, " more") {
		t.Fatalf("%d bytes: %s", len(msg), msg)
	}
}

// BenchmarkValidateHugeInvalid validates and words 450,000 integers given
// for a string[] argument, a 900 KB body; B/op is what one such call
// allocates. BenchmarkValidateHugeValid is a body as large
// of 225,000 strings.
func BenchmarkValidateHugeInvalid(b *testing.B) {
	benchValidate(b, tagsBody(450_000, "1"), false)
}

func BenchmarkValidateHugeValid(b *testing.B) {
	benchValidate(b, tagsBody(225_000, `"a"`), true)
}

func benchValidate(b *testing.B, body []byte, valid bool) {
	s := compileTags(b)
	args := decodeArgs(b, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		err := s.Validate(args)
		if (err == nil) != valid {
			b.Fatalf("valid %v: %v", valid, err)
		}
		if err != nil {
			_ = strings.Join(Violations(err), "\n- ")
		}
	}
}

func TestViolationsShortenLongLines(t *testing.T) {
	t.Parallel()
	// A property name of 100 KB, under a schema for any property.
	s, err := CompileSchema([]byte(`{"type":"object","additionalProperties":{"type":"array","items":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("é", 50_000)
	got := Violations(s.Validate(map[string]any{name: []any{1.0, 2.0, 3.0}}))
	if len(got) != 3 {
		t.Fatalf("%d lines", len(got))
	}
	for i, line := range got {
		if len(line) > 1100 || !utf8.ValidString(line) || !strings.HasPrefix(line, "/%C3%A9%C3%A9") ||
			!strings.HasSuffix(line, fmt.Sprintf("%%C3%%A9/%d: expected string, but got number", i)) || !strings.Contains(line, " bytes left out) …") {
			t.Errorf("line %d, %d bytes: %.80s…%s", i, len(line), line, line[max(0, len(line)-80):])
		}
	}
	// Short lines stay whole.
	if line := shortened("/a: " + strings.Repeat("x", 1000)); len(line) != 1004 {
		t.Errorf("a line of 1004 bytes became %d", len(line))
	}
}
