package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// sameJSONValue is script that compares two values the way code can tell
// them apart: type, Object.is for primitives (so -0 and NaN count),
// prototype, own keys in order and their descriptors.
const sameJSONValue = `(function same(a, b) {
	if (typeof a !== typeof b) return false;
	if (a === null || typeof a !== "object") return Object.is(a, b);
	if (b === null || Array.isArray(a) !== Array.isArray(b)) return false;
	if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
	const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
	if (ka.length !== kb.length) return false;
	for (let i = 0; i < ka.length; i++) {
		if (ka[i] !== kb[i]) return false;
		const da = Object.getOwnPropertyDescriptor(a, ka[i]), db = Object.getOwnPropertyDescriptor(b, kb[i]);
		if (da.writable !== db.writable || da.enumerable !== db.enumerable || da.configurable !== db.configurable) return false;
		if (!same(da.value, db.value)) return false;
	}
	return true;
})`

// jsonOracle decodes text both ways in one runtime: with goja's own
// JSON.parse, the way values came into the sandbox before, and with
// decodeJSON.
type jsonOracle struct {
	vm    *goja.Runtime
	parse goja.Callable
	same  goja.Callable
}

func newJSONOracle(t testing.TB) *jsonOracle {
	vm := goja.New()
	parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
	v, err := vm.RunString(sameJSONValue)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := goja.AssertFunction(v)
	return &jsonOracle{vm: vm, parse: parse, same: same}
}

// check fails the test unless decodeJSON accepts exactly what goja's
// JSON.parse accepts, and builds the same value.
func (o *jsonOracle) check(t testing.TB, text string) {
	t.Helper()
	want, werr := o.parse(goja.Undefined(), o.vm.ToValue(text))
	got, ok := sandbox.DecodeJSON(o.vm, text)
	switch {
	case werr != nil && ok:
		t.Fatalf("%q: JSON.parse refuses it (%v), decodeJSON accepts it", text, werr)
	case werr == nil && !ok:
		t.Fatalf("%q: JSON.parse accepts it, decodeJSON refuses it", text)
	case werr != nil:
		return
	}
	same, err := o.same(goja.Undefined(), want, got)
	if err != nil {
		t.Fatal(err)
	}
	if !same.ToBoolean() {
		t.Fatalf("%q: JSON.parse made %s, decodeJSON %s", text, show(o.vm, want), show(o.vm, got))
	}
}

func show(vm *goja.Runtime, v goja.Value) string {
	b, err := json.Marshal(v.Export())
	if err != nil {
		return v.String()
	}
	return string(b)
}

var jsonCorpus = []string{
	`0`, `-0`, `1`, `-1`, `1.5`, `-1.5e3`, `1E+2`, `1e-2`, `0.1`, `123456789012345`, `1234567890123456`,
	`9007199254740993`, `-9007199254740993`, `12345678901234567890123`, `1e308`, `1e309`, `-1e309`, `1e-400`,
	`4.9e-324`, `2.5e-324`, `0.0`, `-0.0`, `1.0`, `100`, `9223372036854775807`, `9223372036854775808`,
	`01`, `-`, `+1`, `.5`, `1.`, `1e`, `1e+`, `--1`, `0x10`, `NaN`, `Infinity`, `-Infinity`, `1_000`,
	`true`, `false`, `null`, `tru`, `nul`, `True`, `nulll`, `truefalse`,
	`""`, `"a"`, `"é"`, `"日本"`, `"😀"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`,
	`"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"\u0000"`, `"\/\\\"\b\f\n\r\t"`, `"\x"`, `"\u12"`, `"\u12g4"`,
	`"\U0041"`, "\"\x01\"", "\"a\tb\"", "\"\x7f\"", "\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", "\"\xc3\xa9\\n\xff\"",
	"\"\xf0\x9f\x98\"", `"abc`, `"abc\"`, `"\`, `"\u`,
	`[]`, `[ ]`, `[1,2,3]`, `[1,]`, `[,1]`, `[1 2]`, `[[[]]]`, `[`, `]`, `[1`, `[1,`,
	`{}`, `{ }`, `{"a":1}`, `{"a":1,}`, `{a:1}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{"a":1 "b":2}`, `{`, `{"a":1`,
	`{"b":1,"a":2,"1":3,"0":4,"-1":5,"01":6,"4294967295":7,"1.5":8}`,
	`{"a":1,"b":2,"a":3}`, `{"__proto__":{"x":1}}`, `{"__proto__":1,"__proto__":[]}`, `{"constructor":1,"toString":2}`,
	`{"":1}`, `{"\u0000":1}`, `{"é":{"日":[1,{"😀":null}]}}`, "{\"\xff\":1}", `{"a\nb":1}`,
	` 1 `, "\t\n\r [1] \n", ``, ` `, `1 2`, `[] []`, `{}x`, `1x`, "\u00a01", "1\u00a0", "\ufeff1", `/* */1`,
	`{"orders":[{"id":"o-1","total":12.5,"items":[{"sku":"a","qty":2}],"customer":{"id":"c-9","vip":true}}],"next":null}`,
}

