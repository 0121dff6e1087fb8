package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/racetest"
)

func TestLoadRealDocuments(t *testing.T) {
	tests := []struct {
		name, version, server string
		data                  func(testing.TB) []byte
		paths                 int
	}{
		{"github 3.0", "3.0.3", "https://api.github.com", doc(githubDocument), 800},
		{"github 3.1 form", "3.1.0", "https://api.github.com", githubDocument31, 800},
		{"petstore 3.0", "3.0.0", "http://petstore.swagger.io/v2", doc(petstore30), 14},
		{"petstore 3.1", "3.1.0", "http://petstore.swagger.io/v2", doc(petstore31), 14},
		{"petstore 3.1 yaml", "3.1.0", "http://petstore.swagger.io/v2", doc(petstore31YAML), 14},
		{"train travel 3.1", "3.1.0", "https://api.example.com", doc(trainTravel31), 5},
		{"swagger 2.0", "2.0", "http://petstore.swagger.io/v2", doc(swaggerPetstore), 14},
		{"swagger 2.0 yaml", "2.0", "http://petstore.swagger.io/v2", doc(swaggerYAML), 14},
		{"circular schemas", "3.0.3", "https://httpbin.org/", doc(circular30), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skipGitHubUnderRace(t, tt.name)
			d, err := Load(tt.data(t))
			if err != nil {
				t.Fatal(err)
			}
			if d.Version != tt.version || d.ServerURL != tt.server {
				t.Errorf("version %q, server %q; want %q, %q", d.Version, d.ServerURL, tt.version, tt.server)
			}
			if n := d.doc.Paths.Len(); n < tt.paths {
				t.Errorf("%d paths, want at least %d", n, tt.paths)
			}
		})
	}
}

func doc(name string) func(testing.TB) []byte {
	return func(tb testing.TB) []byte { return document(tb, name) }
}

func TestLoadServerURL(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"variables at their defaults", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},
			"servers":[{"url":"https://{region}.example.com/{base}","variables":{"region":{"default":"eu"},"base":{"default":"v2"}}},{"url":"https://other.example"}],
			"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`, "https://eu.example.com/v2"},
		{"relative", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"servers":[{"url":"/api/v3"}],
			"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`, "/api/v3"},
		{"none", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},
			"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`, ""},
		{"swagger host, basePath and first scheme", `{"swagger":"2.0","info":{"title":"t","version":"1"},"host":"api.example.com:8443","basePath":"/v1","schemes":["https","http"],
			"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`, "https://api.example.com:8443/v1"},
		{"swagger basePath alone", `{"swagger":"2.0","info":{"title":"t","version":"1"},"basePath":"/v1",
			"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`, "/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Load([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if d.ServerURL != tt.want {
				t.Errorf("server %q, want %q", d.ServerURL, tt.want)
			}
		})
	}
}

// minimal is a document with one operation and what extra adds at the top.
func minimal(extra string) string {
	return `{"openapi":"3.0.3","info":{"title":"t","version":"1"},` + extra + `"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`
}

