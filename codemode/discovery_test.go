package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// weatherBackends are two backends whose tools a search tells apart:
// the weather tool has an output schema and a name that is not an
// identifier.
func weatherBackends() []*codemode.BackendAPI {
	return []*codemode.BackendAPI{
		codemode.NewBackendAPI(codemode.APIBackend{Name: "weather", Instructions: "Cities are English names.", Tools: []codemode.APITool{
			{Name: "get-forecast", Description: "Get the weather forecast for a city.\nDays ahead, up to 10.",
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"The city name"},"days":{"type":"integer"}},"required":["city"]}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"temperature":{"type":"number"},"sky":{"type":"string"}}}`)},
			{Name: "list_stations", Description: "List the measuring stations of a country.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"country":{"type":"string"}}}`)},
		}}),
		codemode.NewBackendAPI(codemode.APIBackend{Name: "shop", Tools: []codemode.APITool{
			{Name: "create_order", Description: "Create an order for a product.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"product":{"type":"string","description":"The product id"}}}`)},
			{Name: "refund_order", Description: "Refund an order."},
		}}),
		codemode.NewBackendAPI(codemode.APIBackend{Name: "down", Unavailable: "connection refused"}),
	}
}

func TestCatalogSearch(t *testing.T) {
	backends := weatherBackends()
	c := codemode.NewCatalog(backends)
	if c.Len() != 4 {
		t.Fatalf("indexed %d tools, want 4", c.Len())
	}
	m, err := c.Search("weather forecast for a city", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := m.Found
	if m.Of != 4 || m.Matched < len(found) {
		t.Errorf("%d of %d match, %d found", m.Matched, m.Of, len(found))
	}
	if len(found) == 0 || found[0].Backend != "weather" || found[0].Tool != "get-forecast" || found[0].Identifier != "get_forecast" {
		t.Fatalf("best match: %+v", found)
	}
	decl := found[0].Declaration
	for _, want := range []string{"declare const weather: {", "get_forecast(input: ", "city: string", "Promise<WeatherGetForecastOutput>",
		"type WeatherGetForecastOutput = ", "temperature?: number", `Calls the backend tool "get-forecast".`} {
		if !strings.Contains(decl, want) {
			t.Errorf("declaration lacks %q:\n%s", want, decl)
		}
	}
	if strings.Contains(decl, "list_stations") || strings.Contains(decl, "Cities are English") {
		t.Errorf("declaration of one tool holds more:\n%s", decl)
	}

	// Argument names and descriptions count.
	if m, _ := c.Search("product id", 1, nil); len(m.Found) != 1 || m.Found[0].Tool != "create_order" {
		t.Errorf("search by argument: %+v", m)
	}
	if m, _ := c.Search("zebra", 5, nil); len(m.Found) != 0 || m.Matched != 0 {
		t.Errorf("search of an unknown word: %+v", m)
	}

	// A view leaves tools out, and names the others as it does.
	view := []*codemode.BackendAPI{
		codemode.NewBackendAPI(codemode.APIBackend{Name: "weather", Tools: []codemode.APITool{{Name: "list_stations"}}}),
		codemode.NewBackendAPI(codemode.APIBackend{Name: "shop"}),
		backends[2],
	}
	m, err = c.Search("weather forecast stations order", 5, view)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Found) != 1 || m.Found[0].Tool != "list_stations" || m.Of != 1 {
		t.Errorf("search in a view: %+v", m)
	}
	if _, err := c.Search("x", 1, view[:1]); err == nil {
		t.Error("a view of the wrong length was taken")
	}
}

