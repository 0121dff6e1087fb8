package caddymcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

// caddyShorthands reads the shorthands the Caddyfile adapter of the Caddy
// in go.mod rewrites, from its source: the simple ones ({path}) and the
// prefixes of the ones with a name ({header.X}), each as written in a
// Caddyfile. The adapter keeps its list unexported.
func caddyShorthands(t *testing.T) (simple, prefixes []string) {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}", "github.com/caddyserver/caddy/v2").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "caddyconfig", "httpcaddyfile", "shorthands.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"(\{[^"{}]+\})", "\{http\.[^"{}]+\}"`).FindAllStringSubmatch(string(src), -1) {
		simple = append(simple, m[1])
	}
	for _, m := range regexp.MustCompile("`\\{([a-z_]+)\\\\\\.\\(").FindAllStringSubmatch(string(src), -1) {
		prefixes = append(prefixes, m[1]+".")
	}
	// Fewer means the source changed shape and the patterns above miss it.
	if len(simple) < 30 || len(prefixes) < 10 {
		t.Fatalf("read %d shorthands and %d prefixes from Caddy's source; its layout changed", len(simple), len(prefixes))
	}
	return simple, prefixes
}

// adapterRewrite is what the Caddyfile adapter makes of a token.
func adapterRewrite(text string) string {
	seg := caddyfile.Segment{{Text: text}}
	httpcaddyfile.NewShorthandReplacer().ApplyToSegment(&seg)
	return seg[0].Text
}

// TestShorthandsMatchCaddy requires every shorthand the adapter rewrites to
// be restored, in descriptions and in the path of a tool with an argument
// of its name, and every entry of the table to be one the adapter makes.
func TestShorthandsMatchCaddy(t *testing.T) {
	t.Parallel()
	simple, prefixes := caddyShorthands(t)
	var written []string
	written = append(written, simple...)
	for _, p := range prefixes {
		written = append(written, "{"+p+"X-Name}")
	}
	for _, short := range written {
		expanded := adapterRewrite(short)
		if expanded == short {
			t.Errorf("the adapter leaves %s as it is; the source read is not the replacer's list", short)
			continue
		}
		if got := restoreShorthands("see " + expanded + "."); got != "see "+short+"." {
			t.Errorf("restoreShorthands(%q) = %q, want %q", expanded, got, "see "+short+".")
		}
		name := short[1 : len(short)-1]
		tool := &Tool{Path: "/files/" + expanded, Args: []*Arg{{Name: name}}}
		mapShorthands(tool)
		if tool.Path != "/files/"+short {
			t.Errorf("with an argument %q, the path %q maps to %q, want %q", name, "/files/"+expanded, tool.Path, "/files/"+short)
		}
	}

	for expanded, short := range shorthandArgs {
		if got := adapterRewrite("{" + short + "}"); got != "{"+expanded+"}" {
			t.Errorf("the table maps {%s} back to {%s}, but the adapter makes %s of {%s}", expanded, short, got, short)
		}
	}
	for _, p := range shorthandPrefixes {
		if got := adapterRewrite("{" + p[1] + "x}"); got != "{"+p[0]+"x}" {
			t.Errorf("the table maps {%sx} back to {%sx}, but the adapter makes %s of {%sx}", p[0], p[1], got, p[1])
		}
	}
}

// Caddy's adapter rewrites {path} to {http.request.uri.path} (and {query}
// to {http.request.uri.query}) in every token. A tool with an argument of
// that name must get its argument back, not the MCP request's path.
func TestShorthandPlaceholdersAsArguments(t *testing.T) {
	handler, paths := adaptedToolPaths(t, `:8080 {
	mcp /mcp {
		upstream http://127.0.0.1:9/api
		tool read_file {
			description "Read a file."
			get /files/{path}
			arg path required
		}
		tool search {
			description "Search."
			get /search/{query}
			arg query required
		}
		tool echo_path {
			description "Echo the MCP request's path."
			get /echo{path}
		}
	}
}
`)
	wantPaths := map[string]string{
		"read_file": "/files/{path}",
		"search":    "/search/{query}",
		"echo_path": "/echo{http.request.uri.path}",
	}
	for name, path := range paths {
		if want := wantPaths[name]; path != want {
			t.Errorf("tool %s: adapted path %q, want %q", name, path, want)
		}
	}

	// And the adapted config loads, with the argument in the path and the
	// placeholder left for the replacer.
	h, err := loadMCP(t, string(handler))
	if err != nil {
		t.Fatalf("load the adapted handler: %v", err)
	}
	repl := caddy.NewReplacer()
	repl.Set("http.request.uri.path", "/mcp")
	repl.Set("http.request.uri.query", "from=mcp")
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{tool: "read_file", args: map[string]any{"path": "notes.txt"}, want: "/api/files/notes.txt"},
		{tool: "search", args: map[string]any{"query": "caddy"}, want: "/api/search/caddy"},
		{tool: "echo_path", args: map[string]any{}, want: "/api/echo/mcp"},
	}
	for _, tc := range tests {
		req, _, err := h.tools[tc.tool].op.Request(context.Background(), h.base, tc.args, repl)
		if err != nil {
			t.Errorf("tool %s: %v", tc.tool, err)
			continue
		}
		if got := req.URL.EscapedPath(); got != tc.want {
			t.Errorf("tool %s: upstream path %q, want %q", tc.tool, got, tc.want)
		}
	}
}

// The DESIGN says the parser maps {path} back "when the tool has an
// argument of that name". With input_schema, a property is an argument
// even without an arg line.
func TestShorthandPlaceholderAsInputSchemaProperty(t *testing.T) {
	t.Parallel()
	_, paths := adaptedToolPaths(t, `:8080 {
	mcp /mcp {
		upstream http://127.0.0.1:9
		tool read_file {
			description "Read a file."
			get /files/{path}
			input_schema <<JSON
				{"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
				JSON
		}
	}
}
`)
	if len(paths) != 1 || paths["read_file"] != "/files/{path}" {
		t.Errorf("adapted tools %s, want path /files/{path}", asJSON(paths))
	}
}

// Every shorthand the Caddyfile adapter expands whose name could be an
// argument name comes back as that argument in a tool's path line.
func TestShorthandNamesAsArguments(t *testing.T) {
	t.Parallel()
	names := []string{
		"host", "hostport", "port", "orig_method", "orig_uri", "orig_path", "orig_dir", "orig_file",
		"orig_query", "method", "uri", "path", "dir", "file", "query", "remote", "remote_host",
		"remote_port", "scheme", "uuid", "upstream_hostport", "client_ip",
		"header.X-Id", "cookie.session", "labels.0", "path.0", "file.ext", "query.page",
		"re.m.1", "vars.user",
		"tls_cipher", "tls_version", "tls_client_fingerprint", "tls_client_issuer",
		"tls_client_serial", "tls_client_subject", "tls_client_certificate_pem",
		"tls_client_certificate_der_base64", "rp.status", "resp.status_code", "err.status_code",
		"file_match.relative",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			_, paths := adaptedToolPaths(t, ":8080 {\n\tmcp {\n\t\ttool t {\n\t\t\tdescription d\n\t\t\tget /x/{"+
				name+"}\n\t\t\targ "+name+"\n\t\t}\n\t}\n}\n")
			if want := "/x/{" + name + "}"; len(paths) != 1 || paths["t"] != want {
				t.Errorf("adapted tools %s, want path %s", asJSON(paths), want)
			}
		})
	}
}

