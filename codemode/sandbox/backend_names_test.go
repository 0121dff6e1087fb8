package sandbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// TestBackendNamesThatHelp: calling a name a backend lacks throws a
// TypeError naming the closest tools, and calling one the caller's scopes
// hide says why; what JavaScript itself looks up on an object is not taken
// for a tool. In both isolations (the worker step of CI runs it in worker
// processes).
func TestBackendNamesThatHelp(t *testing.T) {
	api := codemode.NewBackendAPI(codemode.APIBackend{Name: "github",
		Tools: []codemode.APITool{{Name: "issues/get"}, {Name: "issues/update"}, {Name: "issues/create"}, {Name: "pulls/get"}, {Name: "search/issues"}},
		Hidden: map[string]string{
			"repos/delete": "it needs the scope repo:admin, which the caller's token does not carry",
		},
	})
	b := api.Binding(func(ctx context.Context, tool string, args []byte) (codemode.Answer, error) {
		return codemode.Answer{Value: []byte(`{"tool":"` + tool + `"}`)}, nil
	})
	r := codemodetest.Runner(codemode.Limits{})
	catch := func(code string) string {
		t.Helper()
		res := r.Run(context.Background(), `try { `+code+`; return "no error" } catch (e) { return e.name + ": " + e.message }`, []codemode.Binding{b})
		var got string
		if res.Err != nil || json.Unmarshal(res.Value, &got) != nil {
			t.Fatalf("%s: %s %v", code, res.Value, res.Err)
		}
		return got
	}
	for _, tc := range []struct{ code, want string }{
		{`await github.close_issue({issue_number: 1})`, "TypeError: github has no tool close_issue; the closest are github.search_issues, github.issues_get and github.issues_create"},
		{`await github.issue_get({})`, "TypeError: github has no tool issue_get; did you mean github.issues_get?"},
		{`await github["issues/get"]({})`, "TypeError: github has no tool issues/get; did you mean github.issues_get?"},
		{`await github.send_mail()`, "TypeError: github has no tool send_mail (its 5 tools are declared in the execute tool's description)"},
		{`await github.repos_delete({})`, "TypeError: github.repos_delete is not callable here: it needs the scope repo:admin, which the caller's token does not carry"},
		{`await github.issues_get({})`, "no error"},
	} {
		if got := catch(tc.code); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.code, got, tc.want)
		}
	}
	empty := codemode.NewBackendAPI(codemode.APIBackend{Name: "billing", Hidden: map[string]string{"charge": "it needs the scope billing"}}).Binding(nil)
	res := r.Run(context.Background(), `try { await billing.refund({}) } catch (e) { return e.message }`, []codemode.Binding{empty})
	codemodetest.WantValue(t, res, `"billing has no tool refund, and none this caller may call"`)

	// The global is still an ordinary object to JavaScript: not a
	// thenable, serializable, a string, with its methods.
	res = r.Run(context.Background(), `const g = await github;
		return [g === github, typeof github.then, typeof github.toJSON, JSON.stringify(github).length > 0, String(github),
			typeof github.issues_get, "issues_get" in github, "close_issue" in github, Object.keys(github).includes("issues_get"), // methods are not enumerable, as built-ins
			(await github.pulls_get({})).tool]`, []codemode.Binding{b})
	codemodetest.WantValue(t, res, `[true,"undefined","undefined",true,"[backend github]","function",true,false,false,"pulls/get"]`)
	if strings.Contains(res.Text, "has no tool") {
		t.Errorf("looking at the global threw: %s", res.Text)
	}
}
