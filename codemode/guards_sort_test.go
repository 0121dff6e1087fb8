package codemode

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// TestSortAttacks sorts large arrays without a comparator, which goja did
// in one native call, making both elements strings at every comparison:
// the sorts of 64 Ki elements here are 5 times faster than goja's (see
// BenchmarkDefaultSort), and a Uint8Array of 32 Mi elements, which ran
// past a 5 s timeout, takes milliseconds.
func TestSortAttacks(t *testing.T) {
	const base = `const base = Array.from({length: 1 << 16}, (_, i) => (i * 7919) % 1000003);`
	roomy := Limits{Timeout: 5 * time.Second}
	runEscapes(t, []escapeCase{
		{name: "sort of numbers", limits: roomy, code: base + `
let s; for (let k = 0; k < 4; k++) s = base.slice().sort(); return [s[0], s[1], s[2], s[65535], s.length]`,
			want: `[0,1000000,10002,999997,65536]`},
		{name: "toSorted of numbers", limits: roomy, code: base + `
let s; for (let k = 0; k < 4; k++) s = base.toSorted(); return [s[0], s[1], s[2], s[65535], s.length]`,
			want: `[0,1000000,10002,999997,65536]`},
		{name: "sort of strings", limits: roomy, code: base + `
const strs = base.map(String); let s; for (let k = 0; k < 4; k++) s = strs.slice().sort(); return [s[0], s[65535]]`,
			want: `["0","999997"]`},
		{name: "a typed array of 32 Mi bytes", code: `
const s = new Uint8Array(1 << 16); for (let i = 0; i < s.length; i++) s[i] = (i * 7919) & 255;
const a = new Uint8Array(1 << 25); for (let o = 0; o < a.length; o += s.length) a.set(s, o);
a.sort(); return [a[0], a[1 << 17], a[a.length - 1]]`,
			want: `[0,1,255]`},
	})
}

