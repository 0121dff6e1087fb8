package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

var argTypes = map[string]string{ // type word -> item type for arrays, "" for scalars
	"string": "", "integer": "", "number": "", "boolean": "", "object": "", "array": "",
	"string[]": "string", "integer[]": "integer", "number[]": "number", "boolean[]": "boolean", "object[]": "object",
}

// ArgTypes returns the type words of arg lines, each with the item type
// it gives an array ("" for the rest).
func ArgTypes() map[string]string {
	out := make(map[string]string, len(argTypes))
	for word, items := range argTypes {
		out[word] = items
	}
	return out
}

// SchemaType is the JSON Schema type of a type word and its item type.
func SchemaType(word string) (typ, items string) {
	if items = argTypes[word]; items != "" {
		return "array", items
	}
	return word, ""
}

// argsSchema builds the input schema from typed args, in their order.
func argsSchema(args []Arg) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	mirrored := make(map[string]*Arg) // by lowercased header name
	for i := range args {
		a := &args[i]
		word := a.Type
		if word == "" {
			word = "string"
		}
		if _, ok := argTypes[word]; !ok {
			return nil, argError(a.Name, fmt.Errorf("arg %q: unknown type %q (want string, integer, number, boolean, object, array, or string[], integer[], number[], boolean[], object[])", a.Name, a.Type))
		}
		typ, items := SchemaType(word)
		if err := checkMirror(a, typ, mirrored); err != nil {
			return nil, argError(a.Name, fmt.Errorf("arg %q: %v", a.Name, err))
		}
		prop, err := propertySchema(a, typ, items)
		if err != nil {
			return nil, argError(a.Name, fmt.Errorf("arg %q: %v", a.Name, err))
		}
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(a.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(prop)
		if a.Required {
			required = append(required, a.Name)
		}
	}
	b.WriteString(`}`)
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return b.Bytes(), nil
}

// propertySchema is the schema of one typed arg. A nullable one has the
// type [typ, "null"], and null joins its enum: an enum of values alone
// would refuse null, whatever the type says. (The enum of an array lists
// its items, and the items do not become nullable.)
func propertySchema(a *Arg, typ, items string) ([]byte, error) {
	var b bytes.Buffer
	if a.Nullable {
		fmt.Fprintf(&b, `{"type":[%q,"null"]`, typ)
	} else {
		fmt.Fprintf(&b, `{"type":%q`, typ)
	}
	if a.Description != "" {
		d, _ := json.Marshal(a.Description)
		b.WriteString(`,"description":`)
		b.Write(d)
	}
	if a.MirrorHeader != "" {
		h, _ := json.Marshal(a.MirrorHeader)
		b.WriteString(`,"x-mcp-header":`)
		b.Write(h)
	}
	values := a.Enum
	if a.Nullable && typ != "array" && len(values) > 0 && !slices.ContainsFunc(values, isNull) {
		values = append(slices.Clip(values), json.RawMessage("null"))
	}
	enum, err := enumJSON(values)
	if err != nil {
		return nil, err
	}
	if typ == "array" && (items != "" || enum != nil) {
		// For an array, the enum lists the allowed items.
		b.WriteString(`,"items":{`)
		if items != "" {
			fmt.Fprintf(&b, `"type":%q`, items)
			if enum != nil {
				b.WriteByte(',')
			}
		}
		if enum != nil {
			b.WriteString(`"enum":`)
			b.Write(enum)
		}
		b.WriteByte('}')
	} else if enum != nil {
		b.WriteString(`,"enum":`)
		b.Write(enum)
	}
	if a.Default != nil {
		if !json.Valid(a.Default) {
			return nil, fmt.Errorf("default is not valid JSON: %s", a.Default)
		}
		b.WriteString(`,"default":`)
		b.Write(a.Default)
	}
	b.WriteByte('}')
	// The default must itself be valid, or every call without it fails.
	if a.Default != nil {
		s, err := CompileSchema(b.Bytes())
		if err != nil {
			return nil, err
		}
		var v any
		_ = json.Unmarshal(a.Default, &v)
		if err := s.Validate(v); err != nil {
			return nil, fmt.Errorf("default %s does not fit the type and enum: %s", a.Default, strings.Join(Violations(err), "; "))
		}
	}
	return b.Bytes(), nil
}

// checkMirror checks an arg's mirror_header: a header name, once per tool
// whatever its case (headers are named case-insensitively), on a value a
// header holds as SEP-2243 writes it: a string, an integer or a boolean,
// never null (a number's text has more than one spelling, and an array or
// object has none). mirrored holds the names taken so far.
// paramPrefix begins the header of a mirrored argument.
const paramPrefix = "Mcp-Param-"

func checkMirror(a *Arg, typ string, mirrored map[string]*Arg) error {
	name := a.MirrorHeader
	if name == "" {
		return nil
	}
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("mirror_header %q: not a header field name (letters, digits and !#$%%&'*+-.^_`|~)", name)
	}
	if len(name) >= len(paramPrefix) && strings.EqualFold(name[:len(paramPrefix)], paramPrefix) {
		return fmt.Errorf("mirror_header %s: name it without the %s prefix, which clients add", name, paramPrefix)
	}
	switch typ {
	case "string", "integer", "boolean":
	default:
		return fmt.Errorf("mirror_header %s: only a string, integer or boolean arg is mirrored into a header, not %s", name, a.Type)
	}
	if a.Nullable {
		return fmt.Errorf("mirror_header %s: a nullable arg is not mirrored into a header", name)
	}
	if other, ok := mirrored[strings.ToLower(name)]; ok {
		return fmt.Errorf("mirror_header %s: arg %q mirrors into Mcp-Param-%s already", name, other.Name, other.MirrorHeader)
	}
	mirrored[strings.ToLower(name)] = a
	return nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func enumJSON(values []json.RawMessage) ([]byte, error) {
	if len(values) == 0 {
		return nil, nil
	}
	for _, v := range values {
		if !json.Valid(v) {
			return nil, fmt.Errorf("enum value is not valid JSON: %s", v)
		}
	}
	return json.Marshal(values)
}

// schemaProperty is what placement needs to know of a top-level property.
type schemaProperty struct {
	Type    string
	Default any
}

// objectProperties checks that doc is an object schema and returns its
// top-level properties.
func objectProperties(doc []byte) (map[string]schemaProperty, error) {
	var root struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if root.Type != "object" {
		return nil, fmt.Errorf(`the root must be an object schema ("type": "object")`)
	}
	props := make(map[string]schemaProperty, len(root.Properties))
	for name, raw := range root.Properties {
		var p struct {
			Type    any `json:"type"`
			Default any `json:"default"`
		}
		_ = json.Unmarshal(raw, &p) // a boolean schema has neither
		typ, _ := p.Type.(string)
		props[name] = schemaProperty{Type: typ, Default: p.Default}
	}
	return props, nil
}

// PropertyNames returns the names of the top-level properties of an
// object schema.
func PropertyNames(doc []byte) ([]string, error) {
	props, err := objectProperties(doc)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(props)), nil
}
