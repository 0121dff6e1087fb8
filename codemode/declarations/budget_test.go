package declarations

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// declaredType is the text of `type name = ...;` in src, "" if none.
func declaredType(src, name string) string {
	start := strings.Index(src, "\ntype "+name+" = ")
	if start < 0 {
		if !strings.HasPrefix(src, "type "+name+" = ") {
			return ""
		}
	} else {
		start++
	}
	rest := src[start:]
	if end := strings.Index(rest, ";\n"); end >= 0 && !strings.HasSuffix(rest[:strings.Index(rest, "\n")], "{") {
		return rest[:end+2]
	}
	end := strings.Index(rest, "\n};\n")
	if end < 0 {
		return rest
	}
	return rest[:end+4]
}

// method is the text of a method's signature in src, from its name to its
// return type.
func method(t *testing.T, src, ident string) (sig, result string) {
	t.Helper()
	start := strings.Index(src, "\n  "+ident+"(input")
	if start < 0 {
		t.Fatalf("no method %s in:\n%s", ident, src)
	}
	rest := src[start+1:]
	m := regexp.MustCompile(`\): Promise<(\w+)>;\n`).FindStringSubmatchIndex(rest)
	if m == nil {
		t.Fatalf("method %s has no end", ident)
	}
	return rest[:m[1]], rest[m[2]:m[3]]
}

// topMembers are the members printed at the first level of an object type
// printed on lines, with whether each is optional.
func topMembers(typeText, indent string) map[string]bool {
	members := make(map[string]bool)
	re := regexp.MustCompile(`(?m)^` + indent + `("(?:[^"\\]|\\.)*"|[\w$]+)(\??): `)
	for _, m := range re.FindAllStringSubmatch(typeText, -1) {
		members[strings.Trim(m[1], `"`)] = m[2] == "?"
	}
	// Members printed on one line: `{ a: string; b?: number }`.
	if len(members) == 0 {
		inline := regexp.MustCompile(`(?:\{ |; )(?:/\*\*.*?\*/ )?([\w$]+)(\??): `)
		for _, m := range inline.FindAllStringSubmatch(typeText, -1) {
			if _, seen := members[m[1]]; !seen {
				members[m[1]] = m[2] == "?"
			}
		}
	}
	return members
}

type schemaTop struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// checkMembers requires every property of schema among members, the
// required ones not optional.
func checkMembers(t *testing.T, what string, raw json.RawMessage, members map[string]bool) {
	t.Helper()
	var s schemaTop
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	required := make(map[string]bool)
	for _, r := range s.Required {
		required[r] = true
	}
	for name := range s.Properties {
		optional, ok := members[name]
		switch {
		case !ok:
			t.Errorf("%s: the member %s is not declared", what, name)
		case required[name] && optional:
			t.Errorf("%s: the required member %s is declared optional", what, name)
		}
	}
}

// The 23 tools of the issue: every member of every input and output is
// declared (the first level always shows), the required ones required;
// in at most 32 KiB. The strict listing has GitHub's required members;
// the lenient one (the default) has none.
func TestDeclarationsTwentyThreeTools(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"github-ten-strict.json", "github-ten.json"} {
		t.Run(strings.TrimSuffix(file, ".json"), func(t *testing.T) {
			t.Parallel()
			backends := fixtureBackends(t, file)
			src := Render(backends)
			if again := Render(backends); again != src {
				t.Fatal("Declarations is not deterministic")
			}
			t.Logf("%d tools: %d bytes of declarations", len(backends[0].Tools)+len(backends[1].Tools), len(src))
			if n := len(backends[0].Tools) + len(backends[1].Tools); n != 23 {
				t.Fatalf("%d tools in the fixtures, want 23", n)
			}
			if len(src) > 32<<10 {
				t.Errorf("the 23 tools declare in %d bytes, more than 32 KiB", len(src))
			}
			checkTypeScript(t, src)
			for _, be := range backends {
				for _, tool := range be.Tools {
					sig, result := method(t, src, tool.Ident)
					checkMembers(t, tool.Name+" input", tool.InputSchema, topMembers(sig, "    "))
					if len(tool.OutputSchema) == 0 || string(tool.OutputSchema) == "null" {
						if result != "unknown" {
							t.Errorf("%s has no output schema but returns %s", tool.Name, result)
						}
						continue
					}
					decl := declaredType(src, result)
					if decl == "" {
						t.Fatalf("%s returns %s, which is not declared", tool.Name, result)
					}
					checkMembers(t, tool.Name+" output", tool.OutputSchema, topMembers(decl, "  "))
				}
			}

			golden := filepath.Join("testdata", "tools", strings.TrimSuffix(file, ".json")+"-and-everything.ts")
			if updateGolden {
				if err := os.WriteFile(golden, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
			}
			if src != string(want) {
				t.Errorf("%s differs:\n%s", golden, firstDifference(string(want), src))
			}
		})
	}
}

