package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/openapidocs"
	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
	"github.com/caddy-mcp/caddy-mcp/openapi"
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
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/declared.json" {
			w.Header().Set("Content-Length", fmt.Sprint(openapi.MaxFetchSize+1))
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Write([]byte(`{"openapi": "3.0.3", "x": "`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range openapi.MaxFetchSize>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	down := "http://" + mcptest.ClosedAddr(t) + "/openapi.json"

	relative := writeDocument(t, "relative.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: /api/v3}]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok}}\n")
	braces := writeDocument(t, "braces.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x.example.com/{env.HOME}'}]\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {'200': {description: ok}}\n")
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
		{"url down", `openapi ` + down, []string{"openapi " + down, "refused"}},
		{"url too large, declared", `openapi ` + huge.URL + `/declared.json`, []string{"openapi " + huge.URL + "/declared.json", "more than the"}},
		{"url too large, streamed", `openapi ` + huge.URL + `/streamed.json`, []string{"openapi " + huge.URL + "/streamed.json", "more than the"}},
		{"url refused", `openapi http://192.0.2.1/openapi.json`, []string{"openapi http://192.0.2.1/openapi.json", "loopback"}},
		{"relative server", `openapi ` + relative, []string{"openapi " + relative, `"/api/v3"`, "set upstream"}},
		{"server with a placeholder", `openapi ` + braces, []string{"openapi " + braces, "{env.HOME}", "placeholder", "set upstream"}},
		{"no server", `openapi ` + noServer, []string{"openapi " + noServer, "no server", "set upstream"}},
		{"two servers", "openapi " + petsDocument + " {\n include listPets \n}\nopenapi " + other, []string{"https://pets.example.com/v1", "https://other.example.com", "set upstream"}},
		{"rename of no operation", "openapi " + petsDocument + " {\n rename getPet pet \n}", []string{"openapi " + petsDocument, "getPet"}},
		{"imported beside inline", "openapi " + petsDocument + "\ntool listPets {\n description d\n get /x\n}",
			[]string{`tool "listPets" is defined twice: defined inline, and imported from ` + petsDocument + ` (operation listPets)`}},
		{"two documents", "upstream https://pets.example.com\nopenapi " + petsDocument + "\nopenapi " + other,
			[]string{`tool "showPetById" is defined twice: imported from ` + petsDocument + ` (operation showPetById), and imported from ` + other + ` (operation showPetById)`}},
		{"renamed onto inline", "openapi " + petsDocument + " {\n rename createPet ping \n}\ntool ping {\n description d\n get /ping\n}",
			[]string{`tool "ping" is defined twice: defined inline, and imported from ` + petsDocument + ` (operation createPet)`}},
		{"no tools selected", "openapi " + petsDocument + " {\n include uploadPhoto \n}", []string{"at least one tool: openapi " + petsDocument + " gives none, as each operation it selects (1) is skipped"}},
		{"a tag no operation has", "openapi " + petsDocument + " {\n tags pet \n}", []string{`tags "pet": no operation has that tag; did you mean the tag pets?`}},
		{"an include that matches nothing", "openapi " + petsDocument + " {\n include listPet \n}", []string{`include "listPet" matches no operationId; did you mean the operationId listPets?`}},
		{"an operation of no operationId", "openapi " + petsDocument + " {\n operation showPet {\n title Show\n }\n}", []string{`operation showPet: the document has no operation with that operationId; did you mean the operationId showPetById?`}},
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
			// The line of the openapi line the error is about, which the
			// config carries from the Caddyfile (origin).
			at := map[string]string{"two servers": "Testfile:5", "two documents": "Testfile:4", "an operation of no operationId": "Testfile:3"}
			want, ok := at[tt.name]
			if !ok {
				want = "Testfile:2"
			}
			if want != "" && !strings.HasSuffix(err.Error(), ", at "+want) {
				t.Errorf("error %q does not end with its place, %s", err, want)
			}
		})
	}
}

