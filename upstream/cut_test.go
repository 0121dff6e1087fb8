package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/hostileinput"
)

// items is a JSON array of n objects, each with an id, a title and a body
// of bodyLen bytes.
func items(n, bodyLen int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"title":"item %d","body":%q}`, i, i, strings.Repeat("x", bodyLen))
	}
	b.WriteString("]")
	return b.String()
}

// checkCut checks what every cut must be: valid JSON within budget, and
// a record consistent with what was left out.
func checkCut(t *testing.T, src string, out []byte, budget int, cut *Cut) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("cut to %d bytes is not valid JSON: %s", budget, out)
	}
	if len(out) > budget {
		t.Fatalf("cut to %d bytes is %d bytes", budget, len(out))
	}
	dropped := 0
	for _, a := range cut.Arrays {
		if a.Kept >= a.Of || a.Kept < 1 {
			t.Errorf("array %s: kept %d of %d", a.Path, a.Kept, a.Of)
		}
		dropped += a.Of - a.Kept
	}
	if cut.ArraysShortened == len(cut.Arrays) && dropped != cut.ItemsDropped || dropped > cut.ItemsDropped {
		t.Errorf("items dropped %d, the arrays say %d", cut.ItemsDropped, dropped)
	}
	for _, kind := range []struct {
		name          string
		listed, count int
	}{{"arrays", len(cut.Arrays), cut.ArraysShortened}, {"strings", len(cut.Strings), cut.StringsShortened}, {"summarized", len(cut.Summarized), cut.ValuesSummarized}} {
		if kind.listed != min(kind.count, maxCutRecords) {
			t.Errorf("%s: %d listed of %d", kind.name, kind.listed, kind.count)
		}
	}
	checkCutRecord(t, cut)
	keys := 0
	for _, o := range cut.Objects {
		if o.Kept >= o.Of || o.Kept < 1 || o.Path != "$" {
			t.Errorf("object %s: kept %d of %d", o.Path, o.Kept, o.Of)
		}
		keys += o.Of - o.Kept
	}
	if keys != cut.KeysDropped {
		t.Errorf("members dropped %d, the objects say %d", cut.KeysDropped, keys)
	}
	if strings.HasPrefix(src, "{") && len(out) > 0 && out[0] != '{' && len(cut.Objects) == 0 && !fitsNoMember(src, budget) {
		t.Errorf("the root object became %s", out)
	}
	for _, s := range cut.Strings {
		if s.Kept >= s.Of {
			t.Errorf("string %s: kept %d of %d bytes", s.Path, s.Kept, s.Of)
		}
	}
	if len(src) <= budget && (cut.ArraysShortened+cut.StringsShortened+cut.ValuesSummarized+len(cut.Objects) > 0 || string(out) != src) {
		t.Errorf("a JSON text within the budget was cut: %s", out)
	}
}

// checkCutRecord checks the bounds of the record itself: its paths and
// its size as JSON, which a result's _meta carries.
func checkCutRecord(t *testing.T, cut *Cut) {
	t.Helper()
	var paths []string
	for _, a := range slices.Concat(cut.Arrays, cut.Objects) {
		paths = append(paths, a.Path)
	}
	for _, s := range cut.Strings {
		paths = append(paths, s.Path)
	}
	for _, v := range cut.Summarized {
		paths = append(paths, v.Path)
	}
	for _, p := range paths {
		if len(p) > maxCutPath || !utf8.ValidString(p) || !strings.HasPrefix(p, "$") {
			t.Errorf("path of %d bytes, valid UTF-8 %v: %.200q", len(p), utf8.ValidString(p), p)
		}
	}
	if raw, err := json.Marshal(cut); err != nil || len(raw) > MaxCutMeta {
		t.Errorf("the record is %d bytes of JSON, more than %d (%v)", len(raw), MaxCutMeta, err)
	}
}

// fitsNoMember reports whether not even the first member of the root
// object src fits in budget, at its least: then a summary stands for it.
func fitsNoMember(src string, budget int) bool {
	t := newJSONTree([]byte(src))
	first := t.firstChild(0)
	if first < 0 {
		return true
	}
	c := cutter{t: t}
	n := &t.nodes[first]
	return 2+len(t.key(n))+1+c.floor(n) > budget
}

func TestCutJSON(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		src    string
		budget int
		want   string // the cut; "" to check only its record
		arrays []CutArray
		strs   []CutString
		sums   []CutValue
	}{
		{name: "fits", src: `{"a":[1,2,3]}`, budget: 13, want: `{"a":[1,2,3]}`},
		{name: "array shortened from the end", src: `[1,2,3,4,5,6,7,8,9,10]`, budget: 10, want: `[1,2,3,4]`,
			arrays: []CutArray{{Path: "$", Kept: 4, Of: 10}}},
		{name: "long string", src: `{"id":1,"body":"abcdefghijklmnopqrstuvwxyz"}`, budget: 30, want: `{"id":1,"body":"abcdefghi…"}`,
			strs: []CutString{{Path: "$.body", Kept: 14, Of: 28}}},
		{name: "multi-byte string cut between characters", src: `["ééééééééééé"]`, budget: 14, want: `["ééé…"]`,
			strs: []CutString{{Path: "$[0]", Kept: 11, Of: 24}}},
		{name: "escapes stay whole", src: `["\u00e9\u00e9\u00e9\n\n\n\n"]`, budget: 23, want: `["\u00e9\u00e9…"]`,
			strs: []CutString{{Path: "$[0]", Kept: 17, Of: 28}}},
		{name: "a surrogate pair stays whole", src: `["\ud83d\ude00\ud83d\ude00"]`, budget: 24, want: `["\ud83d\ude00…"]`,
			strs: []CutString{{Path: "$[0]", Kept: 17, Of: 26}}},
		{name: "deep levels summarized", src: `{"id":7,"owner":{"login":"octocat","id":1,"site_admin":false,"type":"User"}}`, budget: 40,
			want: `{"id":7,"owner":"{4 keys}"}`, sums: []CutValue{{Path: "$.owner", As: "{4 keys}", Of: 59}}},
		{name: "a key that is not a name", src: `{"a b":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}`, budget: 20,
			want: `{"a b":[1,2,3,4,5]}`, arrays: []CutArray{{Path: `$["a b"]`, Kept: 5, Of: 20}}},
		{name: "large items of a short list are all kept, cut", src: items(3, 400), budget: 400},
		{name: "the root object keeps its first members", src: `{"k0":1,"k1":2,"k2":3,"k3":4,"k4":5,"k5":6,"k6":7,"k7":8}`, budget: 30,
			want: `{"k0":1,"k1":2,"k2":3,"k3":4}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cut := &Cut{}
			out := cutJSON([]byte(tt.src), tt.budget, cut)
			checkCut(t, tt.src, out, tt.budget, cut)
			if tt.want != "" && string(out) != tt.want {
				t.Errorf("got  %s\nwant %s", out, tt.want)
			}
			if tt.want != "" {
				for _, c := range []struct {
					name      string
					got, want any
				}{{"arrays", cut.Arrays, tt.arrays}, {"strings", cut.Strings, tt.strs}, {"summarized", cut.Summarized, tt.sums}} {
					g, _ := json.Marshal(c.got)
					w, _ := json.Marshal(c.want)
					if string(g) != string(w) && !(string(g) == "null" && string(w) == "null") {
						t.Errorf("%s: got %s, want %s", c.name, g, w)
					}
				}
			}
		})
	}
}

