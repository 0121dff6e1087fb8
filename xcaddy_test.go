package caddymcp

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/modules/standard" // respond, for the directive order
	"github.com/mark3labs/mcp-go/mcp"

	_ "github.com/caddy-mcp/caddy-mcp/caddymcp"
	"github.com/caddy-mcp/caddy-mcp/internal/adapttest"
	"github.com/caddy-mcp/caddy-mcp/internal/version"
)

// manifest is what xcaddy.json states that the code can contradict.
type manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Module  string `json:"module"`
	Modules []struct {
		ID        string `json:"id"`
		Directive string `json:"directive"`
		Order     string `json:"order"`
	} `json:"modules"`
	Directives    []string `json:"directives"`
	Compatibility struct {
		Caddy               string   `json:"caddy"`
		Go                  string   `json:"go"`
		MCPProtocolVersions []string `json:"mcp_protocol_versions"`
	} `json:"compatibility"`
}

// TestManifestMatchesCode holds xcaddy.json, the plugin manifest, to the
// code: the module path and Go version of go.mod, the plugin version, the
// Caddy modules and directives this package registers and their order, the
// Caddy version built against and the protocol versions mcp-go serves.
func TestManifestMatchesCode(t *testing.T) {
	raw, err := os.ReadFile("xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("xcaddy.json: %v", err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	modLine := func(pattern string) string {
		t.Helper()
		match := regexp.MustCompile(`(?m)` + pattern).FindSubmatch(gomod)
		if match == nil {
			t.Fatalf("go.mod has no line matching %s", pattern)
		}
		return string(match[1])
	}

	if want := modLine(`^module (\S+)$`); m.Module != want {
		t.Errorf("module is %q, go.mod says %q", m.Module, want)
	}
	if want := m.Module[strings.LastIndex(m.Module, "/")+1:]; m.Name != want {
		t.Errorf("name is %q, the module path ends in %q", m.Name, want)
	}
	if m.Version != version.Version {
		t.Errorf("version is %q, the plugin reports %q", m.Version, version.Version)
	}

	var ids, directives []string
	for _, mod := range m.Modules {
		ids = append(ids, mod.ID)
		if _, err := caddy.GetModule(mod.ID); err != nil {
			t.Errorf("module %s: %v", mod.ID, err)
		}
		if mod.Directive != "" {
			directives = append(directives, mod.Directive)
		}
	}
	for _, id := range caddy.Modules() {
		info, err := caddy.GetModule(id)
		if err != nil {
			t.Fatal(err)
		}
		typ := reflect.TypeOf(info.New())
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		if strings.HasPrefix(typ.PkgPath(), m.Module+"/") && !slices.Contains(ids, id) {
			t.Errorf("the plugin registers %s, which xcaddy.json does not list", id)
		}
	}
	if !slices.Equal(m.Directives, directives) {
		t.Errorf("directives are %q, the modules' are %q", m.Directives, directives)
	}
	for _, mod := range m.Modules {
		if mod.Order != "" {
			checkDirectiveOrder(t, mod.Directive, mod.Order)
		}
	}

	caddyVersion := strings.TrimPrefix(modLine(`^\s+github\.com/caddyserver/caddy/v2 (v\S+)`), "v")
	if !satisfies(caddyVersion, m.Compatibility.Caddy) {
		t.Errorf("compatibility.caddy %q does not admit the Caddy of go.mod, %s", m.Compatibility.Caddy, caddyVersion)
	}
	goVersion := modLine(`^go (\S+)$`)
	if lower, ok := strings.CutPrefix(m.Compatibility.Go, ">="); !ok || compareVersions(lower, goVersion) != 0 {
		t.Errorf("compatibility.go %q: want >=%s, the go line of go.mod (an older Go does not build the module)", m.Compatibility.Go, goVersion)
	}
	if !sameSet(m.Compatibility.MCPProtocolVersions, mcp.ValidProtocolVersions) {
		t.Errorf("mcp_protocol_versions are %q, mcp-go serves %q", m.Compatibility.MCPProtocolVersions, mcp.ValidProtocolVersions)
	}
}

// checkDirectiveOrder requires the handler of directive to come where
// order ("before respond", "after header") puts it when both are in one
// site block without route, written the other way round.
func checkDirectiveOrder(t *testing.T, directive, order string) {
	t.Helper()
	position, standard, ok := strings.Cut(order, " ")
	if !ok || (position != "before" && position != "after") {
		t.Errorf("directive %s: order %q: want before or after a standard directive", directive, order)
		return
	}
	block := map[string]string{
		"mcp":      "mcp {\n\t\ttool ping {\n\t\t\tdescription Ping.\n\t\t\tget /ping\n\t\t}\n\t}",
		"codemode": "codemode {\n\t\tbackend shop http://127.0.0.1:9/mcp\n\t}",
	}[directive]
	if block == "" {
		t.Errorf("directive %s: no example block to adapt", directive)
		return
	}
	first, second := block, standard+" x"
	if position == "before" {
		first, second = second, first
	}
	out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(":8080 {\n\t"+first+"\n\t"+second+"\n}\n"), nil)
	if err != nil {
		t.Errorf("directive %s: %v", directive, err)
		return
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	handlers := adapttest.HandlerNames(doc)
	mine, theirs := slices.Index(handlers, directive), slices.Index(handlers, standardHandler[standard])
	if mine < 0 || theirs < 0 || (position == "before") != (mine < theirs) {
		t.Errorf("directive %s: handlers in the order %q, want it %s %s", directive, handlers, position, standard)
	}
}

// standardHandler is the handler name of a standard directive in the JSON.
var standardHandler = map[string]string{"respond": "static_response", "reverse_proxy": "reverse_proxy", "header": "headers"}

// satisfies reports whether version meets every space-separated
// constraint of spec, each >=, >, <= or < and a version.
func satisfies(version, spec string) bool {
	fields := strings.Fields(spec)
	if len(fields) == 0 {
		return false
	}
	for _, c := range fields {
		op := c[:len(c)-len(strings.TrimLeft(c, "<>="))]
		cmp := compareVersions(version, c[len(op):])
		ok := map[string]bool{">=": cmp >= 0, ">": cmp > 0, "<=": cmp <= 0, "<": cmp < 0}[op]
		if !ok {
			return false
		}
	}
	return true
}

// compareVersions compares dotted versions number by number; a missing
// number is 0.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
