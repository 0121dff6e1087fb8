package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

// MaxDocumentSize bounds a document given to Load as bytes. GitHub's
// published document, one of the largest there is, is about 13 MB; its
// fully dereferenced form about 73 MB.
const MaxDocumentSize = 64 << 20

// MaxOperations bounds the operations of one document: GitHub's, one of
// the largest APIs, has about 1,200.
const MaxOperations = 10000

// Document is a loaded OpenAPI document, ready to be mapped to tools.
type Document struct {
	// Version is the document's own version field: "3.0.3", "3.1.0",
	// "2.0" (a Swagger document, converted to OpenAPI 3.0 at load).
	Version string
	// ServerURL is the upstream the document names: the first servers
	// entry with its variables at their defaults, or, for Swagger, the
	// first scheme with host and basePath. It may be relative ("/api/v3"),
	// meaning relative to where the document was served; "" when the
	// document names none. A configured upstream takes its place.
	ServerURL string

	doc *openapi3.T
}

// Load parses an OpenAPI 3.0 or 3.1 or a Swagger 2.0 document, JSON or
// YAML, and resolves its references. A reference to another file or a URL
// is an error naming it; nothing is ever read but data.
func Load(data []byte) (*Document, error) {
	return load(data, true)
}

// load is Load, with the slimming of JSON documents or without it.
func load(data []byte, slim bool) (*Document, error) {
	if len(data) > MaxDocumentSize {
		return nil, fmt.Errorf("the document is %d bytes, more than the %d allowed", len(data), MaxDocumentSize)
	}
	valid := isJSONText(data) && json.Valid(data)
	if !valid {
		if err := checkAliases(data); err != nil {
			return nil, err
		}
	}
	version, err := documentHead(data, valid)
	if err != nil {
		return nil, err
	}
	var doc *openapi3.T
	switch {
	case strings.HasPrefix(version, "2."):
		doc, err = loadSwagger(data, newLoader())
	case strings.HasPrefix(version, "3."):
		doc, err = loadOpenAPI3(data, slim)
	default:
		return nil, fmt.Errorf("unsupported document version %q (want OpenAPI 3.0 or 3.1, or Swagger 2.0)", version)
	}
	if err != nil {
		return nil, loadError(err)
	}
	if err := refCycle(doc.Components); err != nil {
		return nil, err
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, fmt.Errorf("the document has no paths")
	}
	return &Document{Version: version, ServerURL: serverURL(doc), doc: doc}, nil
}

// newLoader is a kin-openapi loader that reads nothing but the data it is
// given.
func newLoader() *openapi3.Loader {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	// A custom reader owns the policy in kin-openapi: this one never reads.
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, location *url.URL) ([]byte, error) {
		return nil, &openapi3.DisallowedExternalRefError{Ref: location.String()}
	}
	return loader
}

// documentStart marks where a YAML document starts. A JSON document is
// the same document after it.
var documentStart = []byte("--- ")

// loadOpenAPI3 parses an OpenAPI 3 document and resolves its references.
//
// kin-openapi reads JSON with its YAML parser, whose scanner holds every
// token of a document that opens with "{" until the closing "}", since
// until then the "{" may turn out to be a key ("{a: 1}: b" is YAML): for
// GitHub's document, a token queue that allocated 1 GB, and most
// of the load's time. After "--- " on the same line no key can start, so
// the scanner hands each token on. Data with a U+0085 is left as it is,
// since kin-openapi reads such JSON with encoding/json, a choice the mark
// would change. With slim, the document without its examples and
// extensions (slimJSON) is loaded a piece at a time first (loadPieces).
// If that fails, or the marked document fails to load, the data is
// loaded as given, so that what fails, and how, and kin-openapi's
// fallback to encoding/json (for duplicate keys, which YAML refuses) are
// as before.
func loadOpenAPI3(data []byte, slim bool) (*openapi3.T, error) {
	if len(data) > 0 && data[0] == '{' && !bytes.Contains(data, []byte("\u0085")) {
		if slim {
			if doc, err := loadSlim(data); err == nil {
				return doc, nil
			}
		}
		marked := make([]byte, 0, len(documentStart)+len(data))
		marked = append(append(marked, documentStart...), data...)
		if doc, err := newLoader().LoadFromData(marked); err == nil {
			return doc, nil
		}
	}
	return newLoader().LoadFromData(data)
}

// loadSlim loads the document without its examples and extensions, a
// piece at a time.
func loadSlim(data []byte) (*openapi3.T, error) {
	slimmed, ok := slimJSON(data)
	if !ok {
		return nil, errSlim
	}
	return loadPieces(slimmed)
}