// TestCutKeepsEveryItemOfAShortList: three large items share the budget
// rather than one filling it.
func TestCutKeepsEveryItemOfAShortList(t *testing.T) {
	t.Parallel()
	cut := &Cut{}
	out := cutJSON([]byte(items(3, 400)), 400, cut)
	var got []map[string]any
	if err := json.Unmarshal(out, &got); err != nil || len(got) != 3 {
		t.Fatalf("want the 3 items, got %s (%v)", out, err)
	}
	if cut.StringsShortened != 3 || cut.ItemsDropped != 0 {
		t.Errorf("want the 3 bodies shortened and no item dropped, got %+v", cut)
	}
}

// TestCutLongListKeepsWholeItems: a long list of small items keeps the
// first ones whole and drops the rest.
func TestCutLongListKeepsWholeItems(t *testing.T) {
	t.Parallel()
	src := items(500, 20)
	cut := &Cut{}
	out := cutJSON([]byte(src), 2000, cut)
	checkCut(t, src, out, 2000, cut)
	var got []map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if cut.StringsShortened+cut.ValuesSummarized != 0 || cut.ArraysShortened != 1 || cut.Arrays[0].Kept != len(got) || cut.ItemsDropped != 500-len(got) {
		t.Errorf("want whole items kept, the rest dropped; got %d items and %+v", len(got), cut)
	}
}

