package fastpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func sameArgs(t *testing.T, raw string) {
	t.Helper()
	got, want := DecodeArgs(json.RawMessage(raw)), decodeArgsJSON([]byte(raw))
	if !reflect.DeepEqual(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("%.300q: decodeArgs gives %#v, encoding/json %#v", raw, got, want)
	}
}

// decodeArgs gives what encoding/json gives with UseNumber, for every
// JSON text: strings with escapes, surrogates and bad UTF-8, numbers of
// every form, repeated keys, nesting, white space, non-objects.
func TestDecodeArgsAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{}`, ` { } `, "\t{\n\"a\" :\r1 }\n", `null`, `[]`, `[1]`, `"a"`, `1`, `true`,
		`{"a":1,"a":2}`, `{"a":{"b":1},"a":{"c":2}}`,
		`{"n":[0,-0,1.5,-2e10,3E+2,4e-2,12345678901234567890123456789]}`,
		`{"s":["","a\"b","\\","\/","\b\f\n\r\t","\u00e9","\ud83d\ude00","\ud800","\udc00x","é","\u0000"]}`,
		"{\"bad\":\"\xff\xfe\",\"\xc3\":\"\xc3\xa9\xe2\x82\"}",
		`{"x":[[],{},[[]],[{}],{"a":[]}],"y":[true,false,null,"]",",","}","{","[","\"]"]}`,
		`{"a,b":"c:d","[":"{"}`,
		`{"a":[1,[2,[3,[4]]],{"b":[5,{"c":6}]}]}`,
	} {
		sameArgs(t, raw)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		v := randomJSON(rng, 0)
		raw, _ := json.Marshal(map[string]any{"v": v, "w": []any{v, v}})
		sameArgs(t, string(raw))
		// The same with white space everywhere.
		var indented bytes.Buffer
		_ = json.Indent(&indented, raw, " ", "\t ")
		sameArgs(t, indented.String())
	}
}

func randomJSON(rng *rand.Rand, depth int) any {
	kinds := 7
	if depth > 3 {
		kinds = 5
	}
	switch rng.IntN(kinds) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return json.Number([]string{"0", "-1", "1.25", "6e23", "-7E-3", "99999999999999999999"}[rng.IntN(6)])
	case 3, 4:
		parts := []string{"a", "é", "\"", "\\", "\n", "\u2028", "😀", "\x00", "/", "]", "\xff", "{"}
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return b.String()
	case 5:
		a := make([]any, rng.IntN(5))
		for i := range a {
			a[i] = randomJSON(rng, depth+1)
		}
		return a
	default:
		m := map[string]any{}
		for range rng.IntN(5) {
			m[fmt.Sprint(randomJSON(rng, 5))] = randomJSON(rng, depth+1)
		}
		return m
	}
}

// Arguments of 450,000 numbers, 900 KB, cost a few times their size:
// encoding/json allocated 36 MB, growing the array by appending and
// copying every number's text.
func TestDecodeArgsAllocatesInProportion(t *testing.T) {
	raw := []byte(`{"tags":[1` + strings.Repeat(",1", 449_999) + `]}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	args := DecodeArgs(raw)
	runtime.ReadMemStats(&after)
	if n := len(args["tags"].([]any)); n != 450_000 {
		t.Fatalf("%d tags", n)
	}
	// An item is an interface in the array (16 bytes) and its boxed
	// json.Number (16 bytes): 32 bytes for 2 bytes of text, 16 times.
	n := after.TotalAlloc - before.TotalAlloc
	t.Logf("decoding %d bytes allocated %d", len(raw), n)
	if n > 18*uint64(len(raw)) {
		t.Fatalf("decoding %d bytes allocated %d", len(raw), n)
	}
}

// FuzzDecodeArgs: for any valid JSON text, decodeArgs gives what
// encoding/json gives; for any other text, nil (encoding/json's decoder
// would take a valid prefix, as of "{}0").
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":[1,2,{"b":"c\u00e9"}],"d":null}`, `{"tags":[1,1,1,1]}`,
		`{"s":"\ud800\udc00\ud800","n":-0.5e+10}`, "{\"\xff\":[[],{}]}", `[`, `{"a":`, `{"a":0+}`, `{"a":01}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			if args := DecodeArgs(json.RawMessage(raw)); args != nil {
				t.Fatalf("%.300q is not JSON, and decodeArgs gives %#v", raw, args)
			}
			return
		}
		sameArgs(t, raw)
	})
}
