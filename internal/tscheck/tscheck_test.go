package tscheck

import (
	"strings"
	"testing"
)

const decls = `declare const api: {
  get(input: { id: number }): Promise<{ name: string; tags?: string[] }>;
};
`

func TestCheckAcceptsCorrectCode(t *testing.T) {
	t.Parallel()
	Check(t, decls, `const r = await api.get({ id: 1 });
const n: string = r.name;
return [n, r.tags?.length];`)
}

// The checker can fail: a wrong member, a wrong argument and an unchecked
// optional are each an error.
func TestRunFindsErrors(t *testing.T) {
	t.Parallel()
	for _, code := range []string{
		`const r = await api.get({ id: 1 }); return r.nmae;`,
		`return api.get({ id: "1" });`,
		`const r = await api.get({ id: 1 }); return r.tags.length;`,
	} {
		out, ok := Run(t, decls, code)
		if ok || !strings.Contains(out, "main.ts(") || !strings.Contains(out, "error TS") {
			t.Errorf("%s: ok %v, tsc said:\n%s", code, ok, out)
		}
	}
}
