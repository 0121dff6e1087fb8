package upstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func response(status int, contentType string, body string) *Response {
	h := http.Header{}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	return &Response{Status: status, Header: h, Body: []byte(body)}
}

func TestResult(t *testing.T) {
	t.Parallel()
	call := Target{Label: "GET /items", URI: "caddy-mcp://t/items"}
	const output = `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`
	_, err := CompileSchema([]byte(output))
	if err != nil {
		t.Fatal(err)
	}
	png := "\x89PNG\r\n\x1a\n\x00\x00"
	tests := []struct {
		name       string
		resp       *Response
		output     bool
		wantError  bool
		wantType   string // content type of the single content item
		wantText   string // substring of the text
		structured bool
	}{
		{name: "json", resp: response(200, "application/json", `{"id":1}`), wantType: "text", wantText: `{"id":1}`},
		{name: "problem json", resp: response(200, "application/problem+json", `{"a":1}`), wantType: "text", wantText: `{"a":1}`},
		{name: "json with output schema", resp: response(200, "application/json", `{"id":1}`), output: true, wantType: "text", structured: true},
		{name: "json breaking the output schema", resp: response(200, "application/json", `{"id":"x"}`), output: true, wantError: true, wantText: "/id"},
		{name: "invalid json", resp: response(200, "application/json", `{"id":`), wantError: true, wantText: "invalid JSON"},
		{name: "text", resp: response(200, "text/plain; charset=utf-8", "hello"), wantType: "text", wantText: "hello"},
		{name: "image", resp: response(200, "image/png", png), wantType: "image"},
		{name: "audio", resp: response(200, "audio/wav", "RIFF\x00\x01"), wantType: "audio"},
		{name: "binary", resp: response(200, "application/octet-stream", "\xff\xfe\x00"), wantType: "resource"},
		{name: "no content", resp: response(204, "", ""), wantType: "text", wantText: "204 No Content"},
		{name: "no content where JSON is expected", resp: response(204, "", ""), output: true, wantError: true, wantText: "output_schema"},
		{name: "not found", resp: response(404, "application/json", `{"error":"no such item"}`), wantError: true, wantText: "404 Not Found: {\"error\":\"no such item\"}"},
		{name: "server error, long body", resp: response(500, "text/plain", strings.Repeat("x", 5000)), wantError: true, wantText: "(5000 bytes in all)"},
		{name: "text where JSON is expected", resp: response(200, "text/html", "<html>"), output: true, wantError: true, wantText: "not JSON"},
	}
	for _, tt := range tests {
		op := &Operation{}
		if tt.output {
			op = outputOperation(output)
		}
		res, _ := tt.resp.result(context.Background(), call, op)
		if res.IsError != tt.wantError {
			t.Errorf("%s: isError %v, want %v (%+v)", tt.name, res.IsError, tt.wantError, res.Content)
			continue
		}
		if len(res.Content) != 1 {
			t.Errorf("%s: %d content items", tt.name, len(res.Content))
			continue
		}
		b, _ := json.Marshal(res.Content[0])
		var item struct {
			Type string `json:"type"`
			Text string `json:"text"`
			Data string `json:"data"`
		}
		_ = json.Unmarshal(b, &item)
		if tt.wantType != "" && item.Type != tt.wantType {
			t.Errorf("%s: content type %q, want %q", tt.name, item.Type, tt.wantType)
		}
		if !strings.Contains(item.Text, tt.wantText) {
			t.Errorf("%s: text %q does not contain %q", tt.name, item.Text, tt.wantText)
		}
		if tt.structured != (res.StructuredContent != nil) {
			t.Errorf("%s: structuredContent %v", tt.name, res.StructuredContent)
		}
		if item.Type == "image" {
			if got, _ := base64.StdEncoding.DecodeString(item.Data); string(got) != png {
				t.Errorf("%s: image data does not round-trip", tt.name)
			}
		}
	}
}

func TestResultResourceURI(t *testing.T) {
	t.Parallel()
	res, _ := response(200, "application/pdf", "\xff\xd8 binary").result(context.Background(), Target{Label: "GET /f", URI: "caddy-mcp://t/f"}, &Operation{})
	er, ok := res.Content[0].(mcp.EmbeddedResource)
	if !ok {
		t.Fatalf("content is %T", res.Content[0])
	}
	blob, ok := er.Resource.(mcp.BlobResourceContents)
	if !ok || blob.URI != "caddy-mcp://t/f" || blob.MIMEType != "application/pdf" {
		t.Fatalf("unexpected resource %+v", er.Resource)
	}
}

func TestViolationsListEach(t *testing.T) {
	t.Parallel()
	s, err := CompileSchema([]byte(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"enum":["x","y"]}},"required":["c"]}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(map[string]any{"a": "no", "b": "z"})
	got := Violations(err)
	joined := strings.Join(got, "\n")
	for _, want := range []string{"/a:", "/b:", "/: missing properties"} {
		if !strings.Contains(joined, want) {
			t.Errorf("violations %q lack %q", joined, want)
		}
	}
}

func TestCompileSchemaRefusesExternalRefs(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"$ref":"file:///etc/passwd"}`,
		`{"$ref":"http://127.0.0.1:1/schema.json"}`,
		`{"type":"strin"}`,
		`{"type":`,
	} {
		if _, err := CompileSchema([]byte(doc)); err == nil {
			t.Errorf("%s: compiled", doc)
		}
	}
}
