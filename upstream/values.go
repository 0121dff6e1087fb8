package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

var errNotScalar = errors.New("arrays and objects cannot go here")

// scalarString formats a JSON scalar the way it is written in a URL or a
// header: strings as they are, numbers without exponent or trailing zeros,
// booleans as true and false.
func scalarString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case bool:
		return strconv.FormatBool(v), nil
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return "", fmt.Errorf("number %v cannot be sent", v)
		}
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case json.Number:
		return v.String(), nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case nil:
		return "", nil
	default:
		return "", errNotScalar
	}
}

// jsonText is v's JSON text as the API reads it: <, > and & as they are,
// not escaped for HTML.
func jsonText(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// queryStrings formats a value for the query string or a form body: a
// scalar is one value, an array repeats the key once per item, and an
// object (only reachable through an input_schema, whose properties may
// be of any type) is sent as its JSON text.
func queryStrings(v any) ([]string, error) {
	switch v := v.(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			s, err := scalarString(item)
			if errors.Is(err, errNotScalar) {
				s, err = jsonText(item)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case map[string]any:
		s, err := jsonText(v)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	default:
		s, err := scalarString(v)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
}
