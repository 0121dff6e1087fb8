package caddymcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-mcp/caddy-mcp/internal/adapttest"
)

// unmarshalMCP runs the mcp parser on a Caddyfile snippet that starts with
// the directive name, as httpcaddyfile hands it over.
func unmarshalMCP(input string) (*Handler, error) {
	h := new(Handler)
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
	return h, err
}

// toolSnippet wraps the lines of one tool block in an mcp directive.
func toolSnippet(lines string) string {
	return "mcp {\n\ttool t {\n" + lines + "\n\t}\n}"
}

// unmarshalTool parses the lines of one tool block and returns the tool.
func unmarshalTool(t *testing.T, lines string) *Tool {
	t.Helper()
	h, err := unmarshalMCP(toolSnippet(lines))
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if len(h.Tools) != 1 {
		t.Fatalf("got %d tools, want 1", len(h.Tools))
	}
	return h.Tools[0]
}

func hintValue(b bool) *bool { return &b }

func rawList(values ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(values))
	for i, v := range values {
		out[i] = json.RawMessage(v)
	}
	return out
}

func TestUnmarshalCaddyfileHandler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  *Handler
	}{
		{
			name:  "bare directive",
			input: `mcp`,
			want:  &Handler{},
		},
		{
			name:  "empty block",
			input: "mcp {\n}",
			want:  &Handler{},
		},
		{
			name: "every handler subdirective",
			input: `mcp {
				name          shop
				version       1.2.3
				instructions  "Call list_orders before get_order."
				upstream      https://api.example.com/v2
				header        Authorization "Bearer {env.API_KEY}"
				header        x-trace a
				header        X-Trace b
				timeout       90s
				max_response_size 8MiB
				max_request_size  512KB
				allow_origins https://app.example.com http://localhost:3000
				allow_hosts   mcp.internal gateway.lan
			}`,
			want: &Handler{
				Name:         "shop",
				Version:      "1.2.3",
				Instructions: "Call list_orders before get_order.",
				Upstream:     "https://api.example.com/v2",
				Headers: http.Header{
					"Authorization": {"Bearer {env.API_KEY}"},
					"X-Trace":       {"a", "b"},
				},
				Timeout:         caddy.Duration(90 * time.Second),
				MaxResponseSize: 8 << 20,
				Endpoint: Endpoint{
					MaxRequestSize: 512000,
					AllowOrigins:   []string{"https://app.example.com", "http://localhost:3000"},
					AllowHosts:     []string{"mcp.internal", "gateway.lan"},
				},
			},
		},
		{
			name: "caddy durations and fractional sizes",
			input: `mcp {
				timeout 1d
				max_response_size 1.5MiB
				max_request_size 1TiB
			}`,
			want: &Handler{
				Timeout:         caddy.Duration(24 * time.Hour),
				MaxResponseSize: 3 << 19,
				Endpoint:        Endpoint{MaxRequestSize: 1 << 40},
			},
		},
		{
			name: "tools keep their order",
			input: `mcp {
				tool b {
					description B
				}
				tool a {
					description A
				}
			}`,
			want: &Handler{Tools: []*Tool{
				{Name: "b", Description: "B"},
				{Name: "a", Description: "A"},
			}},
		},
		{
			name:  "tool without a block",
			input: "mcp {\n\ttool lonely\n}",
			want:  &Handler{Tools: []*Tool{{Name: "lonely"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := unmarshalMCP(tc.input)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", asJSON(got), asJSON(tc.want))
			}
		})
	}
}

func TestUnmarshalCaddyfileTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		lines string
		want  *Tool
	}{
		{
			name: "title description method path",
			lines: `title "Get an order"
				description "Fetch one order by its id."
				get /orders/{id}
				arg id required`,
			want: &Tool{
				Name: "t", Title: "Get an order", Description: "Fetch one order by its id.",
				Method: "GET", Path: "/orders/{id}",
				Args: []*Arg{{Name: "id", Required: true}},
			},
		},
		{
			name:  "upper-case method word",
			lines: `GET /items`,
			want:  &Tool{Name: "t", Method: "GET", Path: "/items"},
		},
		{
			name: "fixed query parameters, repeated keys kept in order",
			lines: `get /items
				query api_version 2024-01-01
				query tag a
				query tag b
				query key {env.SEARCH_KEY}`,
			want: &Tool{Name: "t", Method: "GET", Path: "/items", Query: map[string][]string{
				"api_version": {"2024-01-01"},
				"tag":         {"a", "b"},
				"key":         {"{env.SEARCH_KEY}"},
			}},
		},
		{
			name: "tool headers canonicalized and repeatable",
			lines: `post /items
				header accept application/json
				header X-Tag a
				header x-tag b`,
			want: &Tool{Name: "t", Method: "POST", Path: "/items", Headers: http.Header{
				"Accept": {"application/json"},
				"X-Tag":  {"a", "b"},
			}},
		},
		{
			name:  "body json",
			lines: "post /items\nbody json",
			want:  &Tool{Name: "t", Method: "POST", Path: "/items", Body: "json"},
		},
		{
			name:  "body form",
			lines: "post /items\nbody form",
			want:  &Tool{Name: "t", Method: "POST", Path: "/items", Body: "form"},
		},
		{
			name:  "body arg",
			lines: "put /items\narg items array required\nbody arg items",
			want: &Tool{
				Name: "t", Method: "PUT", Path: "/items", Body: "arg", BodyArg: "items",
				Args: []*Arg{{Name: "items", Type: "array", Required: true}},
			},
		},
		{
			name:  "timeout",
			lines: "get /slow\ntimeout 2m",
			want:  &Tool{Name: "t", Method: "GET", Path: "/slow", Timeout: caddy.Duration(2 * time.Minute)},
		},
		{
			name:  "annotations: bare hints are true, =false and other bool words parse",
			lines: "annotations read_only destructive=false\nannotations idempotent=true open_world=0",
			want: &Tool{Name: "t", Annotations: &Annotations{
				ReadOnly:    hintValue(true),
				Destructive: hintValue(false),
				Idempotent:  hintValue(true),
				OpenWorld:   hintValue(false),
			}},
		},
		{
			name:  "annotations: a later word for the same hint wins",
			lines: "annotations open_world\nannotations open_world=false",
			want:  &Tool{Name: "t", Annotations: &Annotations{OpenWorld: hintValue(false)}},
		},
		{
			name: "input_schema and output_schema as quoted JSON",
			lines: `input_schema "{\"type\":\"object\"}"
				output_schema "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}"`,
			want: &Tool{
				Name:         "t",
				InputSchema:  json.RawMessage(`{"type":"object"}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`),
			},
		},
		{
			name:  "input_schema in backticks",
			lines: "input_schema `{\"type\": \"object\", \"properties\": {\"q\": {\"type\": \"string\"}}}`",
			want: &Tool{
				Name:        "t",
				InputSchema: json.RawMessage(`{"type": "object", "properties": {"q": {"type": "string"}}}`),
			},
		},
		{
			name: "input_schema and output_schema as heredocs",
			lines: `		input_schema <<JSON
			{
				"type": "object",
				"properties": {"q": {"type": "string"}}
			}
			JSON
		output_schema <<OUT
			{"type": "object"}
			OUT
		get /search`,
			want: &Tool{
				Name:         "t",
				InputSchema:  json.RawMessage("{\n\t\"type\": \"object\",\n\t\"properties\": {\"q\": {\"type\": \"string\"}}\n}"),
				OutputSchema: json.RawMessage(`{"type": "object"}`),
				Method:       "GET",
				Path:         "/search",
			},
		},
		{
			name: "placement-only arg lines beside input_schema",
			lines: `post /search
				input_schema ` + "`" + `{"type":"object","properties":{"q":{"type":"string"},"token":{"type":"string"}}}` + "`" + `
				arg q {
					in query
				}
				arg token {
					in header
					header_name X-Token
				}`,
			want: &Tool{
				Name: "t", Method: "POST", Path: "/search",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"},"token":{"type":"string"}}}`),
				Args: []*Arg{
					{Name: "q", In: "query"},
					{Name: "token", In: "header", HeaderName: "X-Token"},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unmarshalTool(t, tc.lines)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", asJSON(got), asJSON(tc.want))
			}
		})
	}
}

func TestUnmarshalCaddyfileMethodWords(t *testing.T) {
	t.Parallel()
	for word, method := range map[string]string{
		"get": "GET", "post": "POST", "put": "PUT", "patch": "PATCH", "delete": "DELETE", "head": "HEAD",
	} {
		t.Run(word, func(t *testing.T) {
			got := unmarshalTool(t, word+" /things/{id}\narg id")
			if got.Method != method || got.Path != "/things/{id}" {
				t.Errorf("got method %q path %q, want %q /things/{id}", got.Method, got.Path, method)
			}
		})
	}
}

