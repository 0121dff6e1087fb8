package caddymcp

import (
	"encoding/json"
	"regexp"
	"strings"
)

// shorthandArgs maps the placeholders that Caddy's Caddyfile adapter
// writes for its shorthands back to the shorthand names: the adapter turns
// {path} into {http.request.uri.path} before any directive sees the token.
// TestShorthandsMatchCaddy holds it to the adapter's own list.
var shorthandArgs = func() map[string]string {
	pairs := []string{
		"host", "http.request.host", "hostport", "http.request.hostport", "port", "http.request.port",
		"orig_method", "http.request.orig_method", "orig_uri", "http.request.orig_uri",
		"orig_path", "http.request.orig_uri.path", "orig_dir", "http.request.orig_uri.path.dir",
		"orig_file", "http.request.orig_uri.path.file", "orig_query", "http.request.orig_uri.query",
		"orig_?query", "http.request.orig_uri.prefixed_query",
		"method", "http.request.method", "uri", "http.request.uri", "%uri", "http.request.uri_escaped",
		"path", "http.request.uri.path", "%path", "http.request.uri.path_escaped",
		"dir", "http.request.uri.path.dir", "file", "http.request.uri.path.file",
		"query", "http.request.uri.query", "%query", "http.request.uri.query_escaped",
		"?query", "http.request.uri.prefixed_query", "remote", "http.request.remote",
		"remote_host", "http.request.remote.host", "remote_port", "http.request.remote.port",
		"scheme", "http.request.scheme", "uuid", "http.request.uuid", "client_ip", "http.vars.client_ip",
		"upstream_hostport", "http.reverse_proxy.upstream.hostport",
		"tls_cipher", "http.request.tls.cipher_suite", "tls_version", "http.request.tls.version",
		"tls_client_fingerprint", "http.request.tls.client.fingerprint",
		"tls_client_issuer", "http.request.tls.client.issuer",
		"tls_client_serial", "http.request.tls.client.serial",
		"tls_client_subject", "http.request.tls.client.subject",
		"tls_client_certificate_pem", "http.request.tls.client.certificate_pem",
		"tls_client_certificate_der_base64", "http.request.tls.client.certificate_der_base64",
	}
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		m[pairs[i+1]] = pairs[i]
	}
	return m
}()

// shorthandPrefixes are the adapter's rewrites of {header.X}, {query.X}, ...
var shorthandPrefixes = [][2]string{
	{"http.request.header.", "header."}, {"http.request.cookie.", "cookie."},
	{"http.request.host.labels.", "labels."}, {"http.request.uri.path.file.", "file."},
	{"http.request.uri.path.", "path."}, {"http.request.uri.query.", "query."},
	{"http.regexp.", "re."}, {"http.vars.", "vars."},
	{"http.reverse_proxy.", "rp."}, {"http.intercept.", "resp."}, {"http.error.", "err."},
	{"http.matchers.file.", "file_match."},
}

var placeholderPattern = regexp.MustCompile(`\{[^{}]+\}`)

// mapShorthands rewrites, in the tool's path template, the expansion of a
// Caddy shorthand back to {name} when the tool has an argument of that
// name: a file API's {path} argument must not become the MCP request's path.
func mapShorthands(t *Tool) {
	if !strings.Contains(t.Path, "{http.") {
		return
	}
	names := make(map[string]bool, len(t.Args))
	for _, a := range t.Args {
		names[a.Name] = true
		if a.WireName != "" { // the name a path slot takes
			names[a.WireName] = true
		}
	}
	// Beside input_schema, the schema's top-level properties are the
	// arguments, with or without an arg line.
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &schema) == nil {
		for name := range schema.Properties {
			names[name] = true
		}
	}
	t.Path = placeholderPattern.ReplaceAllStringFunc(t.Path, func(ph string) string {
		inner := ph[1 : len(ph)-1]
		if short, ok := shorthandArgs[inner]; ok && names[short] {
			return "{" + short + "}"
		}
		for _, p := range shorthandPrefixes {
			if rest, ok := strings.CutPrefix(inner, p[0]); ok && names[p[1]+rest] {
				return "{" + p[1] + rest + "}"
			}
		}
		return ph
	})
}

// restoreShorthands undoes the adapter's shorthand expansion in text that
// is never run through a replacer (descriptions, schemas, literal defaults
// and enums): "the file at {path}" must not read "{http.request.uri.path}".
func restoreShorthands(s string) string {
	if !strings.Contains(s, "{http.") {
		return s
	}
	return placeholderPattern.ReplaceAllStringFunc(s, func(ph string) string {
		inner := ph[1 : len(ph)-1]
		if short, ok := shorthandArgs[inner]; ok {
			return "{" + short + "}"
		}
		for _, p := range shorthandPrefixes {
			if rest, ok := strings.CutPrefix(inner, p[0]); ok {
				return "{" + p[1] + rest + "}"
			}
		}
		return ph
	})
}
