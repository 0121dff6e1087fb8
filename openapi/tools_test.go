package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden is what the golden files hold of one document: the tools of a
// fixed selection of operations, and the operations of it skipped.
type golden struct {
	Tools   []Tool    `json:"tools"`
	Skipped []Skipped `json:"skipped"`
}

func TestToolsGolden(t *testing.T) {
	tests := []struct {
		name    string
		data    func(testing.TB) []byte
		include []string
	}{
		{"github", doc(githubDocument), []string{
			"repos/get",                           // path parameters
			"issues/list-for-repo",                // query parameters with enums and defaults
			"search/repos",                        // required query, output schema
			"issues/create",                       // JSON body properties, oneOf, nullable
			"gists/update",                        // PATCH, nullable body
			"actions/update-repo-variable",        // a body property clashing with a path parameter
			"enterprise-team-memberships/get",     // a path parameter named enterprise-team
			"repos/delete",                        // DELETE
			"markdown/render",                     // a text/html answer
			"meta/get-octocat",                    // a media type of GitHub's own
			"markdown/render-raw",                 // skipped: a text/plain body
			"repos/upload-release-asset",          // skipped: an octet-stream body
			"activity/mark-notifications-as-read", // PUT
		}},
		{"github-3.1", githubDocument31, []string{"issues/create", "gists/update", "repos/get"}},
		{"petstore-3.0", doc(petstore30), []string{"findPetsByStatus", "getPetById", "deletePet", "addPet", "updatePetWithForm", "uploadFile", "loginUser"}},
		{"petstore-3.1", doc(petstore31), []string{"findPetsByStatus", "updatePetWithForm", "uploadFile"}},
		{"parameter-styles", doc(parameterStyles), []string{
			"query_form_nonExploded", "query_spaceDelimited_nonExploded", "query_pipeDelimited_nonExploded", "query_deepObject_nonExploded",
			"query_form_exploded", "headers_simple_exploded", "paths_simple_nonExploded",
			"paths_label_nonExploded", "cookies_standard", // skipped: label style, cookies
		}},
		{"swagger-2.0", doc(swaggerPetstore), []string{"findPetsByStatus", "getPetById", "deletePet", "addPet", "updatePetWithForm", "uploadFile", "createUsersWithArrayInput"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skipGitHubUnderRace(t, tt.name)
			d, err := Load(tt.data(t))
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.Tools(Curation{Include: tt.include}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Selected != len(tt.include) {
				t.Errorf("%d operations selected, want %d", r.Selected, len(tt.include))
			}
			for _, tl := range r.Tools {
				checkTool(t, tl)
			}
			got, err := json.MarshalIndent(golden{r.Tools, r.Skipped}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", "golden", tt.name+".json"), got)
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	got = append(got, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./openapi/ -run %s -update to write it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(-update rewrites it)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs in length: %d lines, want %d (-update rewrites it)", path, len(gl), len(wl))
	}
}

// checkTool checks what every generated tool must be: a valid name, a
// description, a definition upstream accepts (NewOperation compiles its
// input and output schemas with the validator calls use), arguments with
// valid names.
func checkTool(tb testing.TB, tl Tool) {
	tb.Helper()
	if !toolNameRule.MatchString(tl.Name) && !renameRule.MatchString(tl.Name) {
		tb.Errorf("tool name %q is not valid", tl.Name)
	}
	if strings.TrimSpace(tl.Description) == "" {
		tb.Errorf("%s: no description", tl.Name)
	}
	if _, err := upstream.NewOperation(tl.Definition); err != nil {
		tb.Errorf("%s: %v", tl.Name, err)
	}
	if tl.Operation == nil || !bytes.Equal(tl.Operation.InputSchema(), tl.Definition.InputSchema) {
		tb.Errorf("%s: the Operation is not that of the Definition", tl.Name)
	}
	names, err := upstream.PropertyNames(tl.Definition.InputSchema)
	if err != nil {
		tb.Errorf("%s: input schema: %v", tl.Name, err)
	}
	for _, n := range names {
		if !argNameRule.MatchString(n) {
			tb.Errorf("%s: argument name %q is not valid", tl.Name, n)
		}
	}
}

func TestToolsWholeDocuments(t *testing.T) {
	tests := []struct {
		name           string
		data           func(testing.TB) []byte
		tools, skipped int
	}{
		{"github 3.0", doc(githubDocument), 1000, 10},
		{"github 3.1 form", githubDocument31, 1000, 10},
		{"petstore 3.0", doc(petstore30), 19, 1},
		{"petstore 3.1", doc(petstore31), 19, 1},
		{"swagger 2.0", doc(swaggerPetstore), 14, 6},
		{"train travel 3.1", doc(trainTravel31), 7, 0},
		{"circular schemas", doc(circular30), 2, 1},
		{"parameter styles", doc(parameterStyles), 12, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skipGitHubUnderRace(t, tt.name)
			d, err := Load(tt.data(t))
			if err != nil {
				t.Fatal(err)
			}
			r, err := d.Tools(Curation{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Tools) < tt.tools || len(r.Skipped) > tt.skipped || len(r.Tools)+len(r.Skipped) != r.Operations {
				t.Errorf("%d operations: %d tools (want at least %d), %d skipped (want at most %d)", r.Operations, len(r.Tools), tt.tools, len(r.Skipped), tt.skipped)
			}
			seen := make(map[string]bool)
			for _, tl := range r.Tools {
				if seen[tl.Name] {
					t.Errorf("two tools named %s", tl.Name)
				}
				seen[tl.Name] = true
				checkTool(t, tl)
			}
			for _, s := range r.Skipped {
				t.Logf("skipped %s %s %s: %s", s.OperationID, s.Method, s.Path, s.Reason)
			}
		})
	}
}

// mapDocument maps a document of one operation, written as the JSON of
// an operation object at method and path, with components beside it.
func mapDocument(t *testing.T, version, method, path, operation, components string) *Result {
	t.Helper()
	key := "openapi"
	if version == "2.0" {
		key = "swagger"
	}
	text := fmt.Sprintf(`{%q:%q,"info":{"title":"t","version":"1"},%s"paths":{%q:{%q:%s}}}`, key, version, components, path, method, operation)
	d, err := Load([]byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	// These cases check the conversion itself: strict, the schemas as
	// the document writes them (TestLenient checks the default).
	r, err := d.Tools(Curation{Output: OutputStrict}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range r.Tools {
		checkTool(t, tl)
	}
	return r
}

func TestToolsMapping(t *testing.T) {
	ok := `"responses":{"200":{"description":"ok"}}`
	tests := []struct {
		name, version, method, path, op, components string
		// want holds JSON fragments of the tool (its Definition, Header,
		// Annotations, Name) that must appear, each in the indented JSON
		// of the tool; skip is the reason it is skipped, if it is;
		// dropped the reason an optional parameter is left out of it.
		want    []string
		skip    string
		dropped string
		// call, when set, is the JSON of a call's arguments, and url and
		// header (Name: value) what its request must be.
		call, url, header string
	}{
		{
			name: "wire names of query and header parameters", version: "3.0.3", method: "get", path: "/items",
			op: `{"operationId":"list","parameters":[
				{"name":"filter[status]","in":"query","schema":{"type":"string","enum":["open","closed"]}},
				{"name":"$top","in":"query","schema":{"type":"integer","default":10}},
				{"name":"X-Api-Version","in":"header","required":true,"schema":{"type":"string"}}],` + ok + `}`,
			want: []string{
				`"Name":"filter_status","Type":"","Required":false,"Description":"","In":"query","HeaderName":"","Default":null,"Enum":null,"WireName":"filter[status]","Nullable":false`,
				`"Name":"top","Type":"","Required":false,"Description":"","In":"query","HeaderName":"","Default":null,"Enum":null,"WireName":"$top"`,
				`"Name":"X_Api_Version","Type":"","Required":false,"Description":"","In":"header","HeaderName":"X-Api-Version"`,
				`"required":["X_Api_Version"]`,
				`"top":{"default":10,"type":"integer"}`,
			},
		},
		{
			name: "path slots take the argument names", version: "3.0.3", method: "get", path: "/teams/{team-id}/members/{user.name}",
			op: `{"parameters":[{"name":"team-id","in":"path","required":true,"schema":{"type":"integer"}},
				{"name":"user.name","in":"path","required":true,"schema":{"type":"string"}}],` + ok + `}`,
			want: []string{`"Path":"/teams/{team_id}/members/{user_name}"`, `"Name":"get_teams_team_id_members_user_name"`, `"required":["team_id","user_name"]`},
		},
		{
			name: "path parameters of the path item, one replaced by the operation", version: "3.0.3", method: "get", path: "/a/{id}",
			op:   `{"parameters":[{"name":"id","in":"path","required":true,"description":"the operation's","schema":{"type":"integer"}}],` + ok + `}`,
			want: []string{`"id":{"description":"the operation's","type":"integer"}`},
		},
		{
			name: "a body property clashing with a parameter", version: "3.0.3", method: "patch", path: "/vars/{name}",
			op: `{"parameters":[{"name":"name","in":"path","required":true,"schema":{"type":"string"}}],
				"requestBody":{"content":{"application/json":{"schema":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"value":{"type":"string"}}}}}},` + ok + `}`,
			want: []string{`"Name":"body_name","Type":"","Required":false,"Description":"","In":"body","HeaderName":"","Default":null,"Enum":null,"WireName":"name"`, `"required":["name","body_name"]`, `"Body":"json"`},
		},
		{
			name: "readOnly properties left out of the body, nullable ones allowing null", version: "3.0.3", method: "post", path: "/pets",
			op: `{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Pet"}}}},
				"responses":{"201":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Pet"}}}}}}`,
			components: `"components":{"schemas":{"Pet":{"type":"object","required":["id","name"],"properties":{
				"id":{"type":"integer","readOnly":true},"name":{"type":"string"},"tag":{"type":"string","nullable":true},"secret":{"type":"string","writeOnly":true}}}}},`,
			want: []string{
				`"InputSchema":{"additionalProperties":false,"properties":{"name":{"type":"string"},"secret":{"type":"string","writeOnly":true},"tag":{"type":["string","null"]}},"required":["name"],"type":"object"}`,
				`"OutputSchema":{"properties":{"id":{"readOnly":true,"type":"integer"},"name":{"type":"string"},"tag":{"type":["string","null"]}},"required":["id","name"],"type":"object"}`,
				`"Name":"tag","Type":"","Required":false,"Description":"","In":"body","HeaderName":"","Default":null,"Enum":null,"WireName":"","Nullable":false`,
			},
		},
		{
			name: "3.1 type unions with null", version: "3.1.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"q","in":"query","schema":{"type":["string","null"]}}],` + ok + `}`,
			want: []string{`"q":{"type":["string","null"]}`},
		},
		{
			name: "a JSON array body is one argument", version: "3.0.3", method: "put", path: "/tags",
			op:   `{"requestBody":{"required":true,"description":"The tags.","content":{"application/json":{"schema":{"type":"array","items":{"type":"string"}}}}},` + ok + `}`,
			want: []string{`"Body":"arg","BodyArg":"body"`, `"body":{"description":"The tags.","items":{"type":"string"},"type":"array"}`, `"required":["body"]`, `"Idempotent":true`},
		},
		{
			name: "a oneOf body is one argument, named apart from a parameter body", version: "3.0.3", method: "post", path: "/a",
			op: `{"parameters":[{"name":"body","in":"query","schema":{"type":"string"}}],
				"requestBody":{"content":{"application/json":{"schema":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}},` + ok + `}`,
			want: []string{`"Body":"arg","BodyArg":"body_2"`},
		},
		{
			name: "a vendor JSON body sets Content-Type, the answer's media types Accept", version: "3.0.3", method: "patch", path: "/a",
			op: `{"requestBody":{"content":{"application/merge-patch+json":{"schema":{"type":"object","properties":{"x":{"type":"integer"}}}}}},
				"responses":{"200":{"description":"ok","content":{"application/vnd.api+json":{"schema":{"type":"object"}},"text/csv":{"schema":{"type":"string"}}}},
				"202":{"description":"later","content":{"application/json":{}}}}}`,
			want: []string{`"Header":{"Accept":["application/vnd.api+json, application/json, text/csv"],"Content-Type":["application/merge-patch+json"]}`, `"OutputSchema":{"type":"object"}`},
		},
		{
			name: "a form body", version: "3.0.3", method: "post", path: "/login",
			op:   `{"requestBody":{"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{"user":{"type":"string"},"scopes":{"type":"array","items":{"type":"string"}}}}}}},` + ok + `}`,
			want: []string{`"Body":"form"`, `"Name":"scopes","Type":"","Required":false,"Description":"","In":"body"`},
		},
		{
			name: "annotations of GET", version: "3.0.3", method: "get", path: "/a", op: `{` + ok + `}`,
			want: []string{`"Annotations":{"ReadOnly":true,"Destructive":null,"Idempotent":null}`, `"Description":"GET /a"`},
		},
		{
			name: "annotations of DELETE", version: "3.0.3", method: "delete", path: "/a", op: `{"summary":"Delete it.","description":"Gone for good.",` + ok + `}`,
			want: []string{`"Annotations":{"ReadOnly":null,"Destructive":true,"Idempotent":true}`, `"Description":"Delete it.\n\nGone for good."`},
		},
		{
			name: "Accept, Content-Type and Authorization header parameters are ignored", version: "3.0.3", method: "get", path: "/a",
			op: `{"parameters":[{"name":"Accept","in":"header","schema":{"type":"string"}},{"name":"authorization","in":"header","schema":{"type":"string"}}],
				"responses":{"200":{"description":"ok","content":{"application/json":{}}}}}`,
			want: []string{`"InputSchema":{"additionalProperties":false,"properties":{},"type":"object"}`, `"Header":{"Accept":["application/json"]}`},
		},
		{
			name: "a recursive schema becomes {} where it repeats", version: "3.0.3", method: "post", path: "/nodes",
			op:         `{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Node"}}}},` + ok + `}`,
			components: `"components":{"schemas":{"Node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/components/schemas/Node"}}}}}},`,
			want:       []string{`"children":{"items":{},"type":"array"}`},
		},
		{
			name: "3.0 exclusive bounds become 2020-12 numbers", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"n","in":"query","schema":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":10}}],` + ok + `}`,
			want: []string{`"n":{"exclusiveMinimum":0,"maximum":10,"type":"number"}`},
		},
		{
			name: "a pattern Go cannot read is dropped", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"s","in":"query","schema":{"type":"string","pattern":"^(?!x)","maxLength":3}}],` + ok + `}`,
			want: []string{`"s":{"maxLength":3,"type":"string"}`},
		},
		{
			name: "swagger collectionFormat multi", version: "2.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"tags","in":"query","type":"array","items":{"type":"string"},"collectionFormat":"multi"}],` + ok + `}`,
			want: []string{`"tags":{"items":{"type":"string"},"type":"array"}`},
			call: `{"tags":["a","b"]}`, url: "https://api.example.com/a?tags=a&tags=b",
		},
		{
			name: "swagger form body", version: "2.0", method: "post", path: "/a",
			op:   `{"consumes":["application/x-www-form-urlencoded"],"parameters":[{"name":"note","in":"formData","type":"string","required":true}],` + ok + `}`,
			want: []string{`"Body":"form"`, `"required":["note"]`},
		},
		{
			name: "an operationId made a tool name", version: "3.0.3", method: "get", path: "/a",
			op:   `{"operationId":"repos/get-content.v2",` + ok + `}`,
			want: []string{`"Name":"repos_get-content_v2"`},
		},
		{
			name: "defaults the type or the enum refuses are dropped", version: "3.0.3", method: "get", path: "/a",
			op: `{"parameters":[{"name":"s","in":"query","schema":{"type":"string","default":5}},{"name":"e","in":"query","schema":{"type":"string","enum":["a"],"default":"b"}},
				{"name":"n","in":"query","schema":{"type":"integer","default":2.5}},{"name":"ok","in":"query","schema":{"type":["integer","null"],"default":3}}],` + ok + `}`,
			want: []string{`"s":{"type":"string"}`, `"e":{"enum":["a"],"type":"string"}`, `"n":{"type":"integer"}`, `"ok":{"default":3,"type":["integer","null"]}`},
		},
		{
			name: "an operation with the document's server", version: "3.0.3", method: "get", path: "/a",
			op: `{"servers":[{"url":"https://api.example.com"}],` + ok + `}`, components: `"servers":[{"url":"https://api.example.com"}],`,
			want: []string{`"Name":"get_a"`},
		},
		{
			name: "an operation with a server of its own", version: "3.0.3", method: "get", path: "/a",
			op: `{"servers":[{"url":"https://other.example.com"}],` + ok + `}`, components: `"servers":[{"url":"https://api.example.com"}],`,
			skip: "the operation has a server of its own (https://other.example.com)",
		},
		{
			name: "a required cookie parameter", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"session","in":"cookie","required":true,"schema":{"type":"string"}}],` + ok + `}`,
			skip: `cookie parameter "session": cookies are not sent`,
		},
		{
			name: "a cookie parameter", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"session","in":"cookie","schema":{"type":"string"}}],` + ok + `}`,
			dropped: `cookie parameter "session": cookies are not sent`,
		},
		{
			name: "a multipart body", version: "3.0.3", method: "post", path: "/a",
			op:   `{"requestBody":{"content":{"multipart/form-data":{"schema":{"type":"object"}}}},` + ok + `}`,
			skip: "request body multipart/form-data is not sent (only JSON and URL-encoded forms are)",
		},
		{
			name: "a comma-separated array", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","explode":false,"schema":{"type":"array","items":{"type":"integer"}}}],` + ok + `}`,
			want: []string{`"Style":"form","Explode":false`},
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1,2",
		},
		{
			name: "an array in style form with explode is the key repeated", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","style":"form","explode":true,"schema":{"type":"array","items":{"type":"integer"}}}],` + ok + `}`,
			want: []string{`"Style":"","Explode":null`},
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1&ids=2",
		},
		{
			name: "a space-delimited array", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","style":"spaceDelimited","schema":{"type":"array","items":{"type":"string"}}}],` + ok + `}`,
			call: `{"ids":["a b","c"]}`, url: "https://api.example.com/a?ids=a+b%20c",
		},
		{
			name: "a pipe-delimited array", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","style":"pipeDelimited","schema":{"type":"array","items":{"type":"string"}}}],` + ok + `}`,
			want: []string{`"Style":"pipeDelimited","Explode":null`},
			call: `{"ids":["a|b","c&d=e"]}`, url: "https://api.example.com/a?ids=a%7Cb%7Cc%26d%3De",
		},
		{
			name: "a pipe-delimited array with explode is the key repeated", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","style":"pipeDelimited","explode":true,"schema":{"type":"array","items":{"type":"integer"}}}],` + ok + `}`,
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1&ids=2",
		},
		{
			name: "a deepObject, exploded whatever explode says", version: "3.0.3", method: "get", path: "/a",
			op: `{"parameters":[{"name":"filter","in":"query","style":"deepObject","schema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}}},
				{"name":"page","in":"query","style":"deepObject","explode":false,"schema":{"type":"object","properties":{"size":{"type":"integer"}}}}],` + ok + `}`,
			want: []string{`"Style":"deepObject","Explode":null`},
			call: `{"filter":{"a":"x y","b":2},"page":{"size":5}}`, url: "https://api.example.com/a?filter%5Ba%5D=x+y&filter%5Bb%5D=2&page%5Bsize%5D=5",
		},
		{
			name: "an object in style form, its properties as keys", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"filter","in":"query","schema":{"type":"object","properties":{"state":{"type":"string"},"limit":{"type":"integer"}}}}],` + ok + `}`,
			want: []string{`"Style":"form","Explode":true`},
			call: `{"filter":{"state":"open","limit":3}}`, url: "https://api.example.com/a?limit=3&state=open",
		},
		{
			name: "an object in style form without explode", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"color","in":"query","explode":false,"schema":{"type":"object","properties":{"R":{"type":"integer"},"G":{"type":"integer"}}}}],` + ok + `}`,
			call: `{"color":{"R":100,"G":200}}`, url: "https://api.example.com/a?color=G,200,R,100",
		},
		{
			name: "a pipe-delimited object", version: "3.1.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"color","in":"query","style":"pipeDelimited","schema":{"type":"object","properties":{"R":{"type":"integer"}}}}],` + ok + `}`,
			call: `{"color":{"R":100}}`, url: "https://api.example.com/a?color=R%7C100",
		},
		{
			name: "swagger collectionFormat csv", version: "2.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","type":"array","items":{"type":"integer"},"collectionFormat":"csv"}],` + ok + `}`,
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1,2",
		},
		{
			name: "swagger without collectionFormat is csv", version: "2.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","type":"array","items":{"type":"integer"}}],` + ok + `}`,
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1,2",
		},
		{
			name: "swagger collectionFormat ssv", version: "2.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","type":"array","items":{"type":"integer"},"collectionFormat":"ssv"}],` + ok + `}`,
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1%202",
		},
		{
			name: "swagger collectionFormat pipes", version: "2.0", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"ids","in":"query","type":"array","items":{"type":"integer"},"collectionFormat":"pipes"}],` + ok + `}`,
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a?ids=1%7C2",
		},
		{
			name: "swagger collectionFormat tsv", version: "2.0", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"ids","in":"query","type":"array","items":{"type":"integer"},"collectionFormat":"tsv"}],` + ok + `}`,
			dropped: `query parameter "ids": collectionFormat tsv is not sent`,
		},
		{
			name: "swagger path array", version: "2.0", method: "get", path: "/a/{ids}",
			op:   `{"parameters":[{"name":"ids","in":"path","required":true,"type":"array","items":{"type":"integer"}}],` + ok + `}`,
			call: `{"ids":[1,2]}`, url: "https://api.example.com/a/1,2",
		},
		{
			name: "swagger path array in pipes", version: "2.0", method: "get", path: "/a/{ids}",
			op:   `{"parameters":[{"name":"ids","in":"path","required":true,"type":"array","items":{"type":"integer"},"collectionFormat":"pipes"}],` + ok + `}`,
			skip: `path parameter "ids": collectionFormat pipes is not sent`,
		},
		{
			name: "an array in a header", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"X-Ids","in":"header","schema":{"type":"array","items":{"type":"integer"}}}],` + ok + `}`,
			want: []string{`"Style":"simple","Explode":null`},
			call: `{"X_Ids":[1,2]}`, url: "https://api.example.com/a", header: "X-Ids: 1,2",
		},
		{
			name: "an object in a header, exploded", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"X-Point","in":"header","explode":true,"schema":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}}}}],` + ok + `}`,
			call: `{"X_Point":{"x":1,"y":2}}`, url: "https://api.example.com/a", header: "X-Point: x=1,y=2",
		},
		{
			name: "an array in the path", version: "3.0.3", method: "get", path: "/a/{ids}",
			op:   `{"parameters":[{"name":"ids","in":"path","required":true,"style":"simple","schema":{"type":"array","items":{"type":"string"}}}],` + ok + `}`,
			call: `{"ids":["x,y","z/w"]}`, url: "https://api.example.com/a/x%2Cy,z%2Fw",
		},
		{
			name: "an object in the path", version: "3.0.3", method: "get", path: "/a/{point}",
			op:   `{"parameters":[{"name":"point","in":"path","required":true,"schema":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}}}}],` + ok + `}`,
			call: `{"point":{"x":1,"y":2}}`, url: "https://api.example.com/a/x,1,y,2",
		},
		{
			name: "a schema without a type is styled, as it may be an array", version: "3.0.3", method: "get", path: "/a",
			op: `{"parameters":[{"name":"ids","in":"query","style":"pipeDelimited","schema":{"oneOf":[{"type":"integer"},{"type":"array","items":{"type":"integer"}}]}},
				{"name":"X-Ids","in":"header","schema":{"oneOf":[{"type":"integer"},{"type":"array","items":{"type":"integer"}}]}}],` + ok + `}`,
			call: `{"ids":[1,2],"X_Ids":[3,4]}`, url: "https://api.example.com/a?ids=1%7C2", header: "X-Ids: 3,4",
		},
		{
			name: "a label path", version: "3.0.3", method: "get", path: "/a/{id}",
			op:   `{"parameters":[{"name":"id","in":"path","required":true,"style":"label","schema":{"type":"string"}}],` + ok + `}`,
			skip: `path parameter "id": style label is not sent`,
		},
		{
			name: "a matrix path", version: "3.0.3", method: "get", path: "/a/{id}",
			op:   `{"parameters":[{"name":"id","in":"path","required":true,"style":"matrix","schema":{"type":"array","items":{"type":"string"}}}],` + ok + `}`,
			skip: `path parameter "id": style matrix is not sent`,
		},
		{
			name: "an array in deepObject", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"ids","in":"query","style":"deepObject","schema":{"type":"array","items":{"type":"integer"}}}],` + ok + `}`,
			dropped: `query parameter "ids": an array in style deepObject is not sent`,
		},
		{
			name: "an array of arrays", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"m","in":"query","explode":false,"schema":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}],` + ok + `}`,
			dropped: `query parameter "m": an array of arrays is not sent`,
		},
		{
			name: "an array of objects in a header", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"X-M","in":"header","schema":{"type":"array","items":{"type":"object"}}}],` + ok + `}`,
			dropped: `header parameter "X-M": an array of objects is not sent`,
		},
		{
			name: "a header upstream will not set", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"Host","in":"header","schema":{"type":"string"}}],` + ok + `}`,
			skip: `argument "Host": header Host cannot be set by an argument`,
		},
		{
			name: "a query parameter that is an object's JSON text", version: "3.0.3", method: "get", path: "/a",
			op:   `{"parameters":[{"name":"filter","in":"query","description":"Items that match.","content":{"application/json":{"schema":{"type":"object"}}}}],` + ok + `}`,
			want: []string{`"filter":{"description":"Items that match.","type":"object"}`},
			call: `{"filter":{"title":{"_eq":"Hello & bye"}}}`,
			url:  "https://api.example.com/a?filter=%7B%22title%22%3A%7B%22_eq%22%3A%22Hello+%26+bye%22%7D%7D",
		},
		{
			name: "a parameter described by content, not an object", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"q","in":"query","content":{"application/json":{"schema":{"type":"array","items":{"type":"string"}}}}}],` + ok + `}`,
			dropped: `query parameter "q" is described by content, not a schema (only JSON objects are sent as JSON text)`,
		},
		{
			name: "a header described by content", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"X-Q","in":"header","content":{"application/json":{"schema":{"type":"object"}}}}],` + ok + `}`,
			dropped: `header parameter "X-Q" is described by content, not a schema`,
		},
		{
			name: "a query parameter described by text content", version: "3.0.3", method: "get", path: "/a",
			op:      `{"parameters":[{"name":"q","in":"query","content":{"text/plain":{"schema":{"type":"object"}}}}],` + ok + `}`,
			dropped: `query parameter "q" is described by content, not a schema`,
		},
		{
			name: "a slot with no parameter", version: "3.0.3", method: "get", path: "/a/{id}", op: `{` + ok + `}`,
			skip: `path "/a/{id}": {id} is not a declared path parameter`,
		},
		{
			name: "a placeholder in the path", version: "3.0.3", method: "get", path: "/a/{env.HOME}", op: `{` + ok + `}`,
			skip: `path "/a/{env.HOME}": {env.HOME} is not a declared path parameter`,
		},
		{
			name: "a path parameter named like a placeholder", version: "3.0.3", method: "get", path: "/a/{env.HOME}",
			op:   `{"parameters":[{"name":"env.HOME","in":"path","required":true,"schema":{"type":"string"}}],` + ok + `}`,
			want: []string{`"Path":"/a/{env_HOME}"`},
		},
		{
			name: "a placeholder in a body media type", version: "3.0.3", method: "post", path: "/a",
			op:   `{"requestBody":{"content":{"application/x.{env.HOME}+json":{"schema":{"type":"object","properties":{"a":{"type":"string"}}}}}},` + ok + `}`,
			skip: `request body media type "application/x.{env.HOME}+json" cannot be sent as a header`,
		},
		{
			name: "a placeholder in an answer media type", version: "3.0.3", method: "get", path: "/a",
			op:   `{"responses":{"200":{"description":"ok","content":{"application/x.{env.HOME}+json":{},"application/json":{}}}}}`,
			want: []string{`"Header":{"Accept":["application/json"]}`},
		},
		{
			name: "a form property that is an object", version: "3.0.3", method: "post", path: "/a",
			op:   `{"requestBody":{"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{"o":{"type":"object"}}}}}},` + ok + `}`,
			skip: `form property "o" is an object; a form body sends only scalars and arrays of them`,
		},
		{
			name: "OPTIONS", version: "3.0.3", method: "options", path: "/a", op: `{` + ok + `}`,
			skip: "method OPTIONS is not one a tool can use",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mapDocument(t, tt.version, tt.method, tt.path, tt.op, tt.components)
			if tt.skip != "" {
				if len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, tt.skip) {
					t.Fatalf("skipped %+v, want one skipped with %q", r.Skipped, tt.skip)
				}
				return
			}
			if tt.dropped != "" {
				if len(r.Tools) != 1 || len(r.Tools[0].Dropped) != 1 || !strings.Contains(r.Tools[0].Dropped[0], tt.dropped) {
					t.Fatalf("tools %+v, skipped %+v; want the tool, the parameter dropped with %q", r.Tools, r.Skipped, tt.dropped)
				}
				if strings.Contains(string(r.Tools[0].Definition.InputSchema), `"properties":{"`) {
					t.Errorf("the dropped parameter is in the input schema: %s", r.Tools[0].Definition.InputSchema)
				}
				return
			}
			if len(r.Tools) != 1 {
				t.Fatalf("%d tools, skipped %+v; want one tool", len(r.Tools), r.Skipped)
			}
			got, _ := json.Marshal(r.Tools[0])
			for _, w := range tt.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("the tool lacks %s:\n%s", w, got)
				}
			}
			if tt.call != "" {
				checkCall(t, &r.Tools[0], tt.call, tt.url, tt.header)
			}
		})
	}
}