// get_issue's answer keeps title, state, user and number, required, and
// pulls get its head and base; issues_get and issues_create return the
// one issue type, declared once; a type used in many places (GitHub's
// user) is declared once and named.
func TestDeclarationsGitHubIssue(t *testing.T) {
	t.Parallel()
	src := Render(fixtureBackends(t, "github-ten-strict.json"))
	_, get := method(t, src, "issues_get")
	_, create := method(t, src, "issues_create")
	if get != create || get != "GithubIssue" {
		t.Errorf("issues_get returns %s and issues_create %s, want both GithubIssue", get, create)
	}
	if n := strings.Count(src, "\ntype GithubIssue = "); n != 1 {
		t.Errorf("GithubIssue is declared %d times", n)
	}
	issue := declaredType(src, "GithubIssue")
	for _, want := range []string{"\n  title: string;\n", "\n  state: string;\n", "\n  number: number;\n", "\n  user: GithubOwner | null;\n", "\n  assignee: GithubOwner | null;\n"} {
		if !strings.Contains(issue, want) {
			t.Errorf("GithubIssue lacks %q:\n%s", want, issue)
		}
	}
	_, pull := method(t, src, "pulls_get")
	pr := declaredType(src, pull)
	for _, want := range []string{"\n  head: GithubBase;\n", "\n  base: GithubBase;\n", "\n  title: string;\n", "\n  merged: boolean;\n"} {
		if !strings.Contains(pr, want) {
			t.Errorf("%s lacks %q:\n%s", pull, want, pr)
		}
	}
	if base := declaredType(src, "GithubBase"); !strings.Contains(base, "ref: string;") || !strings.Contains(base, "sha: string;") {
		t.Errorf("GithubBase: %s", base)
	}
	owner := declaredType(src, "GithubOwner")
	for _, want := range []string{"\n  login: string;\n", "\n  id: number;\n"} {
		if !strings.Contains(owner, want) {
			t.Errorf("GithubOwner lacks %q:\n%s", want, owner)
		}
	}
	// Shared types are declared once: no two declarations have the same
	// body.
	bodies := make(map[string]string)
	for _, m := range regexp.MustCompile(`(?m)^type (\w+) = `).FindAllStringSubmatch(src, -1) {
		decl := declaredType(src, m[1])
		body := strings.TrimPrefix(decl, "type "+m[1]+" = ")
		if other, dup := bodies[body]; dup && len(body) > declShareMinSize {
			t.Errorf("%s and %s are the same type:\n%s", other, m[1], body)
		}
		bodies[body] = m[1]
	}
}

// Each description is written once: no @param line repeats an argument's
// comment, an argument comment shared by the backend's tools (GitHub's
// owner and repo) is written at its first use, the comment of the
// properties a shared type is the value of is written above the type.
func TestDeclarationsDescriptionsOnce(t *testing.T) {
	t.Parallel()
	src := Render(fixtureBackends(t, "github-ten-strict.json"))
	if strings.Contains(src, "@param") {
		t.Error("@param lines repeat the arguments' comments")
	}
	for _, once := range []string{
		"The account owner of the repository. The name is not case sensitive.",
		"The name of the repository without the `.git` extension.",
		"A GitHub user.",
		"Create an issue\n",
	} {
		if n := strings.Count(src, once); n != 1 {
			t.Errorf("%q is written %d times", once, n)
		}
	}
}