// TestOpenAPIFetchStalls is a document server that answers the headers
// and then never the body: the load fails within openapi.Fetch's bound.
// The server ends the body (not a valid document) only after a minute, a
// hang guard: a load that waited for it fails with another error.
func TestOpenAPIFetchStalls(t *testing.T) {
	t.Parallel() // a handler of its own, waiting out the fetch bound
	release := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { close(release) }) }
	guard := time.AfterFunc(time.Minute, stop)
	defer guard.Stop()
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
	defer stop()
	start := time.Now()
	_, err := loadMCPCaddyfile(t, "mcp {\nopenapi "+stall.URL+"/openapi.json\n}")
	if err == nil {
		t.Fatal("loaded, want an error")
	}
	t.Logf("the load failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
	if !strings.Contains(err.Error(), "openapi "+stall.URL+"/openapi.json") || !strings.Contains(err.Error(), "within") {
		t.Errorf("error %q does not name the source and the bound", err)
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

// TestOpenAPILogsImport reads the load log: one line per document, with
// its reasons counted by kind, and a bounded number of info lines for
// skipped operations and parameters left out.
func TestOpenAPILogsImport(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x.example.com'}]\npaths:\n  /ok:\n    get:\n      operationId: ok\n      parameters: [{name: c, in: cookie, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n")
	const skipped = maxSkippedLogged + 5
	for i := range skipped {
		fmt.Fprintf(&doc, "  /cookie%d:\n    get:\n      operationId: cookie%d\n      parameters: [{name: c, in: cookie, required: true, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n", i, i)
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
	if fields["source"] != path || fields["tools"] != int64(1) || fields["skipped"] != int64(skipped) || fields["operations"] != int64(skipped+1) || fields["parameters_left_out"] != int64(1) {
		t.Errorf("import line %v", fields)
	}
	if reasons := fmt.Sprint(fields["reasons"]); reasons != `map[cookie parameter "…": cookies are not sent:106]` {
		t.Errorf("reasons %s, want the 105 skips and the parameter left out counted under one kind", reasons)
	}
	lines := logs.FilterMessage("openapi operation skipped").All()
	if len(lines) != maxSkippedLogged {
		t.Errorf("%d skipped lines, want %d", len(lines), maxSkippedLogged)
	}
	if len(lines) > 0 && (!strings.Contains(lines[0].ContextMap()["reason"].(string), "cookie") || lines[0].Level != zapcore.InfoLevel) {
		t.Errorf("skipped line %v at %s does not give the reason at info", lines[0].ContextMap(), lines[0].Level)
	}
	more := logs.FilterMessage("more openapi operations skipped or parameters left out").All()
	if len(more) != 1 || more[0].ContextMap()["count"] != int64(6) {
		t.Errorf("the count line is %v, want one saying 6", more)
	}
}

// githubHandler is a handler with every operation of GitHub's published
// document as a tool, provisioned.
func githubHandler(b *testing.B, upstream string) (*Handler, func()) {
	h := &Handler{
		Upstream: upstream,
		Headers:  http.Header{"Authorization": {"Bearer {env.GITHUB_TOKEN}"}},
		OpenAPI:  []*OpenAPISource{{Source: openapidocs.Path(b, openapidocs.GitHub)}},
	}
	return h, provisionBench(b, h)
}

// BenchmarkOpenAPIProvision measures loading GitHub's whole document into
// a handler: read, parse, map, compile every schema, register the tools,
// prepare the tool list; MiB-kept is the heap the handler holds after,
// MiB-rss-added what the process's resident memory grew by.
func BenchmarkOpenAPIProvision(b *testing.B) {
	path := openapidocs.Path(b, openapidocs.GitHub)
	b.ReportAllocs()
	var kept, rss float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		debug.FreeOSMemory()
		rssBefore := residentMiB(b)
		runtime.ReadMemStats(&before)
		h := &Handler{Upstream: "https://api.github.com", OpenAPI: []*OpenAPISource{{Source: path}}}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: b.Context()})
		if err := h.Provision(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		rss += residentMiB(b) - rssBefore
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept += float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
		b.ReportMetric(float64(len(h.tools)), "tools")
		_ = h.Cleanup()
		cancel()
		b.StartTimer()
	}
	b.ReportMetric(kept/float64(b.N), "MiB-kept")
	b.ReportMetric(rss/float64(b.N), "MiB-rss-added")
}

// residentMiB is the process's resident memory (VmRSS), on Linux.
func residentMiB(tb testing.TB) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status: ", err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kib / 1024
		}
	}
	tb.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// toolsListBodies are a plain tools/list of each era, with its headers.