// Shorthands stay as written in text that is never replaced: titles,
// descriptions, defaults, enums, schemas and the path template.
func TestShorthandsStayInTextNeverReplaced(t *testing.T) {
	t.Parallel()
	handlers := adaptMCPHandlers(t, `:8080 {
	mcp {
		tool read {
			title "Read {path}"
			description "Read the file at {path} on {host}"
			get /files/{path}
			arg path required "Where, like {dir}/{file}"
			arg mode {
				default "{query}"
				enum "{query}" raw
			}
			output_schema <<JSON
			{"type":"object","description":"as {uri}"}
			JSON
		}
	}
}
`)
	raw := string(handlers[0])
	for _, want := range []string{`"Read {path}"`, `"Read the file at {path} on {host}"`, `"Where, like {dir}/{file}"`,
		`"default":"{query}"`, `"enum":["{query}","raw"]`, `as {uri}`, `"/files/{path}"`} {
		if !strings.Contains(raw, want) {
			t.Errorf("adapted JSON lacks %s:\n%s", want, raw)
		}
	}
}

// adaptedToolPaths adapts a Caddyfile that holds one mcp handler and
// returns the handler's JSON and the path line of each of its tools, by
// tool name, as the adapter left them.
func adaptedToolPaths(t *testing.T, input string) (json.RawMessage, map[string]string) {
	t.Helper()
	handlers := adaptMCPHandlers(t, input)
	if len(handlers) != 1 {
		t.Fatalf("found %d mcp handlers, want 1", len(handlers))
	}
	var cfg struct {
		Tools []struct {
			Name string `json:"name"`
			Path string `json:"path"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(handlers[0], &cfg); err != nil {
		t.Fatal(err)
	}
	paths := make(map[string]string, len(cfg.Tools))
	for _, tool := range cfg.Tools {
		paths[tool.Name] = tool.Path
	}
	return handlers[0], paths
}
