//go:build unix

package everythingtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// snapshotFile is the search package's copy of server-everything's
// tools/list, which its quality test indexes without starting Node.
var snapshotFile = filepath.Join("..", "..", "search", "testdata", "everything-tools.json")

var updateSnapshot = flag.Bool("update-snapshot", false, "rewrite "+snapshotFile+" from the live server-everything")

// snapshotTool is what the snapshot keeps of one tool: what search reads
// and what a change of the server would show in.
type snapshotTool struct {
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description"`
	InputSchema mcp.ToolInputSchema `json:"inputSchema"`
}

type snapshot struct {
	Server string         `json:"server"`
	Tools  []snapshotTool `json:"tools"`
}

// TestToolsSnapshot checks that the snapshot still equals the live
// tools/list of the pinned server-everything: names, titles,
// descriptions and input schemas, in the server's order. Run with
// -update-snapshot to rewrite it after a version bump.
func TestToolsSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node")
	}
	url, dir := runEverything(t)
	live := listTools(t, url)

	var version struct {
		Version string `json:"version"`
	}
	pkg, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(pkg, &version); err != nil {
		t.Fatal(err)
	}
	want := snapshot{Server: "@modelcontextprotocol/server-everything@" + version.Version}
	for _, tool := range live {
		want.Tools = append(want.Tools, snapshotTool{Name: tool.Name, Title: tool.Title, Description: tool.Description, InputSchema: tool.InputSchema})
	}
	wantJSON, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	wantJSON = append(wantJSON, '\n')

	if *updateSnapshot {
		if err := os.WriteFile(snapshotFile, wantJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d tools of %s", snapshotFile, len(want.Tools), want.Server)
		return
	}
	got, err := os.ReadFile(snapshotFile)
	if err != nil {
		t.Fatalf("%v; write it with go test ./internal/everythingtest -run TestToolsSnapshot -update-snapshot", err)
	}
	if !bytes.Equal(got, wantJSON) {
		var old snapshot
		if err := json.Unmarshal(got, &old); err != nil {
			t.Fatalf("%s: %v", snapshotFile, err)
		}
		t.Errorf("%s (%s, %d tools) differs from the live tools/list of %s (%d tools); %s; rewrite it with -update-snapshot and check the search quality test still passes",
			snapshotFile, old.Server, len(old.Tools), want.Server, len(want.Tools), firstDifference(old, want))
	}
}

// firstDifference names the first tool that differs between two
// snapshots.
func firstDifference(old, live snapshot) string {
	for i := range max(len(old.Tools), len(live.Tools)) {
		switch {
		case i >= len(old.Tools):
			return "the live server has " + live.Tools[i].Name + " more"
		case i >= len(live.Tools):
			return "the live server no longer has " + old.Tools[i].Name
		}
		a, _ := json.Marshal(old.Tools[i])
		b, _ := json.Marshal(live.Tools[i])
		if !bytes.Equal(a, b) {
			return "tool " + old.Tools[i].Name + " is now " + string(b)
		}
	}
	return "the server's version changed"
}
