package declarations

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evanw/esbuild/pkg/api"
)

// Run with UPDATE_GOLDEN=1 to rewrite the .ts files, then read every one.
var updateGolden = os.Getenv("UPDATE_GOLDEN") != ""

// A golden input is a tools/list result of one backend, named after the
// file, or a list of backends.
type goldenInput struct {
	Tools    []goldenTool `json:"tools"`
	Backends []struct {
		Name         string       `json:"name"`
		Description  string       `json:"description"`
		Instructions string       `json:"instructions"`
		Tools        []goldenTool `json:"tools"`
	} `json:"backends"`
}

type goldenTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

func toolDecls(tools []goldenTool) []Tool {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	idents, _ := AssignNames(names)
	decls := make([]Tool, len(tools))
	for i, t := range tools {
		decls[i] = Tool{
			Name:         t.Name,
			Ident:        idents[i],
			Description:  t.Description,
			InputSchema:  t.InputSchema,
			OutputSchema: t.OutputSchema,
		}
	}
	return decls
}

func TestDeclarationsGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "declarations", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs in testdata/declarations")
	}
	for _, input := range inputs {
		name := strings.TrimSuffix(filepath.Base(input), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			var in goldenInput
			if err := json.Unmarshal(data, &in); err != nil {
				t.Fatalf("%s: %v", input, err)
			}
			var backends []Backend
			if in.Tools != nil {
				backends = append(backends, Backend{Name: SanitizeIdentifier(name), Tools: toolDecls(in.Tools)})
			}
			for _, b := range in.Backends {
				backends = append(backends, Backend{Name: b.Name, Description: b.Description, Instructions: b.Instructions, Tools: toolDecls(b.Tools)})
			}
			got := Render(backends)
			if again := Render(backends); again != got {
				t.Fatal("Declarations is not deterministic")
			}

			golden := strings.TrimSuffix(input, ".json") + ".ts"
			if updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from Render(%s):\n%s", golden, input, firstDifference(string(want), got))
			}
			checkTypeScript(t, string(want))
		})
	}
}

func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant: %s\n got: %s", i+1, wl, gl)
		}
	}
	return "(no line differs)"
}

// checkTypeScript requires src to be TypeScript that esbuild parses without
// an error or a warning, and to declare only: nothing may survive as
// JavaScript, which is how a description escaping its comment would show.
func checkTypeScript(t *testing.T, src string) {
	t.Helper()
	res := api.Transform(src, api.TransformOptions{
		Loader:        api.LoaderTS,
		LegalComments: api.LegalCommentsNone,
	})
	for _, m := range append(res.Errors, res.Warnings...) {
		line := ""
		if m.Location != nil {
			line = fmt.Sprintf("%d:%d %s", m.Location.Line, m.Location.Column, m.Location.LineText)
		}
		t.Errorf("esbuild: %s at %s", m.Text, line)
	}
	if code := strings.TrimSpace(string(res.Code)); code != "" {
		t.Errorf("declarations compile to JavaScript code:\n%s", code)
	}
}

