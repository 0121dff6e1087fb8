package declarations

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fixtureTools are the tools of a tools/list result saved in
// testdata/tools (see its README).
func fixtureTools(tb testing.TB, file string) []goldenTool {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "tools", file))
	if err != nil {
		tb.Fatal(err)
	}
	var list struct {
		Tools []goldenTool `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	return list.Tools
}

// fixtureBackends are the 23 tools a new user tried: GitHub's ten
// operations as an mcp endpoint lists them from githubFile, and
// server-everything's tools.
func fixtureBackends(tb testing.TB, githubFile string) []Backend {
	tb.Helper()
	return []Backend{
		{Name: "github", Tools: toolDecls(fixtureTools(tb, githubFile))},
		{Name: "everything", Tools: toolDecls(fixtureTools(tb, "everything.json"))},
	}
}
