//go:build unix

package everythingtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

// TestDiscoveryFlow is what a model does in front of GitHub's whole API
// and server-everything through one codemode endpoint: its declarations
// are far past max_declarations, so tools/list offers search and execute;
// the model searches, then runs code calling what search returned, and
// gets the data of both backends. GitHub's API is Prism mocking its
// published document.
func TestDiscoveryFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node, Prism and Caddy")
	}
	if racetest.Enabled {
		t.Skip("imports GitHub's whole document: minutes under the race detector, and TestEverything covers code mode's concurrency there")
	}
	everythingURL, _ := runEverything(t)
	document := openapidocs.Path(t, openapidocs.GitHub)
	if _, err := os.Stat(document); err != nil {
		t.Fatal(err)
	}
	// GitHub's examples do not all keep to its schemas: Prism answers
	// from the schemas.
	prism := prismtest.Start(t, document, prismtest.Options{Dynamic: true})

	port := incaddy.FreePort(t)
	incaddy.Run(t, "everythingtest-discovery", fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%[1]s {
	mcp /github {
		upstream %[2]s
		openapi %[3]q
	}
	codemode /code {
		backend everything %[4]s {
			timeout 10s
		}
		backend github http://127.0.0.1:%[1]s/github
		timeout 20s
	}
}
`, port, prism.URL, document, everythingURL), nil)
	s := newSession(t, "http://127.0.0.1:"+port+"/code", mcp.LATEST_PROTOCOL_VERSION)
	// Importing GitHub's whole document takes a while, and much longer
	// under the race detector: the session gets more than the usual 30s.
	var cancel context.CancelFunc
	s.ctx, cancel = context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	var tools []mcp.Tool
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		list, err := s.c.ListTools(s.ctx, mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		tools = list.Tools
		if d := tools[0].Description; !strings.Contains(d, "unavailable right now") || time.Now().After(deadline) {
			break
		}
	}
	if len(tools) != 2 || tools[0].Name != "execute" || tools[1].Name != "search" {
		t.Fatalf("tools/list: %d tools, want execute and search", len(tools))
	}
	execDesc := tools[0].Description
	listBytes, _ := json.Marshal(tools)
	t.Logf("tools/list in search mode: %d bytes (execute's description %d)", len(listBytes), len(execDesc))
	githubCount := regexp.MustCompile(`github: (\d+) tools`).FindStringSubmatch(execDesc)
	if githubCount == nil || len(githubCount[1]) < 3 || !strings.Contains(execDesc, "everything: ") || strings.Contains(execDesc, "declare const") {
		t.Fatalf("the execute description does not list the backends:\n%.2000s", execDesc)
	}
	if len(listBytes) > 16<<10 {
		t.Errorf("tools/list in search mode is %d bytes", len(listBytes))
	}

	// The model searches, and reads the identifiers from the answer.
	// As a model would, it picks the match whose backend tool is the one
	// it wants, among the top 10, and searches again with other words
	// when none is. (How well the first words do is the ranking's
	// business, measured on its own.)
	search := func(backend, tool string, queries ...string) (string, string) {
		t.Helper()
		var text string
		for _, query := range queries {
			res, err := mcptest.CallTool(s.c, "search", map[string]any{"query": query, "limit": 10})
			if err != nil || res.IsError {
				t.Fatalf("search %q: %v %s", query, err, mcptest.ResultText(res))
			}
			text = mcptest.ResultText(res)
			for _, m := range regexp.MustCompile(`(?m)^- `+backend+`\.([A-Za-z0-9_$]+)(?: \(the backend tool "([^"]+)"\))?`).FindAllStringSubmatch(text, -1) {
				if m[1] == tool || m[2] == tool {
					t.Logf("search %q found %s.%s", query, backend, m[1])
					return m[1], text
				}
			}
		}
		t.Fatalf("no search found %s.%s in its top 10; the last answer:\n%.2000s", backend, tool, text)
		return "", ""
	}
	getLicense, text := search("github", "licenses_get", "get a license", "license get")
	if !strings.Contains(text, getLicense+"(input: ") || !strings.Contains(text, "license: string") || !strings.Contains(text, "type GithubLicensesGetOutput") {
		t.Errorf("the answer does not declare %s with its output type:\n%.3000s", getLicense, text)
	}
	echo, _ := search("everything", "echo", "echo back a message")
	t.Logf("search answer: %d bytes", len(text))

	mark := prism.Mark()
	res := s.execute(t, fmt.Sprintf(`
const [license, said] = await Promise.all([
  github.%s({ license: "mit" }),
  everything.%s({ message: "found by search" }),
]);
const [m] = await tools.search("list issues of a repository", 1);
return { key: typeof license.key, name: typeof license.name, said, found: m.backend + "." + m.identifier };
`, getLicense, echo))
	var out struct {
		Key, Name, Said, Found string
	}
	s.resultValue(t, res, &out)
	if out.Key != "string" || out.Name != "string" || out.Said != "Echo: found by search" || !strings.HasPrefix(out.Found, "github.") {
		t.Errorf("the code's result: %+v", out)
	}
	reqs, violations := prism.Since(t, mark)
	if len(violations) != 0 {
		t.Errorf("Prism saw violations: %v", violations)
	}
	if len(reqs) != 1 || reqs[0].Path != "/licenses/mit" {
		t.Errorf("Prism saw %+v, want GET /licenses/mit", reqs)
	}
}