func TestLoadRefuses(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"not OpenAPI JSON", `{"name":"a package.json","version":"1.0.0"}`, "not an OpenAPI document: it has neither an openapi nor a swagger field"},
		{"HTML", "<!doctype html><html><body>Not found</body></html>", "not an OpenAPI document"},
		{"invalid YAML", "openapi: 3.0.3\ninfo: [unclosed\n  title: t", "not an OpenAPI document"},
		{"invalid JSON", `{"openapi":"3.0.3",`, "not an OpenAPI document"},
		{"empty", "", "not an OpenAPI document"},
		{"YAML number version", "swagger: 2.0\ninfo: {title: t, version: '1'}\npaths: {}\n", `the swagger field must be a string such as "3.0.3", not 2`},
		{"unknown version", `{"openapi":"4.0.0","paths":{}}`, `unsupported document version "4.0.0"`},
		{"no paths", `{"openapi":"3.1.0","info":{"title":"t","version":"1"}}`, "the document has no paths"},
		{"reference to another file", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"other.yaml#/components/schemas/Pet"}}}}}}}}}`, `external reference "other.yaml`},
		{"reference to a URL", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"parameters":[{"$ref":"https://example.com/params.json#/limit"}],
			"responses":{"200":{"description":"ok"}}}}}}`, `external reference "https://example.com/params.json`},
		{"swagger reference to a URL", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"schema":{"$ref":"http://127.0.0.1:1/pet.json"}}}}}}}`, `external reference "http://127.0.0.1:1/pet.json`},
		{"reference to nothing", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Missing"}}}}}}}}}`, "loading the document"},
		{"reference cycle", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"components":{"schemas":{
			"A":{"$ref":"#/components/schemas/B"},"B":{"$ref":"#/components/schemas/A"}}},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"#/components/schemas/A"}}}}}}}}}`, "reference cycle: #/components/schemas/A -> #/components/schemas/B -> #/components/schemas/A"},
		{"parameter reference cycle", `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"components":{"parameters":{
			"A":{"$ref":"#/components/parameters/B"},"B":{"$ref":"#/components/parameters/A"}}},"paths":{"/a":{"get":{"parameters":[{"$ref":"#/components/parameters/A"}],
			"responses":{"200":{"description":"ok"}}}}}}`, "reference cycle: #/components/parameters/A -> #/components/parameters/B -> #/components/parameters/A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Load([]byte(tt.doc))
			if err == nil {
				t.Fatalf("loaded, want an error with %q; tools: %v", tt.want, tools(t, d))
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want one with %q", err, tt.want)
			}
		})
	}
}

func tools(t *testing.T, d *Document) []string {
	r, err := d.Tools(Curation{}, nil)
	if err != nil {
		return []string{err.Error()}
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestLoadSizeBound(t *testing.T) {
	// 20 MB of description: loaded, since bytes may be up to MaxDocumentSize.
	big := minimal(`"x-padding":"` + strings.Repeat("a", 20<<20) + `",`)
	if _, err := Load([]byte(big)); err != nil {
		t.Errorf("a 20 MB document: %v", err)
	}
	huge := minimal(`"x-padding":"` + strings.Repeat("a", MaxDocumentSize) + `",`)
	_, err := Load([]byte(huge))
	if want := "more than the 67108864 allowed"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a document past MaxDocumentSize: error %v, want one with %q", err, want)
	}
}

func TestLoadTooManyOperations(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{`)
	const n = 100_000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"operationId":"op%d","responses":{"200":{"description":"ok"}}}}`, i, i)
	}
	b.WriteString(`}}`)
	start := time.Now()
	_, err := Load([]byte(b.String()))
	if want := "the document has 100000 operations, more than the 10000 allowed"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	t.Logf("%d operations (%d bytes) refused in %s", n, b.Len(), time.Since(start).Round(time.Millisecond))
}

// skipGitHubUnderRace skips a case of GitHub's whole document under the
// race detector: up to a minute each there, in code with no concurrency;
// go test without it runs them.
func skipGitHubUnderRace(t *testing.T, name string) {
	t.Helper()
	if racetest.Enabled && strings.HasPrefix(name, "github") {
		t.Skip("GitHub's whole document: long under the race detector, for code with no concurrency")
	}
}

// An OpenAPI 3 document loads as kin-openapi loads the data as given:
// the same document, or the same error.
func TestLoadOpenAPI3AsGiven(t *testing.T) {
	t.Parallel() // as TestSlimLoadsTheSameTools
	tests := []struct {
		name string
		data func(testing.TB) []byte
	}{
		{"github 3.0", doc(githubDocument)},
		{"github 3.1 form, on one line", githubDocument31},
		{"petstore 3.0", doc(petstore30)},
		{"petstore 3.1", doc(petstore31)},
		{"train travel 3.1", doc(trainTravel31)},
		{"circular schemas", doc(circular30)},
		{"parameter styles", doc(parameterStyles)},
		{"duplicate keys, which YAML refuses", text(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"info":{"title":"u","version":"2"},` +
			`"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`)},
		{"a U+0085, which YAML reads as a line break", text(minimal(`"x-note":"a` + "\u0085" + `b",`))},
		{"space before the object", text("  \t" + minimal(""))},
		{"a line before the object", text("\n" + minimal(""))},
		{"YAML after the object", text(minimal("") + "\nopenapi: 3.1.0\n")},
		{"a key after the object", text(minimal("") + ": x")},
		{"a second document", text(minimal("") + "\n---\n{}")},
		{"unclosed", text(`{"openapi":"3.0.3","paths":{"/a":{"get":{}}}`)},
		{"a reference to nothing", text(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok",
			"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Missing"}}}}}}}}}`)},
		{"a reference to a URL", text(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"parameters":[{"$ref":"https://example.com/p.json#/x"}],
			"responses":{"200":{"description":"ok"}}}}}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			skipGitHubUnderRace(t, tt.name)
			data := tt.data(t)
			if d := sameAsGiven(data); d != "" {
				t.Error(d)
			}
		})
	}
}

// sameAsGiven says how loadOpenAPI3 and kin-openapi's load of data as it
// is differ, or "" when they agree.
func sameAsGiven(data []byte) string {
	got, err := loadOpenAPI3(data, false)
	want, wantErr := newLoader().LoadFromData(data)
	switch {
	case (err == nil) != (wantErr == nil):
		return fmt.Sprintf("error %v, want %v", err, wantErr)
	case err != nil && err.Error() != wantErr.Error():
		return fmt.Sprintf("error %q, want %q", err, wantErr)
	case !reflect.DeepEqual(got, want):
		return "the documents differ"
	}
	return ""
}

func text(s string) func(testing.TB) []byte {
	return func(testing.TB) []byte { return []byte(s) }
}

// Loading costs memory in proportion to the document: kin-openapi's YAML
// scanner kept every token of a document opening with "{" until its end,
// 85 bytes allocated for each byte of GitHub's, 1.1 GB.
func TestLoadAllocatesInProportion(t *testing.T) {
	data := document(t, githubDocument)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Load(data); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(len(data))
	t.Logf("%.1f bytes allocated for each of the document's %d", perByte, len(data))
	if perByte > 40 {
		t.Errorf("%.1f bytes allocated for each byte of the document, want at most 40", perByte)
	}
}

// FuzzLoadOpenAPI3AsGiven checks loadOpenAPI3 against kin-openapi's load
// of the data as given.
func FuzzLoadOpenAPI3AsGiven(f *testing.F) {
	f.Add([]byte(minimal("")))
	f.Add([]byte(minimal(`"components":{"schemas":{"A":{"type":"object","properties":{"b":{"$ref":"#/components/schemas/A"}}}}},`)))
	f.Add([]byte(minimal("") + ": x"))
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"info":{},"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"}}}}}}`))
	f.Add([]byte(`{"openapi":"3.0.3","x":` + "\"\u0085\"" + `,"paths":{}}`))
	f.Add([]byte(`{a: 1, "openapi": '3.0.3', paths: {/a: {get: {}}}} # comment`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := sameAsGiven(data); d != "" {
			t.Errorf("%q: %s", data, d)
		}
	})
}

