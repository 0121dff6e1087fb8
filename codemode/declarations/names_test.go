package declarations

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

func TestIsIdentifier(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"weather", true},
		{"get_weather", true},
		{"_private", true},
		{"$", true},
		{"$jq", true},
		{"camelCase2", true},
		{"A", true},
		{"_2fa", true},
		{"delete_", true},
		{"type", true}, // contextual in TypeScript, a fine binding name
		{"async", true},
		{"of", true},
		{"", false},
		{"2fa", false},
		{"0", false},
		{"get-weather", false},
		{"get.weather", false},
		{"with space", false},
		{"café", false}, // valid JavaScript, but only ASCII is accepted
		{"naïve", false},
		{"tab\t", false},
		{"delete", false},
		{"class", false},
		{"await", false},
		{"yield", false},
		{"let", false},
		{"static", false},
		{"enum", false},
		{"implements", false},
		{"interface", false},
		{"package", false},
		{"private", false},
		{"protected", false},
		{"public", false},
		{"arguments", false},
		{"eval", false},
		{"null", false},
		{"true", false},
		{"false", false},
		{"undefined", false},
		{"NaN", false},
		{"Infinity", false},
		{"__proto__", false},
	} {
		if got := IsIdentifier(tc.in); got != tc.want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestReservedWord(t *testing.T) {
	for _, w := range []string{
		"break", "case", "catch", "class", "const", "continue", "debugger",
		"default", "delete", "do", "else", "enum", "export", "extends", "false",
		"finally", "for", "function", "if", "import", "in", "instanceof", "new",
		"null", "return", "super", "switch", "this", "throw", "true", "try",
		"typeof", "var", "void", "while", "with", "yield", "let", "static",
		"implements", "interface", "package", "private", "protected", "public",
		"await", "arguments", "eval", "undefined", "NaN", "Infinity",
	} {
		if !ReservedWord(w) {
			t.Errorf("ReservedWord(%q) = false", w)
		}
	}
	for _, w := range []string{"Delete", "type", "async", "get", "set", "of", "from", "weather", "constructor"} {
		if ReservedWord(w) {
			t.Errorf("ReservedWord(%q) = true", w)
		}
	}
}

func TestSanitizeIdentifier(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"get_weather", "get_weather"},
		{"get-weather", "get_weather"},
		{"get.weather", "get_weather"},
		{"get weather", "get_weather"},
		{"getWeather", "getWeather"},
		{"$ref", "$ref"},
		{"2fa-verify", "_2fa_verify"},
		{"9", "_9"},
		{"delete", "delete_"},
		{"class", "class_"},
		{"undefined", "undefined_"},
		{"__proto__", "__proto___"},
		{"", "_"},
		{"-", "_"},
		{"météo", "m_t_o"}, // one '_' per character, not per byte
		{"天気", "__"},       // likewise
		{"a\xffb", "a_b"},  // an invalid byte is one character
		{"tool/v1:run", "tool_v1_run"},
		{"delete_", "delete_"}, // already free
		{"1delete", "_1delete"},
	} {
		got := SanitizeIdentifier(tc.in)
		if got != tc.want {
			t.Errorf("SanitizeIdentifier(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !IsIdentifier(got) {
			t.Errorf("SanitizeIdentifier(%q) = %q, which is not an identifier", tc.in, got)
		}
	}
}

