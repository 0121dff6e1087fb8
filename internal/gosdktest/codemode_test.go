package gosdktest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestCodemodeEndpoint: the Go SDK's client, in each era, runs code on
// the codemode endpoint whose backends are the `mcp` endpoint, a server
// of 2026-07-28 alone and one of 2025-11-25: the code calls each, the
// upstream's failure is an error the code catches, and arguments that
// break execute's schema are refused.
func TestCodemodeEndpoint(t *testing.T) {
	ends := startCaddy(t)
	for _, era := range eras {
		t.Run(era.want, func(t *testing.T) {
			c := connect(t, ends.base+"/code", era.ask, era.want)
			if names := c.toolNames(t); !slices.Equal(names, []string{"execute"}) {
				t.Fatalf("tools %v, want execute alone", names)
			}
			// Both backends' tools are declared, from the schemas each
			// era's server sent: the Go SDK's carries an output schema.
			list, err := c.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"era(input?: { /** any text, returned as it came */ text?: string }): Promise<ModernEraOutput>;",
				"type ModernEraOutput = { era: string; text: string };",
				"era(input?: { text?: string }): Promise<unknown>;",
			} {
				if !strings.Contains(list.Tools[0].Description, want) {
					t.Errorf("execute's description lacks %q:\n%s", want, list.Tools[0].Description)
				}
			}

			res := c.call(t, "execute", map[string]any{"code": `
const [m, l, b] = await Promise.all([
  modern.era({ text: "to modern" }),
  legacy.era({ text: "to legacy" }),
  bin.anything({ word: "tea" }),
]);
let failed = "";
try {
  await bin.status({ code: 500 });
} catch (e) {
  failed = e.message;
}
return { m, l, word: b.args.word[0], failed };
`}, "tok-code")
			var out struct {
				Result struct {
					M, L   EraOutput
					Word   string
					Failed string
				}
			}
			if raw, _ := json.Marshal(res.StructuredContent); res.IsError || json.Unmarshal(raw, &out) != nil {
				t.Fatalf("execute: isError %v: %s", res.IsError, text(res))
			}
			if out.Result.M != (EraOutput{Era: Modern, Text: "to modern"}) || out.Result.L != (EraOutput{Era: Legacy, Text: "to legacy"}) || out.Result.Word != "tea" {
				t.Errorf("execute: %+v", out.Result)
			}
			if want := "bin.status: GET /status/500: upstream answered 500 Internal Server Error"; out.Result.Failed != want {
				t.Errorf("the failing call threw %q, want %q", out.Result.Failed, want)
			}
			// The codemode endpoint sends no progress notifications today,
			// whatever the token: the execution reports nothing until it
			// ends. A change here is to be checked, then written down.
			if n := len(c.notes()); n != 0 {
				t.Errorf("%d progress notifications; codemode sent none before", n)
			}

			res = c.call(t, "execute", map[string]any{"code": 42}, "")
			if want := `the "code" argument is required: a string of JavaScript or TypeScript`; !res.IsError || text(res) != want {
				t.Errorf("code: 42: isError %v, %s", res.IsError, text(res))
			}
		})
	}
	// Each backend was learned once, by the connection in the background:
	// the modern one with server/discover alone, the legacy one probed once.
	for _, b := range []struct {
		name   string
		counts *Counts
		want   [2]int
	}{{"modern", ends.modern, [2]int{1, 0}}, {"legacy", ends.legacy, [2]int{1, 1}}} {
		if got := [2]int{b.counts.Get("server/discover"), b.counts.Get("initialize")}; got != b.want {
			t.Errorf("%s backend: %d server/discover, %d initialize; want %v", b.name, got[0], got[1], b.want)
		}
	}
}

// TestCodemodeBackendsSwapEras: both backends restart on their URLs with
// a server of the other era; the next execution reaches each new server.
func TestCodemodeBackendsSwapEras(t *testing.T) {
	ends := startCaddy(t)
	c := connect(t, ends.base+"/code", "", Modern)
	run := func(wantModern, wantLegacy string) {
		t.Helper()
		res := c.call(t, "execute", map[string]any{"code": `
return { m: await modern.era({ text: "a" }), l: await legacy.era({ text: "b" }) };
`}, "")
		var out struct{ Result struct{ M, L EraOutput } }
		if raw, _ := json.Marshal(res.StructuredContent); res.IsError || json.Unmarshal(raw, &out) != nil {
			t.Fatalf("execute: isError %v: %s", res.IsError, text(res))
		}
		if out.Result.M != (EraOutput{Era: wantModern, Text: "a"}) || out.Result.L != (EraOutput{Era: wantLegacy, Text: "b"}) {
			t.Fatalf("execute: %+v, want modern answered by %s, legacy by %s", out.Result, wantModern, wantLegacy)
		}
	}
	run(Modern, Legacy)
	var nowLegacy, nowModern Counts
	ends.modernSrv.Switch(LegacyOnly(&nowLegacy))
	ends.legacySrv.Switch(ModernOnly(&nowModern))
	run(Legacy, Modern)
	run(Legacy, Modern)
	if d, i := nowLegacy.Get("server/discover"), nowLegacy.Get("initialize"); d != 1 || i != 1 {
		t.Errorf("the backend now of 2025-11-25: %d server/discover, %d initialize; want 1 and 1", d, i)
	}
	if d, i := nowModern.Get("server/discover"), nowModern.Get("initialize"); d != 1 || i != 0 {
		t.Errorf("the backend now of 2026-07-28: %d server/discover, %d initialize; want 1 and 0", d, i)
	}
}