var toolsListBodies = map[string]struct {
	body   string
	header map[string]string
}{
	"2025-11-25": {
		body:   `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		header: map[string]string{"Mcp-Protocol-Version": "2025-11-25"},
	},
	"2026-07-28": {
		body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`,
		header: map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
	},
}

// serveOnce is h's answer to one POST of body with header.
func serveOnce(tb testing.TB, h *Handler, body string, header map[string]string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, listRequest(body, header), nil); err != nil {
		tb.Fatal(err)
	}
	return w
}

// BenchmarkImportedToolsList measures a tools/list of GitHub's ~1,200
// imported tools, in both eras, answered from the prepared bytes and, to
// compare, by mcp-go; bytes/answer is the size of the answer. The answer
// goes to a writer that counts it, as a connection would take it.
func BenchmarkImportedToolsList(b *testing.B) {
	h, done := githubHandler(b, "https://api.github.com")
	defer done()
	fast := h.fast
	for _, era := range eras {
		for _, path := range []string{"prepared", "mcp-go"} {
			b.Run(era+"/"+path, func(b *testing.B) {
				h.fast = fast
				if path == "mcp-go" {
					h.fast = nil
				}
				defer func() { h.fast = fast }()
				in := toolsListBodies[era]
				if w := serveOnce(b, h, in.body, in.header); w.Code != 200 || !strings.Contains(w.Body.String(), `"name":"repos_get"`) {
					b.Fatalf("unexpected answer %d %.300s", w.Code, w.Body)
				}
				var w countingWriter
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					w.header = make(http.Header)
					req := listRequest(in.body, in.header)
					if err := h.ServeHTTP(&w, req, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(w.written)/float64(b.N), "bytes/answer")
			})
		}
	}
}

// listRequest is a POST of body with header, as the handler gets it.
func listRequest(body string, header map[string]string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
}

// countingWriter takes an answer and keeps only its size.
type countingWriter struct {
	header  http.Header
	written int64
}

func (c *countingWriter) Header() http.Header { return c.header }
func (c *countingWriter) WriteHeader(int)     {}
func (c *countingWriter) Write(p []byte) (int, error) {
	c.written += int64(len(p))
	return len(p), nil
}

// echoDocument is an OpenAPI document of go-httpbin's /anything, which
// echoes the method, path, query, headers and body, at server.
func echoDocument(server string) string {
	return `{
  "openapi": "3.0.3",
  "info": {"title": "echo", "version": "1"},
  "servers": [{"url": "` + server + `"}],
  "paths": {
    "/anything/items/{itemId}": {
      "get": {
        "operationId": "getItem", "summary": "Get an item.", "tags": ["items"],
        "parameters": [
          {"name": "itemId", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "q", "in": "query", "schema": {"type": "string"}},
          {"name": "filter[status]", "in": "query", "schema": {"type": "string", "enum": ["open", "closed"]}},
          {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
          {"name": "since", "in": "query", "schema": {"type": "string", "nullable": true}},
          {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}}
        ],
        "responses": {"200": {"description": "The echo.", "content": {"application/json": {"schema": {
          "type": "object", "properties": {"method": {"type": "string"}, "url": {"type": "string"}}}}}}}
      },
      "delete": {
        "operationId": "deleteItem", "summary": "Delete an item.", "tags": ["admin"],
        "parameters": [{"name": "itemId", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "Deleted."}}
      }
    },
    "/anything/items": {
      "post": {
        "operationId": "createItem", "summary": "Create an item.", "tags": ["items"],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object", "required": ["name"],
          "properties": {"name": {"type": "string"}, "price": {"type": "number"}, "note": {"type": "string", "nullable": true}}}}}},
        "responses": {"200": {"description": "The echo."}}
      }
    },
    "/anything/forms": {
      "post": {
        "operationId": "submitForm", "summary": "Submit a form.", "tags": ["items"],
        "requestBody": {"content": {"application/x-www-form-urlencoded": {"schema": {
          "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "string"}}}}}}},
        "responses": {"200": {"description": "The echo."}}
      }
    },
    "/anything/upload": {
      "put": {
        "operationId": "uploadFile", "summary": "Upload a file.", "tags": ["items"],
        "requestBody": {"content": {"multipart/form-data": {"schema": {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}}}},
        "responses": {"200": {"description": "Stored."}}
      }
    },
    "/anything/secret": {
      "get": {
        "operationId": "adminSecret", "summary": "Read the secret.", "tags": ["admin"],
        "responses": {"200": {"description": "The echo."}}
      }
    }
  }
}`
}