// Tools of one name are one tool to a view: a search finds it once.
func TestCatalogSearchSameNames(t *testing.T) {
	tools := []codemode.APITool{{Name: "t", Description: "weather one"}, {Name: "t", Description: "weather two"}}
	full := codemode.NewBackendAPI(codemode.APIBackend{Name: "b", Tools: tools})
	scoped := codemode.NewBackendAPI(codemode.APIBackend{Name: "b", Tools: tools[:1]})
	c := codemode.NewCatalog([]*codemode.BackendAPI{full})
	if m, _ := c.Search("weather", 5, nil); len(m.Found) != 2 || m.Found[1].Identifier != "t_2" {
		t.Errorf("full view: %+v", m)
	}
	if m, _ := c.Search("weather", 5, []*codemode.BackendAPI{scoped}); len(m.Found) != 1 || m.Found[0].Identifier != "t" {
		t.Errorf("scoped view: %+v", m)
	}
}

func TestCheckSearch(t *testing.T) {
	for _, tc := range []struct {
		query string
		limit int
		want  string
	}{
		{"", 5, "the query is empty"},
		{" \t\n", 5, "the query is empty"},
		{strings.Repeat("a", codemode.MaxSearchQuery+1), 5, fmt.Sprintf("the query is %d bytes; the limit is %d", codemode.MaxSearchQuery+1, codemode.MaxSearchQuery)},
		{"x", 0, "limit 0 is out of range: use 1 to 20"},
		{"x", codemode.MaxSearchLimit + 1, "limit 21 is out of range"},
		{"x", -1, "limit -1 is out of range"},
		{strings.Repeat("a", codemode.MaxSearchQuery), codemode.MaxSearchLimit, ""},
		{"x", 1, ""},
	} {
		err := codemode.CheckSearch(tc.query, tc.limit)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckSearch(%.20q, %d) = %v, want %q", tc.query, tc.limit, err, tc.want)
		}
	}
	if _, err := codemode.NewCatalog(weatherBackends()).Search("", 5, nil); err == nil {
		t.Error("Search took an empty query")
	}
}

func TestSearchAnswer(t *testing.T) {
	c := codemode.NewCatalog(weatherBackends())
	m, _ := c.Search("order weather forecast", 3, nil)
	found := m.Found
	if len(found) != 3 {
		t.Fatalf("found %d", len(found))
	}
	text := codemode.SearchAnswer("order weather forecast", m, 1<<20)
	for _, want := range []string{fmt.Sprintf(`%d of 4 tools match "order weather forecast"`, m.Matched), "- weather.get_forecast (the backend tool \"get-forecast\")\n",
		"- shop.create_order\n", "Cities are English names.", "```ts\n", "declare const weather: {", "declare const shop: {", "type WeatherGetForecastOutput"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "declare const shop") != 1 {
		t.Errorf("a backend declared twice:\n%s", text)
	}
	// A budget too small for two: the first is declared, the rest named.
	// Each description once: in the declaration.
	if n := strings.Count(text, "Get the weather forecast for a city."); n != 1 {
		t.Errorf("a description written %d times:\n%s", n, text)
	}
	small := codemode.SearchAnswer("q", m, 1)
	if strings.Count(small, "not declared below") != 2 || !strings.Contains(small, found[0].Identifier+"(") {
		t.Errorf("answer within a budget of 1 byte:\n%s", small)
	}
	if none := codemode.SearchAnswer("zebra", codemode.Matches{Of: 4}, 100); !strings.Contains(none, `No tool of 4 matches "zebra"`) {
		t.Errorf("answer without matches: %s", none)
	}
}

