package openapi

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

// pieceSize is about how many bytes of a document loadPieces decodes at
// once.
const pieceSize = 256 << 10

// loadPieces loads a slimmed JSON document (slimJSON's) a piece at a
// time, then resolves its references. kin-openapi builds a node for every
// value of what it decodes before it decodes any, which for GitHub's
// document is over 100 MB held at once; here it is the nodes of one
// piece: the document without paths and components, then path items and
// each section's components about pieceSize bytes together, each piece a
// document of its own that kin-openapi decodes as it would the whole. The
// pieces' paths and components are put together; a name met twice fails
// the load, as it would have failed the decode of the whole.
func loadPieces(slim []byte) (*openapi3.T, error) {
	top, err := members(slim)
	if err != nil {
		return nil, err
	}
	var head [][]byte
	var pieces [][]byte
	for _, m := range top {
		switch m.key {
		case `"paths"`:
			pieces = append(pieces, chunks(m.value, `{"paths":`, "}")...)
		case `"components"`:
			sections, err := members(m.value)
			if err != nil {
				return nil, err
			}
			for _, s := range sections {
				pieces = append(pieces, chunks(s.value, `{"components":{`+s.key+":", "}}")...)
			}
		default:
			head = append(head, m.raw)
		}
	}
	doc, err := decodePiece(append(append([]byte("{"), bytes.Join(head, []byte(","))...), '}'))
	if err != nil {
		return nil, err
	}
	for _, p := range pieces {
		part, err := decodePiece(p)
		if err != nil {
			return nil, err
		}
		if err := merge(doc, part); err != nil {
			return nil, err
		}
	}
	if err := newLoader().ResolveRefsIn(doc, nil); err != nil {
		return nil, err
	}
	return doc, nil
}

func decodePiece(piece []byte) (*openapi3.T, error) {
	doc := &openapi3.T{}
	if err := yaml.Unmarshal(append(append([]byte(nil), documentStart...), piece...), doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// merge puts part's paths and components into doc's.
func merge(doc, part *openapi3.T) error {
	if part.Paths != nil {
		if doc.Paths == nil {
			doc.Paths = openapi3.NewPaths()
		}
		for k, v := range part.Paths.Map() {
			if doc.Paths.Value(k) != nil {
				return fmt.Errorf("path %q met twice", k)
			}
			doc.Paths.Set(k, v)
		}
	}
	if part.Components == nil {
		return nil
	}
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	to, from := reflect.ValueOf(doc.Components).Elem(), reflect.ValueOf(part.Components).Elem()
	for i := range from.NumField() {
		f := from.Field(i)
		if f.Kind() != reflect.Map || f.Len() == 0 || !to.Field(i).CanSet() || from.Type().Field(i).Name == "Extensions" {
			continue
		}
		if to.Field(i).IsNil() {
			to.Field(i).Set(reflect.MakeMap(f.Type()))
		}
		for it := f.MapRange(); it.Next(); {
			if to.Field(i).MapIndex(it.Key()).IsValid() {
				return fmt.Errorf("component %v met twice", it.Key())
			}
			to.Field(i).SetMapIndex(it.Key(), it.Value())
		}
	}
	return nil
}

// member is one member of a JSON object, in slimJSON's minified form.
type member struct {
	key   string // as written, quotes and escapes included
	value []byte
	raw   []byte // key, colon and value
}

// members splits a JSON object into its members. It reads as slimJSON
// does, checking only brackets and strings; raw is a member as written
// only in minified JSON.
func members(obj []byte) ([]member, error) {
	s := slimmer{in: obj}
	s.space()
	if s.pos >= len(obj) || obj[s.pos] != '{' {
		return nil, errSlim
	}
	s.pos++
	var out []member
	for {
		s.space()
		if s.pos < len(obj) && obj[s.pos] == '}' && len(out) == 0 {
			return out, nil
		}
		start := s.pos
		if err := s.str(); err != nil {
			return nil, err
		}
		key := string(obj[start:s.pos])
		s.space()
		if s.pos >= len(obj) || obj[s.pos] != ':' {
			return nil, errSlim
		}
		s.pos++
		s.space()
		from := s.pos
		if err := s.skip(); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, value: obj[from:s.pos], raw: obj[start:s.pos]})
		s.space()
		if s.pos >= len(obj) {
			return nil, errSlim
		}
		switch obj[s.pos] {
		case ',':
			s.pos++
		case '}':
			return out, nil
		default:
			return nil, errSlim
		}
	}
}

// chunks cuts a minified JSON object's members into objects of about
// pieceSize bytes, each between prefix and suffix. A value that is not an
// object is one chunk.
func chunks(obj []byte, prefix, suffix string) [][]byte {
	ms, err := members(obj)
	if err != nil {
		return [][]byte{[]byte(prefix + string(obj) + suffix)}
	}
	var out [][]byte
	var cur []byte
	flush := func() {
		if cur != nil {
			out = append(out, append(append(cur, '}'), suffix...))
			cur = nil
		}
	}
	for _, m := range ms {
		if cur == nil {
			cur = append([]byte(prefix), '{')
		} else {
			cur = append(cur, ',')
		}
		cur = append(cur, m.raw...)
		if len(cur) >= pieceSize {
			flush()
		}
	}
	flush()
	if out == nil {
		out = append(out, []byte(prefix+"{}"+suffix))
	}
	return out
}