func TestDecodeJSONAgreesOnACorpus(t *testing.T) {
	o := newJSONOracle(t)
	for _, text := range jsonCorpus {
		o.check(t, text)
	}
	deep := strings.Repeat("[", sandbox.MaxJSONNesting) + strings.Repeat("]", sandbox.MaxJSONNesting)
	o.check(t, deep)
	o.check(t, strings.Repeat(`{"a":`, sandbox.MaxJSONNesting)+"1"+strings.Repeat("}", sandbox.MaxJSONNesting))
	if _, ok := sandbox.DecodeJSON(o.vm, "["+deep+"]"); ok {
		t.Fatalf("decodeJSON accepted %d levels", sandbox.MaxJSONNesting+1)
	}
}

// TestDecodedStringsOwnTheirBytes: no string decodeJSON makes points into
// the text, which the code would otherwise keep alive whole by keeping
// one short string of a large answer.
func TestDecodedStringsOwnTheirBytes(t *testing.T) {
	text := `{"key":"value","list":[{"key":"again"}]}`
	vm := goja.New()
	v, ok := sandbox.DecodeJSON(vm, text)
	if !ok {
		t.Fatal("refused")
	}
	start := uintptr(unsafe.Pointer(unsafe.StringData(text)))
	inText := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= start && p < start+uintptr(len(text))
	}
	obj := v.ToObject(vm)
	inner := obj.Get("list").ToObject(vm).Get("0").ToObject(vm)
	strs := append(obj.Keys(), inner.Keys()...)
	strs = append(strs, obj.Get("key").Export().(string), inner.Get("key").Export().(string))
	for _, s := range strs {
		if inText(s) {
			t.Errorf("%q points into the text", s)
		}
	}
}

// randomJSON writes a random value of JSON text: escapes, surrogates,
// invalid UTF-8, numbers of every form, repeated and numeric keys.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	space := func() {
		if r.Intn(8) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r", "  "}[r.Intn(5)])
		}
	}
	space()
	switch n := r.Intn(10); {
	case n == 0 && depth < 6:
		b.WriteByte('[')
		for i, k := 0, r.Intn(5); i < k; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth+1)
		}
		b.WriteByte(']')
	case n == 1 && depth < 6:
		b.WriteByte('{')
		for i, k := 0, r.Intn(5); i < k; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			space()
			randomJSONString(r, b, true)
			space()
			b.WriteByte(':')
			randomJSON(r, b, depth+1)
		}
		b.WriteByte('}')
	case n < 5:
		randomJSONString(r, b, false)
	case n < 8:
		randomJSONNumber(r, b)
	default:
		b.WriteString([]string{"true", "false", "null"}[r.Intn(3)])
	}
	space()
}

func randomJSONString(r *rand.Rand, b *strings.Builder, key bool) {
	if key && r.Intn(2) == 0 {
		b.WriteString([]string{`"a"`, `"b"`, `"0"`, `"1"`, `"__proto__"`, `"10"`, `""`}[r.Intn(7)])
		return
	}
	pieces := []string{"a", "Z", " ", "é", "日", "😀", `\n`, `\"`, `\\`, `\/`, `\t`, `\u0041`, `\u00e9`,
		`\ud83d\ude00`, `\ud83d`, `\ude00`, `\u0000`, `\u001f`, "\xff", "\xc3", "\xed\xa0\x80", "\x7f"}
	b.WriteByte('"')
	for i, k := 0, r.Intn(6); i < k; i++ {
		b.WriteString(pieces[r.Intn(len(pieces))])
	}
	b.WriteByte('"')
}

func randomJSONNumber(r *rand.Rand, b *strings.Builder) {
	if r.Intn(2) == 0 {
		b.WriteByte('-')
	}
	switch r.Intn(4) {
	case 0:
		b.WriteString(strconv.Itoa(r.Intn(1000)))
	case 1:
		b.WriteString(strconv.FormatUint(r.Uint64(), 10) + strconv.Itoa(r.Intn(1000)))
	case 2:
		b.WriteString(strconv.FormatFloat(r.NormFloat64()*1e6, 'f', -1, 64))
	default:
		fmt.Fprintf(b, "%d.%de%s%d", r.Intn(10), r.Intn(1000), []string{"", "+", "-"}[r.Intn(3)], r.Intn(400))
	}
}

