package sandbox_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// A value its backend cut reaches the code as a value, and tools.cut
// gives the backend's record of it; a whole value, or one the code made,
// has none. In a worker the record crosses the pipe with the value.
func TestCutValues(t *testing.T) {
	t.Parallel()
	record := `{"limit":1024,"size":5000,"kept":900,"arrays_shortened":1,"items_dropped":37}`
	b := codemode.Binding{Name: "github", Tools: map[string]string{"pulls_list": "pulls/list", "issues_get": "issues/get", "readme": "readme"},
		Call: func(_ context.Context, tool string, _ []byte) (codemode.Answer, error) {
			switch tool {
			case "pulls/list":
				return codemode.Answer{Value: json.RawMessage(`[{"number":1},{"number":2}]`), Cut: json.RawMessage(record)}, nil
			case "readme": // a cut text has its note in it, and no record here
				return codemode.Answer{Value: json.RawMessage(`"# Title\n\n[cut to max_result_size, 10 bytes]"`), Cut: json.RawMessage(record)}, nil
			}
			return codemode.Answer{Value: json.RawMessage(`{"number":7,"title":"t"}`)}, nil
		}}
	res := codemodetest.Run(t, codemode.Limits{}, `const pulls = await github.pulls_list({});
		const issue = await github.issues_get({});
		const text = await github.readme({});
		const cut = tools.cut(pulls);
		return [pulls.map(p => p.number), cut.items_dropped, cut.limit, tools.cut(issue), tools.cut(pulls.slice()), tools.cut(text),
			tools.cut(), tools.cut(null), typeof text, JSON.stringify(pulls)]`, b)
	codemodetest.WantValue(t, res, `[[1,2],37,1024,null,null,null,null,null,"string","[{\"number\":1},{\"number\":2}]"]`)
}