// TestLiveOpenAPITools imports the echo document into a real Caddy and
// calls its tools with mcp-go's client against go-httpbin, in both eras:
// path, query, header, JSON body, form body and nullable arguments; the
// curation as tools/list shows it; an inline tool beside the imported
// ones; and codemode with the endpoint as a backend.
func TestLiveOpenAPITools(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	doc := writeDocument(t, "echo.json", echoDocument(bin))
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /api {
		openapi %[1]s {
			exclude adminSecret
			rename getItem item_get
			describe createItem "Create an item (described in the Caddyfile)."
		}
		tool inline_get {
			description "An inline tool beside the imported ones."
			get /anything/inline
		}
	}
	mcp /admin {
		upstream %[2]s
		openapi %[1]s {
			tags admin
		}
	}
	mcp /reads {
		openapi %[1]s {
			include "GET /anything/*"
			exclude "* /anything/secret"
		}
	}
	codemode /code {
		backend api http://127.0.0.1:{$LIVE_PORT}/api
	}
}`, doc, bin))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/api", era, nil)
			list, err := c.ListTools(t.Context(), mcpListTools())
			if err != nil {
				t.Fatal(err)
			}
			tools := make(map[string]mcp.Tool)
			var names []string
			for _, tool := range list.Tools {
				tools[tool.Name] = tool
				names = append(names, tool.Name)
			}
			if want := []string{"createItem", "deleteItem", "inline_get", "item_get", "submitForm"}; !slices.Equal(names, want) {
				t.Errorf("tools %v, want %v (uploadFile skipped, adminSecret excluded, getItem renamed)", names, want)
			}
			if d := tools["createItem"].Description; d != "Create an item (described in the Caddyfile)." {
				t.Errorf("createItem description %q", d)
			}
			if d := tools["item_get"].Description; d != "Get an item." {
				t.Errorf("item_get description %q, want the summary", d)
			}
			if ro := tools["item_get"].Annotations.ReadOnlyHint; ro == nil || !*ro {
				t.Errorf("item_get read_only hint %v", ro)
			}
			if d := tools["deleteItem"].Annotations.DestructiveHint; d == nil || !*d {
				t.Errorf("deleteItem destructive hint %v", d)
			}

			res := callTool(t, c, "item_get", map[string]any{
				"itemId": "a b/c", "q": "x&y", "filter_status": "open", "tags": []string{"t1", "t2"},
				"since": nil, "X_Request_Id": "r-1",
			})
			echo := parseEcho(t, res)
			if echo.Method != "GET" || !strings.Contains(echo.URL, "/anything/items/a%20b%2Fc?") {
				t.Errorf("item_get went to %s %s", echo.Method, echo.URL)
			}
			if got := fmt.Sprint(echo.Args); got != "map[filter[status]:[open] q:[x&y] tags:[t1 t2]]" {
				t.Errorf("item_get query %s (since, null, left out)", got)
			}
			if got := echo.Headers["X-Request-Id"]; !slices.Equal(got, []string{"r-1"}) {
				t.Errorf("item_get X-Request-Id %v", got)
			}
			if res.StructuredContent == nil {
				t.Error("item_get has an output schema but no structured content")
			}
			wantToolError(t, callTool(t, c, "item_get", map[string]any{"q": "x"}), "itemId")
			wantToolError(t, callTool(t, c, "item_get", map[string]any{"itemId": "1", "filter_status": "lost"}), "filter_status")

			echo = parseEcho(t, callTool(t, c, "createItem", map[string]any{"name": "n", "price": 1.5, "note": nil}))
			if echo.Method != "POST" || fmt.Sprint(echo.JSON) != "map[name:n note:<nil> price:1.5]" {
				t.Errorf("createItem sent %s %v", echo.Method, echo.JSON)
			}
			wantToolError(t, callTool(t, c, "createItem", map[string]any{"price": 1}), "name")

			echo = parseEcho(t, callTool(t, c, "submitForm", map[string]any{"a": "1 2", "b": []string{"x", "y"}}))
			if got := fmt.Sprint(echo.Form); got != "map[a:[1 2] b:[x y]]" {
				t.Errorf("submitForm form %s", got)
			}
			if echo = parseEcho(t, callTool(t, c, "deleteItem", map[string]any{"itemId": "9"})); echo.Method != "DELETE" {
				t.Errorf("deleteItem sent %s", echo.Method)
			}
			if echo = parseEcho(t, callTool(t, c, "inline_get", map[string]any{})); !strings.HasSuffix(echo.URL, "/anything/inline") {
				t.Errorf("inline_get went to %s", echo.URL)
			}

			if got := mcptest.ToolNames(t, connect(t, "/admin", era, nil)); !slices.Equal(got, []string{"adminSecret", "deleteItem"}) {
				t.Errorf("tags admin gave %v", got)
			}
			if got := mcptest.ToolNames(t, connect(t, "/reads", era, nil)); !slices.Equal(got, []string{"getItem"}) {
				t.Errorf("include GET, exclude the secret gave %v", got)
			}

			code := connect(t, "/code", era, nil)
			list, err = code.ListTools(t.Context(), mcpListTools())
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Tools) != 1 || !strings.Contains(list.Tools[0].Description, "item_get") || !strings.Contains(list.Tools[0].Description, "filter_status") {
				t.Errorf("codemode's declarations do not show the imported tools: %.2000s", list.Tools[0].Description)
			}
			text := wantOK(t, execute(t, code, `const r = await api.item_get({itemId: "7", q: "from code"}); return r.url`))
			if !strings.Contains(text, "/anything/items/7?q=from+code") {
				t.Errorf("codemode's call went to %s", text)
			}
		})
	}
}

// BenchmarkImportedToolCall measures a tools/call of an imported tool and
// of inline tools of the same shape (a path and a query argument), in one
// run, in both eras: an imported tool is an ordinary tool afterwards. An
// imported tool has a whole input schema, as an inline tool written with
// input_schema does (inline-schema); inline-args is the tool of typed arg
// lines.
func BenchmarkImportedToolCall(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":42,"status":"open","total":99.5}`))
	}))
	defer api.Close()
	path := filepath.Join(b.TempDir(), "orders.json")
	doc := `{"openapi":"3.0.3","info":{"title":"orders","version":"1"},"paths":{"/orders/{id}":{"get":{
		"operationId":"getOrder","summary":"Get an order.",
		"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"integer"}},{"name":"expand","in":"query","schema":{"type":"boolean"}}],
		"responses":{"200":{"description":"ok"}}}}}}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		b.Fatal(err)
	}
	h := &Handler{
		Upstream: api.URL,
		Headers:  http.Header{"Authorization": {"Bearer {env.BENCH_KEY}"}},
		OpenAPI:  []*OpenAPISource{{Source: path}},
		Tools: []*Tool{{
			Name: "get_order", Description: "Get an order.", Method: "GET", Path: "/orders/{id}",
			Args: []*Arg{{Name: "id", Type: "integer", Required: true}, {Name: "expand", Type: "boolean"}},
		}, {
			Name: "get_order_schema", Description: "Get an order.", Method: "GET", Path: "/orders/{id}",
			InputSchema: []byte(`{"additionalProperties":false,"properties":{"expand":{"type":"boolean"},"id":{"type":"integer"}},"required":["id"],"type":"object"}`),
			Args:        []*Arg{{Name: "id", In: "path"}, {Name: "expand", In: "query"}},
		}},
	}
	defer provisionBench(b, h)()
	variants := map[string]string{"getOrder": "imported", "get_order_schema": "inline-schema", "get_order": "inline-args"}
	for _, era := range eras {
		for _, tool := range []string{"getOrder", "get_order_schema", "get_order"} {
			b.Run(era+"/"+variants[tool], func(b *testing.B) {
				body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"id":42,"expand":true}}}`
				header := map[string]string{"Mcp-Protocol-Version": era}
				if era == "2026-07-28" {
					body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"id":42,"expand":true},` +
						`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
						`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
					header["Mcp-Method"], header["Mcp-Name"] = "tools/call", tool
				}
				benchToolCall(b, h, body, header)
			})
		}
	}
}

// TestOpenAPIGitHubExample loads docs/openapi.md's example: a handful of
// GitHub's operations by operationId, two renamed, one re-described.
func TestOpenAPIGitHubExample(t *testing.T) {
	h, err := loadMCPCaddyfile(t, `mcp {
		header Authorization "Bearer {env.GITHUB_TOKEN}"
		header X-GitHub-Api-Version 2022-11-28
		openapi `+openapidocs.Path(t, openapidocs.GitHub)+` {
			include repos/get issues/list-for-repo issues/get issues/create pulls/list search/issues-and-pull-requests
			rename issues/list-for-repo list_issues
			rename search/issues-and-pull-requests search_issues
			describe issues/create "Open an issue in a repository. The title is required; the body is Markdown."
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(h), []string{"issues_create", "issues_get", "list_issues", "pulls_list", "repos_get", "search_issues"}; !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	if h.Upstream != "https://api.github.com" {
		t.Errorf("upstream %q, want the document's server", h.Upstream)
	}
	if d := h.tools["issues_create"].mcpTool.Description; !strings.HasPrefix(d, "Open an issue in a repository.") {
		t.Errorf("issues_create description %q", d)
	}
	schema := string(h.tools["list_issues"].op.InputSchema())
	for _, arg := range []string{`"owner"`, `"repo"`, `"state"`, `"per_page"`} {
		if !strings.Contains(schema, arg) {
			t.Errorf("list_issues schema lacks %s: %.500s", arg, schema)
		}
	}
}

// TestLiveOpenAPIOperations: operation blocks tune imported tools as the
// same lines tune an inline one, the parameters they fix leave the
// tool's arguments, and an answer that breaks the output schema reaches
// the model as an error result holding it, counted and logged.
func TestLiveOpenAPIOperations(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	doc := writeDocument(t, "echo.json", echoDocument(bin))
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
	}
	metrics`, logFile), fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /ops {
		name ops
		openapi %s {
			output_schema strict
			operation getItem {
				title "Fetch an item"
				description "An item, tuned."
				timeout 3s
				max_result_size 4KiB
				header X-Request-Id fixed-id
				query q fixed-query
				annotations open_world
			}
			operation createItem {
				body_field note "from the config"
				jq "{sent: .json}"
				output_schema `+"`"+`{"type":"object","properties":{"sent":{"type":"object"}}}`+"`"+`
			}
			operation deleteItem {
				output_schema `+"`"+`{"type":"object","required":["nope"]}`+"`"+`
			}
		}
	}
}
`, doc))
	c := connect(t, "/ops", eras[0], nil)
	list, err := c.ListTools(t.Context(), mcpListTools())
	if err != nil {
		t.Fatal(err)
	}
	tools := make(map[string]mcp.Tool)
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	get := tools["getItem"]
	if get.Title != "Fetch an item" || get.Description != "An item, tuned." {
		t.Errorf("getItem title %q, description %q", get.Title, get.Description)
	}
	if a := get.Annotations; a.OpenWorldHint == nil || !*a.OpenWorldHint || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
		t.Errorf("getItem annotations %+v: want open_world set and read_only kept", a)
	}
	for name, fixed := range map[string]string{"getItem": "q", "createItem": "note"} {
		if schema, _ := json.Marshal(tools[name].InputSchema); strings.Contains(string(schema), `"`+fixed+`"`) {
			t.Errorf("%s still takes %s, which the configuration fixes: %s", name, fixed, schema)
		}
	}
	if schema, _ := json.Marshal(get.OutputSchema); !strings.Contains(string(schema), `"method":{"type":"string"}`) {
		t.Errorf("getItem output schema %s, want the document's as written (strict)", schema)
	}

	e := parseEcho(t, callTool(t, c, "getItem", map[string]any{"itemId": "a"}))
	if !strings.Contains(e.URL, "q=fixed-query") || e.Headers["X-Request-Id"] == nil || e.Headers["X-Request-Id"][0] != "fixed-id" {
		t.Errorf("getItem sent %s with headers %v", e.URL, e.Headers)
	}
	res := callTool(t, c, "createItem", map[string]any{"name": "x"})
	if got := wantOK(t, res); got != `{"sent":{"name":"x","note":"from the config"}}` {
		t.Errorf("createItem gave %s", got)
	}

	// The answer breaks the schema: an error result that holds it.
	text := wantToolError(t, callTool(t, c, "deleteItem", map[string]any{"itemId": "a"}), "does not match the tool's output schema", "the answer follows as the API sent it", `"method": "DELETE"`)
	t.Log(text)
	wantToolError(t, callTool(t, c, "deleteItem", map[string]any{"itemId": "b"}), "does not match")
	_, body := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/metrics"))
	if want := `caddy_mcp_schema_drift_total{server="ops",tool="deleteItem"} 2`; !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %s", want)
	}
	var drifts int
	for _, e := range readLogs(t, logFile) {
		if strings.HasPrefix(fmt.Sprint(e["msg"]), "the API's answer does not match its document") {
			drifts++
			if e["tool"] != "deleteItem" || e["level"] != "warn" || !strings.Contains(fmt.Sprint(e["violations"]), "nope") {
				t.Errorf("drift log line %v", e)
			}
		}
	}
	if drifts != 1 {
		t.Errorf("%d drift log lines for two drifted answers within a minute, want 1", drifts)
	}
}