// TestShapingText: results cut to max_result_size with a note whose
// counts are exact, text at a character boundary, and nothing cut at the
// limit itself.
func TestShapingText(t *testing.T) {
	t.Parallel()
	target := Target{Label: "GET /items"}
	long := strings.Repeat("é", 2000) // 4000 bytes
	for _, tt := range []struct {
		name  string
		text  string
		limit int
		cut   bool
	}{
		{"exactly at the limit", strings.Repeat("a", 1024), 1024, false},
		{"one byte over", strings.Repeat("a", 1025), 1024, true},
		{"multi-byte text", long, 1500, true},
		{"JSON array", items(100, 50), 2048, true},
		{"pretty JSON that fits compacted", "[\n  1,\n  2\n]" + strings.Repeat(" ", 2000), 1024, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := Shaping{MaxSize: int64(tt.limit)}.apply(target, 200, TextResult(tt.text), json.Valid([]byte(tt.text)))
			text := res.Content[0].(mcp.TextContent).Text
			if len(text) > tt.limit {
				t.Fatalf("%d bytes, over the limit of %d", len(text), tt.limit)
			}
			if !utf8.ValidString(text) {
				t.Fatal("the text is not valid UTF-8")
			}
			cut, _ := cutOf(res)
			if !tt.cut {
				if cut != nil || strings.Contains(text, "[cut to") {
					t.Fatalf("nothing should be cut: %s", text)
				}
				return
			}
			if cut == nil {
				t.Fatal("no cut in _meta")
			}
			body, note, ok := strings.Cut(text, noteSep+"[cut to")
			if !ok {
				t.Fatalf("no note: %q", text)
			}
			if len(body) != cut.Kept || cut.Size != len(tt.text) {
				t.Errorf("the note says %d of %d bytes, the text keeps %d of %d", cut.Kept, cut.Size, len(body), len(tt.text))
			}
			if cut.Text {
				if !strings.HasPrefix(tt.text, body) {
					t.Error("the text kept is not the start of the text")
				}
				want := fmt.Sprintf("the text is %d bytes; the first %d are shown, %d left out]", len(tt.text), len(body), len(tt.text)-len(body))
				if !strings.HasSuffix(note, want) {
					t.Errorf("note %q, want it to end %q", note, want)
				}
			} else if !json.Valid([]byte(body)) {
				t.Errorf("the JSON kept is not valid: %s", body)
			}
		})
	}
}

// cutOf is the Cut a result's _meta carries, if any.
func cutOf(res *mcp.CallToolResult) (*Cut, bool) {
	if res.Meta == nil {
		return nil, false
	}
	cut, ok := res.Meta.AdditionalFields[CutMetaKey].(*Cut)
	return cut, ok
}

