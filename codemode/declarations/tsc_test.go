package declarations

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/tscheck"
)

// modelCode is code as a model writes it against the 23 tools' declarations
// (GitHub's strict listing): required members read as they are, optional
// ones with ?. or ??, a result without an output schema cast to what the
// model expects of it.
const modelCode = `
const issue = await github.issues_get({ owner: "octocat", repo: "hello", issue_number: 1 });
const title: string = issue.title;
const state: string = issue.state;
const number: number = issue.number;
const login: string | undefined = issue.user?.login;
const assignees: string[] = (issue.assignees ?? []).map((a) => a.login);
const labels = issue.labels.map((l) => (typeof l === "string" ? l : l.name ?? ""));
const milestone = issue.milestone?.title;
const created = await github.issues_create({ owner: "octocat", repo: "hello", title: "Found a bug", body: "It breaks." });
const sameType: number = created.number;
const comment = await github.issues_create_comment({ owner: "octocat", repo: "hello", issue_number: 1, body: "Me too." });
const commentURL: string = comment.html_url;
const pr = await github.pulls_get({ owner: "octocat", repo: "hello", pull_number: 2 });
const head: string = pr.head.ref;
const base: string = pr.base.sha;
const author: string = pr.user.login;
const merged: boolean = pr.merged;
const pulls = (await github.pulls_list({ owner: "octocat", repo: "hello", state: "open" })) as { number: number; title: string }[];
const numbers = pulls.map((p) => p.number);
const repo = await github.repos_get({ owner: "octocat", repo: "hello" });
const stars: number = repo.stargazers_count;
const branch: string = repo.default_branch;
const found = await github.search_issues_and_pull_requests({ q: "bug repo:octocat/hello", per_page: 5 });
const titles: string[] = found.items.map((i) => i.title);
const total: number = found.total_count;
await github.issues_update({ owner: "octocat", repo: "hello", issue_number: 1, state: "closed" });
const weather = await everything.get_structured_content({ location: "Chicago" });
const humidity: number = weather.humidity;
const sum = await everything.get_sum({ a: 19, b: 23 });
const echo = await everything.echo({ message: title + " " + String(sum) });
return { title, state, number, login, assignees, labels, milestone, sameType, commentURL, head, base, author, merged,
  numbers, stars, branch, titles, total, humidity, echo };
`

// Code a model writes type-checks with tsc --strict against the
// declarations of the 23 tools; against the lenient listing (the default,
// where nothing is required) it needs ?. and ??.
func TestDeclarationsTypeCheck(t *testing.T) {
	t.Parallel()
	t.Run("strict", func(t *testing.T) {
		t.Parallel()
		tscheck.Check(t, Render(fixtureBackends(t, "github-ten-strict.json")), modelCode)
	})
	t.Run("lenient", func(t *testing.T) {
		t.Parallel()
		tscheck.Check(t, Render(fixtureBackends(t, "github-ten.json")), `
const issue = await github.issues_get({ owner: "octocat", repo: "hello", issue_number: 1 });
const title: string = issue.title ?? "";
const n = issue.number ?? 0;
const pr = await github.pulls_get({ owner: "octocat", repo: "hello", pull_number: 2 });
const sum = await everything.get_sum({ a: 1, b: 2 });
return [title, n, pr.merged === true, issue.user, sum];
`)
	})
	// Every golden's declarations are types tsc accepts, not only text
	// esbuild parses.
	goldens, _ := filepath.Glob(filepath.Join("testdata", "declarations", "*.ts"))
	for _, golden := range goldens {
		t.Run(filepath.Base(golden), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			tscheck.Check(t, string(src), "")
		})
	}
}

// The check can fail: a member the declarations do not have, a required
// argument left out, a type they do not give, an optional member read as
// if it were there.
func TestDeclarationsTypeCheckFails(t *testing.T) {
	t.Parallel()
	decls := Render(fixtureBackends(t, "github-ten-strict.json"))
	for _, c := range []struct{ code, want string }{
		{`const issue = await github.issues_get({ owner: "o", repo: "r", issue_number: 1 }); return issue.titel;`, "Property 'titel' does not exist"},
		{`return github.issues_get({ owner: "o", repo: "r" });`, "issue_number"},
		{`const issue = await github.issues_get({ owner: "o", repo: "r", issue_number: 1 }); const n: number = issue.title; return n;`, "Type 'string' is not assignable to type 'number'"},
		{`const issue = await github.issues_get({ owner: "o", repo: "r", issue_number: 1 }); return issue.user.login;`, "possibly 'null'"},
		{`const pulls = await github.pulls_list({ owner: "o", repo: "r" }); return pulls.map((p) => p.number);`, "unknown"},
		{`return everything.get_sum({ a: "1", b: 2 });`, "Type 'string' is not assignable to type 'number'"},
	} {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			out, ok := tscheck.Run(t, decls, c.code)
			if ok || !strings.Contains(out, "main.ts(") || !strings.Contains(out, c.want) {
				t.Errorf("%s\ntsc (ok %v) said:\n%s\nwant an error with %q", c.code, ok, out, c.want)
			}
		})
	}
}
