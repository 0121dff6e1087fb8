package caddymcp

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// checkMCP parses an mcp directive and runs the checks the Caddyfile
// adapter runs after the parse.
func checkMCP(input string) error {
	d := caddyfile.NewTestDispenser(input)
	h := new(Handler)
	if err := h.UnmarshalCaddyfile(d); err != nil {
		return err
	}
	return h.checkCaddyfile(d)
}

func TestCheckCaddyfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		// want is the error, with its place; "" for none.
		want string
	}{
		{
			name:  "bare directive",
			input: "mcp",
			want:  "mcp needs at least one tool, at Testfile:1",
		},
		{
			name:  "a block without tools",
			input: "mcp {\n name shop\n}",
			want:  "mcp needs at least one tool, at Testfile:1",
		},
		{
			name:  "a tool without a block",
			input: "mcp {\n tool lonely\n}",
			want:  `tool "lonely": a description is required, at Testfile:2`,
		},
		{
			name:  "bad tool name",
			input: "mcp {\n tool \"list orders\" {\n  description d\n  get /orders\n }\n}",
			want:  `tool "list orders": tool name "list orders": use 1 to 128 letters, digits, '_', '-' or '.', at Testfile:2`,
		},
		{
			name:  "query in the path",
			input: "mcp {\n tool t {\n  description d\n  get /search?type=repo\n }\n}",
			want:  `tool "t": path "/search?type=repo": put query parameters in query lines or arguments, not in the path, at Testfile:4`,
		},
		{
			name:  "unclosed placeholder",
			input: "mcp {\n tool t {\n  description d\n  get /items/{id\n  arg id\n }\n}",
			want:  `tool "t": unclosed '{' in "/items/{id", at Testfile:4`,
		},
		{
			name:  "path argument placed elsewhere",
			input: "mcp {\n tool t {\n  description d\n  get /items/{id}\n  arg id {\n   in query\n  }\n }\n}",
			want:  `tool "t": argument "id" is in the path "/items/{id}" but placed in query, at Testfile:5`,
		},
		{
			name:  "array argument in the path",
			input: "mcp {\n tool t {\n  description d\n  get /items/{ids}\n  arg q\n  arg ids integer[] required\n }\n}",
			want:  `tool "t": argument "ids": array arguments cannot go in the path, at Testfile:6`,
		},
		{
			name:  "object argument in a header",
			input: "mcp {\n tool t {\n  description d\n  post /items\n  arg filter object {\n   in header\n  }\n }\n}",
			want:  `tool "t": argument "filter": object arguments cannot go in the header, at Testfile:5`,
		},
		{
			name:  "object argument of a DELETE",
			input: "mcp {\n tool t {\n  description d\n  delete /items\n  arg filter object\n }\n}",
			want:  `tool "t": argument "filter": objects go only in the body, not in the query (a DELETE sends its arguments in the query; say "in body"), at Testfile:5`,
		},
		{
			name: "property of input_schema placed in the path that lacks it",
			input: "mcp {\n tool t {\n  description d\n  get /items\n" +
				"  input_schema `{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}}}`\n  arg id {\n   in path\n  }\n }\n}",
			want: `tool "t": argument "id" is placed in the path, but the path "/items" has no {id}, at Testfile:6`,
		},
		{
			name:  "an error of the second tool",
			input: "mcp {\n tool a {\n  description d\n  get /a\n }\n\n tool b {\n  description d\n  get /b/{id}\n }\n}",
			want:  `tool "b": {id} in "/b/{id}" names no argument, at Testfile:9`,
		},
		{
			name:  "tool error found when compiled",
			input: "mcp {\n tool t {\n  description d\n  get /items\n  arg status {\n   default pending\n   enum open shipped\n  }\n }\n}",
			want:  `tool "t": arg "status": default "pending" does not fit the type and enum: /: value must be one of "open", "shipped", at Testfile:5`,
		},
		{
			name:  "argument named like a query parameter of the upstream URL",
			input: "mcp {\n upstream https://api.example.com/v2?tenant=acme\n tool t {\n  description d\n  get /items\n  arg tenant\n }\n}",
			want:  `tool "t": argument "tenant": the query parameter tenant is fixed by the upstream URL, and an argument cannot add to it, at Testfile:6`,
		},
		{
			name:  "upstream with credentials",
			input: "mcp {\n upstream https://user:pw@api.example.com\n tool t {\n  description d\n  get /items\n }\n}",
			want:  "upstream: put credentials in a header, not in the URL, at Testfile:2",
		},
		{
			name: "a tool that fits",
			input: "mcp {\n upstream https://api.example.com/v2\n tool t {\n  description d\n  post /items/{id}/{path}\n" +
				"  arg id required {\n   in path\n  }\n  arg path required\n  arg filter object\n  arg tags string[] {\n   in query\n  }\n }\n}",
		},
		{
			name: "input_schema with an object in the query of a GET",
			input: "mcp {\n tool t {\n  description d\n  get /items/{id}\n" +
				"  input_schema `{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"filter\":{\"type\":\"object\"}}}`\n }\n}",
		},
		{
			name:  "placeholders in the upstream URL and the path",
			input: "mcp {\n upstream {env.API_BASE}\n tool t {\n  description d\n  get /{env.API_VERSION}/items\n }\n}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkMCP(tc.input)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("no error, want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

// Typed object arguments cannot go in the query: a GET tool with an object
// or object[] arg is a config error.
func TestObjectArgsGoOnlyInTheBody(t *testing.T) {
	for _, typ := range []string{"object", "object[]"} {
		_, err := loadMCPCaddyfile(t, "mcp {\n tool t {\n  description d\n  get /x\n  arg f "+typ+"\n }\n}")
		if err == nil || !strings.Contains(err.Error(), "only in the body") {
			t.Errorf("%s: error %v", typ, err)
		}
	}
}

// A query in the path line is a config error: query parameters belong in
// query lines or arguments.
func TestQueryInThePathLineIsAConfigError(t *testing.T) {
	_, err := loadMCPCaddyfile(t, "mcp {\n tool t {\n  description d\n  get /search?type=repo\n }\n}")
	if err == nil || !strings.Contains(err.Error(), "query lines") {
		t.Errorf("error %v", err)
	}
}
