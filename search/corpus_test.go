package search

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
	"github.com/caddy-mcp/caddy-mcp/openapi"
)

// corpusTool is a tool of a real corpus with the name a query expects.
type corpusTool struct {
	Tool
	Corpus string
}

var githubOnce struct {
	sync.Once
	tools []Tool
	err   error
}

// githubTools are GitHub's operations as the openapi package imports them
// (all of them, no curation), in the form the index reads. The import
// takes a few seconds, so it is done once per test binary.
func githubTools(tb testing.TB) []Tool {
	tb.Helper()
	data := openapidocs.Read(tb, openapidocs.GitHub)
	githubOnce.Do(func() {
		doc, err := openapi.Load(data)
		if err != nil {
			githubOnce.err = err
			return
		}
		res, err := doc.Tools(openapi.Curation{}, nil)
		if err != nil {
			githubOnce.err = err
			return
		}
		for _, t := range res.Tools {
			args, err := schemaArgs(t.Definition.InputSchema)
			if err != nil {
				githubOnce.err = err
				return
			}
			githubOnce.tools = append(githubOnce.tools, Tool{Name: t.Name, Description: t.Description, Args: args})
		}
	})
	if githubOnce.err != nil {
		tb.Fatalf("importing GitHub's document: %v", githubOnce.err)
	}
	return githubOnce.tools
}

// everythingTools are server-everything's tools from the snapshot of its
// tools/list in testdata (internal/everythingtest checks it against the
// live server).
func everythingTools(tb testing.TB) []Tool {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "everything-tools.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		tb.Fatalf("testdata/everything-tools.json: %v", err)
	}
	var tools []Tool
	for _, t := range list.Tools {
		args, err := schemaArgs(t.InputSchema)
		if err != nil {
			tb.Fatalf("testdata/everything-tools.json: tool %s: %v", t.Name, err)
		}
		tools = append(tools, Tool{Name: t.Name, Title: t.Title, Description: t.Description, Args: args})
	}
	return tools
}

// schemaArgs are the top-level properties of an input schema, by name.
func schemaArgs(schema json.RawMessage) ([]Arg, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	var args []Arg
	for name, p := range s.Properties {
		args = append(args, Arg{Name: name, Description: p.Description})
	}
	slices.SortFunc(args, func(a, b Arg) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return args, nil
}
