//go:build unix

package everythingtest

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
	"github.com/caddy-mcp/caddy-mcp/internal/tscheck"
)

// githubTen are the ten GitHub operations a new user curates first.
const githubTen = "issues/list-for-repo issues/get issues/create issues/update issues/create-comment pulls/list pulls/get search/issues-and-pull-requests repos/list-commits repos/get"

// maxClientText is what Claude Code and the clients that copy it show of
// a tool description and of a server's instructions.
const maxClientText = 2048

// TestWhatClientsShow is a new user's setup as a client that cuts at 2 KB
// sees it: ten GitHub operations imported with a max_result_size, and
// server-everything, behind one codemode endpoint with the defaults.
// Every description and instructions text is within 2 KB; the execute
// description names the backends and the flow, the search answers say
// how many tools match and declare each match once, in TypeScript that
// model-style code type-checks against with tsc --strict; a result the
// backend cut is still an array in the code, which can tell it was cut;
// and calling a tool the backend lacks names the closest ones.
func TestWhatClientsShow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node, Prism and Caddy")
	}
	everythingURL, _ := runEverything(t)
	document := openapidocs.Path(t, openapidocs.GitHub)
	// The examples, as the real API answers, even where they drift from
	// the schemas.
	prism := prismtest.Start(t, document, prismtest.Options{Drift: true})
	port := incaddy.FreePort(t)
	incaddy.Run(t, "everythingtest-clients", fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%[1]s {
	mcp /github {
		upstream %[2]s
		max_result_size 2KiB
		openapi %[3]q {
			include %[5]s
			# Without an output schema, a cut answer is JSON text and a note.
			operation pulls/list {
				output_schema off
			}
		}
	}
	codemode /code {
		backend everything %[4]s {
			timeout 10s
		}
		backend github http://127.0.0.1:%[1]s/github
		timeout 20s
	}
}
`, port, prism.URL, document, everythingURL, githubTen), nil)

	base := "http://127.0.0.1:" + port
	for _, path := range []string{"/github", "/code"} {
		c, init := mcptest.Connect(t, base+path, mcptest.Options{Name: "everythingtest"})
		if n := len(init.Instructions); n > maxClientText {
			t.Errorf("%s: instructions of %d bytes", path, n)
		}
		list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range list.Tools {
			if n := len(tool.Description); n > maxClientText || n == 0 {
				t.Errorf("%s %s: description of %d bytes:\n%.3000s", path, tool.Name, n, tool.Description)
			}
		}
		t.Logf("%s: %d tools, every description within %d bytes", path, len(list.Tools), maxClientText)
	}

	s := newSession(t, base+"/code", mcp.LATEST_PROTOCOL_VERSION)
	list, err := s.c.ListTools(s.ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 || list.Tools[0].Name != "execute" || list.Tools[1].Name != "search" {
		t.Fatalf("tools/list: %d tools, want execute and search", len(list.Tools))
	}
	desc := list.Tools[0].Description
	for _, want := range []string{"- everything: ", "- github: 10 tools: ", "call the search tool once", "tools.cut(r)"} {
		if !strings.Contains(desc, want) {
			t.Errorf("the execute description lacks %q:\n%s", want, desc)
		}
	}

	// A search: how many match of how many, each match declared once.
	search := func(query string) (text string, idents map[string]string) {
		t.Helper()
		res, err := mcptest.CallTool(s.c, "search", map[string]any{"query": query})
		if err != nil || res.IsError {
			t.Fatalf("search %q: %v %s", query, err, mcptest.ResultText(res))
		}
		if res.StructuredContent != nil {
			t.Errorf("search %q: the answer is sent twice, as structuredContent too", query)
		}
		text = mcptest.ResultText(res)
		if !regexp.MustCompile(`^\d+ of \d+ tools match "` + regexp.QuoteMeta(query) + `"`).MatchString(text) {
			t.Errorf("search %q answers:\n%.2000s", query, text)
		}
		idents = make(map[string]string)
		for _, m := range regexp.MustCompile(`(?m)^- (\w+)\.([A-Za-z0-9_$]+)(?: \(the backend tool "([^"]+)"\))?`).FindAllStringSubmatch(text, -1) {
			tool := m[3]
			if tool == "" {
				tool = m[2]
			}
			idents[m[1]+"."+tool] = m[2]
			if n := strings.Count(text, " "+m[2]+"(input"); n != 1 {
				t.Errorf("search %q declares %s %d times", query, m[2], n)
			}
		}
		return text, idents
	}
	text, idents := search("get an issue")
	getIssue := idents["github.issues_get"]
	if getIssue == "" {
		t.Fatalf("search found %v, not github.issues_get:\n%.3000s", idents, text)
	}
	_, ts, _ := strings.Cut(text, "```ts\n")
	ts, _, _ = strings.Cut(ts, "```")
	t.Logf("search answer: %d bytes, of which declarations %d", len(text), len(ts))
	tscheck.Check(t, ts, fmt.Sprintf(`const issue = await github.%s({ owner: "octocat", repo: "hello-world", issue_number: 1 });
const line: string = "#" + issue.number + ": " + issue.title + " (" + issue.state + ")";
const who = issue.user?.login ?? "nobody";
const labels = (issue.labels ?? []).length;
return { line, who, labels };`, getIssue))

	// A cut result is a value, and the code can tell.
	_, idents = search("list pull requests")
	listPulls := idents["github.pulls_list"]
	if listPulls == "" {
		t.Fatalf("search found %v, not github.pulls_list", idents)
	}
	res := s.execute(t, fmt.Sprintf(`const pulls = await github.%s({ owner: "octocat", repo: "hello-world" });
const cut = tools.cut(pulls);
return { isArray: Array.isArray(pulls), numbers: pulls.map(p => typeof p.number), cut: cut && cut.limit, whole: tools.cut([]) === undefined };`, listPulls))
	var out struct {
		IsArray bool     `json:"isArray"`
		Numbers []string `json:"numbers"`
		Cut     int      `json:"cut"`
		Whole   bool     `json:"whole"`
	}
	s.resultValue(t, res, &out)
	if !out.IsArray || len(out.Numbers) == 0 || out.Numbers[0] != "number" || out.Cut != 2048 || !out.Whole {
		t.Errorf("the cut list in code: %+v\n%s", out, mcptest.ResultText(res))
	}

	// A tool the backend lacks: the closest ones.
	res = s.call(t, `await github.close_issue({ issue_number: 1 })`)
	if got := mcptest.ResultText(res); !res.IsError || !strings.Contains(got, "github has no tool close_issue") || !strings.Contains(got, "github.issues_") {
		t.Errorf("calling a tool github lacks: %s", got)
	}
}