// TestShapingStructured: structuredContent is cut like the text and
// marked in _meta, never in the object; the text is the same cut JSON
// with the note, or with structured_text summary a short summary.
func TestShapingStructured(t *testing.T) {
	t.Parallel()
	target := Target{Label: "GET /repos/o/r"}
	body := fmt.Sprintf(`{"id":1,"name":"r","topics":["a","b"],"items":%s}`, items(60, 40))
	for _, summary := range []bool{false, true} {
		res, _ := outputOperation(`{"type":"object"}`).structured([]byte(body), "answer")
		res = Shaping{MaxSize: 2048, SummaryText: summary}.apply(target, 200, res, true)
		sc := res.StructuredContent.(json.RawMessage)
		if len(sc) > 2048 || !json.Valid(sc) {
			t.Fatalf("structuredContent of %d bytes, valid %v", len(sc), json.Valid(sc))
		}
		var obj map[string]any
		if err := json.Unmarshal(sc, &obj); err != nil || len(obj) != 4 {
			t.Fatalf("want the object with its 4 keys, got %s", sc)
		}
		cut, ok := cutOf(res)
		if !ok || cut.Kept != len(sc) || cut.Size != len(body) || cut.ItemsDropped == 0 {
			t.Fatalf("the _meta cut %+v does not describe %d of %d bytes", cut, len(sc), len(body))
		}
		text := res.Content[0].(mcp.TextContent).Text
		if len(text) > 2048 {
			t.Errorf("text of %d bytes", len(text))
		}
		if summary {
			want := "GET /repos/o/r answered 200 OK: an object of 4 keys (topics has 2 items, items has 60 items), "
			if !strings.HasPrefix(text, want) || !strings.Contains(text, "see structuredContent") {
				t.Errorf("summary %q, want it to start %q", text, want)
			}
		} else if !strings.HasPrefix(text, string(sc)+noteSep+"[cut to") {
			t.Errorf("text %q is not the cut JSON and the note", text)
		}
		if want := fmt.Sprintf("%d array items left out", cut.ItemsDropped); !strings.Contains(text, want) {
			t.Errorf("the note does not say %q: %s", want, text)
		}
	}
}

// TestShapingSummaryUncut: structured_text summary without a cut is the
// summary alone; full with no limit leaves the result alone.
func TestShapingSummaryUncut(t *testing.T) {
	t.Parallel()
	obj, _ := outputOperation(`{"type":"object"}`).structured([]byte(`{"a":[1,2,3],"b":{}}`), "answer")
	got := Shaping{SummaryText: true}.apply(Target{Label: "GET /x"}, 200, obj, true)
	want := "GET /x answered 200 OK: an object of 2 keys (a has 3 items), 20 bytes of JSON; see structuredContent."
	if text := got.Content[0].(mcp.TextContent).Text; text != want {
		t.Errorf("got %q, want %q", text, want)
	}
	full, _ := outputOperation(`{"type":"object"}`).structured([]byte(`{"a":1}`), "answer")
	if got := (Shaping{}).apply(Target{}, 200, full, true); got.Content[0].(mcp.TextContent).Text != `{"a":1}` || got.Meta != nil {
		t.Errorf("full text changed: %+v", got)
	}
}

// outputOperation is an operation with the output schema and nothing
// else.
func outputOperation(schema string) *Operation {
	return &Operation{output: &lazySchema{doc: []byte(schema), what: "output_schema"}}
}

// FuzzCut: valid JSON in, valid JSON out within the budget, and a record
// whose counts add up.
func FuzzCut(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,3],"b":"xyz"}`, items(20, 30), `["\ud83d\ude00\u00e9é"]`, `[[[[[[1]]]]]]`, `{"":{"":{"":""}}}`, `123456789012345678901234567890`} {
		f.Add([]byte(s), 40)
	}
	f.Fuzz(func(t *testing.T, src []byte, budget int) {
		if !json.Valid(src) {
			return
		}
		compact := compactJSON(src)
		var want bytes.Buffer
		if err := json.Compact(&want, src); err != nil || want.String() != string(compact) {
			t.Fatalf("compactJSON %q = %q, want %q", src, compact, want.String())
		}
		dec := json.NewDecoder(bytes.NewReader(src))
		dec.UseNumber()
		var std any
		if err := dec.Decode(&std); err == nil && !reflect.DeepEqual(newJSONTree(compact).decode(0), std) {
			t.Fatalf("the tree decodes %q unlike encoding/json", src)
		}
		budget = 32 + abs(budget)%2048
		cut := &Cut{}
		done := make(chan []byte)
		go func() { done <- cutJSON(compact, budget, cut) }()
		select {
		case out := <-done:
			checkCut(t, string(compact), out, budget, cut)
		case <-time.After(5 * time.Second):
			t.Fatalf("cutting %d bytes to %d takes more than 5s", len(compact), budget)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// A cut structuredContent that no longer matches the tool's output_schema
// (an object summarized where the schema wants an object) is not sent as
// structuredContent: the result is an error that still holds the cut
// text. One that still matches is sent cut, as usual.
func TestCutAgainstOutputSchema(t *testing.T) {
	t.Parallel()
	var members []string
	for k := range 40 {
		members = append(members, fmt.Sprintf(`"key_%d":"%s"`, k, strings.Repeat("v", 30)))
	}
	body := `{"items":[{"user":{` + strings.Join(members, ",") + `},"tags":["` + strings.Repeat("t", 600) + `"]}]}`
	for _, tt := range []struct {
		name, schema string
		wantError    bool
	}{
		{"user must stay an object", `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"user":{"type":"object"}}}}}}`, true},
		{"any object", `{"type":"object"}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			op, err := NewOperation(Definition{Name: "users", Method: "GET", Path: "/users", OutputSchema: json.RawMessage(tt.schema)})
			if err != nil {
				t.Fatal(err)
			}
			answer := &Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
			res := op.Result(context.Background(), Target{Label: "GET /users"}, answer, Shaping{MaxSize: 1024})
			text := res.Content[0].(mcp.TextContent).Text
			if res.IsError != tt.wantError || res.Meta == nil || res.Meta.AdditionalFields[CutMetaKey] == nil {
				t.Fatalf("isError %v, _meta %+v: %s", res.IsError, res.Meta, text)
			}
			if tt.wantError {
				if res.StructuredContent != nil || !strings.Contains(text, `{"items":[`) || !strings.Contains(text, "no longer matches the tool's output_schema") {
					t.Errorf("error result: structuredContent %v, text %s", res.StructuredContent, text)
				}
				return
			}
			if res.StructuredContent == nil {
				t.Errorf("no structuredContent: %s", text)
			}
		})
	}
}