// TestSortStopsAtTimeout sorts four million numbers, a Proxy of them, and
// sorts with built-ins as comparators: no JavaScript runs between two
// comparisons, and goja's sort ran its tens of millions of them to the end,
// for 10 s and more past the timeout, holding the execution's slot. Now
// each is done in time, or stops: the interrupt gets in between
// comparisons and between the reads of a Proxy.
func TestSortStopsAtTimeout(t *testing.T) {
	const strs = `const k = Object.keys("x".repeat(1 << 18)), a = k.concat(k, k, k), cmp = Function.prototype.call.bind(String.prototype.localeCompare);`
	const bytes = `const s = new Int8Array(1 << 16); for (let i = 0; i < s.length; i++) s[i] = (i * 7919) & 255;
const a = new Int8Array(1 << 25); for (let o = 0; o < a.length; o += s.length) a.set(s, o);`
	const numbers = `const b = Array.from({length: 1 << 16}, (_, i) => (i * 7919) % 1000003); const a = [].concat(...Array(64).fill(b));`
	// Building the arrays holds built-ins of their own (a concat of 4 Mi
	// elements takes a second here, many more on a busy machine): a
	// timeout that comes while they run waits for them. What is measured
	// is the sort, so the bound allows for the build as it runs now.
	build := func(prelude string) time.Duration {
		start := time.Now()
		if res := NewRunner(Limits{Timeout: time.Minute}).Run(context.Background(), prelude+`return 1`, nil); res.Err != nil {
			t.Fatalf("%s: %v", prelude, res.Err)
		}
		return time.Since(start)
	}
	for _, c := range []struct{ prelude, sort string }{{numbers, `a.sort()`}, {numbers, `a.toSorted()`}, {numbers, `Array.prototype.sort.call(new Proxy(a, {}))`},
		{strs, `a.sort(cmp)`}, {strs, `a.toSorted(cmp)`}, {bytes, `a.sort(Math.min)`}, {bytes, `a.toSorted(Math.min)`}} {
		code := c.prelude + c.sort
		built := build(c.prelude)
		r := NewRunner(Limits{Timeout: 4 * time.Second, MaxConcurrent: 1})
		start := time.Now()
		if res := r.Run(context.Background(), code, nil); res.Err != nil {
			wantError(t, res, KindTimeout, "timeout")
		}
		// The execution gives its slot back when its goroutine ends: soon
		// after the timeout, as runEscapes allows for any attack.
		bound := r.Limits().Timeout + graceAfterTimeout + 3*time.Second + built
		for r.Run(context.Background(), `return 1`, nil).Err != nil {
			if time.Since(start) > bound {
				t.Errorf("%s: the sort still runs %s after it began", code, time.Since(start))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		healthy(t)
	}
}

// TestSortMatchesGoja compares the default sort with goja's on random
// arrays of primitives (undefined, holes, -0, NaN, strings sharing long
// prefixes, lone surrogates), on arrays with objects, whose toString
// calls must come in the same order, and on array-likes.
func TestSortMatchesGoja(t *testing.T) {
	r := newTwoRuntimes(t)
	rng := rand.New(rand.NewSource(2))
	atoms := []string{"0", "-0", "1", "10", "9", "-1", "1.5", "1e21", "1e-7", "NaN", "Infinity", "-Infinity", "undefined", "null",
		"true", "false", `""`, `"a"`, `"ab"`, `"a\u0000"`, `"\u00e9"`, `"\uD83D\uDE00"`, `"\uD83D"`, `"\uDE00"`, `"\uFFFF"`, `"\uE000"`,
		`"prefix-long-enough-to-share-several-words-a"`, `"prefix-long-enough-to-share-several-words-b"`,
		`"prefix-long-enough-to-share-several-words-"`, `"\u4241\u4241\u4241\u4241\u4241\u4241\u4241\u4241a"`, `"\u4241\u4241\u4241\u4241\u4241\u4241\u4241\u4241"`}
	for i := 0; i < 300; i++ {
		n := rng.Intn(60)
		if i%10 == 0 {
			n = 200 + rng.Intn(300)
		}
		var elems []string
		for j := 0; j < n; j++ {
			switch k := rng.Intn(40); {
			case k < len(atoms):
				elems = append(elems, atoms[k])
			case k < len(atoms)+3:
				elems = append(elems, "") // a hole
			default:
				elems = append(elems, fmt.Sprint(rng.Intn(1000)))
			}
		}
		a := "[" + strings.Join(elems, ",") + "]"
		r.same(t, fmt.Sprintf(`const a = %s; const s = a.slice().sort(); [s, a.toSorted(), Object.keys(s).length, s.length]`, a))
	}
	for _, c := range []string{
		`const log = []; const o = n => ({toString() { log.push(n); return String(n % 3) }}); const a = [o(1), 5, o(2), undefined, o(3), "1", o(4)];
		[a.sort().map(String), log.join()]`,
		`const a = [3, Symbol(), 1]; a.sort()`, `[Symbol()].sort().length`, `[1, 2, Symbol(), 3].toSorted()`,
		`const o = {length: 4, 0: "b", 1: "a", 3: "c"}; const r = Array.prototype.sort.call(o); [r === o, o[0], o[1], o[2], 3 in o, o.length]`,
		`Array.prototype.toSorted.call({length: 3, 0: "b", 2: "a"})`,
		`const a = Object.freeze([2, 1]); a.sort()`, `const a = Object.freeze([1]); a.sort()[0]`,
		`const a = [3, , 1]; Object.setPrototypeOf(a, Object.assign(Object.create(Array.prototype), {1: "z"})); [a.sort(), 1 in a]`,
		`const a = [5, 1, 4]; Object.defineProperty(a, 1, {get() { return 9 }, set(v) {}, configurable: true}); a.sort(); [a[0], a[1], a[2]]`,
		`Array.prototype.sort.call("ba")`, `Array.prototype.sort.call(null)`, `[2, 1].sort(null)`, `[2, 1].sort({})`,
		`[2, 10, 1].sort((x, y) => x - y)`, `[2, 10, 1].toSorted((x, y) => y - x)`, `[3, 1, 2].sort(undefined)`,
		`const p = new Proxy([3, 1, 2], {}); Array.prototype.sort.call(p); [p[0], p[1], p[2]]`,
		`const log = []; const p = new Proxy([3, , 1], {has(t, k) { log.push("has" + String(k)); return k in t }, get(t, k) { log.push("get" + String(k)); return t[k] }});
		Array.prototype.sort.call(p); log.join()`,
		`const u = new Uint8Array([3, 1, 2]); Array.prototype.sort.call(u); Array.from(u)`,
	} {
		r.same(t, c)
	}
}

// TestTypedSortMatchesGoja compares the typed array sorts with goja's:
// every element type, NaN (with payloads) last in its order, -0 before +0.
func TestTypedSortMatchesGoja(t *testing.T) {
	r := newTwoRuntimes(t)
	rng := rand.New(rand.NewSource(3))
	types := []string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array", "Float64Array"}
	floats := []string{"0", "-0", "NaN", "Infinity", "-Infinity", "1.5", "-2.25", "1e-40", "3e38", "-7"}
	for i := 0; i < 200; i++ {
		typ := types[rng.Intn(len(types))]
		var elems []string
		for n := rng.Intn(80); n > 0; n-- {
			if strings.HasPrefix(typ, "Float") && rng.Intn(2) == 0 {
				elems = append(elems, floats[rng.Intn(len(floats))])
			} else {
				elems = append(elems, fmt.Sprint(rng.Intn(1<<17)-1<<16))
			}
		}
		r.same(t, fmt.Sprintf(`const a = new %s([%s]); const b = a.toSorted(); [b, a.sort(), b.constructor === a.constructor, b !== a]`,
			typ, strings.Join(elems, ",")))
	}
	for _, c := range []string{
		`const a = new Float64Array(6); const v = new DataView(a.buffer); v.setUint32(4, 0x7ff80001, true); v.setUint32(12, 0x7ff80002, true);
		v.setUint32(20, 0xfff80003, true); a[3] = -0; a[4] = 1; a[5] = -1; [a.toSorted(), a.sort()]`,
		`const a = new Float32Array([NaN, 0, -0, 2, NaN, -0]); [a.toSorted(), a.sort()]`,
		`Uint8Array.prototype.sort.call([2, 1])`, `Uint8Array.prototype.toSorted.call([2, 1])`, `new Uint8Array([2, 1]).sort(1)`,
		`new Uint8Array([2, 10, 1]).sort((x, y) => y - x)`, `new Uint8Array([2, 10, 1]).toSorted((x, y) => y - x)`,
		`class U extends Uint8Array {} const u = new U([3, 1]); const s = u.toSorted(); [s instanceof U, s.constructor.name, s]`,
	} {
		r.same(t, c)
	}
}

// BenchmarkDefaultSort sorts numbers without a comparator: 256 Ki of them
// with goja's own sort and with the sandbox's, and 4 Mi with the
// sandbox's, the array made in Go.
func BenchmarkDefaultSort(b *testing.B) {
	for _, c := range []struct {
		name    string
		n       int
		guarded bool
	}{{"goja/256Ki", 1 << 18, false}, {"sandbox/256Ki", 1 << 18, true}, {"sandbox/4Mi", 1 << 22, true}} {
		b.Run(c.name, func(b *testing.B) {
			vm := goja.New()
			if c.guarded {
				ex := newExecution(context.Background(), Limits{Timeout: time.Hour}.withDefaults(), nil, nil)
				if err := ex.setup(); err != nil {
					b.Fatal(err)
				}
				vm = ex.vm
			}
			items := make([]any, c.n)
			for i := range items {
				items[i] = (i * 7919) % 1000003
			}
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				_ = vm.Set("a", vm.NewArray(items...))
				b.StartTimer()
				if _, err := vm.RunString(`a.sort()`); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
