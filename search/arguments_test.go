package search

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw   any
		query string
		limit int
		fault Fault
		given string // Problem.Argument or Problem.Limit
	}{
		{map[string]any{"query": "list issues"}, "list issues", DefaultLimit, 0, ""},
		{map[string]any{"query": "x", "limit": nil}, "x", DefaultLimit, 0, ""},
		{map[string]any{"query": "x", "limit": 1.0}, "x", 1, 0, ""},
		{map[string]any{"query": "x", "limit": json.Number("20")}, "x", 20, 0, ""},
		{map[string]any{"query": "x", "limit": json.Number("2.0")}, "x", 2, 0, ""},
		{map[string]any{"query": strings.Repeat("a", MaxQuery)}, strings.Repeat("a", MaxQuery), DefaultLimit, 0, ""},
		{"words", "", 0, NotAnObject, ""},
		{[]any{"x"}, "", 0, NotAnObject, ""},
		{map[string]any{"query": "x", "page": 2.0}, "", 0, UnknownArgument, "page"},
		{nil, "", 0, QueryNotString, ""},
		{map[string]any{}, "", 0, QueryNotString, ""},
		{map[string]any{"query": 7.0}, "", 0, QueryNotString, ""},
		{map[string]any{"query": " \t\n"}, "", 0, QueryEmpty, ""},
		{map[string]any{"query": strings.Repeat("a", MaxQuery+1)}, "", 0, QueryTooLong, ""},
		{map[string]any{"query": "x", "limit": 2.5}, "", 0, LimitNotInteger, ""},
		{map[string]any{"query": "x", "limit": "5"}, "", 0, LimitNotInteger, ""},
		{map[string]any{"query": "x", "limit": json.Number("1e400")}, "", 0, LimitNotInteger, ""},
		{map[string]any{"query": "x", "limit": 0.0}, "", 0, LimitOutOfRange, "0"},
		{map[string]any{"query": "x", "limit": json.Number("21")}, "", 0, LimitOutOfRange, "21"},
		{map[string]any{"query": "x", "limit": -1.0}, "", 0, LimitOutOfRange, "-1"},
		{map[string]any{"query": "x", "limit": json.Number("9007199254740993")}, "", 0, LimitOutOfRange, "9.007199254740992e+15"},
	} {
		query, limit, p := ParseArguments(tc.raw)
		var fault Fault
		var given string
		if p != nil {
			fault, given = p.Fault, p.Argument+p.Limit
		}
		if query != tc.query || limit != tc.limit || fault != tc.fault || given != tc.given {
			t.Errorf("ParseArguments(%.40v) = %q, %d, %+v; want %q, %d, fault %d %q", tc.raw, query, limit, p, tc.query, tc.limit, tc.fault, tc.given)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		limit int
		fault Fault
	}{
		{"x", 1, 0},
		{strings.Repeat("a", MaxQuery), MaxLimit, 0},
		{"", 5, QueryEmpty},
		{strings.Repeat("a", MaxQuery+1), 5, QueryTooLong},
		{"x", 0, LimitOutOfRange},
		{"x", MaxLimit + 1, LimitOutOfRange},
	} {
		var fault Fault
		if p := Check(tc.query, tc.limit); p != nil {
			fault = p.Fault
		}
		if fault != tc.fault {
			t.Errorf("Check(%.20q, %d): fault %d, want %d", tc.query, tc.limit, fault, tc.fault)
		}
	}
}