func TestSearchDescription(t *testing.T) {
	t.Parallel()
	l := codemode.Limits{}.WithDefaults()
	text := codemode.NewAPI(weatherBackends()).SearchDescription(l, "search", codemode.DefaultMaxDescription)
	for _, want := range []string{"call the search tool once", "For each step of the task", "- weather: 2 tools: get_forecast, list_stations\n",
		"- shop: 2 tools: create_order, refund_order\n", "- down: unavailable right now (connection refused)", "await tools.search(query)"} {
		if !strings.Contains(text, want) {
			t.Errorf("description lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "declare const") || strings.Contains(text, "Cities are English names.") {
		t.Errorf("description declares tools or holds instructions (the search answers hold them):\n%s", text)
	}
	if len(text) > codemode.DefaultMaxDescription {
		t.Errorf("description of %d bytes, past %d", len(text), codemode.DefaultMaxDescription)
	}
	// Thousands of tools in three backends: each backend has its count
	// and a share of the names, within the bound.
	var backends []*codemode.BackendAPI
	for _, name := range []string{"big", "bigger", "biggest"} {
		tools := make([]codemode.APITool, 3000)
		for i := range tools {
			tools[i] = codemode.APITool{Name: fmt.Sprintf("%s_tool_number_%d", name, i)}
		}
		backends = append(backends, codemode.NewBackendAPI(codemode.APIBackend{Name: name, Tools: tools}))
	}
	for _, max := range []int{codemode.MinMaxDescription, codemode.DefaultMaxDescription, 8 << 10} {
		big := codemode.NewAPI(backends).SearchDescription(l, "search", max)
		for _, want := range []string{"- big: 3000 tools: big_tool_number_0", "- bigger: 3000 tools", "- biggest: 3000 tools", "more\n"} {
			if !strings.Contains(big, want) {
				t.Errorf("description within %d lacks %q:\n%s", max, want, big)
			}
		}
		if len(big) > max || len(big) < max-200 {
			t.Errorf("description of 9000 tools within %d: %d bytes", max, len(big))
		}
	}
	// More backends than fit: the rest are counted.
	backends = nil
	for i := range 200 {
		backends = append(backends, codemode.NewBackendAPI(codemode.APIBackend{Name: fmt.Sprintf("backend_number_%d", i), Tools: []codemode.APITool{{Name: "t"}}}))
	}
	many := codemode.NewAPI(backends).SearchDescription(l, "search", codemode.MinMaxDescription)
	if len(many) > codemode.MinMaxDescription || !strings.HasSuffix(many, " more backends") {
		t.Errorf("200 backends within %d: %d bytes, ending %q", codemode.MinMaxDescription, len(many), many[max(0, len(many)-80):])
	}
}

// fakeSearch is a SearchFunc over a catalog, recording its calls.
// Searches made together run concurrently: the count is atomic.
func fakeSearch(c *codemode.Catalog, calls *atomic.Int32) codemode.SearchFunc {
	return func(_ context.Context, query string, limit int) ([]codemode.Found, error) {
		calls.Add(1)
		if query == "fail please" {
			return nil, &codemode.ToolError{Message: "the index is gone"}
		}
		m, err := c.Search(query, limit, nil)
		return m.Found, err
	}
}

// tools.search gives the code the matches as data, across the worker's
// pipe, and throws a clear error for bad arguments before anything crosses.
func TestSandboxToolsSearch(t *testing.T) {
	c := codemode.NewCatalog(weatherBackends())
	var calls atomic.Int32
	r := codemodetest.Runner(codemode.Limits{MaxToolCalls: 5})
	runs := func(code string) *codemode.Result {
		return r.RunWithSearch(context.Background(), code, nil, fakeSearch(c, &calls))
	}
	res := runs(`const m = await tools.search("weather forecast", 1);
		return m.map(x => [x.backend, x.tool, x.identifier, x.declaration.includes("get_forecast(input"), x.description.length > 0])`)
	codemodetest.WantValue(t, res, `[["weather","get-forecast","get_forecast",true,true]]`)
	codemodetest.WantValue(t, runs(`return (await tools.search("order")).length`), `2`)
	codemodetest.WantValue(t, runs(`return (await tools.search("zebra")).length`), `0`)
	codemodetest.WantValue(t, runs(`return [typeof tools, String(tools), Object.keys(tools).length]`), `["object","[tools]",0]`)
	before := calls.Load()
	for _, tc := range []struct{ code, kind, want string }{
		{`await tools.search("")`, "RangeError", "tools.search: the query is empty"},
		{`await tools.search("x".repeat(2000))`, "RangeError", "the query is 2000 bytes; the limit is 1024"},
		{`await tools.search(42)`, "TypeError", "tools.search: the query must be a string"},
		{`await tools.search()`, "TypeError", "the query must be a string"},
		{`await tools.search({query: "x"})`, "TypeError", "the query must be a string"},
		{`await tools.search("x", 0)`, "RangeError", "tools.search: limit 0 is out of range: use 1 to 20"},
		{`await tools.search("x", 21)`, "RangeError", "limit 21 is out of range"},
		{`await tools.search("x", 1.5)`, "TypeError", "the limit must be an integer"},
		{`await tools.search("x", "3")`, "TypeError", "the limit must be an integer"},
		{`await tools.search("x", NaN)`, "TypeError", "the limit must be an integer"},
	} {
		res := runs(`try { ` + tc.code + `; return "no error" } catch (e) { return e.name + ": " + e.message }`)
		var got string
		if res.Err != nil || json.Unmarshal(res.Value, &got) != nil || !strings.HasPrefix(got, tc.kind+": ") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %s %v, want a %s with %q", tc.code, res.Value, res.Err, tc.kind, tc.want)
		}
	}
	if calls.Load() != before {
		t.Errorf("bad arguments reached the search %d times", calls.Load()-before)
	}
	// The host's own error is thrown with its message.
	codemodetest.WantValue(t, runs(`try { await tools.search("fail please") } catch (e) { return e.message }`), `"tools.search: the index is gone"`)
	// Searches are tool calls: max_tool_calls bounds them.
	codemodetest.WantError(t, runs(`for (let i = 0; i < 6; i++) await tools.search("order")`), codemode.KindLimit, "max_tool_calls")
	// Together with other calls.
	codemodetest.WantValue(t, runs(`const [a, b] = await Promise.all([tools.search("create order", 1), tools.search("stations", 1)]); return [a[0].tool, b[0].tool]`),
		`["create_order","list_stations"]`)
	// Not offered, it is not there.
	codemodetest.WantValue(t, r.Run(context.Background(), `return [typeof tools, typeof tools.search, typeof tools.cut]`, nil), `["object","undefined","function"]`)
}

// The host checks a search's arguments again: a worker may send anything.
func TestSearchFuncChecksArguments(t *testing.T) {
	var calls atomic.Int32
	s := fakeSearch(codemode.NewCatalog(weatherBackends()), &calls)
	for args, want := range map[string]string{
		`{"query":"","limit":5}`:             "the query is empty",
		`{"query":"x","limit":99}`:           "limit 99 is out of range",
		`{"query":"x"}`:                      "limit 0 is out of range",
		`{"query":7,"limit":1}`:              "the arguments are not {query, limit}",
		`{"query":"x","limit":1,"z":1}`:      "the arguments are not {query, limit}",
		`[1]`:                                "the arguments are not {query, limit}",
		`{"query":"create order","limit":1}`: "",
		`{"query":"order","limit":1.25}`:     "the arguments are not {query, limit}",
	} {
		out, err := s.Binding().Call(context.Background(), "search", []byte(args))
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
		if err == nil && !strings.Contains(string(out.Value), `"create_order"`) {
			t.Errorf("%s: %s", args, out.Value)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("the search ran %d times, want 1", calls.Load())
	}
}

func TestBackendNamedTools(t *testing.T) {
	if err := codemode.CheckBackendName(codemode.SearchGlobal); err == nil || !strings.Contains(err.Error(), "shadows the sandbox global tools") {
		t.Errorf("CheckBackendName(%q) = %v", codemode.SearchGlobal, err)
	}
}

// manyTools is a catalog of n tools alike GitHub's: a verb, a thing, a
// description of a sentence or two and a few arguments.
func manyTools(n int) []*codemode.BackendAPI {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "check", "add", "remove", "set"}
	things := []string{"repository", "issue", "pull request", "comment", "label", "milestone", "release", "workflow",
		"runner", "secret", "team", "member", "gist", "project", "deployment", "environment", "webhook", "package",
		"branch", "tag", "commit", "status", "check run", "artifact", "cache", "codespace", "alert", "advisory"}
	tools := make([]codemode.APITool, n)
	for i := range tools {
		verb, thing := verbs[i%len(verbs)], things[(i/len(verbs))%len(things)]
		tools[i] = codemode.APITool{
			Name:        fmt.Sprintf("%s/%s-%s-%d", strings.ReplaceAll(thing, " ", "-"), verb, strings.ReplaceAll(thing, " ", "-"), i),
			Description: fmt.Sprintf("%s a %s of a repository or an organization. Variant %d, for the %s API.", verb, thing, i, thing),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"owner":{"type":"string","description":"The account owner"},`+
				`"repo":{"type":"string","description":"The name of the repository"},"%s_id":{"type":"integer","description":"The id of the %s"}},"required":["owner"]}`,
				strings.ReplaceAll(thing, " ", "_"), thing)),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"url":{"type":"string"}}}`),
		}
	}
	return []*codemode.BackendAPI{codemode.NewBackendAPI(codemode.APIBackend{Name: "github", Tools: tools})}
}

