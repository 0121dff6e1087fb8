package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestNewOperationRefuses(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name string
		def  Definition
		want string
	}{
		{"an arg without a name", Definition{Method: "GET", Path: "/", Args: []Arg{{}}}, "an arg has no name"},
		{"an arg twice", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a"}, {Name: "a"}}}, `arg "a" is declared twice`},
		{"an unknown type word", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a", Type: "date"}}}, `arg "a": unknown type "date"`},
		{"a default of the wrong type", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a", Type: "integer", Default: raw(`"x"`)}}},
			`arg "a": default "x" does not fit the type and enum`},
		{"a default outside the enum", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a", Enum: []json.RawMessage{raw(`"x"`)}, Default: raw(`"y"`)}}},
			`arg "a": default "y" does not fit the type and enum`},
		{"an enum value that is not JSON", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a", Enum: []json.RawMessage{raw(`x`)}}}},
			`arg "a": enum value is not valid JSON: x`},
		{"a typed arg line beside input_schema", Definition{Method: "GET", Path: "/", InputSchema: raw(`{"type":"object","properties":{"a":{}}}`), Args: []Arg{{Name: "a", Type: "string"}}},
			`arg "a": typed arg lines and input_schema do not mix`},
		{"an arg line placing what input_schema lacks", Definition{Method: "GET", Path: "/", InputSchema: raw(`{"type":"object"}`), Args: []Arg{{Name: "a", In: InHeader}}},
			`arg "a" places a property that input_schema does not have`},
		{"an input_schema that is not an object schema", Definition{Method: "GET", Path: "/", InputSchema: raw(`{"type":"array"}`)},
			`input_schema: the root must be an object schema ("type": "object")`},
		{"an input_schema that is not JSON", Definition{Method: "GET", Path: "/", InputSchema: raw(`{`)}, "input_schema: not valid JSON"},
		{"an output_schema that is not an object schema", Definition{Method: "GET", Path: "/", OutputSchema: raw(`{"type":"string"}`)},
			`output_schema: the root must be an object schema ("type": "object")`},
		{"an object arg in the query", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "f", Type: "object"}}},
			`argument "f": objects go only in the body, not in the query`},
		{"a nullable arg line beside input_schema", Definition{Method: "GET", Path: "/", InputSchema: raw(`{"type":"object","properties":{"a":{}}}`), Args: []Arg{{Name: "a", Nullable: true}}},
			`arg "a": typed arg lines and input_schema do not mix`},
		{"a null default of an arg that is not nullable", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a", Default: raw(`null`)}}},
			`arg "a": default null does not fit the type and enum`},
		{"a wire name and a header_name", Definition{Method: "GET", Path: "/", Args: []Arg{{Name: "a", In: InHeader, WireName: "X-A", HeaderName: "X-B"}}},
			`argument "a": name and header_name both name its header field`},
		{"a nullable path arg", Definition{Method: "GET", Path: "/i/{itemId}", Args: []Arg{{Name: "item_id", WireName: "itemId", Nullable: true}}},
			`argument "item_id" is nullable, but a path cannot hold null`},
	}
	for _, tt := range tests {
		_, err := NewOperation(tt.def)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one starting %q", tt.name, err, tt.want)
		}
		// A fault of one arg line names it, so that a configuration can
		// point at that line.
		var part *PartError
		if len(tt.def.Args) == 1 && tt.def.Args[0].Name != "" && (!errors.As(err, &part) || part.Arg != tt.def.Args[0].Name) {
			t.Errorf("%s: %v names no arg %q", tt.name, err, tt.def.Args[0].Name)
		}
	}
}