// Deep nesting is indexed in one pass (each level once, not once per
// level above it): a 9,000-deep answer decodes and cuts like any other.
func TestCutDeepNesting(t *testing.T) {
	t.Parallel()
	const depth = 9000
	src := []byte(strings.Repeat("[", depth) + strings.TrimSuffix(strings.Repeat("1,", 50000), ",") + strings.Repeat("]", depth))
	tree := newJSONTree(src)
	if got := len(tree.spans); got != depth {
		t.Fatalf("%d containers found, want %d", got, depth)
	}
	v := tree.decode(0)
	for range depth - 1 {
		v = v.([]any)[0]
	}
	if n := len(v.([]any)); n != 50000 {
		t.Fatalf("the innermost array has %d items, want 50000", n)
	}
	cut := &Cut{}
	checkCut(t, string(src), cutJSON(src, 4096, cut), 4096, cut)
}

// TestCutDeepAnswer: however deep the answer, the cut allocates in
// proportion to the answer, the text and structuredContent stay within
// max_result_size, and the _meta record within MaxCutMeta.
func TestCutDeepAnswer(t *testing.T) {
	for _, answer := range hostileinput.DeepAnswers() {
		body := answer.Body
		for _, limit := range []int64{1 << 20, 4 << 10} {
			t.Run(fmt.Sprintf("%s, %d bytes", answer.Name, limit), func(t *testing.T) {
				if !json.Valid(body) {
					t.Fatal("the answer is not valid JSON")
				}
				for _, schema := range []string{"", `{"type":"object"}`} {
					def := Definition{Name: "deep", Method: "GET", Path: "/deep"}
					if schema != "" && body[0] == '{' {
						def.OutputSchema = json.RawMessage(schema)
					}
					op, err := NewOperation(def)
					if err != nil {
						t.Fatal(err)
					}
					answer := &Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					res := op.Result(context.Background(), Target{Label: "GET /deep"}, answer, Shaping{MaxSize: limit})
					runtime.ReadMemStats(&after)
					alloc := after.TotalAlloc - before.TotalAlloc
					t.Logf("answer %d bytes, output schema %v: the cut allocated %.1f MB", len(body), schema != "", float64(alloc)/(1<<20))
					if alloc > 32*uint64(len(body)) {
						t.Errorf("the cut of %d bytes allocated %d MB", len(body), alloc>>20)
					}
					checkShaped(t, res, limit)
				}
			})
		}
	}
}

