package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestCompileJqErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		filter, want string
	}{
		{"", "jq: the filter is empty"},
		{".a | }", `jq: unexpected token "}" at line 1, column 6 (after ".a | }")`},
		{".a |\n  .b | ]", `jq: unexpected token "]" at line 2, column 8 (after ".a |\n  .b | ]")`},
		{`{name: .name, "unterminated`, `jq: unterminated string literal at line 1, column 28`},
		{strings.Repeat(".a | ", 20) + ")", `(after "…a | .a | .a | .a | .a | .a | .a | .a | )")`},
		{"nosuchfunction", "jq: function not defined: nosuchfunction/0"},
	} {
		err := CheckJq(tt.filter)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckJq(%q) = %v, want %q", tt.filter, err, tt.want)
		}
	}
	if _, err := NewOperation(Definition{Method: "GET", Path: "/x", Jq: ".a |"}); err == nil || !strings.HasPrefix(err.Error(), "jq: unexpected EOF") {
		t.Errorf("NewOperation with a bad filter: %v", err)
	}
}

// jqResult is the result of a tool with filter and output schema (or "")
// for a 200 answer of body, within timeout.
func jqResult(t *testing.T, filter, output, body string, timeout time.Duration) *mcp.CallToolResult {
	t.Helper()
	def := Definition{Name: "get_repo", Method: "GET", Path: "/repo", Jq: filter}
	if output != "" {
		def.OutputSchema = json.RawMessage(output)
	}
	op, err := NewOperation(def)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	answer := &Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
	return op.Result(ctx, Target{Label: "GET /repo"}, answer, Shaping{})
}

