//go:build unix

// Package openapitest drives tools imported from OpenAPI documents (the
// mcp directive's openapi blocks) against Prism mocking the same
// documents, so that every request the gateway builds is checked against
// the document by a validator no one on this project wrote: path, query
// in each style, headers, JSON and form bodies, null. The documents are
// the Petstore (OpenAPI 3.0 and its Swagger 2.0 form), a selection of
// GitHub's, and testdata/wire.yaml for what those lack.
//
// It is a package of its own so that it runs in its own test binary:
// caddy.Load replaces the running config of the whole process.
package openapitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	_ "github.com/caddy-mcp/caddy-mcp"
	"github.com/caddy-mcp/caddy-mcp/internal/incaddy"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/prismtest"
)

// The real documents, in openapi/testdata/node_modules.
const (
	petstore30      = "@readme/oas-examples/3.0/json/petstore.json"
	swaggerPetstore = "@readme/oas-examples/2.0/json/petstore.json"
	githubDocument  = "@octokit/openapi/generated/api.github.com.json"
)

// githubOperations is the selection of GitHub's document imported:
// path parameters, scalar and array queries (form, exploded: the only
// style GitHub uses), JSON bodies with oneOf, nested objects and nullable
// properties, and each method.
var githubOperations = []string{
	"repos/get",
	"repos/update",
	"repos/list-for-org",
	"repos/create-or-update-file-contents",
	"issues/list-for-repo",
	"issues/create",
	"issues/update",
	"issues/delete-label",
	"teams/update-in-org",
	"migrations/list-for-org",
	"orgs/list-pat-grants",
	"search/repos",
	"users/get-by-username",
	"reactions/create-for-issue",
	"pulls/create",
	"gists/create",
}

// petstoreTools are the Petstore's tools but the two that need the
// api_key credential (uploadFile, multipart, is skipped): the same from
// the 3.0 document and from its Swagger 2.0 form.
var petstoreTools = []string{"addPet", "createUser", "createUsersWithArrayInput", "createUsersWithListInput",
	"deleteOrder", "deletePet", "deleteUser", "findPetsByStatus", "findPetsByTags", "getOrderById", "getUserByName",
	"loginUser", "logoutUser", "placeOrder", "updatePet", "updatePetWithForm", "updateUser"}

// env is the Caddy and the Prisms every subtest uses.
type env struct {
	base     string // Caddy's base URL
	prisms   map[string]*prismtest.Server
	declared map[string]*declared // what each Prism's document declares
	clients  map[string]*client.Client
}

// TestImportedTools imports each document's operations as tools and calls
// every one with arguments made from its input schema: Prism must find
// each request the document's, and the tool must answer what Prism did.
func TestImportedTools(t *testing.T) {
	e := start(t)
	for _, endpoint := range []struct {
		path  string
		prism string
		want  []string // the tools listed
	}{
		{"/petstore", "petstore", petstoreTools},
		{"/petstore-key", "petstore", []string{"getInventory", "getPetById"}},
		{"/swagger", "swagger", petstoreTools},
		{"/swagger-key", "swagger", []string{"getInventory", "getPetById"}},
		{"/github", "github", githubToolNames()},
		{"/wire", "wire", []string{"createNote", "getItem", "getTags", "get_item_without_request_id", "searchComma", "searchDeep", "searchForm", "searchObject", "searchPipe", "searchSpace", "updateNoteForm"}},
	} {
		t.Run(strings.TrimPrefix(endpoint.path, "/"), func(t *testing.T) {
			c := e.client(t, endpoint.path)
			tools := listTools(t, c)
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			if !slices.Equal(names, endpoint.want) {
				t.Errorf("tools %q\nwant  %q", names, endpoint.want)
			}
			for _, tool := range tools {
				if tool.Name == brokenTool {
					continue
				}
				t.Run(tool.Name, func(t *testing.T) {
					args, err := toolArguments(tool)
					if err != nil {
						t.Fatalf("arguments for %s: %v", tool.Name, err)
					}
					e.call(t, endpoint.prism, c, tool.Name, args)
				})
			}
		})
	}
	t.Run("a request that breaks the document is reported", func(t *testing.T) { brokenRequest(t, e) })
	t.Run("wire forms", func(t *testing.T) { wireForms(t, e) })
	t.Run("null in GitHub bodies", func(t *testing.T) { githubNulls(t, e) })
	t.Run("TypeScript SDK client", func(t *testing.T) { sdkClient(t, e) })
	t.Run("codemode", func(t *testing.T) { codeMode(t, e) })
}