// TestDecodeJSONAgreesOnRandomText checks random values, and the same
// texts cut short or with a byte changed.
func TestDecodeJSONAgreesOnRandomText(t *testing.T) {
	o := newJSONOracle(t)
	r := rand.New(rand.NewSource(17))
	junk := []byte(`{}[],:"\ -+.e0119aZtfn` + "\x00\xff")
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		randomJSON(r, &b, 0)
		text := b.String()
		o.check(t, text)
		if len(text) > 0 {
			o.check(t, text[:r.Intn(len(text))])
			mutated := []byte(text)
			mutated[r.Intn(len(mutated))] = junk[r.Intn(len(junk))]
			o.check(t, string(mutated))
		}
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, text := range jsonCorpus {
		f.Add(text)
	}
	o := newJSONOracle(f)
	f.Fuzz(func(t *testing.T, text string) {
		if d, _ := sandbox.JSONShape(text); d > sandbox.MaxJSONNesting {
			return // checkJSON refuses it before either parse
		}
		o.check(t, text)
	})
}

// TestParsedValuesInTheSandbox: an answer and JSON.parse in the code give
// the values and errors they always gave, with a reviver too.
func TestParsedValuesInTheSandbox(t *testing.T) {
	answer := `{"b":1,"a":[1,-0,1e400,"\ud83d"],"__proto__":{"x":1},"a":2}`
	answers := map[string]string{
		"good":      `{"z":[1,2.5,"é",{"__proto__":null}],"a":true,"9":null}`,
		"truncated": `{"a":[1,2`,
		"huge":      `[1e400]`,
		"trailing":  `{} {}`,
	}
	b := codemode.Binding{Name: "api", Tools: map[string]string{"get": "get"}, Call: func(_ context.Context, _ string, args []byte) (codemode.Answer, error) {
		var a struct{ Which string }
		if err := json.Unmarshal(args, &a); err != nil {
			return codemode.Answer{}, err
		}
		return codemode.Answer{Value: []byte(answers[a.Which])}, nil
	}}
	res := codemodetest.Run(t, codemode.Limits{}, `
const out = [];
const good = await api.get({which: "good"});
out.push(Object.keys(good), JSON.stringify(good), Object.getPrototypeOf(good.z[3]) === Object.prototype);
for (const which of ["truncated", "huge", "trailing"]) {
	try { await api.get({which}); out.push("no error") } catch (e) { out.push(e.name + ": " + e.message) }
}
try { JSON.parse(`+"`"+answer+"`"+`); out.push("no error") } catch (e) { out.push(e.name + ": " + e.message) }
const ok = JSON.parse('{"b":1,"a":[1,-0],"__proto__":{"x":1},"a":2}');
out.push(Object.keys(ok), ok.a, Object.getPrototypeOf(ok) === Object.prototype, ok.__proto__.x);
out.push(JSON.parse('{"a":[1,2],"b":{"c":3}}', (k, v) => typeof v === "number" ? v * 10 : v));
try { JSON.parse("1", null); out.push("no error") } catch (e) { out.push(e.name) }
for (const text of ["", "[1,", '{"a" 1}', "01", "1 2"]) {
	try { JSON.parse(text); out.push("no error") } catch (e) { out.push(e.name + ": " + e.message) }
}
return out`, b)
	codemodetest.WantValue(t, res, `[["9","z","a"],"{\"9\":null,\"z\":[1,2.5,\"é\",{\"__proto__\":null}],\"a\":true}",true,`+
		`"Error: api.get: the answer is not usable: SyntaxError: Unexpected end of JSON input (EOF)",`+
		`"Error: api.get: the answer is not usable: SyntaxError: json: cannot unmarshal number 1e400 into Go value of type float64",`+
		`"Error: api.get: the answer is not usable: SyntaxError: Unexpected token at the end: {",`+
		`"SyntaxError: json: cannot unmarshal number 1e400 into Go value of type float64",`+
		`["b","a","__proto__"],2,true,1,{"a":[10,20],"b":{"c":30}},"TypeError",`+
		`"SyntaxError: Unexpected end of JSON input (EOF)","SyntaxError: Unexpected end of JSON input (EOF)",`+
		`"SyntaxError: invalid character '1' after object key","SyntaxError: Unexpected token at the end: 1",`+
		`"SyntaxError: Unexpected token at the end: 2"]`)
}

// BenchmarkDecodeJSON compares goja's JSON.parse and decodeJSON on
// codemodetest.OrdersJSON.
func BenchmarkDecodeJSON(b *testing.B) {
	text := codemodetest.OrdersJSON()
	o := newJSONOracle(b)
	o.check(b, text)
	b.Run("goja", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		for i := 0; i < b.N; i++ {
			if _, err := o.parse(goja.Undefined(), o.vm.ToValue(text)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decodeJSON", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(text)))
		for i := 0; i < b.N; i++ {
			if _, ok := sandbox.DecodeJSON(o.vm, text); !ok {
				b.Fatal("refused")
			}
		}
	})
}