// checkCall makes the request of a call of tl with the arguments of the
// JSON text call, and checks its URL and, given as "Name: value", a
// header.
func checkCall(t *testing.T, tl *Tool, call, wantURL, wantHeader string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(call))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	args, err := tl.Operation.Check(raw)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://api.example.com")
	req, _, err := tl.Operation.Request(context.Background(), base, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := req.URL.String(); got != wantURL {
		t.Errorf("URL %s, want %s", got, wantURL)
	}
	if name, value, ok := strings.Cut(wantHeader, ": "); ok {
		if got := req.Header.Values(name); len(got) != 1 || got[0] != value {
			t.Errorf("header %s: %q, want %q", name, got, value)
		}
	}
}

func TestToolsCallerHeaders(t *testing.T) {
	d, err := Load([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
		"/a":{"get":{"operationId":"a","responses":{"200":{"description":"ok","content":{"application/json":{}}}}}},
		"/b":{"get":{"operationId":"b","parameters":[{"name":"X-Tenant","in":"header","schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	header := http.Header{"Authorization": {"Bearer {env.TOKEN}"}, "Accept": {"text/plain"}, "X-Tenant": {"acme"}}
	r, err := d.Tools(Curation{}, header)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tools) != 1 || len(r.Skipped) != 1 {
		t.Fatalf("tools %+v, skipped %+v; want a and b skipped", r.Tools, r.Skipped)
	}
	// The document's Accept over the caller's; the caller's others kept.
	want := []upstream.Field{{Name: "Accept", Value: "application/json"}, {Name: "Authorization", Value: "Bearer {env.TOKEN}"}, {Name: "X-Tenant", Value: "acme"}}
	if got := r.Tools[0].Definition.Header; !slices.Equal(got, want) {
		t.Errorf("header %v, want %v", got, want)
	}
	if want := `argument "X_Tenant": header X-Tenant is already set by a fixed header`; r.Skipped[0].Reason != want {
		t.Errorf("skipped for %q, want %q", r.Skipped[0].Reason, want)
	}
}

func TestToolsNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	ops := `"/a":{"get":{"operationId":"` + long + `x","responses":{"200":{"description":"ok"}}},
		"post":{"operationId":"` + long + `y","responses":{"200":{"description":"ok"}}}},
		"/b":{"get":{"operationId":"same/name","responses":{"200":{"description":"ok"}}},
		"post":{"operationId":"same.name","responses":{"200":{"description":"ok"}}}}`
	d, err := Load([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{` + ops + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Tools(Curation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
		if !toolNameRule.MatchString(tl.Name) {
			t.Errorf("tool name %q is not valid", tl.Name)
		}
	}
	want := []string{long[:55] + "_" + shortHash(long+"x"), long[:55] + "_" + shortHash(long+"y"), "same_name", "same_name_" + shortHash("POST /b")}
	if !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
}

// BenchmarkGitHub loads GitHub's whole 3.0 document and maps every
// operation, compiling every schema (upstream.NewOperation, as a
// configuration load needs), and reports the CPU time (user and system,
// all threads: on a shared machine, what the work costs whatever else
// runs) and the memory the tools keep once the document is dropped.
func BenchmarkGitHub(b *testing.B) {
	data := document(b, githubDocument)
	var tools int
	var cpu time.Duration
	var kept uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := cpuTime()
		d, err := Load(data)
		if err != nil {
			b.Fatal(err)
		}
		r, err := d.Tools(Curation{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - start
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept += after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
		tools = len(r.Tools)
		runtime.KeepAlive(r)
	}
	b.ReportMetric(float64(tools), "tools")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(kept)/float64(b.N)/(1<<20), "MiB-kept/op")
	// What an import adds to a process at its peak: the most RSS of a
	// process that reads the document and imports it, over that of one
	// that only reads it.
	read, imported := importChild(b, "read"), importChild(b, "import")
	b.ReportMetric(float64(imported-read)/(1<<20), "MiB-peak-RSS-added")
}

// importChild runs TestImportChild in a process of its own and returns
// its largest RSS, which it prints. (The rusage of a child started by a
// large process says the parent's size: the child shares its memory
// until it execs.)
func importChild(b *testing.B, what string) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestImportChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "OPENAPI_IMPORT_CHILD="+what)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", what, err, out)
	}
	_, after, ok := strings.Cut(string(out), "VmHWM:")
	var kib int64
	if _, err := fmt.Sscan(after, &kib); !ok || err != nil {
		b.Skipf("no peak RSS read in the child: %s", out)
	}
	return kib << 10
}

// TestImportChild is BenchmarkGitHub's child process: with
// OPENAPI_IMPORT_CHILD=import it reads GitHub's document and imports it,
// with =read it only reads it.
func TestImportChild(t *testing.T) {
	what := os.Getenv("OPENAPI_IMPORT_CHILD")
	if what == "" {
		t.Skip("BenchmarkGitHub's child process")
	}
	data := document(t, githubDocument)
	if what == "import" {
		d, err := Load(data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Tools(Curation{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	runtime.KeepAlive(data)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status to read the peak RSS from")
	}
	for line := range strings.Lines(string(status)) {
		if strings.HasPrefix(line, "VmHWM:") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// BenchmarkGitHubPhases times loading and mapping apart.
func BenchmarkGitHubPhases(b *testing.B) {
	data := document(b, githubDocument)
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	d, err := Load(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tools", func(b *testing.B) {
		for b.Loop() {
			if _, err := d.Tools(Curation{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// cpuTime is the CPU time the process has used, user and system: on a
// shared machine, what the work costs whatever else runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// FuzzMapDocument loads and maps generated and mutated documents: no
// panic, and every tool has a valid name and a definition upstream
// accepts, its schemas compiled.
func FuzzMapDocument(f *testing.F) {
	f.Add([]byte(curationDocument))
	f.Add([]byte(minimal("")))
	f.Add([]byte(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/a/{id}":{"post":{"consumes":["application/x-www-form-urlencoded"],
		"parameters":[{"name":"id","in":"path","required":true,"type":"integer"},{"name":"tags","in":"query","type":"array","items":{"type":"string"},"collectionFormat":"multi"},
		{"name":"note","in":"formData","type":"string"}],"responses":{"200":{"description":"ok","schema":{"type":"object","properties":{"id":{"type":"integer"}}}}}}}}}`))
	f.Add([]byte(`openapi: 3.1.0
info: {title: t, version: "1"}
components:
  schemas:
    Node:
      type: [object, "null"]
      properties:
        name: {type: string, readOnly: true}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
paths:
  /nodes/{node-id}:
    parameters: [{name: node-id, in: path, required: true, schema: {type: string}}]
    put:
      operationId: nodes/put
      parameters: [{name: "filter[kind]", in: query, schema: {type: [string, "null"], enum: [a, b]}}, {name: X-Trace, in: header, schema: {type: string}}]
      requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}}
      responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}}}
`))
	for _, name := range []string{petstore30, petstore31YAML, swaggerYAML, parameterStyles} {
		if data, err := os.ReadFile(filepath.Join("testdata", "node_modules", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		// The bytes as a document (mostly refused), and a document the
		// bytes choose the parts of (mostly loaded).
		checkMapped(t, data)
		checkMapped(t, generateDocument(data))
	})
}

func checkMapped(t *testing.T, data []byte) {
	d, err := Load(data)
	if err != nil {
		return
	}
	{
		r, err := d.Tools(Curation{}, nil)
		if err != nil {
			t.Fatalf("an empty curation: %v", err)
		}
		if len(r.Tools)+len(r.Skipped) != r.Selected || r.Selected != r.Operations {
			t.Fatalf("%d tools and %d skipped of %d selected, %d operations", len(r.Tools), len(r.Skipped), r.Selected, r.Operations)
		}
		seen := make(map[string]bool)
		for _, tl := range r.Tools {
			if !toolNameRule.MatchString(tl.Name) || seen[tl.Name] {
				t.Fatalf("tool name %q is not valid or not unique", tl.Name)
			}
			seen[tl.Name] = true
			checkTool(t, tl)
		}
	}
}

// generateDocument builds an OpenAPI document whose operations, parameters,
// schemas and bodies the bytes choose, among the forms real documents
// take and some they should not.
func generateDocument(data []byte) []byte {
	next := func(n int) int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b % n
	}
	names := []string{"id", "filter[status]", "$top", "X-Api-Version", "body", "body_id", "a-b", "Accept", "Host", "Content-Length", "ü", "", "name", "2fa", strings.Repeat("n", 70), "{x}", "user.name"}
	schemas := []string{
		`{"type":"string"}`, `{"type":"integer","default":3,"minimum":1}`, `{"type":"string","nullable":true}`, `{"type":["string","null"]}`,
		`{"type":"array","items":{"type":"string"}}`, `{"type":"array","items":{"type":"object"}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `{}`, `{"type":"string","enum":["a","b"],"default":"a"}`, `{"type":"string","default":5}`,
		`{"$ref":"#/components/schemas/Node"}`, `{"type":"string","pattern":"(?!x)"}`, `{"type":"number","exclusiveMinimum":true,"minimum":0}`,
		`{"type":"object","properties":{"id":{"type":"integer","readOnly":true},"name":{"type":"string"}},"required":["id","name"]}`,
	}
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	version := []string{"3.0.3", "3.1.0"}[next(2)]
	var b strings.Builder
	fmt.Fprintf(&b, `{"openapi":%q,"info":{"title":"t","version":"1"},"components":{"schemas":{"Node":{"type":"object","properties":{"name":{"type":"string"},"next":{"$ref":"#/components/schemas/Node"}}}}},"paths":{`, version)
	for i := range 1 + next(4) {
		if i > 0 {
			b.WriteByte(',')
		}
		path := fmt.Sprintf("/r%d", i)
		var params []string
		for range next(5) {
			in := []string{"path", "query", "header", "cookie", "query"}[next(5)]
			name := names[next(len(names))]
			if in == "path" {
				path += "/{" + name + "}"
			}
			p := fmt.Sprintf(`{"name":%s,"in":%q,"required":%v,"schema":%s`, quoted(name), in, in == "path" || next(2) == 0, schemas[next(len(schemas))])
			if style := []string{"", "form", "spaceDelimited", "pipeDelimited", "deepObject", "simple", "label"}[next(7)]; style != "" {
				p += fmt.Sprintf(`,"style":%q`, style)
			}
			if e := next(3); e > 0 {
				p += fmt.Sprintf(`,"explode":%v`, e == 1)
			}
			params = append(params, p+"}")
		}
		if next(4) == 0 {
			path += "/{" + names[next(len(names))] + "}" // perhaps no parameter
		}
		method := []string{"get", "post", "put", "patch", "delete", "head", "options"}[next(7)]
		fmt.Fprintf(&b, `%s:{%q:{"operationId":%s,"parameters":[%s]`, quoted(path), method, quoted(names[next(len(names))]+fmt.Sprint(i)), strings.Join(params, ","))
		switch next(6) {
		case 1:
			props := make([]string, 0, 3)
			for j := range next(4) {
				props = append(props, fmt.Sprintf("%s:%s", quoted(names[next(len(names))]+strings.Repeat("_", j)), schemas[next(len(schemas))]))
			}
			fmt.Fprintf(&b, `,"requestBody":{"content":{"application/json":{"schema":{"type":"object","properties":{%s}}}}}`, strings.Join(props, ","))
		case 2:
			fmt.Fprintf(&b, `,"requestBody":{"required":true,"content":{"application/json":{"schema":%s}}}`, schemas[next(len(schemas))])
		case 3:
			fmt.Fprintf(&b, `,"requestBody":{"content":{"application/x-www-form-urlencoded":{"schema":%s}}}`, schemas[next(len(schemas))])
		case 4:
			fmt.Fprintf(&b, `,"requestBody":{"content":{%q:{"schema":%s}}}`, []string{"multipart/form-data", "text/plain", "*/*", "application/vnd.x+json", "application/{x}"}[next(5)], schemas[next(len(schemas))])
		}
		fmt.Fprintf(&b, `,"responses":{%q:{"description":"ok","content":{%q:{"schema":%s}}}}}}`,
			[]string{"200", "201", "2XX", "404"}[next(4)], []string{"application/json", "text/html", "application/problem+json"}[next(3)], schemas[next(len(schemas))])
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// TestToolsParameterStylesSent sends a call of each tool of the
// parameter-styles document to go-httpbin and checks what it read: the
// query parameters, the path, the headers. Items and property values
// hold the separators of other styles and query syntax, which must reach
// the server inside their own value.
func TestToolsParameterStylesSent(t *testing.T) {
	base, err := url.Parse(mcptest.StartHTTPBin(t))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Load(doc(parameterStyles)(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Tools(Curation{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := map[string]any{
		"primitive": "blue",
		"array":     []any{"blue", "black&x=1", "brown"},
		"object":    map[string]any{"name": "Ann Lee", "description": "a,b|c"},
	}
	exploded := map[string][]string{"primitive": {"blue"}, "array": {"blue", "black&x=1", "brown"}, "name": {"Ann Lee"}, "description": {"a,b|c"}}
	headers := map[string]string{"Primitive": "blue", "Array": "blue,black&x=1,brown", "Object": "description,a,b|c,name,Ann Lee"}
	tests := map[string]struct {
		path    string // as sent, escaped
		query   map[string][]string
		headers map[string]string
	}{
		"query_standard":                   {path: "/anything/query", query: exploded},
		"query_form_exploded":              {path: "/anything/query/form", query: exploded},
		"query_form_nonExploded":           {path: "/anything/query/form", query: map[string][]string{"primitive": {"blue"}, "array": {"blue,black&x=1,brown"}, "object": {"description,a,b|c,name,Ann Lee"}}},
		"query_spaceDelimited_nonExploded": {path: "/anything/query/spaceDelimited", query: map[string][]string{"array": {"blue black&x=1 brown"}, "object": {"description a,b|c name Ann Lee"}}},
		"query_pipeDelimited_nonExploded":  {path: "/anything/query/pipeDelimited", query: map[string][]string{"array": {"blue|black&x=1|brown"}, "object": {"description|a,b|c|name|Ann Lee"}}},
		"query_deepObject_nonExploded":     {path: "/anything/query/deepObject", query: map[string][]string{"object[name]": {"Ann Lee"}, "object[description]": {"a,b|c"}}},
		"headers_standard":                 {path: "/anything/headers", headers: headers},
		"headers_simple_nonExploded":       {path: "/anything/headers/simple", headers: headers},
		"headers_simple_exploded": {path: "/anything/headers/simple", headers: map[string]string{
			"Primitive": "blue", "Array": "blue,black&x=1,brown", "Object": "description=a,b|c,name=Ann Lee"}},
		"paths_standard":           {path: "/anything/path/blue/blue,black&x=1,brown/description,a%2Cb%7Cc,name,Ann%20Lee"},
		"paths_simple_nonExploded": {path: "/anything/path/simple/blue/blue,black&x=1,brown/description,a%2Cb%7Cc,name,Ann%20Lee"},
		"paths_simple_exploded":    {path: "/anything/path/simple/blue/blue,black&x=1,brown/description=a%2Cb%7Cc,name=Ann%20Lee"},
		// Its parameters are optional cookies, which are left out.
		"cookies_standard": {path: "/cookies"},
	}
	if len(r.Tools) != len(tests) {
		t.Errorf("%d tools, want %d", len(r.Tools), len(tests))
	}
	for _, tl := range r.Tools {
		t.Run(tl.OperationID, func(t *testing.T) {
			want, ok := tests[tl.OperationID]
			if !ok {
				t.Fatal("no expectation")
			}
			props, err := upstream.PropertyNames(tl.Definition.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			given := make(map[string]any)
			for _, name := range props {
				given[name] = call[name]
			}
			args, err := tl.Operation.Check(given)
			if err != nil {
				t.Fatal(err)
			}
			req, _, err := tl.Operation.Request(context.Background(), base, args, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var echoed struct {
				Args    map[string][]string `json:"args"`
				Headers map[string][]string `json:"headers"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&echoed); err != nil {
				t.Fatal(err)
			}
			if got := req.URL.EscapedPath(); got != want.path {
				t.Errorf("path %s, want %s", got, want.path)
			}
			if want.query == nil {
				want.query = map[string][]string{}
			}
			if fmt.Sprint(echoed.Args) != fmt.Sprint(want.query) {
				t.Errorf("the server read the query %s as %q, want %q", req.URL.RawQuery, echoed.Args, want.query)
			}
			for name, value := range want.headers {
				if got := echoed.Headers[name]; len(got) != 1 || got[0] != value {
					t.Errorf("the server read header %s as %q, want %q", name, got, value)
				}
			}
		})
	}
}

// TestToolsNamesTakenAfterHashing: a name given way is replaced by a
// hashed one, which may itself be an operationId the document uses;
// every operation still gets a name of its own, and the document loads.
func TestToolsNamesTakenAfterHashing(t *testing.T) {
	t.Parallel()
	hashed := "x_y_" + shortHash("GET /c")
	ops := `"/a":{"get":{"operationId":"x.y","responses":{"200":{"description":"ok"}}}},
		"/b":{"get":{"operationId":"` + hashed + `","responses":{"200":{"description":"ok"}}}},
		"/c":{"get":{"operationId":"x/y","responses":{"200":{"description":"ok"}}}},
		"/d":{"get":{"operationId":"renamed","responses":{"200":{"description":"ok"}}}},
		"/e":{"get":{"operationId":"x y","responses":{"200":{"description":"ok"}}}}`
	d, err := Load([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{` + ops + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	// The hash /e would take first is the name /d is renamed to.
	r, err := d.Tools(Curation{Rename: map[string]string{"renamed": "x_y_" + shortHash("GET /e")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]string)
	for _, tl := range r.Tools {
		if other, ok := seen[tl.Name]; ok {
			t.Errorf("%s and %s are both named %s", other, tl.OperationID, tl.Name)
		}
		seen[tl.Name] = tl.OperationID
		if !toolNameRule.MatchString(tl.Name) {
			t.Errorf("tool name %q is not valid", tl.Name)
		}
	}
	if len(r.Tools) != 5 {
		t.Errorf("%d tools, want 5: %v", len(r.Tools), seen)
	}
	if seen["x_y"] != "x.y" || seen[hashed] != hashed {
		t.Errorf("names %v: the first comer keeps its name", seen)
	}
}
