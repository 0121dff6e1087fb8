package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// wireNameTools are tools whose arguments go to go-httpbin under the names
// real APIs give them, and a PATCH whose nullable arguments clear fields.
const wireNameTools = `		tool list_records {
			description "List the records of a collection."
			get /anything/collections/{collectionId}/records
			arg collection required {
				name collectionId
			}
			arg per_page integer "Page size" {
				name perPage
			}
			arg status "Filter by status" {
				name filter[status]
			}
			arg top integer {
				name $top
			}
			arg cursor {
				nullable
			}
			arg api_version {
				in header
				name X-Api-Version
			}
		}
		tool update_record {
			description "Change a record; null clears a field."
			patch /anything/records/{id}
			arg id required
			arg due_date "Due date, or null to clear it" {
				name dueDate
				nullable
			}
			arg first_name {
				name firstName
			}
			arg trace {
				in query
				name traceId
				nullable
			}
		}
`

// Arguments reach a real upstream under their wire names, exactly; null
// is null in a JSON body and left out of a query; the tool list shows the
// names the model uses. Each call goes once by the fast path (a plain
// tools/call) and once through mcp-go (one that asks for progress).
func TestLiveWireNamesAndNull(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
%s	}
}`, bin, wireNameTools))

	c := connect(t, "/mcp", eras[0], nil)
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	properties := map[string]map[string]any{}
	for _, tool := range res.Tools {
		properties[tool.Name] = tool.InputSchema.Properties
	}
	if got := slices.Sorted(maps.Keys(properties["list_records"])); !slices.Equal(got, []string{"api_version", "collection", "cursor", "per_page", "status", "top"}) {
		t.Errorf("list_records properties %v, want the names the model uses", got)
	}
	for tool, prop := range map[string]string{"list_records": "cursor", "update_record": "due_date"} {
		if got := fmt.Sprint(properties[tool][prop].(map[string]any)["type"]); got != "[string null]" {
			t.Errorf("%s: %s has the type %s, want [string null]", tool, prop, got)
		}
	}

	for _, path := range []struct{ name, meta string }{{"fast path", ""}, {"mcp-go", `,"_meta":{"progressToken":"p"}`}} {
		t.Run(path.name, func(t *testing.T) {
			e := callEcho(t, "list_records", `{"collection":"c 1","per_page":10,"status":"open","top":5,"cursor":null,"api_version":"2024-01-01"}`, path.meta)
			if !strings.HasSuffix(strings.SplitN(e.URL, "?", 2)[0], "/anything/collections/c%201/records") {
				t.Errorf("url %s: the path slot collectionId is not filled", e.URL)
			}
			want := map[string][]string{"perPage": {"10"}, "filter[status]": {"open"}, "$top": {"5"}}
			if len(e.Args) != len(want) {
				t.Errorf("query %v, want exactly %v (a null cursor is left out)", e.Args, want)
			}
			for k, v := range want {
				if !slices.Equal(e.Args[k], v) {
					t.Errorf("query %s = %v, want %v (all: %v)", k, e.Args[k], v, e.Args)
				}
			}
			if got := e.Headers["X-Api-Version"]; !slices.Equal(got, []string{"2024-01-01"}) {
				t.Errorf("header X-Api-Version = %q", got)
			}

			e = callEcho(t, "update_record", `{"id":"r1","due_date":null,"first_name":"Ann","trace":null}`, path.meta)
			if e.Method != http.MethodPatch || !strings.HasSuffix(e.URL, "/anything/records/r1") {
				t.Errorf("%s %s, want PATCH .../anything/records/r1 with no query", e.Method, e.URL)
			}
			if len(e.Args) != 0 {
				t.Errorf("query %v: a null traceId was sent", e.Args)
			}
			if e.Data != `{"dueDate":null,"firstName":"Ann"}` {
				t.Errorf("body %s, want dueDate null and firstName", e.Data)
			}

			// The wire name is the API's, not the model's: a call with it
			// is refused, as any unknown argument is.
			e2 := callResult(t, "update_record", `{"id":"r1","dueDate":null}`, path.meta)
			wantToolError(t, e2, "dueDate")
		})
	}
}

// callEcho calls a tool of the test Caddy's /mcp with argsJSON and meta
// (text that goes into params after the arguments) and returns go-httpbin's
// echo of the upstream request.
func callEcho(t *testing.T, tool, argsJSON, meta string) echoed {
	t.Helper()
	return parseEcho(t, callResult(t, tool, argsJSON, meta))
}

// callResult calls a tool as callEcho does and returns the result.
func callResult(t *testing.T, tool, argsJSON, meta string) *mcp.CallToolResult {
	t.Helper()
	resp, body := rawPost(t, "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+argsJSON+meta+`}}`), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	text := string(body)
	if i := strings.LastIndex(text, "data: "); i >= 0 { // an SSE answer: its last event
		text = strings.TrimSpace(text[i+len("data: "):])
	}
	var answer struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(text), &answer); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return &answer.Result
}