// documentHead reads the openapi or swagger field, which tells a
// document from any other JSON or YAML, and counts the operations, so
// that a document with too many is refused before the costly parse.
// validJSON says data is valid JSON, which a scan then reads.
func documentHead(data []byte, validJSON bool) (string, error) {
	if validJSON {
		if ops, openapi, swagger, ok := jsonHead(data); ok {
			return headVersion(ops, openapi, swagger)
		}
	}
	var head struct {
		OpenAPI   any                                   `json:"openapi" yaml:"openapi"`
		Swagger   any                                   `json:"swagger" yaml:"swagger"`
		PathsJSON map[string]map[string]json.RawMessage `json:"paths" yaml:"-"`
		PathsYAML map[string]map[string]yaml.Node       `json:"-" yaml:"paths"`
	}
	var err error
	if isJSONText(data) {
		err = json.Unmarshal(data, &head)
	} else {
		err = yaml.Unmarshal(data, &head)
	}
	if err != nil {
		return "", fmt.Errorf("not an OpenAPI document: %v", err)
	}
	ops := 0
	for _, item := range head.PathsJSON {
		ops += countOperations(item)
	}
	for _, item := range head.PathsYAML {
		ops += countOperations(item)
	}
	return headVersion(ops, head.OpenAPI, head.Swagger)
}

// headVersion is the version a document's openapi or swagger field says,
// or why there is none, once it is known to hold ops operations.
func headVersion(ops int, openapi, swagger any) (string, error) {
	if ops > MaxOperations {
		return "", fmt.Errorf("the document has %d operations, more than the %d allowed", ops, MaxOperations)
	}
	for _, field := range []struct {
		name  string
		value any
	}{{"openapi", openapi}, {"swagger", swagger}} {
		switch v := field.value.(type) {
		case nil:
		case string:
			return v, nil
		default:
			// YAML reads swagger: 2.0 as a number.
			return "", fmt.Errorf("the %s field must be a string such as \"3.0.3\", not %v", field.name, v)
		}
	}
	return "", fmt.Errorf("not an OpenAPI document: it has neither an openapi nor a swagger field")
}

// jsonHead is documentHead's reading of valid JSON, with slimJSON's
// scanner rather than a decode: the keys of paths and of path items, the
// openapi and swagger values. ok is false when it cannot tell as
// json.Unmarshal would (no object, a path item that is not one, a key
// json would match regardless of case), for documentHead to decode.
func jsonHead(data []byte) (ops int, openapi, swagger any, ok bool) {
	top, err := members(data)
	if err != nil {
		return 0, nil, nil, false
	}
	// json keeps the last of a path given twice, and adds the paths of a
	// second paths member to the first's.
	counts := make(map[string]int)
	for _, m := range top {
		switch key := unquote(m.key); key {
		case "openapi", "swagger":
			var v any
			if json.Unmarshal(m.value, &v) != nil {
				return 0, nil, nil, false
			}
			if key == "openapi" {
				openapi = v
			} else {
				swagger = v
			}
		case "paths":
			items, err := members(m.value)
			if err != nil {
				return 0, nil, nil, false
			}
			for _, item := range items {
				ms, err := members(item.value)
				if err != nil {
					return 0, nil, nil, false
				}
				keys := make(map[string]bool, len(ms))
				for _, op := range ms {
					keys[unquote(op.key)] = true
				}
				counts[unquote(item.key)] = countOperations(keys)
			}
		default:
			if strings.EqualFold(key, "openapi") || strings.EqualFold(key, "swagger") || strings.EqualFold(key, "paths") {
				return 0, nil, nil, false
			}
		}
	}
	for _, n := range counts {
		ops += n
	}
	return ops, openapi, swagger, true
}

