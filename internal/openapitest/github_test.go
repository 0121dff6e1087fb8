//go:build unix

package openapitest

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
)

// githubTen are the ten GitHub operations a new user curates first, and
// a call of each as a model would make it.
var githubTen = []struct {
	id   string
	args map[string]any
}{
	{"issues/list-for-repo", map[string]any{"owner": "octocat", "repo": "hello", "state": "open"}},
	{"issues/get", map[string]any{"owner": "octocat", "repo": "hello", "issue_number": 1}},
	{"issues/create", map[string]any{"owner": "octocat", "repo": "hello", "title": "Found a bug", "body": "It breaks."}},
	{"issues/update", map[string]any{"owner": "octocat", "repo": "hello", "issue_number": 1}},
	{"issues/create-comment", map[string]any{"owner": "octocat", "repo": "hello", "issue_number": 1, "body": "Me too."}},
	{"pulls/list", map[string]any{"owner": "octocat", "repo": "hello"}},
	{"pulls/get", map[string]any{"owner": "octocat", "repo": "hello", "pull_number": 1}},
	{"search/issues-and-pull-requests", map[string]any{"q": "bug repo:octocat/hello"}},
	{"repos/list-commits", map[string]any{"owner": "octocat", "repo": "hello"}},
	{"repos/get", map[string]any{"owner": "octocat", "repo": "hello"}},
}

// TestGitHubTenWithTheSDK imports GitHub's ten most used operations,
// tuned with operation blocks, in front of Prism answering with GitHub's
// own examples (which break GitHub's own schemas), and calls every tool
// with the official TypeScript SDK's client, which validates
// structuredContent against each output schema: no call throws, every
// answer's data reaches the client, Prism finds every request the
// document's, and the tool list is measured.
func TestGitHubTenWithTheSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism on Node, and Caddy")
	}
	var ids []string
	for _, op := range githubTen {
		ids = append(ids, op.id)
	}
	github := filepath.Join(prismtest.Documents(t), githubDocument)
	prism := prismtest.Start(t, selectOperations(t, github, ids), prismtest.Options{Drift: true})
	c, url := importWithPrism(t, "github", prism, github, `			include `+strings.Join(ids, " ")+`
			operation issues/update {
				title "Close an issue"
				body_field state "closed"
				body_field state_reason "completed"
			}
			operation issues/get {
				jq "{number, title, state, user: .user.login}"
			}`)
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := json.Marshal(list.Tools)
	t.Logf("tools/list of the ten, tuned: %d tools, %d bytes", len(list.Tools), len(listed))
	if len(list.Tools) != 10 || len(listed) > 48<<10 {
		t.Errorf("%d tools in %d bytes, want 10 within 48 KiB", len(list.Tools), len(listed))
	}

	var calls []sdkCall
	for _, op := range githubTen {
		calls = append(calls, sdkCall{strings.ReplaceAll(op.id, "/", "_"), op.args})
	}
	m := prism.Mark()
	got := runSDKClient(t, url, calls)
	drifted := 0
	for _, r := range got.Results {
		data := r.Text
		if r.IsError {
			// The answer broke the output schema: the result says so and
			// holds the answer.
			var ok bool
			if _, data, ok = strings.Cut(r.Text, "the answer follows as the API sent it:\n\n"); !ok {
				t.Errorf("%s: an error without the answer: %.300s", r.Name, r.Text)
				continue
			}
			drifted++
		}
		if !json.Valid([]byte(strings.TrimSpace(data))) || len(data) < 20 {
			t.Errorf("%s: the answer's data does not reach the client: %.300s", r.Name, r.Text)
		}
		t.Logf("%s: isError %v, %d bytes of text, structuredContent %d bytes", r.Name, r.IsError, len(r.Text), len(r.StructuredContent))
	}
	t.Logf("%d of %d answers drifted past the lenient output schemas", drifted, len(calls))

	reqs, violations := prism.Since(t, m)
	drifts := 0
	for _, v := range violations {
		if v.Severity == "error" && !v.OfResponse() {
			t.Errorf("prism reports %s", v)
		} else if v.OfResponse() {
			drifts++
			t.Logf("GitHub's own example breaks GitHub's document: %s", v)
		}
	}
	if drifts == 0 {
		t.Error("no example broke the document: the test no longer shows answers that drift reaching the SDK")
	}
	if len(reqs) != len(calls) {
		t.Fatalf("%d requests reached prism for %d calls", len(reqs), len(calls))
	}
	if !strings.Contains(string(reqs[3].Body), `"state":"closed"`) {
		t.Errorf("issues/update sent %s, want the fixed state", reqs[3].Body)
	}
	if text := got.Results[1].Text; !strings.Contains(text, `"user":`) || strings.Contains(text, `"labels"`) {
		t.Errorf("issues/get did not go through its jq filter: %.300s", text)
	}
}
