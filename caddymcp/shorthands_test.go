package caddymcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

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
