package caddymcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

const petsDocument = "testdata/openapi/pets.yaml"

// writeDocument writes text to a file of a temp dir and returns its path.
func writeDocument(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// toolNames are the names of the handler's tools, sorted.
func toolNames(h *Handler) []string {
	var names []string
	for name := range h.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func TestOpenAPIImportsTools(t *testing.T) {
	h, err := loadMCPCaddyfile(t, `mcp {
		openapi `+petsDocument+` {
			exclude deletePet
			rename listPets pets_list
			describe showPetById "Show one pet by its id."
		}
		tool ping {
			description "Check the API is up."
			get /ping
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	// uploadPhoto has an octet-stream body: skipped.
	if got, want := toolNames(h), []string{"createPet", "pets_list", "ping", "showPetById"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	if h.Upstream != "https://pets.example.com/v1" {
		t.Errorf("upstream %q, want the document's server", h.Upstream)
	}
	show := h.tools["showPetById"].mcpTool
	if show.Description != "Show one pet by its id." {
		t.Errorf("description %q, want the describe text", show.Description)
	}
	if ro := show.Annotations.ReadOnlyHint; ro == nil || !*ro {
		t.Errorf("a GET's read_only hint is %v, want true", ro)
	}
	if len(show.RawOutputSchema) == 0 {
		t.Error("showPetById has no output schema, want the Pet schema")
	}
	if got := h.tools["pets_list"].op.Name(); got != "pets_list" {
		t.Errorf("the renamed tool's operation is named %q", got)
	}
	if h.tools["pets_list"].timeout != h.Timeout {
		t.Errorf("imported timeout %v, want the handler's %v", h.tools["pets_list"].timeout, h.Timeout)
	}
}

func TestOpenAPIUpstreamWins(t *testing.T) {
	h, err := loadMCPCaddyfile(t, `mcp {
		upstream http://127.0.0.1:9/api
		openapi `+petsDocument+`
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if h.Upstream != "http://127.0.0.1:9/api" || h.base.String() != "http://127.0.0.1:9/api" {
		t.Errorf("upstream %q (base %v), want the configured one", h.Upstream, h.base)
	}
}

// TestOpenAPIConfigErrors holds each way a document fails to a config
// error naming the source, in bounded time.
func TestOpenAPIConfigErrors(t *testing.T) {
	answer500 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer answer500.Close()

	relative := writeDocument(t, "relative.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /api/v3}]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok}}\n")
	noServer := writeDocument(t, "noserver.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok}}\n")
	other := writeDocument(t, "other.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://other.example.com'}]\npaths:\n  /b:\n    get:\n      operationId: showPetById\n      responses: {'200': {description: ok}}\n")
	external := writeDocument(t, "external.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x.example.com'}]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: 'other.yaml#/components/schemas/X'}}}}}\n")
	cycle := writeDocument(t, "cycle.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x.example.com'}]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/A'}}}}}\ncomponents:\n  schemas:\n    A: {$ref: '#/components/schemas/B'}\n    B: {$ref: '#/components/schemas/A'}\n")
	notOpenAPI := writeDocument(t, "package.json", `{"name": "not-a-document", "version": "1.0.0"}`)
	badYAML := writeDocument(t, "bad.yaml", "openapi: 3.0.3\npaths: [unclosed\n")
	missing := filepath.Join(t.TempDir(), "missing.yaml")

	tests := []struct {
		name, config string
		want         []string
	}{
		{"file missing", `openapi ` + missing, []string{"openapi " + missing, "no such file"}},
		{"not openapi", `openapi ` + notOpenAPI, []string{"openapi " + notOpenAPI, "openapi"}},
		{"bad yaml", `openapi ` + badYAML, []string{"openapi " + badYAML}},
		{"external ref", `openapi ` + external, []string{"openapi " + external, "other.yaml"}},
		{"ref cycle", `openapi ` + cycle, []string{"openapi " + cycle, "cycle"}},
		{"url 500", `openapi ` + answer500.URL + `/openapi.json?token=secret-in-query`, []string{"openapi " + answer500.URL + "/openapi.json", "500"}},
		{"url refused", `openapi http://192.0.2.1/openapi.json`, []string{"openapi http://192.0.2.1/openapi.json", "loopback"}},
		{"relative server", `openapi ` + relative, []string{"openapi " + relative, `"/api/v3"`, "set upstream"}},
		{"no server", `openapi ` + noServer, []string{"openapi " + noServer, "no server", "set upstream"}},
		{"two servers", "openapi " + petsDocument + " {\n include listPets \n}\nopenapi " + other, []string{"https://pets.example.com/v1", "https://other.example.com", "set upstream"}},
		{"rename of no operation", "openapi " + petsDocument + " {\n rename getPet pet \n}", []string{"openapi " + petsDocument, "getPet"}},
		{"imported beside inline", "openapi " + petsDocument + "\ntool listPets {\n description d\n get /x\n}",
			[]string{`tool "listPets" is defined twice: defined inline, and imported from ` + petsDocument + ` (operation listPets)`}},
		{"two documents", "upstream https://pets.example.com\nopenapi " + petsDocument + "\nopenapi " + other,
			[]string{`tool "showPetById" is defined twice: imported from ` + petsDocument + ` (operation showPetById), and imported from ` + other + ` (operation showPetById)`}},
		{"renamed onto inline", "openapi " + petsDocument + " {\n rename createPet ping \n}\ntool ping {\n description d\n get /ping\n}",
			[]string{`tool "ping" is defined twice: defined inline, and imported from ` + petsDocument + ` (operation createPet)`}},
		{"no tools selected", "openapi " + petsDocument + " {\n tags nothing \n}", []string{"at least one tool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadMCPCaddyfile(t, "mcp {\n"+tt.config+"\n}")
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			t.Log(err)
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "secret-in-query") {
				t.Errorf("error %q shows the URL's query", err)
			}
		})
	}
}

// TestOpenAPIFetchStalls is a document server that answers the headers
// and then never the body: the load fails within openapi.Fetch's bound.
func TestOpenAPIFetchStalls(t *testing.T) {
	release := make(chan struct{})
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"openapi": "3.0.3", `))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer stall.Close()
	defer close(release)
	start := time.Now()
	_, err := loadMCPCaddyfile(t, "mcp {\nopenapi "+stall.URL+"/openapi.json\n}")
	if err == nil {
		t.Fatal("loaded, want an error")
	}
	if !strings.Contains(err.Error(), "openapi "+stall.URL+"/openapi.json") || !strings.Contains(err.Error(), "within") {
		t.Errorf("error %q does not name the source and the bound", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the load took %s", took)
	}
}

// TestOpenAPIFetchesURL loads a document from a URL, once.
func TestOpenAPIFetchesURL(t *testing.T) {
	data, err := os.ReadFile(petsDocument)
	if err != nil {
		t.Fatal(err)
	}
	var fetches int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches++
		w.Write(data)
	}))
	defer srv.Close()
	h, err := loadMCPCaddyfile(t, "mcp {\nopenapi "+srv.URL+"/pets.yaml {\n include showPetById\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(h); !slices.Equal(got, []string{"showPetById"}) || fetches != 1 {
		t.Errorf("tools %v after %d fetches, want showPetById after one", got, fetches)
	}
}

// TestOpenAPILogsImport reads the load log: one line per document, and a
// bounded number of debug lines for skipped operations.
func TestOpenAPILogsImport(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x.example.com'}]\npaths:\n  /ok:\n    get:\n      operationId: ok\n      responses: {'200': {description: ok}}\n")
	const skipped = maxSkippedLogged + 5
	for i := range skipped {
		fmt.Fprintf(&doc, "  /cookie%d:\n    get:\n      operationId: cookie%d\n      parameters: [{name: c, in: cookie, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n", i, i)
	}
	path := writeDocument(t, "many.yaml", doc.String())

	h, err := unmarshalMCP("mcp {\nopenapi " + path + "\n}")
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	h.logger = zap.New(core)
	docs, err := h.loadOpenAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	h.tools = map[string]*provisioned{}
	if err := h.importTools(docs, func(p *provisioned) { h.tools[p.mcpTool.Name] = p }); err != nil {
		t.Fatal(err)
	}

	imported := logs.FilterMessage("openapi document imported").All()
	if len(imported) != 1 {
		t.Fatalf("%d import lines, want 1", len(imported))
	}
	fields := imported[0].ContextMap()
	if fields["source"] != path || fields["tools"] != int64(1) || fields["skipped"] != int64(skipped) || fields["operations"] != int64(skipped+1) {
		t.Errorf("import line %v", fields)
	}
	lines := logs.FilterMessage("openapi operation skipped").All()
	if len(lines) != maxSkippedLogged {
		t.Errorf("%d skipped lines, want %d", len(lines), maxSkippedLogged)
	}
	if len(lines) > 0 && !strings.Contains(lines[0].ContextMap()["reason"].(string), "cookie") {
		t.Errorf("skipped line %v does not give the reason", lines[0].ContextMap())
	}
	more := logs.FilterMessage("more openapi operations skipped").All()
	if len(more) != 1 || more[0].ContextMap()["count"] != int64(5) {
		t.Errorf("the count line is %v, want one saying 5", more)
	}
}
