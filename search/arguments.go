package search

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Bounds of the arguments of one search, the same for every tool that
// searches.
const (
	// DefaultLimit is how many matches a search without a limit returns.
	DefaultLimit = 5
	// MaxLimit is the largest limit a search takes.
	MaxLimit = 20
	// MaxQuery bounds a query, in bytes: a few words do; a pasted
	// document is a mistake.
	MaxQuery = 1 << 10
)

// Fault is what is wrong with the arguments of a search.
type Fault int

// The faults, in the order ParseArguments looks for them.
const (
	NotAnObject     Fault = iota + 1 // the arguments are not a JSON object
	UnknownArgument                  // a member other than query and limit
	QueryNotString                   // no query, or not a string
	QueryEmpty                       // a query of white space only
	QueryTooLong                     // a query of more than MaxQuery bytes
	LimitNotInteger                  // a limit that is not a whole number
	LimitOutOfRange                  // a limit below 1 or above MaxLimit
)

// Problem is a Fault and what was given with it. Each tool words it for
// its caller, naming itself.
type Problem struct {
	Fault Fault
	// Argument is the unknown member, for UnknownArgument.
	Argument string
	// QueryBytes is the query's length, for QueryTooLong.
	QueryBytes int
	// Limit is the limit given, as a number, for LimitOutOfRange.
	Limit string
}

// ParseArguments reads the arguments of a search, {query, limit?}, as
// JSON decodes them (an object as map[string]any, a number as float64 or
// json.Number): missing arguments (nil) are an empty object, a member
// other than the two is refused rather than dropped, and a limit of null
// or none is DefaultLimit. It returns what is wrong, or nil.
func ParseArguments(raw any) (query string, limit int, p *Problem) {
	var args map[string]any
	switch v := raw.(type) {
	case nil:
	case map[string]any:
		args = v
	default:
		return "", 0, &Problem{Fault: NotAnObject}
	}
	for k := range args {
		if k != "query" && k != "limit" {
			return "", 0, &Problem{Fault: UnknownArgument, Argument: k}
		}
	}
	query, ok := args["query"].(string)
	if !ok {
		return "", 0, &Problem{Fault: QueryNotString}
	}
	if p := checkQuery(query); p != nil {
		return "", 0, p
	}
	limit = DefaultLimit
	if v := args["limit"]; v != nil {
		f, ok := wholeNumber(v)
		if !ok {
			return "", 0, &Problem{Fault: LimitNotInteger}
		}
		if f < 1 || f > MaxLimit {
			return "", 0, &Problem{Fault: LimitOutOfRange, Limit: strconv.FormatFloat(f, 'g', -1, 64)}
		}
		limit = int(f)
	}
	return query, limit, nil
}

// Check checks a query and a limit already read, as ParseArguments does.
func Check(query string, limit int) *Problem {
	if p := checkQuery(query); p != nil {
		return p
	}
	if limit < 1 || limit > MaxLimit {
		return &Problem{Fault: LimitOutOfRange, Limit: strconv.Itoa(limit)}
	}
	return nil
}

func checkQuery(query string) *Problem {
	switch {
	case strings.TrimSpace(query) == "":
		return &Problem{Fault: QueryEmpty}
	case len(query) > MaxQuery:
		return &Problem{Fault: QueryTooLong, QueryBytes: len(query)}
	}
	return nil
}

// wholeNumber is v as a float64 when it is a finite JSON number without a
// fraction.
func wholeNumber(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsInf(f, 0) && f == math.Trunc(f)
}