func TestJqResults(t *testing.T) {
	repo := `{"id":1296269,"full_name":"octocat/Hello-World","stargazers_count":80,"big":123456789012345678901234567890,"price":0.10000000000000000001,` +
		`"owner":{"login":"octocat","id":1},"topics":["a","b","c"],"private":false}`
	for _, tt := range []struct {
		name, filter, output, want string
		isError                    bool
	}{
		{name: "reshape", filter: `{name: .full_name, stars: .stargazers_count, owner: .owner.login}`,
			want: `{"name":"octocat/Hello-World","owner":"octocat","stars":80}`},
		{name: "numbers stay exact", filter: `{big, price}`, want: `{"big":123456789012345678901234567890,"price":0.10000000000000000001}`},
		{name: "select", filter: `.topics[] | select(. != "b")`, want: `["a","c"]`},
		{name: "no output", filter: `.topics[] | select(. == "z")`, want: `[]`},
		{name: "halt ends the outputs", filter: `1, halt, 2`, want: `1`},
		{name: "no environment", filter: `{env: env, ENV: $ENV}`, want: `{"ENV":{},"env":{}}`},
		{name: "fail", filter: `.owner.login | tonumber`, isError: true,
			want: `tool get_repo: jq filter: tonumber cannot be applied to "octocat": invalid number`},
		{name: "error", filter: `error("no")`, isError: true, want: `tool get_repo: jq filter: error: no`},
		{name: "output schema describes the output", filter: `{name: .full_name}`,
			output: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`,
			want:   `{"name":"octocat/Hello-World"}`},
		{name: "output that does not match", filter: `{name: .id}`,
			output: `{"type":"object","properties":{"name":{"type":"string"}}}`, isError: true,
			want: "tool get_repo: the jq filter's output does not match the tool's output_schema"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := jqResult(t, tt.filter, tt.output, repo, 5*time.Second)
			text := res.Content[0].(mcp.TextContent).Text
			if res.IsError != tt.isError || !strings.HasPrefix(text, tt.want) {
				t.Fatalf("got %q (error %v), want %q (error %v)", text, res.IsError, tt.want, tt.isError)
			}
			if tt.output != "" && !tt.isError {
				if sc, _ := res.StructuredContent.(json.RawMessage); string(sc) != tt.want {
					t.Errorf("structuredContent %s, want %s", sc, tt.want)
				}
			}
		})
	}
}

// TestJqNotJSON: a filter needs a JSON answer.
func TestJqNotJSON(t *testing.T) {
	op, err := NewOperation(Definition{Name: "t", Method: "GET", Path: "/x", Jq: "."})
	if err != nil {
		t.Fatal(err)
	}
	answer := &Response{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("hello")}
	res := op.Result(context.Background(), Target{Label: "GET /x"}, answer, Shaping{})
	if text := res.Content[0].(mcp.TextContent).Text; !res.IsError || text != "tool t: jq filter: GET /x answered text/plain that is not JSON: hello" {
		t.Errorf("got %q", text)
	}
}

// TestJqRunaway: filters that never end, or build without bound, end
// within the tool's deadline with a clear error, and the memory they
// took is given back.
func TestJqRunaway(t *testing.T) {
	for _, tt := range []struct {
		name, filter, want string
	}{
		{"recursion", `def f: f; f`, "the tool's timeout ended before the filter did"},
		{"endless outputs", `repeat(.)`, "the filter's output passes 16 MiB"},
		{"endless small outputs", `repeat(1)`, "the filter emits more than 10000 values"},
		// Memory or the deadline, whichever comes first: on a loaded
		// machine a filter may allocate too slowly to reach the bound.
		{"one huge value", `[range(1e9)]`, ""},
		{"values that fill memory", `[range(1e9) | "x" * 1000]`, ""},
		{"a huge string", `[range(1e9) | "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"] | add`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			timeout := 1500 * time.Millisecond
			res := jqResult(t, tt.filter, "", `{"a":"`+strings.Repeat("x", 20000)+`"}`, timeout)
			took := time.Since(start)
			text := res.Content[0].(mcp.TextContent).Text
			if !res.IsError || !strings.HasPrefix(text, "tool get_repo: jq filter: ") || !strings.Contains(text, tt.want) {
				t.Fatalf("got %.200q, want an error with %q", text, tt.want)
			}
			if tt.want == "" && !strings.Contains(text, "the tool's timeout ended") && !strings.Contains(text, "memory grew by more than 256 MiB") {
				t.Fatalf("got %.200q, want the timeout or the memory bound", text)
			}
			// The error above says the timeout or the memory bound ended
			// the filter. This bound only stops a filter that never ends:
			// the deadline is checked between steps, and one step (growing
			// a large array) and the GC after it are slow on a busy machine.
			if took > 20*timeout {
				t.Errorf("took %v with a timeout of %v: the filter did not end", took, timeout)
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("%s: %v, %q; heap in use %d MiB before, %d MiB after", tt.name, took.Round(time.Millisecond), text, before.HeapInuse>>20, after.HeapInuse>>20)
			if after.HeapInuse > before.HeapInuse+64<<20 {
				t.Errorf("heap in use grew from %d to %d MiB", before.HeapInuse>>20, after.HeapInuse>>20)
			}
		})
	}
}

// githubRepo is a repository object as GitHub's API answers GET
// /repos/{owner}/{repo}, about 6 KB, repeated to make larger answers.
func githubRepo(t testing.TB) []byte {
	t.Helper()
	owner := `{"login":"octocat","id":1,"node_id":"MDQ6VXNlcjE=","avatar_url":"https://github.com/images/error/octocat_happy.gif","gravatar_id":"","url":"https://api.github.com/users/octocat","html_url":"https://github.com/octocat","followers_url":"https://api.github.com/users/octocat/followers","following_url":"https://api.github.com/users/octocat/following{/other_user}","gists_url":"https://api.github.com/users/octocat/gists{/gist_id}","starred_url":"https://api.github.com/users/octocat/starred{/owner}{/repo}","subscriptions_url":"https://api.github.com/users/octocat/subscriptions","organizations_url":"https://api.github.com/users/octocat/orgs","repos_url":"https://api.github.com/users/octocat/repos","events_url":"https://api.github.com/users/octocat/events{/privacy}","received_events_url":"https://api.github.com/users/octocat/received_events","type":"User","site_admin":false}`
	var b strings.Builder
	b.WriteString(`{"id":1296269,"node_id":"MDEwOlJlcG9zaXRvcnkxMjk2MjY5","name":"Hello-World","full_name":"octocat/Hello-World","owner":` + owner + `,"private":false,"html_url":"https://github.com/octocat/Hello-World","description":"This your first repo!","fork":false,"url":"https://api.github.com/repos/octocat/Hello-World"`)
	for _, k := range []string{"archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare", "contents", "contributors", "deployments", "downloads", "events", "forks", "git_commits", "git_refs", "git_tags", "hooks", "issue_comment", "issue_events", "issues", "keys", "labels", "languages", "merges", "milestones", "notifications", "pulls", "releases", "stargazers", "statuses", "subscribers", "subscription", "tags", "teams", "trees"} {
		fmt.Fprintf(&b, `,"%s_url":"https://api.github.com/repos/octocat/Hello-World/%s{/number}"`, k, k)
	}
	b.WriteString(`,"homepage":"https://github.com","language":null,"forks_count":9,"stargazers_count":80,"watchers_count":80,"size":108,"default_branch":"master","open_issues_count":0,"is_template":false,"topics":["octocat","atom","electron","api"],"has_issues":true,"has_projects":true,"has_wiki":true,"has_pages":false,"has_downloads":true,"archived":false,"disabled":false,"visibility":"public","pushed_at":"2011-01-26T19:06:43Z","created_at":"2011-01-26T19:01:12Z","updated_at":"2011-01-26T19:14:43Z","permissions":{"pull":true,"push":false,"admin":false},"allow_rebase_merge":true,"allow_squash_merge":true,"allow_merge_commit":true,"subscribers_count":42,"network_count":0,"license":{"key":"mit","name":"MIT License","spdx_id":"MIT","url":"https://api.github.com/licenses/mit","node_id":"MDc6TGljZW5zZW1pdA=="},"organization":` + owner + `,"parent":{"id":1296269,"name":"Hello-World","full_name":"octocat/Hello-World","owner":` + owner + `},"source":{"id":1296269,"name":"Hello-World","full_name":"octocat/Hello-World","owner":` + owner + `}}`)
	return []byte(b.String())
}

// BenchmarkJq: a filter that picks a few fields of a 20 KB answer, the
// whole way a result goes (decode, run, encode). Target: under 1 ms.
func BenchmarkJq(b *testing.B) {
	repo := githubRepo(b)
	doc := []byte(`{"repos":[` + strings.Repeat(string(repo)+",", 2) + string(repo) + `]}`)
	f, err := compileJq(`[.repos[] | {name: .full_name, stars: .stargazers_count, owner: .owner.login, topics, license: .license.spdx_id}]`)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	var out []byte
	for b.Loop() {
		if out, err = f.run(context.Background(), doc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(doc)), "bytes-in")
	b.ReportMetric(float64(len(out)), "bytes-out")
}

// BenchmarkCut: a 1 MB answer, a list of issues, cut to 24 KiB with its
// note. Target: under 5 ms.
func BenchmarkCut(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[\n")
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteString(",\n")
		}
		fmt.Fprintf(&sb, `  {"number": %d, "title": "Issue %d", "state": "open", "labels": [{"name": "bug"}, {"name": "p%d"}], "user": {"login": "user%d", "id": %d}, "body": %q}`,
			i, i, i%3, i, i, strings.Repeat("Steps to reproduce ", 60))
	}
	sb.WriteString("\n]")
	text := sb.String()
	var out string
	for b.Loop() {
		out, _ = cutText(text, 24<<10, true)
	}
	b.ReportMetric(float64(len(text)), "bytes-in")
	b.ReportMetric(float64(len(out)), "bytes-out")
}

// TestJqThenCut: a filter's output is what max_result_size cuts, as
// JSON, and with an output schema structuredContent is cut alike.
func TestJqThenCut(t *testing.T) {
	body := `{"items":` + items(200, 30) + `}`
	for _, output := range []string{"", `{"type":"object"}`} {
		def := Definition{Name: "list", Method: "GET", Path: "/items", Jq: `{count: (.items | length), items: [.items[] | {id, title}]}`}
		if output != "" {
			def.OutputSchema = json.RawMessage(output)
		}
		op, err := NewOperation(def)
		if err != nil {
			t.Fatal(err)
		}
		answer := &Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
		res := op.Result(context.Background(), Target{Label: "GET /items"}, answer, Shaping{MaxSize: 1024})
		text := res.Content[0].(mcp.TextContent).Text
		cut, ok := cutOf(res)
		if res.IsError || !ok || len(text) > 1024 || cut.ItemsDropped == 0 || len(cut.Arrays) != 1 || cut.Arrays[0].Path != "$.items" {
			t.Fatalf("output schema %q: %d bytes, cut %+v:\n%s", output, len(text), cut, text)
		}
		json1, _, _ := strings.Cut(text, noteSep)
		var got struct {
			Count int
			Items []map[string]any
		}
		if err := json.Unmarshal([]byte(json1), &got); err != nil || got.Count != 200 || len(got.Items) != cut.Arrays[0].Kept {
			t.Errorf("the cut output %s (%v) does not match the cut %+v", json1, err, cut)
		}
		if output != "" {
			if sc := res.StructuredContent.(json.RawMessage); string(sc) != json1 {
				t.Errorf("structuredContent %s is not the text's JSON %s", sc, json1)
			}
		}
	}
}

// TestJqHeapBound: a filter that fills memory quickly is stopped by the
// heap bound before its (long) deadline.
func TestJqHeapBound(t *testing.T) {
	start := time.Now()
	res := jqResult(t, `[range(1e9) | "x" * 4096]`, "", `{}`, time.Minute)
	text := res.Content[0].(mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "memory grew by more than 256 MiB") {
		t.Fatalf("got %.200q after %v, want the memory bound", text, time.Since(start))
	}
	t.Logf("stopped after %v", time.Since(start).Round(time.Millisecond))
}