// githubTen are the ten GitHub operations a new user curates first.
var githubTen = "issues/list-for-repo issues/get issues/create issues/update issues/create-comment pulls/list pulls/get search/issues-and-pull-requests repos/list-commits repos/get"

// TestOpenAPIGitHubToolListSize: the ten operations list within 48 KB
// (190 KB as the document writes them), each with a title, every
// description within 2,048 bytes, and every top-level field of each
// answer still in its output schema.
func TestOpenAPIGitHubToolListSize(t *testing.T) {
	if racetest.Enabled {
		t.Skip("imports GitHub's whole document, long under the race detector; the bytes it measures are the same without it")
	}
	h, err := loadMCPCaddyfile(t, `mcp {
		openapi `+openapidocs.Path(t, openapidocs.GitHub)+` {
			include `+githubTen+`
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	w := servePost(t, h, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	var list struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				Title        string          `json:"title"`
				Description  string          `json:"description"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list.Result.Tools) != 10 {
		t.Fatalf("%v: %.300s", err, w.Body)
	}
	t.Logf("tools/list of the ten: %d bytes", w.Body.Len())
	if w.Body.Len() > 48<<10 {
		t.Errorf("tools/list of the ten is %d bytes, more than 48 KiB", w.Body.Len())
	}
	for _, tool := range list.Result.Tools {
		if tool.Title == "" || len(tool.Description) > 2048 {
			t.Errorf("%s: title %q, a description of %d bytes", tool.Name, tool.Title, len(tool.Description))
		}
	}
	// repos/get's answer: the document's top-level fields, all described.
	doc, err := openapi.Load(openapidocs.Read(t, openapidocs.GitHub))
	if err != nil {
		t.Fatal(err)
	}
	strict, err := doc.Tools(openapi.Curation{Include: []string{"repos/get", "issues/get"}, Output: openapi.OutputStrict}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range strict.Tools {
		var full, listed struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(tl.Definition.OutputSchema, &full)
		for _, tool := range list.Result.Tools {
			if tool.Name == tl.Name {
				_ = json.Unmarshal(tool.OutputSchema, &listed)
			}
		}
		for name := range full.Properties {
			if _, ok := listed.Properties[name]; !ok {
				t.Errorf("%s: the listed output schema lacks the top-level field %s", tl.Name, name)
			}
		}
		if len(full.Properties) < 20 {
			t.Errorf("%s: %d top-level fields in the document's schema, want GitHub's many", tl.Name, len(full.Properties))
		}
	}
}
