package jsonschema

import "fmt"

// frame is one schema validating one value: what the closures of v5's
// validate held, in a value that can stay on the stack. v5 made three
// closures for every value validated, each an allocation, since the ones
// handed to extensions escape.
type frame struct {
	s      *Schema
	scope  *scopeNode // s, under the schemas that applied it
	vscope int        // how many of them applied to v itself
	v      interface{}
	vloc   *instanceLoc
	keep   int
	result *validationResult
}

// validationError makes an error of f's schema. Its locations are made
// into strings only if it is kept (see ValidationError.locate).
func (f *frame) validationError(keywordPath string, format string, a ...interface{}) *ValidationError {
	return &ValidationError{
		Message:     fmt.Sprintf(format, a...),
		frame:       f.scope,
		keywordPath: keywordPath,
		instance:    f.vloc,
	}
}

// validate validates v, at vpath under f's value, with sch.
func (f *frame) validate(sch *Schema, schPath string, v interface{}, vpath string) error {
	vloc := f.vloc
	if vpath != "" {
		vloc = vloc.child(vpath)
	}
	_, err := sch.validate(f.scope, 0, schPath, v, vloc, f.keep)
	return err
}

// validateInplace validates f's value with sch too, which evaluates what
// sch evaluates.
func (f *frame) validateInplace(sch *Schema, schPath string) error {
	vr, err := sch.validate(f.scope, f.vscope, schPath, f.v, f.vloc, f.keep)
	if err == nil {
		// update result
		for pname := range f.result.unevalProps {
			if _, ok := vr.unevalProps[pname]; !ok {
				delete(f.result.unevalProps, pname)
			}
		}
		f.result.unevalItems.keepOnly(vr.unevalItems)
	}
	return err
}