func TestUnmarshalCaddyfileArg(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string // the arg line and its block, inside a tool
		want *Arg
	}{
		{name: "name only", line: `arg q`, want: &Arg{Name: "q"}},
		{name: "type only", line: `arg n integer`, want: &Arg{Name: "n", Type: "integer"}},
		{name: "required only", line: `arg q required`, want: &Arg{Name: "q", Required: true}},
		{name: "quoted description only", line: `arg q "Search text"`, want: &Arg{Name: "q", Description: "Search text"}},
		{name: "one unquoted word is a description", line: `arg q Keyword`, want: &Arg{Name: "q", Description: "Keyword"}},
		{
			name: "type required description",
			line: `arg q string required "Search text"`,
			want: &Arg{Name: "q", Type: "string", Required: true, Description: "Search text"},
		},
		{
			name: "description required type",
			line: `arg n "Page size" required integer`,
			want: &Arg{Name: "n", Type: "integer", Required: true, Description: "Page size"},
		},
		{
			name: "required description type",
			line: `arg x required "Scale" number`,
			want: &Arg{Name: "x", Type: "number", Required: true, Description: "Scale"},
		},
		{
			name: "type description required",
			line: `arg on boolean "Enabled" required`,
			want: &Arg{Name: "on", Type: "boolean", Required: true, Description: "Enabled"},
		},
		{
			name: "quoted type word is a description",
			line: `arg kind "string"`,
			want: &Arg{Name: "kind", Description: "string"},
		},
		{
			name: "quoted required is a description",
			line: `arg flag boolean "required"`,
			want: &Arg{Name: "flag", Type: "boolean", Description: "required"},
		},
		{
			name: "backtick-quoted type word is a description",
			line: "arg n integer `integer`",
			want: &Arg{Name: "n", Type: "integer", Description: "integer"},
		},
		{
			name: "quoted type-like word is a description",
			line: `arg width integer "int"`,
			want: &Arg{Name: "width", Type: "integer", Description: "int"},
		},
		{name: "in path", line: "arg id {\n in path\n}", want: &Arg{Name: "id", In: "path"}},
		{name: "in query", line: "arg id {\n in query\n}", want: &Arg{Name: "id", In: "query"}},
		{name: "in body", line: "arg id {\n in body\n}", want: &Arg{Name: "id", In: "body"}},
		{
			name: "in header with header_name",
			line: "arg token string required {\n in header\n header_name X-Api-Token\n}",
			want: &Arg{Name: "token", Type: "string", Required: true, In: "header", HeaderName: "X-Api-Token"},
		},
		{
			name: "mirror_header",
			line: "arg region string required {\n mirror_header Region\n}",
			want: &Arg{Name: "region", Type: "string", Required: true, MirrorHeader: "Region"},
		},
		{
			name: "string default and enum",
			line: "arg status string \"Filter by status\" {\n default open\n enum open shipped cancelled\n}",
			want: &Arg{
				Name: "status", Type: "string", Description: "Filter by status",
				Default: json.RawMessage(`"open"`),
				Enum:    rawList(`"open"`, `"shipped"`, `"cancelled"`),
			},
		},
		{
			name: "untyped default is a string",
			line: "arg page {\n default 5\n}",
			want: &Arg{Name: "page", Default: json.RawMessage(`"5"`)},
		},
		{
			name: "quoted default with spaces",
			line: "arg q {\n default \"hello world\"\n}",
			want: &Arg{Name: "q", Default: json.RawMessage(`"hello world"`)},
		},
		{
			name: "enum lines accumulate",
			line: "arg s {\n enum a b\n enum c\n}",
			want: &Arg{Name: "s", Enum: rawList(`"a"`, `"b"`, `"c"`)},
		},
		{
			name: "integer default and enum",
			line: "arg n integer {\n default 10\n enum 10 -20 50\n}",
			want: &Arg{Name: "n", Type: "integer", Default: json.RawMessage(`10`), Enum: rawList(`10`, `-20`, `50`)},
		},
		{
			name: "number default and enum are normalized",
			line: "arg x number {\n default 1.50\n enum 0.5 2 1e3\n}",
			want: &Arg{Name: "x", Type: "number", Default: json.RawMessage(`1.5`), Enum: rawList(`0.5`, `2`, `1000`)},
		},
		{
			name: "boolean default",
			line: "arg on boolean {\n default TRUE\n}",
			want: &Arg{Name: "on", Type: "boolean", Default: json.RawMessage(`true`)},
		},
		{
			name: "boolean enum",
			line: "arg on boolean {\n enum false\n}",
			want: &Arg{Name: "on", Type: "boolean", Enum: rawList(`false`)},
		},
		{
			name: "object default as a JSON token",
			line: "arg filter object {\n default `{\"status\": \"open\"}`\n}",
			want: &Arg{Name: "filter", Type: "object", Default: json.RawMessage(`{"status": "open"}`)},
		},
		{
			name: "object enum as JSON tokens",
			line: "arg f object {\n enum `{\"a\":1}` `{}`\n}",
			want: &Arg{Name: "f", Type: "object", Enum: rawList(`{"a":1}`, `{}`)},
		},
		{
			name: "string[] default one token per item, enum of items",
			line: "arg tags string[] {\n default a b\n enum a b c\n}",
			want: &Arg{Name: "tags", Type: "string[]", Default: json.RawMessage(`["a","b"]`), Enum: rawList(`"a"`, `"b"`, `"c"`)},
		},
		{
			name: "integer[] default items and enum items are integers",
			line: "arg ids integer[] {\n default 1 2\n enum 1 2 3\n}",
			want: &Arg{Name: "ids", Type: "integer[]", Default: json.RawMessage(`[1,2]`), Enum: rawList(`1`, `2`, `3`)},
		},
		{
			name: "integer[] default as one JSON array token",
			line: "arg ids integer[] {\n default \"[1, 2]\"\n}",
			want: &Arg{Name: "ids", Type: "integer[]", Default: json.RawMessage(`[1, 2]`)},
		},
		{
			name: "number[] default",
			line: "arg xs number[] {\n default 1.5 2\n}",
			want: &Arg{Name: "xs", Type: "number[]", Default: json.RawMessage(`[1.5,2]`)},
		},
		{
			name: "boolean[] default",
			line: "arg bs boolean[] {\n default true false\n}",
			want: &Arg{Name: "bs", Type: "boolean[]", Default: json.RawMessage(`[true,false]`)},
		},
		{
			name: "object[] default items as JSON tokens",
			line: "arg os object[] {\n default `{\"a\":1}` `{\"b\":2}`\n}",
			want: &Arg{Name: "os", Type: "object[]", Default: json.RawMessage(`[{"a":1},{"b":2}]`)},
		},
		{
			name: "array default items are strings",
			line: "arg xs array {\n default a b\n}",
			want: &Arg{Name: "xs", Type: "array", Default: json.RawMessage(`["a","b"]`)},
		},
		{
			name: "empty block",
			line: "arg q {\n}",
			want: &Arg{Name: "q"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := unmarshalTool(t, tc.line)
			if len(got.Args) != 1 {
				t.Fatalf("got %d args, want 1", len(got.Args))
			}
			if !reflect.DeepEqual(got.Args[0], tc.want) {
				t.Errorf("got\n%s\nwant\n%s", asJSON(got.Args[0]), asJSON(tc.want))
			}
		})
	}
}

