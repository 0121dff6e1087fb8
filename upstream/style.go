package upstream

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Style is how an array or object argument is written in the query, the
// path or a header, named as OpenAPI names its styles. The zero value
// keeps the behaviour from before styles: an array in the query repeats
// its key, and objects go nowhere but the body (beside an input_schema,
// an object in the query is its JSON text).
//
// In the query, for colors ["blue","black"] and point {"x":1,"y":2}:
//
//	form, explode (its default)  color=blue&color=black   x=1&y=2
//	form, explode false          color=blue,black         point=x,1,y,2
//	spaceDelimited               color=blue%20black       point=x%201%20y%202
//	pipeDelimited                color=blue%7Cblack       point=x%7C1%7Cy%7C2
//	deepObject                   (objects only)           point%5Bx%5D=1&point%5By%5D=2
//
// In the path or a header, simple: blue,black and x,1,y,2, or x=1,y=2
// with explode. Each item, property name and value is escaped on its own
// as any query or path value is, so one holding the separator, '&' or
// '=' stays inside its own part; the separators are written as OpenAPI
// 3.2 writes them (%20, %7C, and %5B %5D around a deepObject property).
// Only one level is written: an array or object inside an array or an
// object is refused per call. A scalar is written as it is in any style.
type Style string

// Styles.
const (
	StyleForm           Style = "form"
	StyleSpaceDelimited Style = "spaceDelimited"
	StylePipeDelimited  Style = "pipeDelimited"
	StyleDeepObject     Style = "deepObject"
	StyleSimple         Style = "simple"
)

// checkStyle checks the argument's style and explode against its
// placement and type, and resolves Explode. placed says whether the
// definition placed it; method is the operation's.
func (a *planArg) checkStyle(placed bool, method string) error {
	switch a.Style {
	case "":
		if a.explodeSet != nil {
			return fmt.Errorf("argument %q: explode goes only with a style", a.Name)
		}
		switch a.In {
		case InPath, InHeader:
			if a.Type == "array" || a.Type == "object" {
				return fmt.Errorf("argument %q: %s arguments cannot go in the %s", a.Name, a.Type, a.In)
			}
		case InQuery:
			if a.Type == "object" || a.Items == "object" {
				err := fmt.Errorf("argument %q: objects go only in the body, not in the query", a.Name)
				if !placed {
					err = fmt.Errorf("%w (a %s sends its arguments in the query; say \"in body\")", err, method)
				}
				return err
			}
		}
		return nil
	case StyleForm, StyleSpaceDelimited, StylePipeDelimited, StyleDeepObject:
		if a.In != InQuery {
			return fmt.Errorf("argument %q: style %s goes only with the query, and the argument goes in the %s", a.Name, a.Style, a.In)
		}
	case StyleSimple:
		if a.In != InPath && a.In != InHeader {
			return fmt.Errorf("argument %q: style simple goes only with the path or a header, and the argument goes in the %s", a.Name, a.In)
		}
	default:
		return fmt.Errorf("argument %q: unknown style %q (want form, spaceDelimited, pipeDelimited, deepObject or simple)", a.Name, a.Style)
	}
	if a.Items == "object" || a.Items == "array" {
		return fmt.Errorf("argument %q: style %s writes arrays of scalars, not of %ss", a.Name, a.Style, a.Items)
	}
	explode := a.Style == StyleForm || a.Style == StyleDeepObject
	if a.explodeSet != nil {
		explode = *a.explodeSet
	}
	switch {
	case a.Style == StyleDeepObject && a.Type == "array":
		return fmt.Errorf("argument %q: style deepObject writes objects, not arrays", a.Name)
	case a.Style == StyleDeepObject && !explode:
		return fmt.Errorf("argument %q: style deepObject is always exploded", a.Name)
	case (a.Style == StyleSpaceDelimited || a.Style == StylePipeDelimited) && explode:
		return fmt.Errorf("argument %q: style %s is never exploded (for the key repeated, use style form)", a.Name, a.Style)
	}
	a.Explode = explode
	return nil
}

// queryPair is one key and value of a query: the key as it is, the value
// already escaped.
type queryPair struct {
	key, value string
}

// styledQuery returns what the argument a with the value v adds to the
// query in its style, key being its wire name. An object in style form
// with explode, or in deepObject, adds keys of its own (its property names,
// key[name]); build checks that they take no other key.
func (a *planArg) styledQuery(key string, v any) ([]queryPair, error) {
	parts, object, err := flatten(v, a.Style)
	if err != nil {
		return nil, err
	}
	if parts == nil {
		s, err := scalarString(v)
		if err != nil {
			return nil, err
		}
		return []queryPair{{key, url.QueryEscape(s)}}, nil
	}
	if len(parts) == 0 {
		return nil, nil
	}
	switch {
	case a.Style == StyleDeepObject:
		if !object {
			return nil, fmt.Errorf("style deepObject writes objects, not arrays")
		}
		out := make([]queryPair, 0, len(parts)/2)
		for i := 0; i < len(parts); i += 2 {
			if strings.ContainsAny(parts[i], "[]") {
				return nil, fmt.Errorf("property %q: a property name with [ or ] cannot be sent in style deepObject, where it would read as another level", parts[i])
			}
			out = append(out, queryPair{key + "[" + parts[i] + "]", url.QueryEscape(parts[i+1])})
		}
		return out, nil
	case a.Style == StyleForm && a.Explode:
		if !object {
			out := make([]queryPair, len(parts))
			for i, s := range parts {
				out[i] = queryPair{key, url.QueryEscape(s)}
			}
			return out, nil
		}
		out := make([]queryPair, 0, len(parts)/2)
		for i := 0; i < len(parts); i += 2 {
			if parts[i] == "" {
				return nil, fmt.Errorf("a property with an empty name cannot be sent as a query parameter")
			}
			out = append(out, queryPair{parts[i], url.QueryEscape(parts[i+1])})
		}
		return out, nil
	}
	sep := map[Style]string{StyleForm: ",", StyleSpaceDelimited: "%20", StylePipeDelimited: "%7C"}[a.Style]
	return []queryPair{{key, joinEscaped(parts, sep, "", url.QueryEscape)}}, nil
}

