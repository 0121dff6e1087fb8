//go:build unix

package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
)

// sdkMain is the TypeScript SDK's package, relative to interop/node_modules.
const sdkMain = "@modelcontextprotocol/sdk/package.json"

// sdkClient drives imported tools with the official TypeScript SDK's
// client (interop/'s, on interop/'s Node 22): path, header, query in
// several styles, JSON body with null, form body. Prism must find every request the
// document's, as with mcp-go's client.
func sdkClient(t *testing.T, e *env) {
	calls := []sdkCall{
		{"getItem", map[string]any{"itemId": 3, "X_Request_Id": "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"}},
		{"searchForm", map[string]any{"colors": []any{"green", "blue"}, "limit": 5, "note": nil}},
		{"createNote", map[string]any{"title": "From the SDK", "text": nil, "priority": 2}},
		{"updateNoteForm", map[string]any{"noteId": "sdk-1", "title": "Done", "done": true}},
		{"searchDeep", map[string]any{"filter": map[string]any{"color": "blue"}}},
		{"searchSpace", map[string]any{"words": []any{"from", "sdk"}}},
		{"searchPipe", map[string]any{"sizes": []any{4, 5}}},
	}
	p := e.prisms["wire"]
	m := p.Mark()
	got := runSDKClient(t, e.base+"/wire", calls)
	for _, c := range calls {
		if !slices.Contains(got.Tools, c.Name) {
			t.Errorf("the SDK lists %q, without %s", got.Tools, c.Name)
		}
	}
	if len(got.Results) != len(calls) {
		t.Fatalf("%d results for %d calls", len(got.Results), len(calls))
	}
	for i, r := range got.Results {
		if r.IsError {
			t.Errorf("%s: isError: %s", r.Name, r.Text)
		}
		t.Logf("%s: %s", calls[i].Name, r.Text)
	}
	reqs, violations := p.Since(t, m)
	checkViolations(t, "the SDK's calls", violations)
	if len(reqs) != len(calls) {
		t.Fatalf("%d requests reached prism for %d calls: %+v", len(reqs), len(calls), reqs)
	}
	for i, r := range reqs {
		e.declared["wire"].check(t, calls[i].Name, r)
		if r.Status < 200 || r.Status > 299 {
			t.Errorf("%s: prism answered %d to %s %s", calls[i].Name, r.Status, r.Method, r.URI())
		}
	}
	if want := `{"title":"From the SDK","text":null,"priority":2}`; !sameJSON(reqs[2].Body, want) {
		t.Errorf("createNote sent %s, want %s", reqs[2].Body, want)
	}
}

// importWithPrism runs Caddy with one mcp endpoint at /<name> importing
// document (a file) in front of prism, curated by the lines of block,
// and returns a client of the endpoint.
func importWithPrism(t *testing.T, name string, prism *prismtest.Server, document, block string) (*client.Client, string) {
	t.Helper()
	port := incaddy.FreePort(t)
	incaddy.Run(t, name, fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%s {
	mcp /%s {
		upstream %s
		openapi %q {
%s
		}
	}
}
`, port, name, prism.URL, document, block), nil)
	url := "http://127.0.0.1:" + port + "/" + name
	c, _ := mcptest.Connect(t, url, mcptest.Options{Name: "openapitest"})
	return c, url
}

// sdkCall is one tools/call for sdk-client.mjs.
type sdkCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// sdkResults is what sdk-client.mjs prints.
type sdkResults struct {
	Tools   []string `json:"tools"`
	Results []struct {
		Name              string          `json:"name"`
		IsError           bool            `json:"isError"`
		Text              string          `json:"text"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"results"`
}

// runSDKClient makes the calls at url with the official TypeScript SDK's
// client (interop/'s, on interop/'s Node 22), which throws on a result
// whose structuredContent breaks the tool's output schema, and returns
// one result per call.
func runSDKClient(t *testing.T, url string, calls []sdkCall) sdkResults {
	t.Helper()
	interop := filepath.Join(prismtest.Dir(t), "..", "..", "interop")
	npmtest.Install(t, interop, sdkMain)
	node := filepath.Join(interop, "node_modules", "node", "bin", "node")
	input, err := json.Marshal(map[string]any{"url": url, "calls": calls})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "sdk-client.mjs"))
	cmd.Env = []string{"SDK_ROOT=" + filepath.Join(interop, "node_modules", filepath.Dir(sdkMain)), "PATH=" + filepath.Dir(node), "HOME=" + t.TempDir()}
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the SDK's client failed (did a call throw?): %v\n%s", err, stderr.Bytes())
	}
	var got sdkResults
	if err := json.Unmarshal(out, &got); err != nil || len(got.Results) != len(calls) {
		t.Fatalf("sdk-client.mjs printed %.300q for %d calls: %v", out, len(calls), err)
	}
	return got
}

func sameJSON(got []byte, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}