// BenchmarkCatalog builds the index of ~1000 backend tools, ranks them
// for a query (rank), and answers it with the declarations of the matches,
// as the search tool does (search).
func BenchmarkCatalog(b *testing.B) {
	backends := manyTools(1000)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			codemode.NewCatalog(backends)
		}
	})
	c := codemode.NewCatalog(backends)
	b.Run("rank", func(b *testing.B) {
		for b.Loop() {
			if codemode.Rank(c, "list the open issues of a repository", codemode.DefaultSearchLimit) == 0 {
				b.Fatal("nothing found")
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		var size int
		for b.Loop() {
			m, err := c.Search("list the open issues of a repository", codemode.DefaultSearchLimit, nil)
			if err != nil || len(m.Found) == 0 {
				b.Fatal(err, len(m.Found))
			}
			size = len(codemode.SearchAnswer("list the open issues of a repository", m, 32<<10))
		}
		b.ReportMetric(float64(size), "answer_bytes")
	})
	b.Run("search-in-a-view", func(b *testing.B) {
		view := []*codemode.BackendAPI{codemode.NewBackendAPI(codemode.APIBackend{Name: "github", Tools: codemode.ToolsOf(backends[0])[:500]})}
		for b.Loop() {
			if m, err := c.Search("delete a webhook", codemode.DefaultSearchLimit, view); err != nil || len(m.Found) == 0 {
				b.Fatal(err, len(m.Found))
			}
		}
	})
}

// Auto discovery switches to search once the whole description passes
// max_description, or the declarations max_declarations: at exactly their
// size it still declares them.
func TestDescribeSwitchesAtTheThreshold(t *testing.T) {
	t.Parallel()
	api := codemode.NewAPI(weatherBackends())
	l := codemode.Limits{}.WithDefaults()
	whole, decls := len(api.Description(l)), len(api.Declarations())
	for _, tc := range []struct {
		mode        string
		text, decls int
		search      bool
	}{
		{codemode.DiscoveryAuto, whole, decls, false},
		{codemode.DiscoveryAuto, whole - 1, decls, true},
		{codemode.DiscoveryAuto, whole, decls - 1, true},
		{codemode.DiscoveryAuto, whole + 1, decls + 1, false},
		{codemode.DiscoveryAuto, codemode.DefaultMaxDescription, codemode.DefaultMaxDeclarations, whole > codemode.DefaultMaxDescription},
		{codemode.DiscoveryAll, 0, 0, false},
		{codemode.DiscoverySearch, 1 << 30, 1 << 30, true},
	} {
		d := codemode.Discovery{Mode: tc.mode, MaxDescription: tc.text, MaxDeclarations: tc.decls, SearchTool: "search"}
		text, search := api.Describe(l, d)
		if search != tc.search {
			t.Errorf("%s within %d and %d (the description is %d bytes, its declarations %d): search %v", tc.mode, tc.text, tc.decls, whole, decls, search)
		}
		if want := api.Description(l); !search && text != want || search && text != api.SearchDescription(l, "search", tc.text) {
			t.Errorf("%s within %d and %d: the text is not the mode's", tc.mode, tc.text, tc.decls)
		}
	}
}