// unknown only where the schema says nothing: a member the budget does
// not show is an object whose members may be read (`{ [key: string]:
// unknown }`), and a result without an output schema is unknown.
func TestDeclarationsUnknownOnlyWhereSchemaSaysNothing(t *testing.T) {
	t.Parallel()
	src := Render(fixtureBackends(t, "github-ten-strict.json"))
	rest := strings.NewReplacer("[key: string]: unknown", "", "Promise<unknown>", "").Replace(src)
	if n := strings.Count(rest, "unknown"); n != 0 {
		t.Errorf("%d unknown types where GitHub's schemas say what is there", n)
	}

	got := Render([]Backend{{Name: "s", Tools: []Tool{{Name: "t", Ident: "t",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"any":{},"described":{"description":"Anything at all"},"obj":{"type":"object","properties":{"x":{"type":"string"}}},
			"open":{"type":"object"}},"required":["any","missing"]}`),
	}}}})
	want := `t(input: {
    any: unknown;
    /** Anything at all */
    described?: unknown;
    obj?: { x?: string };
    open?: { [key: string]: unknown };
    missing: unknown;
  }): Promise<unknown>;`
	if !strings.Contains(got, want) {
		t.Errorf("want\n%s\nin\n%s", want, got)
	}
}

// nestedSchema is an object of width properties, each an object of the
// same kind, depth levels down, all different (nothing to share), each
// described. A member on level n is named "l<n>_" and its path.
func nestedSchema(width, depth int, path string) string {
	level := strings.Count(path, "_") + 1
	if level > depth {
		return `{"type":"string"}`
	}
	var props, req []string
	for i := 0; i < width; i++ {
		name := fmt.Sprintf("l%d_%s%d", level, path, i)
		child := nestedSchema(width, depth, fmt.Sprintf("%s%d_", path, i))
		props = append(props, fmt.Sprintf("%q:%s", name, strings.Replace(child, `{`, fmt.Sprintf(`{"description":"Property %s.",`, name), 1)))
		req = append(req, fmt.Sprintf("%q", name))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `]}`
}

// Past the budget the deepest levels collapse before any other, each
// object shown whole or not at all: every member of the first level is
// there, and no member of the deepest; required members are never
// optional; an object not shown can still be read (`{ [key: string]:
// unknown }`), never unknown.
func TestDeclarationsBudgetCollapsesDeepestLevels(t *testing.T) {
	t.Parallel()
	// 6, 36, 216 and 1296 members on four levels, all required: far past
	// any budget. As an output only, and as both input and output, where
	// every object is used twice and declared once, under a name.
	schema := json.RawMessage(nestedSchema(6, 4, ""))
	for _, c := range []struct {
		name   string
		tool   Tool
		budget int
	}{
		{"output", Tool{Name: "t", Ident: "t", OutputSchema: schema}, declOutputBudget + 200},
		{"shared", Tool{Name: "t", Ident: "t", InputSchema: schema, OutputSchema: schema}, declInputBudget + declOutputBudget + declNamedPool + 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := Render([]Backend{{Name: "s", Tools: []Tool{c.tool}}})
			checkTypeScript(t, src)
			shown := make([]int, 5)
			for level := 1; level <= 4; level++ {
				names := make(map[string]bool)
				for _, m := range regexp.MustCompile(fmt.Sprintf(`\b(l%d_[0-9_]+): `, level)).FindAllStringSubmatch(src, -1) {
					names[m[1]] = true
				}
				shown[level] = len(names)
				if shown[level]%6 != 0 {
					t.Errorf("%d members of level %d: not whole objects", shown[level], level)
				}
			}
			t.Logf("%d bytes, members shown by level: %v", len(src), shown[1:])
			if shown[1] != 6 || shown[2] == 0 || shown[4] != 0 {
				t.Errorf("members shown by level %v, want all 6 of the first, some of the second, none of the last", shown[1:])
			}
			for level := 2; level <= 4; level++ {
				if shown[level] > 0 && shown[level-1] < [...]int{0, 6, 36, 216}[level-1] {
					t.Errorf("level %d shown while level %d is not whole: %v", level, level-1, shown[1:])
				}
			}
			if strings.Contains(strings.NewReplacer("[key: string]: unknown", "", "Promise<unknown>", "").Replace(src), "unknown") {
				t.Errorf("unknown as a fallback:\n%s", src)
			}
			if regexp.MustCompile(`\bl[0-9_]+\?: `).MatchString(src) {
				t.Errorf("a required member declared optional:\n%s", src)
			}
			if len(src) > c.budget {
				t.Errorf("%d bytes, past the budgets' %d", len(src), c.budget)
			}
		})
	}
}

// Two tools whose schemas hold the same object type declare it once,
// named after the property it is most often the value of; a small one
// stays inline.
func TestDeclarationsSharedStructure(t *testing.T) {
	t.Parallel()
	address := `{"type":"object","description":"A postal address.","properties":{"street":{"type":"string"},"city":{"type":"string"},"postcode":{"type":"string"},"country":{"type":"string","description":"ISO 3166 code"}},"required":["city","country"]}`
	point := `{"type":"object","properties":{"x":{"type":"number"}}}`
	src := Render([]Backend{{Name: "shop", Tools: []Tool{
		{Name: "get_customer", Ident: "get_customer", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"address":` + address + `,"billing":` + address + `,"at":` + point + `},"required":["name","address"]}`)},
		{Name: "ship", Ident: "ship", InputSchema: json.RawMessage(`{"type":"object","properties":{"address":` + address + `,"at":` + point + `},"required":["address"]}`)},
	}}})
	checkTypeScript(t, src)
	for _, want := range []string{
		"/** A postal address. */\ntype ShopAddress = {\n  street?: string;\n  city: string;\n  postcode?: string;\n  /** ISO 3166 code */\n  country: string;\n};\n",
		"  ship(input: { address: ShopAddress; at?: { x?: number } }): Promise<unknown>;\n",
		"\n  address: ShopAddress;\n  billing?: ShopAddress;\n  at?: { x?: number };\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("want\n%s\nin\n%s", want, src)
		}
	}
	if n := strings.Count(src, "street?: string"); n != 1 {
		t.Errorf("the address is written %d times:\n%s", n, src)
	}
}