// checkShaped checks a shaped result: its text and structuredContent
// within limit, valid, and its cut record within MaxCutMeta.
func checkShaped(t *testing.T, res *mcp.CallToolResult, limit int64) {
	t.Helper()
	text := onlyText(res)
	if int64(len(text)) > limit || !utf8.ValidString(text) {
		t.Errorf("text of %d bytes (valid UTF-8 %v), limit %d", len(text), utf8.ValidString(text), limit)
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok && (int64(len(raw)) > limit || !json.Valid(raw) || !utf8.Valid(raw)) {
		t.Errorf("structuredContent of %d bytes (valid %v), limit %d", len(raw), json.Valid(raw), limit)
	}
	cut, ok := cutOf(res)
	if !ok {
		t.Fatalf("no cut record: %.300s", text)
	}
	checkCutRecord(t, cut)
	if !strings.Contains(text, "[cut to max_result_size") {
		t.Errorf("no note: %.300s", text)
	}
}

// shapedJSON builds valid JSON from a program of bytes, so that fuzzing
// explores shapes rather than syntax: deep and wide objects and arrays,
// long keys and strings, escapes, multi-byte and invalid UTF-8 text, and
// long runs of one shape (an instruction's count repeats it).
func shapedJSON(prog []byte) []byte {
	var b bytes.Buffer
	open := []byte{'}'} // the closers of the containers open: the root is an object
	b.WriteByte('{')
	first := true // no value yet in the innermost container
	keyLen := 1
	value := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
		if open[len(open)-1] == '}' {
			fmt.Fprintf(&b, `"%s%d":`, strings.Repeat("k", keyLen), b.Len())
		}
	}
	for i := 0; i+1 < len(prog) && b.Len() < 1<<20; i += 2 {
		op, n := prog[i], int(prog[i+1])
		switch op % 8 {
		case 0, 1: // open containers, objects or arrays
			for range n%64 + 1 {
				value()
				closer := byte(']')
				if op%2 == 0 {
					closer = '}'
				}
				b.WriteByte(closer - 2) // '{' or '['
				open = append(open, closer)
				first = true
			}
		case 2: // close containers, never the root
			for range n%8 + 1 {
				if len(open) == 1 {
					break
				}
				b.WriteByte(open[len(open)-1])
				open = open[:len(open)-1]
				first = false
			}
		case 3: // a string of n*16 pieces, with escapes and text of every width
			value()
			b.WriteByte('"')
			for k := range n * 16 {
				b.WriteString([]string{"a", `\"`, "é", "😀", `\u00e9`, `\ud83d\ude00`, "\xff", `\\`}[(k+int(op))%8])
			}
			b.WriteByte('"')
		case 4: // numbers
			for k := range n%32 + 1 {
				value()
				fmt.Fprintf(&b, "%d", k*int(op))
			}
		case 5: // short strings
			for range n%32 + 1 {
				value()
				b.WriteString(`"x"`)
			}
		case 6: // the length of keys from now on
			keyLen = n*4 + 1
		default: // literals
			value()
			b.WriteString([]string{"true", "false", "null"}[n%3])
		}
	}
	for len(open) > 0 {
		b.WriteByte(open[len(open)-1])
		open = open[:len(open)-1]
	}
	return b.Bytes()
}

// FuzzCutShapes: whatever the shape of an answer, its shaped result holds
// its text and structuredContent within max_result_size, valid, and its
// cut record within MaxCutMeta.
func FuzzCutShapes(f *testing.F) {
	f.Add([]byte{0, 63, 0, 63, 3, 200}, uint16(0))
	f.Add([]byte{1, 63, 1, 63, 1, 63, 5, 31, 2, 7, 3, 255}, uint16(500))
	f.Add([]byte{6, 255, 0, 20, 4, 31, 2, 3, 3, 40, 7, 1}, uint16(3000))
	f.Add([]byte{3, 255, 3, 255, 3, 255, 3, 255}, uint16(100))
	f.Fuzz(func(t *testing.T, prog []byte, limit uint16) {
		body := shapedJSON(prog)
		if !json.Valid(body) {
			t.Fatalf("the program made invalid JSON: %.300s", body)
		}
		max := int64(MinResultSize) + int64(limit)*4
		for _, schema := range []json.RawMessage{nil, json.RawMessage(`{"type":"object"}`)} {
			op, err := NewOperation(Definition{Name: "shapes", Method: "GET", Path: "/shapes", OutputSchema: schema})
			if err != nil {
				t.Fatal(err)
			}
			answer := &Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
			res := op.Result(context.Background(), Target{Label: "GET /shapes"}, answer, Shaping{MaxSize: max})
			if int64(len(body)) <= max {
				continue
			}
			checkShaped(t, res, max)
		}
	})
}