// TestOperationSchema: arg lines make the schema in their order; an
// input_schema is the schema, byte for byte.
func TestOperationSchema(t *testing.T) {
	t.Parallel()
	op, err := NewOperation(Definition{Method: "GET", Path: "/items", Args: []Arg{
		{Name: "status", Description: "Filter", Enum: []json.RawMessage{json.RawMessage(`"open"`)}, Default: json.RawMessage(`"open"`)},
		{Name: "limit", Type: "integer", Required: true},
		{Name: "tags", Type: "string[]"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"status":{"type":"string","description":"Filter","enum":["open"],"default":"open"},` +
		`"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["limit"],"additionalProperties":false}`
	if got := string(op.InputSchema()); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	doc := `{"type": "object", "properties": {"q": {"type": "string"}}}`
	if op, err = NewOperation(Definition{Method: "GET", Path: "/", InputSchema: json.RawMessage(doc)}); err != nil {
		t.Fatal(err)
	}
	if got := string(op.InputSchema()); got != doc {
		t.Errorf("input_schema %s, want %s", got, doc)
	}
}

// TestOperationWireNamesAndNull: the schema names an argument as the
// model does and says where null is a value; the request names it as the
// API does and sends null only in a JSON body.
func TestOperationWireNamesAndNull(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	op, err := NewOperation(Definition{Name: "update", Method: "PATCH", Path: "/items/{itemId}", Args: []Arg{
		{Name: "item_id", WireName: "itemId", Type: "integer", Required: true},
		{Name: "due_date", WireName: "dueDate", Nullable: true, Required: true},
		{Name: "state", Nullable: true, Enum: []json.RawMessage{raw(`"open"`), raw(`"closed"`)}},
		{Name: "labels", Type: "string[]", Nullable: true, Enum: []json.RawMessage{raw(`"a"`)}},
		{Name: "note", Nullable: true, Default: raw(`null`)},
		{Name: "version", WireName: "X-Api-Version", In: InHeader, Nullable: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"item_id":{"type":"integer"},"due_date":{"type":["string","null"]},` +
		`"state":{"type":["string","null"],"enum":["open","closed",null]},"labels":{"type":["array","null"],"items":{"type":"string","enum":["a"]}},` +
		`"note":{"type":["string","null"],"default":null},"version":{"type":["string","null"]}},"required":["item_id","due_date"],"additionalProperties":false}`
	if got := string(op.InputSchema()); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []map[string]any{
		{"item_id": json.Number("1")},                                              // a required nullable arg is still required
		{"item_id": json.Number("1"), "due_date": nil, "labels": []any{nil}},       // the items are not nullable
		{"item_id": nil, "due_date": nil},                                          // nor is an arg without nullable
		{"item_id": json.Number("1"), "due_date": nil, "itemId": json.Number("1")}, // the wire name is not the model's
	} {
		if _, err := op.Check(bad); err == nil {
			t.Errorf("Check accepted %v", bad)
		}
	}
	args, err := op.Check(map[string]any{"item_id": json.Number("7"), "due_date": nil, "state": nil, "labels": nil, "version": nil})
	if err != nil {
		t.Fatal(err)
	}
	req, _, err := op.Request(context.Background(), mustURL(t, "https://api.example.com"), args, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if got, want := req.URL.String(), "https://api.example.com/items/7"; got != want {
		t.Errorf("URL %s, want %s", got, want)
	}
	if got, want := string(body), `{"dueDate":null,"labels":null,"note":null,"state":null}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	if _, set := req.Header["X-Api-Version"]; set {
		t.Errorf("a null header argument was sent: %q", req.Header["X-Api-Version"])
	}

	// Beside an input_schema, an arg line may name the wire name.
	op, err = NewOperation(Definition{Name: "list", Method: "GET", Path: "/items", InputSchema: raw(`{"type":"object","properties":{"top":{"type":"integer"}}}`),
		Args: []Arg{{Name: "top", WireName: "$top"}}})
	if err != nil {
		t.Fatal(err)
	}
	req, _, err = op.Request(context.Background(), mustURL(t, "https://api.example.com"), map[string]any{"top": json.Number("5")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.RawQuery, "%24top=5"; got != want {
		t.Errorf("query %s, want %s", got, want)
	}
}

func TestOperationCheck(t *testing.T) {
	t.Parallel()
	op, err := NewOperation(Definition{Name: "list", Method: "GET", Path: "/items", Args: []Arg{
		{Name: "limit", Type: "integer", Default: json.RawMessage(`10`)},
		{Name: "q", Required: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	given := map[string]any{"q": "x"}
	args, err := op.Check(given)
	if err != nil || args["limit"] != 10.0 || args["q"] != "x" {
		t.Errorf("Check = %v, %v; want the default limit 10 added", args, err)
	}
	if _, set := given["limit"]; set {
		t.Error("Check changed the map it was given")
	}
	if _, err := op.Check("x"); err == nil || err.Error() != "arguments must be a JSON object" {
		t.Errorf("a string as arguments: %v", err)
	}
	_, err = op.Check(nil)
	if want := "invalid arguments for tool list:\n- /: missing properties: 'q'"; err == nil || err.Error() != want {
		t.Errorf("no arguments: %v, want %q", err, want)
	}
	if _, err := op.Check(map[string]any{"q": "x", "limit": "ten"}); err == nil || !strings.Contains(err.Error(), "/limit: ") {
		t.Errorf("a string limit: %v", err)
	}
}

// TestCompileOnUse: a schema that does not compile refuses the
// definition, or with CompileOnUse, fails the first call that needs it
// with the same words, every time.
func TestCompileOnUse(t *testing.T) {
	t.Parallel()
	input := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`)
	output := json.RawMessage(`{"type":"object","properties":{"b":{"type":"string","pattern":"("}}}`)
	good := json.RawMessage(`{"type":"object"}`)
	for _, tt := range []struct {
		name          string
		input, output json.RawMessage
		want          string
	}{
		{"input", input, nil, "input_schema: "},
		{"output", good, output, "output_schema: "},
	} {
		def := Definition{Name: "t", Method: "GET", Path: "/", InputSchema: tt.input, OutputSchema: tt.output}
		if _, err := NewOperation(def); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: NewOperation: %v, want an error starting %q", tt.name, err, tt.want)
		}
		def.CompileOnUse = true
		op, err := NewOperation(def)
		if err != nil {
			t.Fatalf("%s: NewOperation with CompileOnUse: %v", tt.name, err)
		}
		for range 2 {
			var got string
			if _, err := op.Check(map[string]any{"a": "x"}); err != nil {
				got = err.Error()
			} else {
				res, _ := (&Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"b":"x"}`)}).result(context.Background(), Target{}, op)
				got = textOf(t, res)
			}
			if want := "tool t: " + tt.want; !strings.HasPrefix(got, want) {
				t.Errorf("%s: a call says %q, want it to start %q", tt.name, got, want)
			}
		}
	}
}

// TestOperationCall follows one call through Request and Result: the
// Target names the request without its base path, and a redirect below
// the base path is shown as a tool path.
func TestOperationCall(t *testing.T) {
	t.Parallel()
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		if r.URL.EscapedPath() == "/t/tok3n/items/a%20b" {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte{0xff, 0x00})
			return
		}
		http.Redirect(w, r, "/t/tok3n/login?key=k", http.StatusFound)
	}))
	defer srv.Close()
	op, err := NewOperation(Definition{Name: "fetch", Method: "GET", Path: "/items/{id}", Args: []Arg{{Name: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	base := mustURL(t, srv.URL+"/t/tok3n/")
	c := NewClient()
	defer c.Close()

	args, err := op.Check(map[string]any{"id": "a b"})
	if err != nil {
		t.Fatal(err)
	}
	req, target, err := op.Request(context.Background(), base, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Target{Label: "GET /items/a%20b", Path: "/items/a%20b", URI: "caddy-mcp://fetch/items/a%20b", Sent: "/t/tok3n/items/a%20b", Base: "/t/tok3n"}
	if target != want {
		t.Errorf("target %+v, want %+v", target, want)
	}
	answer, err := c.Do(req, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("User-Agent") != "caddy-mcp" {
		t.Errorf("User-Agent %q", got.Header.Get("User-Agent"))
	}
	res := op.Result(context.Background(), target, answer, Shaping{})
	if len(res.Content) != 1 {
		t.Fatalf("result %+v", res)
	}
	blob, ok := res.Content[0].(mcp.EmbeddedResource)
	if !ok {
		t.Fatalf("content %T, want an embedded resource", res.Content[0])
	}
	if r, _ := blob.Resource.(mcp.BlobResourceContents); r.URI != want.URI {
		t.Errorf("resource %+v, want URI %s", blob.Resource, want.URI)
	}

	req, target, err = op.Request(context.Background(), base, map[string]any{"id": "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if answer, err = c.Do(req, 1<<20); err != nil {
		t.Fatal(err)
	}
	res = op.Result(context.Background(), target, answer, Shaping{})
	text := res.Content[0].(mcp.TextContent).Text
	if !res.IsError || text != "GET /items/x: upstream answered 302 Found (redirect to /login, not followed)" {
		t.Errorf("redirect result %q", text)
	}

	// A value the request cannot carry: the error names the tool and the
	// argument, and the Target still names the request.
	op, err = NewOperation(Definition{Name: "h", Method: "GET", Path: "/items", Args: []Arg{{Name: "v", In: InHeader}}})
	if err != nil {
		t.Fatal(err)
	}
	_, target, err = op.Request(context.Background(), base, map[string]any{"v": "a\nb"}, nil)
	if err == nil || err.Error() != `invalid arguments for tool h: argument "v": the value has characters not allowed in a header` {
		t.Errorf("a header value with a newline: %v", err)
	}
	if target.Label != "GET /items" {
		t.Errorf("label %q", target.Label)
	}
}

// TestMirrorHeader: a mirrored arg carries x-mcp-header in the schema,
// and a mirror that no header could carry, or that two args share, is
// refused naming its arg.
func TestMirrorHeader(t *testing.T) {
	t.Parallel()
	op, err := NewOperation(Definition{Method: "GET", Path: "/items", Args: []Arg{
		{Name: "region", Description: "Where", MirrorHeader: "Region", Enum: []json.RawMessage{json.RawMessage(`"eu"`)}},
		{Name: "limit", Type: "integer", MirrorHeader: "Limit"},
		{Name: "all", Type: "boolean", MirrorHeader: "All"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"region":{"type":"string","description":"Where","x-mcp-header":"Region","enum":["eu"]},` +
		`"limit":{"type":"integer","x-mcp-header":"Limit"},"all":{"type":"boolean","x-mcp-header":"All"}},"additionalProperties":false}`
	if got := string(op.InputSchema()); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	tool := mcp.NewToolWithRawSchema("t", "d", op.InputSchema())
	if err := mcp.ValidateParamHeaderAnnotations(&tool); err != nil {
		t.Errorf("mcp-go refuses the schema: %v", err)
	}

	for _, tt := range []struct {
		name string
		args []Arg
		want string
	}{
		{"a name with a space", []Arg{{Name: "a", MirrorHeader: "A B"}}, `arg "a": mirror_header "A B": not a header field name`},
		{"a name with a colon", []Arg{{Name: "a", MirrorHeader: "A:"}}, `arg "a": mirror_header "A:": not a header field name`},
		{"a name with the prefix", []Arg{{Name: "a", MirrorHeader: "mcp-param-Region"}}, `arg "a": mirror_header mcp-param-Region: name it without the Mcp-Param- prefix, which clients add`},
		{"a number", []Arg{{Name: "a", Type: "number", MirrorHeader: "A"}}, `arg "a": mirror_header A: only a string, integer or boolean arg is mirrored into a header, not number`},
		{"an array", []Arg{{Name: "a", Type: "string[]", MirrorHeader: "A"}}, `arg "a": mirror_header A: only a string, integer or boolean arg is mirrored into a header, not string[]`},
		{"an object", []Arg{{Name: "a", Type: "object", MirrorHeader: "A"}}, `arg "a": mirror_header A: only a string, integer or boolean arg is mirrored into a header, not object`},
		{"a nullable arg", []Arg{{Name: "a", Nullable: true, MirrorHeader: "A"}}, `arg "a": mirror_header A: a nullable arg is not mirrored into a header`},
		{"one name twice, in two cases", []Arg{{Name: "b", MirrorHeader: "Region"}, {Name: "a", MirrorHeader: "REGION"}}, `arg "a": mirror_header REGION: arg "b" mirrors into Mcp-Param-Region already`},
		{"beside input_schema", []Arg{{Name: "a", MirrorHeader: "A"}}, `arg "a": mirror_header goes with typed arg lines; beside input_schema, put "x-mcp-header": "A" in the property's schema`},
	} {
		def := Definition{Method: "GET", Path: "/", Args: tt.args}
		if tt.name == "beside input_schema" {
			def.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)
		}
		_, err := NewOperation(def)
		var part *PartError
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.As(err, &part) || part.Arg != "a" {
			t.Errorf("%s: error %v, want %q naming arg a", tt.name, err, tt.want)
		}
	}
}
