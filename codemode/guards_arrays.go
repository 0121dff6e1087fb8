package codemode

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// join is Array.prototype.join, or toLocaleString with item: written here
// to count its result as it goes. An array met again inside itself joins
// as "", as in other engines; nesting is bounded, since each level is a
// native call that the call stack limit does not see.
func (ex *execution) join(this, separator goja.Value, item func(goja.Value) string, what string) goja.Value {
	if goja.IsUndefined(this) || goja.IsNull(this) {
		panic(ex.newError("TypeError", what+" called on null or undefined"))
	}
	obj := this.ToObject(ex.vm)
	for _, o := range ex.joining {
		if o == obj {
			return ex.vm.ToValue("")
		}
	}
	if len(ex.joining) >= maxJSONNesting {
		ex.limit(fmt.Sprintf("%s: the arrays nest more than %d levels deep", what, maxJSONNesting))
	}
	ex.joining = append(ex.joining, obj)
	defer func() { ex.joining = ex.joining[:len(ex.joining)-1] }()
	n := ex.lengthOf(obj)
	ex.checkLength(n, what)
	sep := ","
	if !goja.IsUndefined(separator) {
		sep = separator.String()
	}
	var b strings.Builder
	for i := int64(0); i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		if e := obj.Get(strconv.FormatInt(i, 10)); e != nil && !goja.IsUndefined(e) && !goja.IsNull(e) {
			if item != nil {
				b.WriteString(item(e))
			} else {
				b.WriteString(e.String())
			}
		}
		if b.Len() > ex.limits.MaxString {
			ex.checkString(float64(b.Len()), what)
		}
		if i%checkStride == checkStride-1 {
			ex.checkpoint()
		}
	}
	return ex.vm.ToValue(b.String())
}

// localeString is e.toLocaleString(), as toLocaleString joins it.
func (ex *execution) localeString(e goja.Value) string {
	m, ok := goja.AssertFunction(e.ToObject(ex.vm).Get("toLocaleString"))
	if !ok {
		panic(ex.newError("TypeError", "toLocaleString is not a function"))
	}
	return mustCall(m, e).String()
}

// flat is Array.prototype.flat, written here (with flatMap) to count what
// it produces: nested arrays multiply a length checked at the top.
func (ex *execution) flat(call goja.FunctionCall) goja.Value {
	depth := 1.0
	if d := call.Argument(0); !goja.IsUndefined(d) {
		if depth = math.Trunc(d.ToFloat()); math.IsNaN(depth) {
			depth = 0
		}
	}
	return ex.flatten(call.This, depth, nil, nil, "Array.prototype.flat")
}

// flatMap is Array.prototype.flatMap (see flat).
func (ex *execution) flatMap(call goja.FunctionCall) goja.Value {
	return ex.flatten(call.This, 1, call.Argument(0), call.Argument(1), "Array.prototype.flatMap")
}

func (ex *execution) flatten(this goja.Value, depth float64, mapper, thisArg goja.Value, what string) goja.Value {
	if goja.IsUndefined(this) || goja.IsNull(this) {
		panic(ex.newError("TypeError", what+" called on null or undefined"))
	}
	src := this.ToObject(ex.vm)
	n := ex.lengthOf(src)
	ex.checkLength(n, what)
	var fn goja.Callable
	if mapper != nil {
		var ok bool
		if fn, ok = goja.AssertFunction(mapper); !ok {
			panic(ex.newError("TypeError", what+": the mapper is not a function"))
		}
	}
	out := ex.speciesCreate(src)
	var flat []any // when out is nil: a plain array, made at the end
	var count, steps int64
	var walk func(src *goja.Object, n int64, depth float64, level int)
	walk = func(src *goja.Object, n int64, depth float64, level int) {
		if level > maxJSONNesting {
			ex.limit(fmt.Sprintf("%s: the arrays nest more than %d levels deep", what, maxJSONNesting))
		}
		for i := int64(0); i < n; i++ {
			if steps++; steps%checkStride == 0 {
				ex.checkpoint()
			}
			e := src.Get(strconv.FormatInt(i, 10))
			if e == nil {
				continue // a hole
			}
			if fn != nil && level == 0 {
				e = mustCall(fn, thisArg, e, ex.vm.ToValue(i), src)
			}
			if inner, ok := e.(*goja.Object); ok && depth > 0 && isArray(inner) {
				m := ex.lengthOf(inner)
				ex.checkLength(m, what)
				walk(inner, m, depth-1, level+1)
				continue
			}
			count++
			ex.checkLength(count, what)
			if out == nil {
				flat = append(flat, e)
			} else if err := out.DefineDataProperty(strconv.FormatInt(count-1, 10), e, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
				panic(err)
			}
		}
	}
	walk(src, n, depth, 0)
	if out == nil {
		return ex.vm.NewArray(flat...)
	}
	return out
}

// speciesCreate is ArraySpeciesCreate(o, 0): the kind of array o's
// constructor asks for, so that subclasses of Array flatten to their kind;
// nil for a plain array.
func (ex *execution) speciesCreate(o *goja.Object) *goja.Object {
	if !isArray(o) {
		return nil
	}
	c := o.Get("constructor")
	if c == ex.arrayCtor {
		return nil
	}
	if ctor, ok := c.(*goja.Object); ok {
		if c = ctor.GetSymbol(goja.SymSpecies); c != nil && goja.IsNull(c) {
			c = nil
		}
	}
	if isUndefined(c) || c == ex.arrayCtor {
		return nil
	}
	ctor, ok := c.(*goja.Object)
	if !ok {
		panic(ex.newError("TypeError", "the array's constructor is not a constructor"))
	}
	a, err := ex.vm.New(ctor, ex.vm.ToValue(0))
	if err != nil {
		panic(err)
	}
	return a
}