// unquote is a JSON string's value.
func unquote(quoted string) string {
	if !strings.Contains(quoted, `\`) {
		return quoted[1 : len(quoted)-1]
	}
	var s string
	_ = json.Unmarshal([]byte(quoted), &s)
	return s
}

func countOperations[V any](item map[string]V) int {
	n := 0
	for key := range item {
		if slices.Contains(methods, strings.ToUpper(key)) {
			n++
		}
	}
	return n
}

// isJSONText reports whether data is JSON rather than YAML, as its first
// byte tells.
func isJSONText(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// loadSwagger converts a Swagger 2.0 document to OpenAPI 3.0.
func loadSwagger(data []byte, loader *openapi3.Loader) (*openapi3.T, error) {
	var doc2 openapi2.T
	if !isJSONText(data) {
		var tree any
		if err := yaml.Unmarshal(data, &tree); err != nil {
			return nil, err
		}
		var err error
		if data, err = json.Marshal(tree); err != nil {
			return nil, fmt.Errorf("the YAML has no JSON form: %v", err)
		}
	}
	if err := json.Unmarshal(data, &doc2); err != nil {
		return nil, err
	}
	swaggerCollectionFormats(&doc2)
	return openapi2conv.ToV3WithLoader(&doc2, loader, nil)
}

// swaggerCollectionFormats makes each array parameter's collectionFormat
// say what Swagger 2.0 means before the conversion, which reads it only
// in the query and takes a missing one for OpenAPI 3's default (the key
// repeated): a query array without one is csv, Swagger's default. A
// format OpenAPI 3 cannot say (tsv, or anything but csv in the path or a
// header) is kept in the extension unsentCollectionFormat, and the
// operation is skipped.
func swaggerCollectionFormats(doc2 *openapi2.T) {
	mark := func(params []*openapi2.Parameter) {
		for _, p := range params {
			if p == nil || p.Type == nil || !p.Type.Is("array") {
				continue
			}
			format := p.CollectionFormat
			unsent := false
			switch p.In {
			case "query":
				if format == "" {
					p.CollectionFormat = "csv"
				}
				unsent = format == "tsv"
			case "path", "header":
				unsent = format != "" && format != "csv"
			}
			if unsent {
				if p.Extensions == nil {
					p.Extensions = make(map[string]any, 1)
				}
				p.Extensions[unsentCollectionFormat] = format
			}
		}
	}
	mark(slices.Collect(maps.Values(doc2.Parameters)))
	for _, item := range doc2.Paths {
		if item == nil {
			continue
		}
		mark(item.Parameters)
		for _, op := range item.Operations() {
			mark(op.Parameters)
		}
	}
}

// loadError says which reference was refused, in this package's words.
func loadError(err error) error {
	var ext *openapi3.DisallowedExternalRefError
	if errors.As(err, &ext) {
		return fmt.Errorf("external reference %q: only references within the document (#/...) are resolved, never another file or a URL", ext.Ref)
	}
	return fmt.Errorf("loading the document: %v", err)
}

// serverURL is the document's first server URL with its variables at
// their defaults.
func serverURL(doc *openapi3.T) string { return firstServer(doc.Servers) }

// firstServer is the first server's URL with its variables at their
// defaults, "" for none.
func firstServer(servers openapi3.Servers) string {
	if len(servers) == 0 || servers[0] == nil {
		return ""
	}
	s := servers[0]
	u := s.URL
	for name, v := range s.Variables {
		if v != nil {
			u = strings.ReplaceAll(u, "{"+name+"}", v.Default)
		}
	}
	return u
}

// refCycle reports a component that is a reference to itself through
// references alone (A: $ref B, B: $ref A), which defines nothing. A schema
// that holds itself among its properties or items is recursive, not a
// cycle, and fine.
func refCycle(c *openapi3.Components) error {
	if c == nil {
		return nil
	}
	kinds := []struct {
		prefix string
		refs   map[string]string // component name -> the $ref it is
	}{
		{"#/components/schemas/", refsOf(c.Schemas, func(r *openapi3.SchemaRef) string { return r.Ref })},
		{"#/components/parameters/", refsOf(c.Parameters, func(r *openapi3.ParameterRef) string { return r.Ref })},
		{"#/components/requestBodies/", refsOf(c.RequestBodies, func(r *openapi3.RequestBodyRef) string { return r.Ref })},
		{"#/components/responses/", refsOf(c.Responses, func(r *openapi3.ResponseRef) string { return r.Ref })},
		{"#/components/headers/", refsOf(c.Headers, func(r *openapi3.HeaderRef) string { return r.Ref })},
	}
	for _, kind := range kinds {
		for _, start := range sortedKeys(kind.refs) {
			chain := []string{kind.prefix + start}
			for name := start; ; {
				next, ok := strings.CutPrefix(kind.refs[name], kind.prefix)
				if !ok {
					break
				}
				chain = append(chain, kind.prefix+next)
				if slices.Contains(chain[:len(chain)-1], kind.prefix+next) {
					return fmt.Errorf("reference cycle: %s", strings.Join(chain, " -> "))
				}
				name = next
			}
		}
	}
	return nil
}

func refsOf[R any](m map[string]*R, ref func(*R) string) map[string]string {
	out := make(map[string]string)
	for name, r := range m {
		if r != nil && ref(r) != "" {
			out[name] = ref(r)
		}
	}
	return out
}