func TestUnmarshalCaddyfileArgTypeWords(t *testing.T) {
	t.Parallel()
	for _, word := range []string{
		"string", "integer", "number", "boolean", "object", "array",
		"string[]", "integer[]", "number[]", "boolean[]", "object[]",
	} {
		t.Run(word, func(t *testing.T) {
			got := unmarshalTool(t, "arg v "+word+" required")
			want := &Arg{Name: "v", Type: word, Required: true}
			if len(got.Args) != 1 || !reflect.DeepEqual(got.Args[0], want) {
				t.Errorf("got %s, want %s", asJSON(got.Args), asJSON(want))
			}
		})
	}
}

// The Caddyfile adapter expands shorthand placeholders ({path} becomes
// {http.request.uri.path}) before the parser sees a token. The test
// dispenser does not, so these inputs are written already expanded.
func TestUnmarshalCaddyfileShorthandArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		lines string
		want  string
	}{
		{
			name:  "path argument",
			lines: "get /files/{http.request.uri.path}\narg path",
			want:  "/files/{path}",
		},
		{
			name:  "query argument",
			lines: "get /search/{http.request.uri.query}\narg query",
			want:  "/search/{query}",
		},
		{
			name:  "argument declared before the path line",
			lines: "arg host\narg port integer\nget /hosts/{http.request.host}/{http.request.port}",
			want:  "/hosts/{host}/{port}",
		},
		{
			name:  "file argument, not the path argument's prefix",
			lines: "get /f/{http.request.uri.path.file}/{http.request.uri.path.dir}\narg file\narg dir",
			want:  "/f/{file}/{dir}",
		},
		{
			name:  "prefixed shorthand argument",
			lines: "get /by/{http.request.header.X-Id}\narg header.X-Id",
			want:  "/by/{header.X-Id}",
		},
		{
			name:  "no argument of that name keeps the placeholder",
			lines: "get /echo{http.request.uri.path}\narg q",
			want:  "/echo{http.request.uri.path}",
		},
		{
			name:  "only the named one is mapped",
			lines: "get /{http.request.uri.path}/{http.request.host}\narg path",
			want:  "/{path}/{http.request.host}",
		},
		{
			name:  "other placeholders untouched",
			lines: "get /v/{env.API_VERSION}/{http.request.uri.path}\narg path",
			want:  "/v/{env.API_VERSION}/{path}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := unmarshalTool(t, tc.lines).Path; got != tc.want {
				t.Errorf("path %q, want %q", got, tc.want)
			}
		})
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		wantErr []string // each must appear in the error
	}{
		// The mcp line itself. (httpcaddyfile strips a matcher first.)
		{name: "argument on the mcp line", input: "mcp /mcp extra {\n}", wantErr: []string{"wrong argument count", "'/mcp'"}},

		// Handler subdirectives: argument counts.
		{name: "name without value", input: "mcp {\n name\n}", wantErr: []string{"Testfile:2", "wrong argument count", "'name'"}},
		{name: "name with two values", input: "mcp {\n name a b\n}", wantErr: []string{"wrong argument count", "'b'"}},
		{name: "version without value", input: "mcp {\n version\n}", wantErr: []string{"wrong argument count", "'version'"}},
		{name: "version with two values", input: "mcp {\n version 1 2\n}", wantErr: []string{"wrong argument count"}},
		{name: "instructions without value", input: "mcp {\n instructions\n}", wantErr: []string{"wrong argument count", "'instructions'"}},
		{name: "unquoted multi-word instructions", input: "mcp {\n instructions use it well\n}", wantErr: []string{"wrong argument count"}},
		{name: "upstream without value", input: "mcp {\n upstream\n}", wantErr: []string{"wrong argument count", "'upstream'"}},
		{name: "two upstreams on one line", input: "mcp {\n upstream http://a http://b\n}", wantErr: []string{"wrong argument count"}},
		{name: "header with one value", input: "mcp {\n header X-Key\n}", wantErr: []string{"wrong argument count"}},
		{name: "header with three values", input: "mcp {\n header X-Key a b\n}", wantErr: []string{"wrong argument count"}},
		{name: "timeout without value", input: "mcp {\n timeout\n}", wantErr: []string{"wrong argument count", "'timeout'"}},
		{name: "timeout with two values", input: "mcp {\n timeout 1s 2s\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_response_size without value", input: "mcp {\n max_response_size\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_request_size without value", input: "mcp {\n max_request_size\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_request_size with two values", input: "mcp {\n max_request_size 1MiB 2MiB\n}", wantErr: []string{"wrong argument count"}},
		{name: "allow_origins without value", input: "mcp {\n allow_origins\n}", wantErr: []string{"wrong argument count", "'allow_origins'"}},
		{name: "allow_hosts without value", input: "mcp {\n allow_hosts\n}", wantErr: []string{"wrong argument count", "'allow_hosts'"}},

		// Handler subdirectives: bad values.
		{name: "bad duration", input: "mcp {\n timeout soon\n}", wantErr: []string{`timeout "soon"`}},
		{name: "zero duration", input: "mcp {\n timeout 0s\n}", wantErr: []string{"timeout must be positive", `"0s"`}},
		{name: "negative duration", input: "mcp {\n timeout -5s\n}", wantErr: []string{"timeout must be positive", `"-5s"`}},
		{name: "bad response size", input: "mcp {\n max_response_size lots\n}", wantErr: []string{`max_response_size "lots"`, "want a size"}},
		{name: "zero response size", input: "mcp {\n max_response_size 0\n}", wantErr: []string{`max_response_size "0"`}},
		{name: "huge request size", input: "mcp {\n max_request_size 2TiB\n}", wantErr: []string{`max_request_size "2TiB"`, "want a size"}},
		{name: "bad request size", input: "mcp {\n max_request_size -1\n}", wantErr: []string{`max_request_size "-1"`}},

		// Handler subdirectives: duplicates and unknown words.
		{name: "name twice", input: "mcp {\n name a\n name b\n}", wantErr: []string{"Testfile:3", "name is set twice"}},
		{name: "version twice", input: "mcp {\n version 1\n version 2\n}", wantErr: []string{"version is set twice"}},
		{name: "instructions twice", input: "mcp {\n instructions a\n instructions b\n}", wantErr: []string{"instructions is set twice"}},
		{name: "upstream twice", input: "mcp {\n upstream http://a\n upstream http://b\n}", wantErr: []string{"upstream is set twice"}},
		{name: "timeout twice", input: "mcp {\n timeout 1s\n timeout 2s\n}", wantErr: []string{"timeout is set twice"}},
		{name: "max_response_size twice", input: "mcp {\n max_response_size 1MiB\n max_response_size 2MiB\n}", wantErr: []string{"max_response_size is set twice"}},
		{name: "max_request_size twice", input: "mcp {\n max_request_size 1MiB\n max_request_size 2MiB\n}", wantErr: []string{"max_request_size is set twice"}},
		{name: "allow_origins twice", input: "mcp {\n allow_origins https://a\n allow_origins https://b\n}", wantErr: []string{"allow_origins is set twice"}},
		// Shaping, at the handler level and in a tool.
		{name: "max_result_size twice", input: "mcp {\n max_result_size 2KiB\n max_result_size 4KiB\n}", wantErr: []string{"Testfile:3", "max_result_size is set twice"}},
		{name: "max_result_size without value", input: "mcp {\n max_result_size\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_result_size two values", input: "mcp {\n max_result_size 2KiB 4KiB\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_result_size not a size", input: "mcp {\n max_result_size lots\n}", wantErr: []string{`max_result_size "lots"`, "want a size"}},
		{name: "max_result_size zero", input: "mcp {\n max_result_size 0\n}", wantErr: []string{`max_result_size "0"`}},
		{name: "max_result_size too small", input: "mcp {\n max_result_size 1000\n}", wantErr: []string{"Testfile:2", "max_result_size 1000: want at least 1024 bytes"}},
		{name: "structured_text twice", input: "mcp {\n structured_text full\n structured_text summary\n}", wantErr: []string{"structured_text is set twice"}},
		{name: "structured_text without value", input: "mcp {\n structured_text\n}", wantErr: []string{"wrong argument count"}},
		{name: "structured_text unknown", input: "mcp {\n structured_text brief\n}", wantErr: []string{`structured_text "brief": want full or summary`}},
		{name: "tool jq twice", input: toolSnippet("jq .a\njq .b"), wantErr: []string{"tool t: jq is set twice"}},
		{name: "tool jq without filter", input: toolSnippet("jq"), wantErr: []string{"wrong argument count"}},
		{name: "tool jq two tokens", input: toolSnippet("jq .a | .b"), wantErr: []string{"wrong argument count"}},
		{name: "tool jq syntax", input: toolSnippet("jq `.a | ]`"), wantErr: []string{"Testfile:3", `tool t: jq: unexpected token "]" at line 1, column 6`}},
		{name: "tool jq empty", input: toolSnippet(`jq ""`), wantErr: []string{"tool t: jq: the filter is empty"}},
		{name: "tool max_result_size twice", input: toolSnippet("max_result_size 2KiB\nmax_result_size 4KiB"), wantErr: []string{"tool t: max_result_size is set twice"}},
		{name: "tool max_result_size too small", input: toolSnippet("max_result_size 10"), wantErr: []string{"tool t: max_result_size 10: want at least 1024 bytes"}},
		{name: "allow_hosts twice", input: "mcp {\n allow_hosts a\n allow_hosts b\n}", wantErr: []string{"allow_hosts is set twice"}},
		{name: "unknown handler subdirective", input: "mcp {\n upstreams http://a\n}", wantErr: []string{`unknown subdirective "upstreams"`}},
		{name: "tool-level word at handler level", input: "mcp {\n description x\n}", wantErr: []string{`unknown subdirective "description"`}},

		// The tool line.
		{name: "tool without name", input: "mcp {\n tool {\n }\n}", wantErr: []string{"wrong argument count", "'tool'"}},
		{name: "tool with two names", input: "mcp {\n tool a b {\n }\n}", wantErr: []string{"wrong argument count", "'b'"}},

		// Tool subdirectives.
		{name: "title without value", input: toolSnippet("title"), wantErr: []string{"wrong argument count", "'title'"}},
		{name: "title twice", input: toolSnippet("title a\ntitle b"), wantErr: []string{"tool t: title is set twice"}},
		{name: "description without value", input: toolSnippet("description"), wantErr: []string{"wrong argument count", "'description'"}},
		{name: "two description tokens", input: toolSnippet("description List orders"), wantErr: []string{"wrong argument count", "'orders'"}},
		{name: "description twice", input: toolSnippet("description a\ndescription b"), wantErr: []string{"tool t: description is set twice"}},
		{name: "method without path", input: toolSnippet("get"), wantErr: []string{"wrong argument count", "'get'"}},
		{name: "method with two paths", input: toolSnippet("get /a /b"), wantErr: []string{"wrong argument count", "'/b'"}},
		{name: "second method line", input: toolSnippet("get /a\npost /b"), wantErr: []string{"tool t: a second method line", `"post"`}},
		{name: "same method twice", input: toolSnippet("get /a\nget /a"), wantErr: []string{"tool t: a second method line"}},
		{name: "input_schema without value", input: toolSnippet("input_schema"), wantErr: []string{"wrong argument count", "'input_schema'"}},
		{name: "input_schema not JSON", input: toolSnippet(`input_schema "{type: object}"`), wantErr: []string{"tool t: input_schema is not valid JSON"}},
		{name: "input_schema truncated heredoc JSON", input: toolSnippet("input_schema <<J\n{\"type\":\"object\"\nJ"), wantErr: []string{"tool t: input_schema is not valid JSON"}},
		{name: "input_schema twice", input: toolSnippet("input_schema `{}`\ninput_schema `{}`"), wantErr: []string{"tool t: input_schema is set twice"}},
		{name: "output_schema not JSON", input: toolSnippet("output_schema `{\"type\":}`"), wantErr: []string{"tool t: output_schema is not valid JSON"}},
		{name: "output_schema with two tokens", input: toolSnippet("output_schema `{}` `{}`"), wantErr: []string{"wrong argument count"}},
		{name: "output_schema twice", input: toolSnippet("output_schema `{}`\noutput_schema `{}`"), wantErr: []string{"tool t: output_schema is set twice"}},
		{name: "query with one value", input: toolSnippet("query k"), wantErr: []string{"wrong argument count"}},
		{name: "query with three values", input: toolSnippet("query k a b"), wantErr: []string{"wrong argument count"}},
		{name: "tool header with one value", input: toolSnippet("header X-A"), wantErr: []string{"wrong argument count"}},
		{name: "tool header with three values", input: toolSnippet("header X-A a b"), wantErr: []string{"wrong argument count"}},
		{name: "body without value", input: toolSnippet("body"), wantErr: []string{"tool t: body takes json, form, or arg <name>"}},
		{name: "body unknown mode", input: toolSnippet("body xml"), wantErr: []string{"tool t: body takes json, form, or arg <name>"}},
		{name: "body arg without name", input: toolSnippet("body arg"), wantErr: []string{"tool t: body takes json, form, or arg <name>"}},
		{name: "body arg with two names", input: toolSnippet("body arg a b"), wantErr: []string{"tool t: body takes json, form, or arg <name>"}},
		{name: "body json with extra word", input: toolSnippet("body json pretty"), wantErr: []string{"tool t: body takes json, form, or arg <name>"}},
		{name: "body twice", input: toolSnippet("body json\nbody form"), wantErr: []string{"tool t: body is set twice"}},
		{name: "tool timeout bad", input: toolSnippet("timeout forever"), wantErr: []string{`timeout "forever"`}},
		{name: "tool timeout zero", input: toolSnippet("timeout 0"), wantErr: []string{"timeout must be positive"}},
		{name: "tool timeout without value", input: toolSnippet("timeout"), wantErr: []string{"wrong argument count"}},
		{name: "tool timeout twice", input: toolSnippet("timeout 1s\ntimeout 2s"), wantErr: []string{"tool t: timeout is set twice"}},
		{name: "annotations without hints", input: toolSnippet("annotations"), wantErr: []string{"wrong argument count", "'annotations'"}},
		{name: "unknown annotation", input: toolSnippet("annotations readonly"), wantErr: []string{`tool t: unknown annotation "readonly"`}},
		{name: "unknown annotation with value", input: toolSnippet("annotations idempotent cached=true"), wantErr: []string{`unknown annotation "cached"`}},
		{name: "annotation bad bool", input: toolSnippet("annotations destructive=maybe"), wantErr: []string{`tool t: annotation destructive="maybe": want true or false`}},
		{name: "annotation empty bool", input: toolSnippet("annotations read_only="), wantErr: []string{`annotation read_only="": want true or false`}},
		{name: "unknown tool subdirective", input: toolSnippet("method get"), wantErr: []string{`tool t: unknown subdirective "method"`}},
		{name: "handler-level word in a tool", input: toolSnippet("upstream http://a"), wantErr: []string{`tool t: unknown subdirective "upstream"`}},
		{name: "tool inside a tool", input: toolSnippet("tool u {\n}"), wantErr: []string{`tool t: unknown subdirective "tool"`}},

		// The arg line.
		{name: "arg without name", input: toolSnippet("arg"), wantErr: []string{"wrong argument count", "'arg'"}},
		{name: "arg with two types", input: toolSnippet("arg q string integer"), wantErr: []string{`tool t: arg q: a second type "integer"`}},
		{name: "arg with the same type twice", input: toolSnippet("arg q string string"), wantErr: []string{`arg q: a second type "string"`}},
		{name: "arg with two description tokens", input: toolSnippet(`arg q "Search" "text"`), wantErr: []string{"tool t: arg q: more than one description token", `"text"`}},
		{name: "arg with an unquoted multi-word description", input: toolSnippet("arg q string Search text"), wantErr: []string{"arg q: more than one description token"}},
		{name: "arg type int", input: toolSnippet("arg n int"), wantErr: []string{`tool t: arg n: unknown type "int"`}},
		{name: "arg type float64", input: toolSnippet("arg n float64 required"), wantErr: []string{`arg n: unknown type "float64"`}},
		{name: "arg type bool", input: toolSnippet(`arg b bool "Enabled"`), wantErr: []string{`arg b: unknown type "bool"`}},
		{name: "arg type foo[]", input: toolSnippet("arg xs foo[]"), wantErr: []string{`arg xs: unknown type "foo[]"`}},
		{name: "arg type array[]", input: toolSnippet("arg xs array[]"), wantErr: []string{`arg xs: unknown type "array[]"`}},
		{name: "arg in bad place", input: toolSnippet("arg q {\n in cookie\n}"), wantErr: []string{`tool t: arg q: in "cookie": want path, query, header or body`}},
		{name: "arg in without value", input: toolSnippet("arg q {\n in\n}"), wantErr: []string{"wrong argument count", "'in'"}},
		{name: "arg in with two values", input: toolSnippet("arg q {\n in query body\n}"), wantErr: []string{"wrong argument count"}},
		{name: "arg header_name without value", input: toolSnippet("arg q {\n header_name\n}"), wantErr: []string{"wrong argument count", "'header_name'"}},
		{name: "arg mirror_header without value", input: toolSnippet("arg q {\n mirror_header\n}"), wantErr: []string{"wrong argument count", "'mirror_header'"}},
		{name: "arg mirror_header with two values", input: toolSnippet("arg q {\n mirror_header A B\n}"), wantErr: []string{"wrong argument count", "'B'"}},
		{name: "arg default without value", input: toolSnippet("arg q {\n default\n}"), wantErr: []string{"wrong argument count", "'default'"}},
		{name: "arg default twice", input: toolSnippet("arg q {\n default a\n default b\n}"), wantErr: []string{"tool t: arg q: default is set twice"}},
		{name: "arg enum without values", input: toolSnippet("arg q {\n enum\n}"), wantErr: []string{"wrong argument count", "'enum'"}},
		{name: "unknown arg subdirective", input: toolSnippet("arg q {\n required\n}"), wantErr: []string{`tool t: arg q: unknown subdirective "required"`}},
		{name: "arg description in the block", input: toolSnippet("arg q {\n description x\n}"), wantErr: []string{`arg q: unknown subdirective "description"`}},

		// Default and enum conversions.
		{name: "string default with two tokens", input: toolSnippet("arg q {\n default hello world\n}"), wantErr: []string{"tool t: arg q: default: one value expected for a string, got 2"}},
		{name: "integer default not an integer", input: toolSnippet("arg n integer {\n default ten\n}"), wantErr: []string{`tool t: arg n: default: "ten" is not an integer`}},
		{name: "integer default with a fraction", input: toolSnippet("arg n integer {\n default 1.5\n}"), wantErr: []string{`default: "1.5" is not an integer`}},
		{name: "number default not a number", input: toolSnippet("arg x number {\n default much\n}"), wantErr: []string{`arg x: default: "much" is not a number`}},
		{name: "number default out of range", input: toolSnippet("arg x number {\n default 1e999\n}"), wantErr: []string{`default: "1e999" is not a number`}},
		{name: "number default NaN", input: toolSnippet("arg x number {\n default NaN\n}"), wantErr: []string{"arg x: default:", "NaN"}},
		{name: "boolean default not a bool", input: toolSnippet("arg b boolean {\n default yes\n}"), wantErr: []string{`arg b: default: "yes" is not true or false`}},
		{name: "object default not JSON", input: toolSnippet("arg o object {\n default {a:1}\n}"), wantErr: []string{`arg o: default: "{a:1}" is not valid JSON`}},
		{name: "object default with two tokens", input: toolSnippet("arg o object {\n default `{}` `{}`\n}"), wantErr: []string{"arg o: default: one value expected for a object, got 2"}},
		{name: "integer[] default with a bad item", input: toolSnippet("arg ids integer[] {\n default 1 two\n}"), wantErr: []string{`arg ids: default: "two" is not an integer`}},
		{name: "boolean[] default with a bad item", input: toolSnippet("arg bs boolean[] {\n default true nope\n}"), wantErr: []string{`arg bs: default: "nope" is not true or false`}},
		{name: "array default as broken JSON", input: toolSnippet("arg xs string[] {\n default `[\"a\",`\n}"), wantErr: []string{"arg xs: default:", "is not valid JSON"}},
		{name: "object[] default item not JSON", input: toolSnippet("arg os object[] {\n default nope\n}"), wantErr: []string{`arg os: default: "nope" is not valid JSON`}},
		{name: "integer enum with a bad value", input: toolSnippet("arg n integer {\n enum 1 two\n}"), wantErr: []string{`tool t: arg n: enum: "two" is not an integer`}},
		{name: "number[] enum with a bad item", input: toolSnippet("arg xs number[] {\n enum 1 x\n}"), wantErr: []string{`arg xs: enum: "x" is not a number`}},
		{name: "boolean enum with a bad value", input: toolSnippet("arg b boolean {\n enum on\n}"), wantErr: []string{`arg b: enum: "on" is not true or false`}},
		{name: "object enum not JSON", input: toolSnippet("arg o object {\n enum nope\n}"), wantErr: []string{`arg o: enum: "nope" is not valid JSON`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := unmarshalMCP(tc.input)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// Every value the parser stores must survive the JSON config: the
// Caddyfile adapter marshals the handler, and a value that is not valid
// JSON turns the whole handler into null with only a warning.
func TestUnmarshalCaddyfileDefaultsAreValidJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		line string
		want string // the default or first enum value, as JSON
	}{
		{name: "integer default with leading zeros", line: "arg n integer {\n default 007\n}", want: `7`},
		{name: "integer default with a plus sign", line: "arg n integer {\n default +5\n}", want: `5`},
		{name: "integer enum with a plus sign", line: "arg n integer {\n enum +1\n}", want: `1`},
		{name: "integer[] default with leading zeros", line: "arg ns integer[] {\n default 01 2\n}", want: `[1,2]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := unmarshalTool(t, tc.line)
			a := tool.Args[0]
			got := a.Default
			if got == nil && len(a.Enum) > 0 {
				got = a.Enum[0]
			}
			if !json.Valid(got) || string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if _, err := json.Marshal(tool); err != nil {
				t.Errorf("the tool does not marshal: %v", err)
			}
		})
	}
}

// STYLE rule 7 asks the parser to reject duplicates and wrong argument
// counts, inside an arg block too.
func TestUnmarshalCaddyfileArgBlockDuplicates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		block   string
		wantErr string
	}{
		{
			name: "in twice", block: "in query\n in header", wantErr: "in is set twice",
		},
		{
			name: "header_name twice", block: "in header\n header_name X-A\n header_name X-B", wantErr: "header_name is set twice",
		},
		{
			name: "mirror_header twice", block: "mirror_header A\n mirror_header B", wantErr: "mirror_header is set twice",
		},
		{
			name: "empty enum line after another", block: "enum a b\n enum", wantErr: "wrong argument count",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := unmarshalMCP(toolSnippet("arg q {\n " + tc.block + "\n}"))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// updateGolden rewrites the expected half of every golden file with what
// the adapter produces now. Review the diff before committing it.
var updateGolden = os.Getenv("UPDATE_GOLDEN") == "1"

// TestCaddyfileAdapt adapts each testdata/adapt/*.caddyfiletest: a
// Caddyfile, a line of ten dashes, then either the expected JSON config
// (as caddytest.CompareAdapt prints it) or text the adapter's error must
// contain. This is the format of Caddy's own caddyfile_adapt tests.
func TestCaddyfileAdapt(t *testing.T) {
	// authorization_introspect's client secret, resolved when it loads.
	t.Setenv("INTROSPECT_SECRET", "golden-secret")
	for _, g := range adapttest.Goldens(t, filepath.Join("testdata", "adapt", "*.caddyfiletest")) {
		t.Run(filepath.Base(g.File), func(t *testing.T) {
			if updateGolden {
				writeGolden(t, g.File, g.Input)
				return
			}

			if g.WantsJSON() {
				if !caddytest.CompareAdapt(t, g.File, g.Input, "caddyfile", g.Expected) {
					t.Errorf("adapted JSON differs from %s (diff printed above)", g.File)
				}
				checkAdaptedHandlersLoad(t, g.Input)
				return
			}

			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(g.Input), nil)
			if err == nil {
				t.Fatalf("adapted without error, want one containing %q", g.Expected)
			}
			if !strings.Contains(err.Error(), g.Expected) {
				t.Errorf("error\n%s\ndoes not contain\n%s", err, g.Expected)
			}
		})
	}
}

// checkAdaptedHandlersLoad requires a clean adaptation (no warnings: the
// golden Caddyfiles are formatted, and a handler that fails to marshal is
// only a warning) and every mcp handler in it to load as Caddy would load
// it, so no golden file records a config Caddy would refuse.
func checkAdaptedHandlersLoad(t *testing.T, input string) {
	t.Helper()
	handlers := adaptMCPHandlers(t, input)
	if len(handlers) == 0 {
		t.Error("the adapted config has no mcp handler")
	}
	for i, raw := range handlers {
		if _, err := loadMCP(t, string(raw)); err != nil {
			t.Errorf("mcp handler %d does not load: %v", i, err)
		}
	}
}

// writeGolden replaces the expected half of file with the adapter's
// current output for input, in the form the test reads back.
func writeGolden(t *testing.T, file, input string) {
	t.Helper()
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(input), nil)
	var expected string
	if err != nil {
		expected = err.Error()
	} else {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, out, "", "\t"); err != nil {
			t.Fatal(err)
		}
		expected = pretty.String()
	}
	if err := os.WriteFile(file, []byte(input+"----------\n"+expected+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", file)
}

// mcp is ordered before respond (and so before reverse_proxy), whatever the
// order of the lines in the site block: a catch-all respond or
// reverse_proxy written first must not hide the MCP endpoint.
func TestDirectiveOrder(t *testing.T) {
	t.Parallel()
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(`:8080 {
	reverse_proxy 127.0.0.1:9000
	respond "fallback"
	mcp /mcp {
		tool ping {
			description "Ping."
			get /ping
		}
	}
}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	order := adapttest.HandlerNames(doc)
	want := []string{"mcp", "static_response", "reverse_proxy"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("handler order %q, want %q", order, want)
	}
}

// FuzzMCPCaddyfile parses fuzzed Caddyfile text with the mcp directive's
// parser; what parses is turned into JSON and loaded (Provision,
// Validate). Invariants: no panic and no hang; errors are fine.
func FuzzMCPCaddyfile(f *testing.F) {
	for _, s := range append(fuzzCaddyfileSeeds("mcp"), fuzzAdaptSeeds(f, "mcp")...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		h := new(Handler)
		if fuzzParse(t, text, h.UnmarshalCaddyfile) != nil {
			return
		}
		fuzzLoadParsed(t, "http.handlers.mcp", h)
	})
}