func TestAssignNames(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tools      []string
		idents     []string
		collisions []Collision
	}{
		{
			name:   "none",
			tools:  nil,
			idents: []string{},
		},
		{
			name:   "distinct",
			tools:  []string{"search", "get-page", "delete"},
			idents: []string{"search", "get_page", "delete_"},
		},
		{
			name:   "collisions in order",
			tools:  []string{"get-weather", "get.weather", "get_weather"},
			idents: []string{"get_weather", "get_weather_2", "get_weather_3"},
			collisions: []Collision{
				{Tool: "get.weather", Sanitized: "get_weather", Assigned: "get_weather_2"},
				{Tool: "get_weather", Sanitized: "get_weather", Assigned: "get_weather_3"},
			},
		},
		{
			name:   "suffix already taken by a real name",
			tools:  []string{"a_2", "a", "a"},
			idents: []string{"a_2", "a", "a_3"},
			collisions: []Collision{
				{Tool: "a", Sanitized: "a", Assigned: "a_3"},
			},
		},
		{
			name:   "later real name meets an assigned suffix",
			tools:  []string{"x", "x", "x_2"},
			idents: []string{"x", "x_2", "x_2_2"},
			collisions: []Collision{
				{Tool: "x", Sanitized: "x", Assigned: "x_2"},
				{Tool: "x_2", Sanitized: "x_2", Assigned: "x_2_2"},
			},
		},
		{
			name:   "reserved and empty",
			tools:  []string{"delete", "delete_", "", "-"},
			idents: []string{"delete_", "delete__2", "_", "__2"},
			collisions: []Collision{
				{Tool: "delete_", Sanitized: "delete_", Assigned: "delete__2"},
				{Tool: "-", Sanitized: "_", Assigned: "__2"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idents, collisions := AssignNames(tc.tools)
			if !reflect.DeepEqual(idents, tc.idents) {
				t.Errorf("idents = %q, want %q", idents, tc.idents)
			}
			if !reflect.DeepEqual(collisions, tc.collisions) {
				t.Errorf("collisions = %+v, want %+v", collisions, tc.collisions)
			}
			seen := make(map[string]bool)
			for _, id := range idents {
				if seen[id] {
					t.Errorf("identifier %q assigned twice", id)
				}
				seen[id] = true
				if !IsIdentifier(id) {
					t.Errorf("%q is not an identifier", id)
				}
			}
		})
	}
}

// assignNamesFromTwo is AssignNames as it was first written, searching
// the suffixes from _2 for every collision: quadratic, and the reference
// for what the names are.
func assignNamesFromTwo(tools []string) []string {
	idents := make([]string, len(tools))
	taken := make(map[string]bool)
	for i, tool := range tools {
		s := SanitizeIdentifier(tool)
		ident := s
		for n := 2; taken[ident]; n++ {
			ident = s + "_" + strconv.Itoa(n)
		}
		taken[ident] = true
		idents[i] = ident
	}
	return idents
}

// TestAssignNamesAsBefore: the names are the ones the search from _2
// gives, on lists made of few distinct names and their suffixed forms.
func TestAssignNamesAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"a", "a_2", "a_3", "a_2_2", "b", "b-2", "b.3", "delete", "delete_", "", "-", "a_10", "a_1"}
	for round := 0; round < 2000; round++ {
		tools := make([]string, rng.IntN(40))
		for i := range tools {
			tools[i] = parts[rng.IntN(len(parts))]
		}
		got, _ := AssignNames(tools)
		if want := assignNamesFromTwo(tools); !reflect.DeepEqual(got, want) {
			t.Fatalf("AssignNames(%q) = %q, want %q", tools, got, want)
		}
	}
}

// TestAssignNamesManyOfOne: 100,000 tools of one name get t, t_2, ...
// t_100000. (Searching from _2 each time, that took minutes.)
func TestAssignNamesManyOfOne(t *testing.T) {
	const n = 100000
	tools := make([]string, n)
	for i := range tools {
		tools[i] = "t"
	}
	idents, collisions := AssignNames(tools)
	if idents[0] != "t" || idents[1] != "t_2" || idents[n-1] != "t_100000" || len(collisions) != n-1 {
		t.Errorf("idents %q ... %q, %d collisions", idents[:2], idents[n-1], len(collisions))
	}
}

// BenchmarkAssignNames: 20,000 tools of one name.
func BenchmarkAssignNames(b *testing.B) {
	tools := make([]string, 20000)
	for i := range tools {
		tools[i] = "t"
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		AssignNames(tools)
	}
}
