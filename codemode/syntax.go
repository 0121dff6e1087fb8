package codemode

import (
	"math/big"
	"reflect"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// Two pieces of syntax run without bound inside goja's interpreter, where
// no guard can reach: BigInt arithmetic (`1n << (1n << 40n)` allocates
// until the process dies), and object spread and rest, which copy every
// own property in native code (`({..."x".repeat(1 << 22)})` makes four
// million properties in one uninterruptible step). The model's code never
// holds the first and compiles the second through esbuild, which lowers
// it to loops of script (see compileWrapped); eval and Function refuse
// both (checkCode).

var errNoBigInt = &Error{Kind: KindLimit, Message: "BigInt is not available in the sandbox (its arithmetic cannot be bounded here)"}

var errNoObjectSpread = &Error{Kind: KindLimit,
	Message: "object spread and rest ({...x}) are not available in eval and Function; use Object.assign, or write them in the code itself"}

// checkCode is checkSource for JavaScript that goja compiles as it is:
// eval's and Function's. It may not hold BigInt literals, object spread
// or object rest.
func (ex *execution) checkCode(src, what string) {
	ex.checkSource(src, what)
	if !bigIntCandidate.MatchString(src) && !strings.Contains(src, "...") {
		return
	}
	// Source that does not parse is left to the compiler, which reports
	// the syntax error.
	prog, err := parser.ParseFile(nil, "", src, 0, parser.WithDisableSourceMaps)
	if err != nil {
		return
	}
	switch {
	case hasBigInt(prog):
		ex.limit(errNoBigInt.Message)
	case hasObjectSpread(prog):
		ex.limit(errNoObjectSpread.Message)
	}
}

// bigIntCandidate finds what may be a BigInt literal; hasBigInt looks at
// the syntax tree to be sure, since the same text may sit in a string or
// a comment.
var bigIntCandidate = regexp.MustCompile(`(?:^|[^\w$.])(?:0[xXoObB][0-9a-fA-F_]+|[0-9][0-9_]*)n\b`)

var (
	numberLiteralType = reflect.TypeOf(&ast.NumberLiteral{})
	objectLiteralType = reflect.TypeOf(&ast.ObjectLiteral{})
	objectPatternType = reflect.TypeOf(&ast.ObjectPattern{})
	spreadElementType = reflect.TypeOf(&ast.SpreadElement{})
	bigIntType        = reflect.TypeOf(&big.Int{})
	fileType          = reflect.TypeOf(&file.File{})
)

// hasBigInt reports whether a syntax tree holds a BigInt literal.
func hasBigInt(node any) bool {
	return findNode(node, func(v reflect.Value) bool {
		if v.Type() != numberLiteralType {
			return false
		}
		value := v.Elem().FieldByName("Value")
		return !value.IsNil() && value.Elem().Type() == bigIntType
	})
}

// hasObjectSpread reports whether a syntax tree holds an object literal
// with a spread element or an object pattern with a rest element.
func hasObjectSpread(node any) bool {
	return findNode(node, func(v reflect.Value) bool {
		switch v.Type() {
		case objectLiteralType:
			props := v.Elem().FieldByName("Value")
			for i := 0; i < props.Len(); i++ {
				if p := props.Index(i); !p.IsNil() && p.Elem().Type() == spreadElementType {
					return true
				}
			}
		case objectPatternType:
			return !v.Elem().FieldByName("Rest").IsNil()
		}
		return false
	})
}

// findNode reports whether match holds for a node of a syntax tree. It
// walks the tree by reflection, since goja's ast package has no walker.
func findNode(node any, match func(reflect.Value) bool) bool {
	seen := make(map[uintptr]bool)
	var walk func(v reflect.Value) bool
	walk = func(v reflect.Value) bool {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type() == fileType || seen[v.Pointer()] {
				return false
			}
			seen[v.Pointer()] = true
			return match(v) || walk(v.Elem())
		case reflect.Interface:
			return !v.IsNil() && walk(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if walk(v.Field(i)) {
					return true
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if walk(v.Index(i)) {
					return true
				}
			}
		}
		return false
	}
	return walk(reflect.ValueOf(node))
}
