package jsonschema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"
)

// isInteger decides as the big.Rat of a number's text, v5's way, does.
func TestIsIntegerAgreesWithRat(t *testing.T) {
	t.Parallel()
	values := []any{
		json.Number("0"), json.Number("-0"), json.Number("12345678901234567890123"), json.Number("-7"),
		json.Number("1.0"), json.Number("1.5"), json.Number("1e3"), json.Number("1e-3"), json.Number("-2.50E1"),
		0.0, -0.0, 1.0, 1.5, -3.0, 0.1, 1e23, 9007199254740993.0, 4503599627370495.5, math.MaxFloat64, math.SmallestNonzeroFloat64,
		3, int64(-4), float32(2.5),
	}
	for _, v := range values {
		num, _ := new(big.Rat).SetString(fmt.Sprint(v))
		if got, want := isInteger(v), num.IsInt(); got != want {
			t.Errorf("%T %v: isInteger %v, big.Rat %v", v, v, got, want)
		}
	}
	// A json.Number that is no number (a decoder that let it through) is
	// not an integer; v5 dereferenced the nil big.Rat.
	for _, v := range []any{json.Number("0+"), json.Number(""), json.Number("x")} {
		if isInteger(v) {
			t.Errorf("%q: isInteger is true", v)
		}
	}
}

// An array of integers where integers are wanted costs nothing per item;
// v5 made a big.Rat of every item's text.
func TestValidIntegersAllocateNothingEach(t *testing.T) {
	s := MustCompileString("mem://s.json", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"integer"}}}}`)
	for _, item := range []any{json.Number("123"), 123.0} {
		v := map[string]any{"tags": slices.Repeat([]any{item}, 100_000)}
		var err error
		allocs := testing.AllocsPerRun(3, func() { err = s.Validate(v) })
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("100,000 items of %T: %.0f allocations", item, allocs)
		if allocs > 100 {
			t.Fatalf("100,000 items of %T: %.0f allocations", item, allocs)
		}
	}
}
