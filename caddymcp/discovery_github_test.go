package caddymcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

// GitHub's whole document, imported with discovery all and with discovery
// search: the bytes of a tools/list in each mode (search must be under 2%
// of all), and what search_tools answers to a question a model would ask.
func TestDiscoveryGitHubListBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("imports GitHub's whole document, twice")
	}
	if racetest.Enabled {
		t.Skip("imports GitHub's whole document, twice: minutes under the race detector, and no concurrency to check")
	}
	path := openapidocs.Path(t, openapidocs.GitHub)
	handlers := map[string]*Handler{}
	for _, mode := range []string{discoveryAll, discoverySearch} {
		h := &Handler{Upstream: "https://api.github.com", OpenAPI: []*OpenAPISource{{Source: path}}, Discovery: mode}
		defer provisionBench(t, h)()
		handlers[mode] = h
	}
	for _, era := range eras {
		in := toolsListBodies[era]
		size := map[string]int{}
		for mode, h := range handlers {
			w := serveOnce(t, h, in.body, in.header)
			if w.Code != 200 || !strings.Contains(w.Body.String(), `"tools":[`) {
				t.Fatalf("%s: tools/list %d %.300s", mode, w.Code, w.Body)
			}
			size[mode] = w.Body.Len()
		}
		ratio := float64(size[discoverySearch]) / float64(size[discoveryAll])
		t.Logf("%s: tools/list of %d tools: %d bytes with discovery all, %d with discovery search (%.2f%%)",
			era, len(handlers[discoveryAll].tools), size[discoveryAll], size[discoverySearch], 100*ratio)
		if ratio >= 0.02 {
			t.Errorf("%s: discovery search's tools/list is %.2f%% of all's, want under 2%%", era, 100*ratio)
		}
	}

	const query = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"list the open issues of a repository","limit":3}}}`
	w := serveOnce(t, handlers[discoverySearch], query, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	var answer struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || len(answer.Result.Content) != 1 || answer.Result.StructuredContent != nil {
		t.Fatalf("search_tools answer: %v\n%.500s", err, w.Body)
	}
	var found foundTools
	if err := json.Unmarshal([]byte(answer.Result.Content[0].Text), &found); err != nil {
		t.Fatalf("search_tools text: %v\n%.500s", err, w.Body)
	}
	if found.Of != len(handlers[discoverySearch].tools) || found.Matched < 3 {
		t.Errorf("%d of %d match, want of %d", found.Matched, found.Of, len(handlers[discoverySearch].tools))
	}
	t.Logf("search_tools %q: %d bytes, tools %v", "list the open issues of a repository", w.Body.Len(), found.names())
	// How well it ranks is search's to test; here, that the answer is
	// three of GitHub's issue tools, whole.
	if len(found.Tools) != 3 {
		t.Fatalf("search_tools found %v, want 3", found.names())
	}
	forRepo := false
	for _, tool := range found.Tools {
		t.Logf("  %s: inputSchema %d bytes", tool.Name, len(tool.InputSchema))
		if !strings.HasPrefix(tool.Name, "issues_") || tool.Description == "" || !strings.Contains(string(tool.InputSchema), `"properties"`) {
			t.Errorf("found %s: %.300s", tool.Name, tool.InputSchema)
		}
		if tool.Name == "issues_list-for-repo" {
			forRepo = strings.Contains(string(tool.InputSchema), `"owner"`)
		}
	}
	if !forRepo {
		t.Errorf("search_tools found %v, want issues_list-for-repo with its owner argument among them", found.names())
	}
}

// BenchmarkSearchToolsCall measures one search_tools call over GitHub's
// 1,221 imported tools, in process: the query, and the matches encoded
// with their schemas; bytes/answer is what the client receives.
func BenchmarkSearchToolsCall(b *testing.B) {
	h := &Handler{Upstream: "https://api.github.com", Discovery: discoverySearch,
		OpenAPI: []*OpenAPISource{{Source: openapidocs.Path(b, openapidocs.GitHub)}}}
	defer provisionBench(b, h)()
	for _, limit := range []string{"1", "5"} {
		b.Run("limit="+limit, func(b *testing.B) {
			body := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"create a comment on a pull request","limit":` + limit + `}}}`
			header := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
			w := serveOnce(b, h, body, header)
			if w.Code != 200 || !strings.Contains(w.Body.String(), `"structuredContent"`) {
				b.Fatalf("answer %d %.300s", w.Code, w.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				serveOnce(b, h, body, header)
			}
			b.ReportMetric(float64(w.Body.Len()), "bytes/answer")
		})
	}
}