// brokenTool is the wire endpoint's inline tool that sends requests the
// document refuses.
const brokenTool = "get_item_without_request_id"

// brokenRequest shows that the checks have teeth: a request without a
// header the document requires is one Prism reports, and answers 422.
func brokenRequest(t *testing.T, e *env) {
	p := e.prisms["wire"]
	m := p.Mark()
	res, err := mcptest.CallTool(e.client(t, "/wire"), brokenTool, map[string]any{"itemId": 4})
	if err != nil {
		t.Fatal(err)
	}
	reqs, violations := p.Since(t, m)
	if len(violations) != 1 || violations[0].String() != "GET /items/4: error: Request header must have required property 'x-request-id'" {
		t.Errorf("violations %q, want the one of the missing X-Request-Id", violations)
	}
	if len(reqs) != 1 || reqs[0].Status != 422 || !res.IsError || !strings.Contains(mcptest.ResultText(res), "422") {
		t.Errorf("requests %+v, result %v %q; want one answered 422, and an error result saying so", reqs, res.IsError, mcptest.ResultText(res))
	}
}

// start installs and starts everything: one Prism per document and one
// Caddy serving an mcp endpoint per document (two for the Petstores, whose
// operations need one of two credentials) and a codemode endpoint over
// two of them.
func start(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Prism on Node, and Caddy")
	}
	docs := prismtest.Documents(t)
	wire, err := filepath.Abs(filepath.Join("testdata", "wire.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	github := filepath.Join(docs, githubDocument)
	e := &env{prisms: map[string]*prismtest.Server{}, declared: map[string]*declared{}, clients: map[string]*client.Client{}}
	names := []string{"petstore", "swagger", "github", "wire"}
	documents := []prismtest.Document{
		{Path: filepath.Join(docs, petstore30)},
		{Path: withConsumes(t, filepath.Join(docs, swaggerPetstore))},
		// Prism reads a document whole before it listens (GitHub's takes
		// 9 s and 320 MB): it gets the selected operations and what they
		// refer to, the same for those operations. GitHub's examples do
		// not all keep to its schemas: Prism answers from the schemas.
		{Path: selectOperations(t, github, githubOperations), Options: prismtest.Options{Dynamic: true}},
		{Path: wire},
	}
	servers := prismtest.StartAll(t, documents...)
	for i, name := range names {
		e.prisms[name] = servers[i]
		e.declared[name] = readDeclared(t, documents[i].Path)
	}
	port := incaddy.FreePort(t)
	e.base = "http://127.0.0.1:" + port
	text := fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
}

http://:%[1]s {
	mcp /petstore {
		upstream %[2]s
		header Authorization "Bearer test-token"
		openapi %[3]q {
			exclude getPetById getInventory
		}
	}
	mcp /petstore-key {
		upstream %[2]s
		header api_key test-key
		openapi %[3]q {
			include getPetById getInventory
		}
	}
	mcp /swagger {
		upstream %[4]s
		header Authorization "Bearer test-token"
		openapi %[5]q {
			exclude getPetById getInventory
		}
	}
	mcp /swagger-key {
		upstream %[4]s
		header api_key test-key
		openapi %[5]q {
			include getPetById getInventory
		}
	}
	mcp /github {
		upstream %[6]s
		openapi %[7]q {
			include %[8]s
		}
	}
	mcp /wire {
		upstream %[9]s
		openapi %[10]q
		# Not the document's: it leaves out the required X-Request-Id.
		tool get_item_without_request_id {
			description "Get an item, without the header the document requires."
			get /items/{itemId}
			arg itemId integer required "Item id"
		}
	}
	codemode /code {
		backend petstore http://127.0.0.1:%[1]s/petstore
		backend wire http://127.0.0.1:%[1]s/wire
		timeout 20s
	}
}
`, port,
		e.prisms["petstore"].URL, filepath.Join(docs, petstore30),
		e.prisms["swagger"].URL, filepath.Join(docs, swaggerPetstore),
		e.prisms["github"].URL, github, strings.Join(githubOperations, " "),
		e.prisms["wire"].URL, wire)
	incaddy.Run(t, "openapitest", text, nil)
	// Sessions open here, on the test they last as long as.
	for _, path := range []string{"/petstore", "/petstore-key", "/swagger", "/swagger-key", "/github", "/wire", "/code"} {
		e.clients[path], _ = mcptest.Connect(t, e.base+path, mcptest.Options{Name: "openapitest"})
	}
	return e
}

// client returns the session of one endpoint.
func (e *env) client(t *testing.T, path string) *client.Client {
	t.Helper()
	c, ok := e.clients[path]
	if !ok {
		t.Fatalf("no session of %s", path)
	}
	return c
}

// call calls a tool and checks what Prism saw of it: exactly one request,
// no violation, not answered 422, no query key or X- header the operation
// does not declare; and that the result is an error exactly
// when Prism's answer was not a 2xx. It returns the result and the
// request.
func (e *env) call(t *testing.T, prism string, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, prismtest.Request) {
	t.Helper()
	p := e.prisms[prism]
	m := p.Mark()
	res, err := mcptest.CallTool(c, name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	reqs, violations := p.Since(t, m)
	shown, _ := json.Marshal(args)
	checkPrism(t, name, string(shown), reqs, violations)
	if len(reqs) != 1 {
		return res, prismtest.Request{}
	}
	req := reqs[0]
	e.declared[prism].check(t, name, req)
	ok := req.Status >= 200 && req.Status < 300
	if res.IsError == ok {
		t.Errorf("%s answered %d; the result's isError is %v: %s", name, req.Status, res.IsError, mcptest.ResultText(res))
	}
	return res, req
}

// checkPrism fails the test on any violation Prism reported (and logs its
// warnings), on anything but one request, and on a 422.
func checkPrism(t *testing.T, what, args string, reqs []prismtest.Request, violations []prismtest.Violation) {
	t.Helper()
	checkViolations(t, what+" "+args, violations)
	if len(reqs) != 1 {
		t.Errorf("%s %s: %d requests reached prism, want 1: %+v", what, args, len(reqs), reqs)
		return
	}
	req := reqs[0]
	t.Logf("%s %s -> %s %s (%s) %d", what, args, req.Method, req.URI(), req.Body, req.Status)
	if req.Status == 422 {
		t.Errorf("%s: prism answered 422 to %s %s", what, req.Method, req.URI())
	}
}

// checkViolations fails the test on any violation Prism reported, and
// logs its warnings.
func checkViolations(t *testing.T, what string, violations []prismtest.Violation) {
	t.Helper()
	for _, v := range violations {
		switch {
		case v.Severity == "error" && v.OfResponse():
			t.Errorf("%s: prism's own answer breaks the document (a fault of the test's setup, not of the request): %s", what, v)
		case v.Severity == "error":
			t.Errorf("%s: prism reports %s", what, v)
		default:
			t.Logf("%s: prism warns %s", what, v)
		}
	}
}

// listTools lists an endpoint's tools, sorted by name.
func listTools(t *testing.T, c *client.Client) []mcp.Tool {
	t.Helper()
	ctx, cancel := contextWithTimeout()
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	tools := res.Tools
	slices.SortFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools
}

// toolArguments makes arguments from a tool's input schema.
func toolArguments(tool mcp.Tool) (map[string]any, error) {
	raw := tool.RawInputSchema
	if raw == nil {
		var err error
		if raw, err = json.Marshal(tool.InputSchema); err != nil {
			return nil, err
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	v, err := example(schema)
	if err != nil {
		return nil, err
	}
	args, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the input schema gives %T, not an object", v)
	}
	return args, nil
}

// githubToolNames are the tool names of githubOperations, sorted.
func githubToolNames() []string {
	var names []string
	for _, id := range githubOperations {
		names = append(names, strings.ReplaceAll(id, "/", "_"))
	}
	slices.Sort(names)
	return names
}

// selectOperations writes a copy of the JSON document at path holding
// only the operations named, and the components they refer to, however
// indirectly; it returns the copy's path.
func selectOperations(t *testing.T, path string, ids []string) string {
	t.Helper()
	doc := readJSON(t, path)
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	paths := map[string]any{}
	found := 0
	for p, item := range doc["paths"].(map[string]any) {
		kept := map[string]any{}
		for k, v := range item.(map[string]any) {
			op, _ := v.(map[string]any)
			if id, _ := op["operationId"].(string); op != nil && want[id] {
				kept[k] = v
				found++
			}
		}
		if len(kept) == 0 {
			continue
		}
		if params, ok := item.(map[string]any)["parameters"]; ok {
			kept["parameters"] = params
		}
		paths[p] = kept
	}
	if found != len(ids) {
		t.Fatalf("%s has %d of the %d operations selected", path, found, len(ids))
	}
	doc["paths"] = paths
	delete(doc, "webhooks")
	delete(doc, "x-webhooks")
	components, _ := doc["components"].(map[string]any)
	kept := map[string]map[string]any{}
	queue := refsIn(paths)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		parts := strings.Split(strings.TrimPrefix(ref, "#/components/"), "/")
		if len(parts) != 2 {
			t.Fatalf("reference %q is not to a component", ref)
		}
		kind, name := parts[0], strings.ReplaceAll(strings.ReplaceAll(parts[1], "~1", "/"), "~0", "~")
		if _, done := kept[kind][name]; done {
			continue
		}
		section, _ := components[kind].(map[string]any)
		c, ok := section[name]
		if !ok {
			t.Fatalf("reference %q names no component", ref)
		}
		if kept[kind] == nil {
			kept[kind] = map[string]any{}
		}
		kept[kind][name] = c
		queue = append(queue, refsIn(c)...)
	}
	out := map[string]any{}
	for kind, section := range kept {
		out[kind] = section
	}
	doc["components"] = out
	return writeJSON(t, path, doc)
}

// withConsumes writes a copy of the Swagger 2.0 document at path that says
// its bodies are JSON (consumes at the root), and returns the copy's path.
// Swagger 2.0 leaves the media type of a body without consumes open; the
// import sends JSON, as the document's 3.0 form says, where Prism refuses
// any body at all.
func withConsumes(t *testing.T, path string) string {
	t.Helper()
	doc := readJSON(t, path)
	if _, ok := doc["consumes"]; ok {
		t.Fatalf("%s says consumes at its root now: withConsumes is not needed", path)
	}
	doc["consumes"] = []any{"application/json"}
	return writeJSON(t, path, doc)
}

// readJSON reads the JSON document at path.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// writeJSON writes doc into a temporary file named like path.
func writeJSON(t *testing.T, path string, doc map[string]any) string {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// refsIn lists the $ref values in v.
func refsIn(v any) []string {
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				refs = append(refs, ref)
			}
			for _, child := range v {
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(v)
	return refs
}
