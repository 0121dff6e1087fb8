package jsonschema

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

// leafReport is what a validation error tells: its kept leaves, with
// every location, and the count of the others.
func leafReport(err error) string {
	ve, ok := err.(*ValidationError)
	if !ok {
		return fmt.Sprint(err)
	}
	leaves, more := ve.Leaves()
	lines := make([]string, 0, len(leaves)+1)
	for _, l := range leaves {
		lines = append(lines, fmt.Sprintf("%s | %s | %s | %s", l.InstanceLocation, l.KeywordLocation, l.AbsoluteKeywordLocation, l.Message))
	}
	return strings.Join(append(lines, fmt.Sprintf("and %d more", more)), "\n")
}

// Leaves not made because they would be dropped at once (prunedLeaf), and
// locations reused, change nothing: the same verdicts, the same kept
// violations with the same locations, the same counts, as with every
// violation made. A count may depend on map order, where a violation is
// found through two keyword paths (see ValidationError.Leaves): then the
// report must be one that all made gives in some order.
//
// Not parallel: it switches the package's pruning, which every validation
// reads.
func TestPruningChangesNothing(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	defer func() { pruning = true }()
	validate := func(s *Schema, v any, keep int, prune bool) string {
		pruning = prune
		return leafReport(s.validateValue(v, "", keep))
	}
	check := func(s *Schema, raw []byte, v any) {
		t.Helper()
		for _, keep := range keeps {
			with, without := validate(s, v, keep, true), validate(s, v, keep, false)
			for try := 0; with != without && try < 200; try++ {
				without = validate(s, v, keep, false)
			}
			if with != without {
				t.Fatalf("schema %s\ninstance %.2000s\nkeep %d: pruned\n%s\nall made\n%s", raw, fmt.Sprint(v), keep, with, without)
			}
		}
	}
	schemas := 1000
	if testing.Short() || racetest.Enabled { // minutes under the race detector, for no concurrency
		schemas = 200
	}
	for range schemas {
		g := &schemaGen{rng: rng}
		doc := g.document()
		raw, _ := json.Marshal(doc)
		s, err := compileString(raw)
		if err != nil {
			continue
		}
		for range 12 {
			g.noise = []float64{0, 0, 0.05, 0.3}[rng.IntN(4)]
			inst, _ := json.Marshal(g.instance(doc, 0))
			check(s, raw, decode(t, inst))
		}
	}
	// Many failing items, where most leaves are pruned.
	many := `[1` + strings.Repeat(`,1,"x",null,[1],{"v":1.5}`, 300) + `]`
	for _, doc := range fuzzSchemas {
		s := MustCompileString("mem://s.json", doc)
		check(s, []byte(doc), decode(t, []byte(`{"tags":`+many+`,"objs":`+many+`,"q":`+many+`,"kids":[{"kids":`+many+`}]}`)))
		check(s, []byte(doc), decode(t, []byte(many)))
	}
}

func compileString(doc []byte) (*Schema, error) {
	c := NewCompiler()
	c.Draft = Draft2020
	c.LoadURL = noLoad
	if err := c.AddResource("mem://s.json", strings.NewReader(string(doc))); err != nil {
		return nil, err
	}
	return c.Compile("mem://s.json")
}

// Failing an array of n items of the wrong type costs a few kept errors
// and a count, not garbage per item: v5 and the copy before prunedLeaf
// made an error and its message for every item, ~390 bytes and 9
// allocations each; now nothing per item past the kept ones.
func TestFailingItemsAllocateNothingEach(t *testing.T) {
	s := MustCompileString("mem://s.json", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}},"required":["tags"],"additionalProperties":false}`)
	for _, item := range []any{json.Number("1"), 1.0, true, nil} {
		items := slices.Repeat([]any{item}, 100_000)
		v := map[string]any{"tags": items}
		var err error
		allocs := testing.AllocsPerRun(3, func() { err = s.Validate(v) })
		if _, more := err.(*ValidationError).Leaves(); more != len(items)-Kept {
			t.Fatalf("%v: %d more", item, more)
		}
		bytes := allocatedBy(func() { _ = s.Validate(v) })
		t.Logf("%d items of %T: %.0f allocations, %d bytes", len(items), item, allocs, bytes)
		// The bit set of unevaluated items is n/8 bytes; the rest is the
		// kept errors.
		if allocs > 1000 || bytes > uint64(len(items))/8+100_000 {
			t.Fatalf("%d items of %T: %.0f allocations, %d bytes", len(items), item, allocs, bytes)
		}
	}
}
