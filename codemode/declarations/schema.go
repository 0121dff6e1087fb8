package declarations

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// schemaKind is the kind of JSON value a schemaNode holds.
type schemaKind uint8

const (
	schemaNull schemaKind = iota
	schemaBool
	schemaNumber
	schemaString
	schemaArray
	schemaObject
)

// schemaNode is decoded JSON that keeps the order of object keys, which
// encoding/json's maps lose and which the declarations must show.
type schemaNode struct {
	kind    schemaKind
	boolean bool
	text    string // a number's literal text or a string's value
	items   []*schemaNode
	keys    []string
	values  []*schemaNode
	lookup  map[string]int // key index of large objects
}

func (v *schemaNode) get(key string) *schemaNode {
	if v == nil || v.kind != schemaObject {
		return nil
	}
	if v.lookup != nil {
		if i, ok := v.lookup[key]; ok {
			return v.values[i]
		}
		return nil
	}
	for i, k := range v.keys {
		if k == key {
			return v.values[i]
		}
	}
	return nil
}

func (v *schemaNode) hasAny(keys []string) bool {
	for _, k := range keys {
		if v.get(k) != nil {
			return true
		}
	}
	return false
}

func (v *schemaNode) intValue() (int, bool) {
	if v == nil || v.kind != schemaNumber {
		return 0, false
	}
	f, err := strconv.ParseFloat(v.text, 64)
	if err != nil || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// set adds a key; a repeated key keeps its first position and its last
// value, as encoding/json keeps the last value.
func (v *schemaNode) set(key string, val *schemaNode) {
	const lookupFrom = 16
	if v.lookup != nil {
		if i, ok := v.lookup[key]; ok {
			v.values[i] = val
			return
		}
		v.lookup[key] = len(v.keys)
	} else {
		for i, k := range v.keys {
			if k == key {
				v.values[i] = val
				return
			}
		}
		if len(v.keys)+1 >= lookupFrom {
			v.lookup = make(map[string]int, 2*lookupFrom)
			for i, k := range v.keys {
				v.lookup[k] = i
			}
			v.lookup[key] = len(v.keys)
		}
	}
	v.keys = append(v.keys, key)
	v.values = append(v.values, val)
}

// appendJSON appends v as compact JSON.
func (v *schemaNode) appendJSON(b []byte) []byte {
	switch v.kind {
	case schemaNull:
		return append(b, "null"...)
	case schemaBool:
		return strconv.AppendBool(b, v.boolean)
	case schemaNumber:
		return append(b, v.text...)
	case schemaString:
		return append(b, quoteTS(v.text)...)
	case schemaArray:
		b = append(b, '[')
		for i, item := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.appendJSON(b)
		}
		return append(b, ']')
	default:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, quoteTS(k)...)
			b = append(b, ':')
			b = v.values[i].appendJSON(b)
		}
		return append(b, '}')
	}
}

func parseSchemaNode(data []byte) (*schemaNode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeSchemaNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeSchemaNode(dec *json.Decoder, depth int) (*schemaNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &schemaNode{kind: schemaNull}, nil
	case bool:
		return &schemaNode{kind: schemaBool, boolean: t}, nil
	case json.Number:
		return &schemaNode{kind: schemaNumber, text: t.String()}, nil
	case string:
		return &schemaNode{kind: schemaString, text: t}, nil
	case json.Delim:
		if depth >= declMaxJSONDepth {
			return &schemaNode{kind: schemaNull}, skipSchemaValue(dec)
		}
		v := &schemaNode{kind: schemaArray}
		if t == '{' {
			v.kind = schemaObject
		}
		for dec.More() {
			var key string
			if v.kind == schemaObject {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ = kt.(string)
			}
			item, err := decodeSchemaNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if v.kind == schemaObject {
				v.set(key, item)
			} else {
				v.items = append(v.items, item)
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return v, nil
	}
	return nil, errors.New("unexpected JSON token")
}

// skipSchemaValue consumes the rest of an array or object whose opening delimiter
// was just read, without recursion.
func skipSchemaValue(dec *json.Decoder) error {
	for level := 1; level > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				level++
			} else {
				level--
			}
		}
	}
	return nil
}
