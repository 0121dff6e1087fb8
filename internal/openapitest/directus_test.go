//go:build unix

package openapitest

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
)

const directusDocument = "@directus/specs/dist/openapi.json"

// TestDirectusListOperations imports Directus's published document (npm
// @directus/specs), whose list operations take their filter, aggregate,
// deep and alias parameters as JSON objects in the query (content, not
// schema), in front of Prism: the list operations are tools, those
// parameters are arguments, and a filter reaches Prism as its JSON text.
func TestDirectusListOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism on Node, and Caddy")
	}
	directus := filepath.Join(prismtest.Documents(t), directusDocument)
	lists := []string{"getItems", "getFiles", "getComments"}
	prism := prismtest.Start(t, selectOperations(t, directus, lists), prismtest.Options{Drift: true})
	c, _ := importWithPrism(t, "directus", prism, directus, "			tags Items Files Comments")
	list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		tools[tl.Name] = tl
	}
	t.Logf("%d tools from the Items, Files and Comments tags", len(list.Tools))
	for _, id := range lists {
		tl, ok := tools[id]
		if !ok {
			t.Errorf("no tool %s among %d", id, len(tools))
			continue
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		raw, _ := json.Marshal(tl.InputSchema)
		_ = json.Unmarshal(raw, &schema)
		for _, arg := range []string{"filter", "aggregate", "deep", "alias", "limit"} {
			if _, ok := schema.Properties[arg]; !ok {
				t.Errorf("%s has no %s argument: %s", id, arg, raw)
			}
		}
	}

	m := prism.Mark()
	filter := map[string]any{"title": map[string]any{"_eq": "Hello"}}
	res, err := c.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "getItems",
		Arguments: map[string]any{"collection": "articles", "filter": filter, "limit": 5}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Errorf("getItems: %v", res.Content)
	}
	reqs, violations := prism.Since(t, m)
	for _, v := range violations {
		if !v.OfResponse() {
			t.Errorf("prism reports %s", v)
		}
	}
	if len(reqs) != 1 {
		t.Fatalf("%d requests reached prism, want 1", len(reqs))
	}
	q, _ := url.ParseQuery(reqs[0].RawQuery)
	if got := q.Get("filter"); got != `{"title":{"_eq":"Hello"}}` || q.Get("limit") != "5" || !strings.HasPrefix(reqs[0].Path, "/items/articles") {
		t.Errorf("getItems sent %s, want the filter as its JSON text and limit 5", reqs[0].URI())
	}
}