// FuzzDocumentHead holds the scan of valid JSON's head to the decode of
// it: the same version, or the same error.
func FuzzDocumentHead(f *testing.F) {
	f.Add([]byte(minimal("")))
	f.Add([]byte(`{"swagger":"2.0","paths":{"/a":{"GET":{},"get":{},"x":1},"/a":{"put":{}}},"openapi":"3.1.0","openapi":3}`))
	f.Add([]byte(`{"Paths":{"/a":{"get":{}}},"OpenAPI":"3.0.0"}`))
	f.Add([]byte(`{"openapi":"3.0.3","paths":{"/a":null,"/b":[],"/c":{"de\u006cete":{}}}}`))
	f.Add([]byte(` [1] `))
	f.Add([]byte(`{"paths":{"/a":{"get":{}}},"openapi":"3.0.3","paths":{"/b":{"get":{}},"/a":{"put":{},"post":{}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !isJSONText(data) {
			return
		}
		v1, err1 := documentHead(data, true)
		v2, err2 := documentHead(data, false)
		if v1 != v2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Errorf("%q: scanned %q, %v; decoded %q, %v", data, v1, err1, v2, err2)
		}
	})
}

func TestDocumentHeadScansLikeItDecodes(t *testing.T) {
	many := `{"openapi":"3.0.3","paths":{`
	for i := range MaxOperations/4 + 1 {
		if i > 0 {
			many += ","
		}
		many += fmt.Sprintf(`"/p%d":{"get":{},"put":{},"post":{},"DELETE":{},"x-a":{}}`, i)
	}
	many += "}}"
	for _, data := range []string{many, minimal(""), `{"openapi":3}`, `{"info":{}}`, `{"swagger":"2.0","swagger":"x"}`} {
		v1, err1 := documentHead([]byte(data), true)
		v2, err2 := documentHead([]byte(data), false)
		if v1 != v2 || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Errorf("%.80q: scanned %q, %v; decoded %q, %v", data, v1, err1, v2, err2)
		}
	}
}