// headerValue is the header value of v; send is false for an empty
// array or object in style simple, which leaves the header out.
func (a *planArg) headerValue(v any) (value string, send bool, err error) {
	if a != nil && a.Style == StyleSimple {
		parts, object, err := flatten(v, a.Style)
		if err != nil {
			return "", false, err
		}
		if parts != nil {
			return joinEscaped(parts, ",", a.pairSep(object), func(s string) string { return s }), len(parts) > 0, nil
		}
	}
	value, err = scalarString(v)
	return value, err == nil, err
}

// pairSep is what stands between a property's name and its value in the
// simple style: "=" exploded, else the comma that separates the rest.
func (a *planArg) pairSep(object bool) string {
	if object && a.Explode {
		return "="
	}
	return ""
}

// joinEscaped escapes each part and joins them with sep; with pairSep,
// the parts are name, value, name, value..., each pair joined by pairSep.
func joinEscaped(parts []string, sep, pairSep string, escape func(string) string) string {
	var b strings.Builder
	for i, s := range parts {
		if i > 0 {
			if pairSep != "" && i%2 == 1 {
				b.WriteString(pairSep)
			} else {
				b.WriteString(sep)
			}
		}
		b.WriteString(escape(s))
	}
	return b.String()
}

// flatten returns the parts of an array or an object as strings: the
// items of an array; the property names and values of an object, by name,
// a null property left out (object is then true). parts is nil for a
// scalar. Items and property values must be scalars: style writes one
// level.
func flatten(v any, style Style) (parts []string, object bool, err error) {
	switch v := v.(type) {
	case []any:
		parts = make([]string, 0, len(v))
		for i, item := range v {
			s, err := scalarString(item)
			if err != nil {
				return nil, false, fmt.Errorf("item %d: %w (style %s writes one level)", i, err, style)
			}
			parts = append(parts, s)
		}
		return parts, false, nil
	case map[string]any:
		parts = make([]string, 0, 2*len(v))
		for _, name := range slices.Sorted(maps.Keys(v)) {
			if v[name] == nil {
				continue
			}
			s, err := scalarString(v[name])
			if err != nil {
				return nil, true, fmt.Errorf("property %q: %w (style %s writes one level)", name, err, style)
			}
			parts = append(parts, name, s)
		}
		return parts, true, nil
	}
	return nil, false, nil
}

// pathList is an array or object for a path slot in style simple: the
// template escapes each part on its own and joins them with literal
// separators, so that a comma inside a part stays inside it.
type pathList struct {
	parts   []string
	pairSep string
}

func (l pathList) raw() string {
	return joinEscaped(l.parts, ",", l.pairSep, func(s string) string { return s })
}

func (l pathList) escaped() string { return joinEscaped(l.parts, ",", l.pairSep, url.PathEscape) }

// pathArgs returns args with the arrays and objects of style simple path
// arguments made pathLists; args itself is not changed.
func (p *requestPlan) pathArgs(args map[string]any) (map[string]any, error) {
	var out map[string]any
	for _, name := range p.styledPath {
		v := args[name]
		parts, object, err := flatten(v, StyleSimple)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", name, err)
		}
		if parts == nil {
			continue
		}
		if out == nil {
			out = maps.Clone(args)
		}
		out[name] = pathList{parts: parts, pairSep: p.args[name].pairSep(object)}
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}

// checkPropertyKeys refuses a query key that the properties of a styled
// object make (propertyKeys, by argument) when it is fixed by the
// configuration (fixed, case ignored, as refuseFixed does) or sent by
// another argument under its wire name (ownKeys).
func checkPropertyKeys(propertyKeys, ownKeys map[string]string, fixed url.Values) error {
	for _, key := range slices.Sorted(maps.Keys(propertyKeys)) {
		name := propertyKeys[key]
		if fixedName, taken := fixedKey(key, fixed); taken {
			return fmt.Errorf("argument %q would send the query parameter %s, which is fixed by the configuration and cannot be sent", name, fixedName)
		}
		if other, taken := ownKeys[key]; taken && other != name {
			first, second := min(name, other), max(name, other)
			return fmt.Errorf("arguments %q and %q would both send the query parameter %s", first, second, key)
		}
	}
	return nil
}

// queryParts is a query being built: the escaped values of each key.
type queryParts map[string][]string

// add adds a value, making the map on first use: most calls send no query.
func (q *queryParts) add(key, escaped string) {
	if *q == nil {
		*q = make(queryParts)
	}
	(*q)[key] = append((*q)[key], escaped)
}

// encode writes the query as url.Values.Encode does: by key, in order,
// each key escaped.
func (q queryParts) encode() string {
	if len(q) == 0 {
		return ""
	}
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(q)) {
		k := url.QueryEscape(key)
		for _, v := range q[key] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(v)
		}
	}
	return b.String()
}