// The example of the design, in full.
func TestDeclarationsWeatherExample(t *testing.T) {
	got := Render([]Backend{{
		Name:        "weather",
		Description: "Weather service.",
		Tools: []Tool{{
			Name:        "get_weather",
			Ident:       "get_weather",
			Description: "Current weather for a city.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{
				"city":{"type":"string","description":"City name, e.g. Paris"},
				"units":{"type":"string","enum":["metric","imperial"]}},
				"required":["city"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{
				"temperature":{"type":"number"},"conditions":{"type":"string"}},
				"required":["temperature","conditions"]}`),
		}},
	}})
	want := `/** Weather service. */
declare const weather: {
  /** Current weather for a city. */
  get_weather(input: { /** City name, e.g. Paris */ city: string; units?: "metric" | "imperial" }): Promise<WeatherGetWeatherOutput>;
};
type WeatherGetWeatherOutput = { temperature: number; conditions: string };
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	checkTypeScript(t, got)
}

// Every place where backend text reaches the output gets text that tries to
// end its comment or string and run code.
func TestDeclarationsCommentSafety(t *testing.T) {
	const attack = "*/ globalThis.pwned = 1; /*\n*/ pwned() //\u2028*/ x\r*/"
	schema, _ := json.Marshal(map[string]any{
		"type":        "object",
		"description": attack,
		"properties": map[string]any{
			attack: map[string]any{
				"type":        "string",
				"description": attack,
				"format":      attack,
				"pattern":     attack,
				"default":     attack,
				"enum":        []any{attack, "*/"},
			},
			"nested": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"x": map[string]any{"description": attack, "const": attack},
				},
				"additionalProperties": map[string]any{"description": attack},
			},
		},
		"required": []string{attack},
	})
	src := Render([]Backend{{
		Name:        "svc",
		Description: attack,
		Tools: []Tool{
			{Name: attack, Ident: SanitizeIdentifier(attack), Description: attack, InputSchema: schema, OutputSchema: schema},
			// A caller that forgot to sanitize must not be able to inject.
			{Name: "raw", Ident: "x(): void; } ; globalThis.pwned = 1; declare const y: {", InputSchema: schema},
		},
	}, {
		Name: "bad name = 1; globalThis.pwned = 2; declare const z",
	}})
	// Inside strings the text may stay as it is; esbuild finds anything
	// that got out of a comment or a string.
	checkTypeScript(t, src)
}

func TestDeclarationsKeepsPropertyOrder(t *testing.T) {
	src := Render([]Backend{{Name: "s", Tools: []Tool{{
		Name: "t", Ident: "t",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"zeta":{},"alpha":{},"mu":{},"alpha":{"type":"string"}}}`),
	}}}})
	want := "t(input?: { zeta?: unknown; alpha?: string; mu?: unknown }): Promise<unknown>;"
	if !strings.Contains(src, want) {
		t.Errorf("want %s in:\n%s", want, src)
	}
}

func TestDeclarationsFallbackNames(t *testing.T) {
	src := Render([]Backend{
		{Name: "my-api", Tools: []Tool{{Name: "get-x"}, {Name: "del", Ident: "delete"}}},
	})
	for _, want := range []string{"declare const my_api: {", "  get_x(input?: {}): Promise<unknown>;", "  delete_(input?: {}): Promise<unknown>;"} {
		if !strings.Contains(src, want) {
			t.Errorf("want %q in:\n%s", want, src)
		}
	}
	checkTypeScript(t, src)
}

// Schemas that would take forever or fill memory if expanded naively end
// quickly in a bounded declaration.
func TestDeclarationsBounded(t *testing.T) {
	// Every definition refers twice to the next: 2^40 paths if expanded.
	var defs []string
	for i := 0; i < 40; i++ {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"left":{"$ref":"#/$defs/d%d"},"right":{"$ref":"#/$defs/d%d"}}}`, i, i+1, i+1))
	}
	defs = append(defs, `"d40":{"type":"string"}`)
	dag := `{"type":"object","properties":{"root":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`

	// Many wide properties with long descriptions.
	var props []string
	long := strings.Repeat("word ", 200)
	for i := 0; i < 2000; i++ {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"object","description":%q,"properties":{"a":{"type":"string","description":%q}}}`, i, long, long))
	}
	wide := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`

	// JSON nested far deeper than any schema needs.
	deep := strings.Repeat(`{"items":`, 200000) + "{}" + strings.Repeat("}", 200000)
	deepArray := `{"type":"object","properties":{"x":{"enum":[` + strings.Repeat("[", 300000) + strings.Repeat("]", 300000) + `]}}}`

	// A long enum.
	var values []string
	for i := 0; i < 100000; i++ {
		values = append(values, fmt.Sprintf(`"value-%d"`, i))
	}
	enum := `{"type":"object","properties":{"v":{"enum":[` + strings.Join(values, ",") + `]}}}`

	for name, schema := range map[string]string{"dag": dag, "wide": wide, "deep": deep, "deepArray": deepArray, "enum": enum} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			src := Render([]Backend{{Name: "s", Tools: []Tool{{
				Name: "t", Ident: "t", InputSchema: json.RawMessage(schema), OutputSchema: json.RawMessage(schema),
			}}}})
			// Generous for -race; an expansion that is not bounded would
			// take years, not seconds.
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			// Input and output, each bounded, plus the @param lines.
			if len(src) > 4*declMaxTypeSize {
				t.Errorf("declarations are %d bytes, want at most %d", len(src), 4*declMaxTypeSize)
			}
			checkTypeScript(t, src)
		})
	}
}