// TestCutCountsWhatIsSent: bytes that are not UTF-8 are sent as U+FFFD,
// three bytes each; the cut counts them so, and the text a client reads
// stays within max_result_size.
func TestCutCountsWhatIsSent(t *testing.T) {
	t.Parallel()
	invalid := hostileinput.NotUTF8()
	for _, tt := range []struct{ name, mediaType, body string }{
		{"text", "text/plain", invalid},
		{"JSON", "application/json", `{"s":"` + invalid + `","t":["` + invalid + `"]}`},
		{"JSON of no media type, with an output schema", "", `{"s":"` + invalid + `"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := Definition{Name: "bytes", Method: "GET", Path: "/bytes"}
			if tt.mediaType == "" {
				def.OutputSchema = json.RawMessage(`{"type":"object"}`)
			}
			op, err := NewOperation(def)
			if err != nil {
				t.Fatal(err)
			}
			answer := &Response{Status: 200, Header: http.Header{"Content-Type": {tt.mediaType}}, Body: []byte(tt.body)}
			res := op.Result(context.Background(), Target{Label: "GET /bytes"}, answer, Shaping{MaxSize: 1024})
			// What a client reads: the result sent as JSON and read back.
			sent, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				StructuredContent json.RawMessage `json:"structuredContent"`
			}
			if err := json.Unmarshal(sent, &got); err != nil || len(got.Content) != 1 {
				t.Fatalf("%v: %.300s", err, sent)
			}
			if n := len(got.Content[0].Text); n > 1024 {
				t.Errorf("the client reads %d bytes of text, more than max_result_size 1024", n)
			}
			var sc string
			if len(got.StructuredContent) > 0 {
				var v any
				_ = json.Unmarshal(got.StructuredContent, &v)
				b, _ := json.Marshal(v)
				sc = string(b)
			}
			if len(sc) > 1024 {
				t.Errorf("the client reads %d bytes of structuredContent, more than 1024", len(sc))
			}
			if !strings.Contains(got.Content[0].Text, "\uFFFD") {
				t.Errorf("no U+FFFD in %.100q", got.Content[0].Text)
			}
		})
	}
}

// TestSizeHint: a tool whose bounded results may pass about Claude Code's
// warning announces how large they can be (its text and structured
// content at the bound, and a cut record; at most 500,000), and a result
// past that size says so too; small results, small bounds and no bound
// announce nothing.
func TestSizeHint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		max  int64
		want int
	}{
		{0, 0}, {8 << 10, 0}, {17 << 10, 0}, {18 << 10, 2*18<<10 + MaxCutMeta}, {128 << 10, 2*128<<10 + MaxCutMeta}, {1 << 20, 500_000},
	} {
		if got := (Shaping{MaxSize: tt.max}).SizeHint(); got != tt.want {
			t.Errorf("SizeHint with MaxSize %d = %d, want %d", tt.max, got, tt.want)
		}
	}
	target := Target{Label: "GET /items"}
	s := Shaping{MaxSize: 128 << 10}
	for _, tt := range []struct {
		name string
		text string
		want bool
	}{
		{"small", items(10, 10), false},
		{"large, within the bound", items(1000, 60), true},
		{"large, cut", items(10000, 60), true},
		{"large text", strings.Repeat("a", 50_000), true},
	} {
		res := s.apply(target, 200, TextResult(tt.text), json.Valid([]byte(tt.text)))
		var hint any
		if res.Meta != nil {
			hint = res.Meta.AdditionalFields[ResultSizeHintKey]
		}
		if (hint != nil) != tt.want || hint != nil && hint != s.SizeHint() {
			t.Errorf("%s (%d bytes): the result's hint is %v, want it: %v", tt.name, len(tt.text), hint, tt.want)
		}
	}
}
