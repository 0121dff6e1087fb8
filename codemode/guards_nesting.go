package codemode

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// The built-ins whose calls are counted (see guards_chain.go). A native
// recursion needs a built-in that calls back into what it was handed with
// nothing but its this: one that reads a getter or calls a method of its
// this (toString and valueOf when it makes this a string, join, then,
// exec, toISOString, constructor for species, resolve), or one that calls
// what its arguments name (call, apply, Reflect.apply, forEach). A
// built-in that ignores its this and calls back only with arguments its
// caller fixed (Object.keys, Math.max, the constructors) cannot close a
// cycle alone: whatever passes it the next arguments is on the cycle too,
// and is counted or is JavaScript. Branded methods read nothing of their
// this but its internal slots, except those listed. So: every method of
// String.prototype and Array.prototype (each reads this), and the others
// below. goja makes a built-in function the first time it is read, so the
// list is kept to these: each costs about a microsecond per execution.
//
// The counting proxy of a built-in forwards name and length to it; its
// toString is the built-in's (Function.prototype.toString is replaced for
// that). Built-ins that guards.go rewrapped get back their own name and
// length, which the Go wrapper had lost (vm.ToValue names a Go function
// after its Go symbol).
var countedObjects = []struct {
	path string
	keys []string // nil: every method
}{
	{"String.prototype", nil}, {"Array.prototype", nil},
	{"Object.prototype", []string{"toString", "toLocaleString"}},
	{"Function.prototype", []string{"call", "apply"}},
	{"RegExp.prototype", []string{"test", "toString", "[Symbol.match]", "[Symbol.matchAll]", "[Symbol.replace]", "[Symbol.search]", "[Symbol.split]"}},
	{"Error.prototype", []string{"toString"}},
	{"Promise.prototype", nil}, {"Promise", nil},
	{"Array", []string{"from", "of"}},
	{"Reflect", []string{"apply", "construct"}},
	{"Map.prototype", []string{"forEach"}},
	{"Date.prototype", []string{"toJSON", "[Symbol.toPrimitive]"}},
	// Reached only through the buffer globals, which guards.go installs
	// lazily; counted on their first use (see countTypedLazily).
	{"%TypedArray%", []string{"from", "of"}},
	{"%TypedArray%.prototype", []string{"slice", "subarray", "map", "filter", "toString"}}, // toString is Array.prototype's
	{"ArrayBuffer.prototype", []string{"slice"}},
}

// renamedOnly are the other built-ins guards.go wraps, which get their
// names and lengths back without being counted.
var renamedOnly = []struct {
	path string
	keys []string // nil: every method
}{
	{"Object", append(append([]string(nil), keyListers...), "assign")},
	{"Reflect", []string{"ownKeys"}},
	{"RegExp.prototype", []string{"exec"}},
}

// lazyObjects is the index in countedObjects of the first lazy one.
const lazyObjects = 12

// wellKnown are the symbols built-in methods are keyed by.
var wellKnown = []*goja.Symbol{goja.SymIterator, goja.SymMatch, goja.SymMatchAll, goja.SymReplace, goja.SymSearch,
	goja.SymSplit, goja.SymHasInstance, goja.SymToPrimitive}

// builtinMethod is one counted method, as a fresh runtime has it.
type builtinMethod struct {
	object   int // index in countedObjects
	key      string
	sym      *goja.Symbol
	name     string
	length   int64
	writable goja.Flag
	counted  bool // else only renamed
}

// builtinMethods lists the counted methods, read once from a pristine
// runtime: their keys, names and lengths.
var builtinMethods = sync.OnceValues(func() ([]builtinMethod, error) {
	vm := goja.New()
	var out []builtinMethod
	for i, c := range append(countedObjects[:len(countedObjects):len(countedObjects)], renamedOnly...) {
		obj, err := resolvePath(vm, vm.GlobalObject(), c.path)
		if err != nil {
			return nil, err
		}
		for _, m := range methodsOf(vm, obj) {
			if c.keys != nil && !contains(c.keys, m.keyName()) {
				continue
			}
			m.object, m.counted = i, i < len(countedObjects)
			out = append(out, m)
		}
	}
	return out, nil
})

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (m builtinMethod) keyName() string {
	if m.sym != nil {
		return "[" + m.sym.String() + "]"
	}
	return m.key
}

// methodsOf lists the configurable data properties of obj that hold
// functions that are not constructors.
func methodsOf(vm *goja.Runtime, obj *goja.Object) []builtinMethod {
	gopd, _ := goja.AssertFunction(vm.GlobalObject().Get("Object").(*goja.Object).Get("getOwnPropertyDescriptor"))
	var out []builtinMethod
	add := func(key goja.Value, m builtinMethod) {
		d, err := gopd(goja.Undefined(), obj, key)
		desc, ok := d.(*goja.Object)
		if err != nil || !ok || desc.Get("value") == nil || !desc.Get("configurable").ToBoolean() {
			return
		}
		if m.writable = goja.FLAG_FALSE; desc.Get("writable").ToBoolean() {
			m.writable = goja.FLAG_TRUE
		}
		fn, ok := desc.Get("value").(*goja.Object)
		if !ok {
			return
		}
		if _, callable := goja.AssertFunction(fn); !callable {
			return
		}
		if _, ctor := goja.AssertConstructor(fn); ctor {
			return
		}
		m.name, m.length = fn.Get("name").String(), fn.Get("length").ToInteger()
		out = append(out, m)
	}
	for _, k := range obj.GetOwnPropertyNames() {
		add(vm.ToValue(k), builtinMethod{key: k})
	}
	for _, s := range wellKnown {
		add(s, builtinMethod{sym: s})
	}
	return out
}

// resolvePath finds "Array.prototype" or "%TypedArray%.prototype" from the
// global object, through data properties only.
func resolvePath(vm *goja.Runtime, global *goja.Object, path string) (*goja.Object, error) {
	parts := strings.Split(path, ".")
	var obj *goja.Object
	if parts[0] == "%TypedArray%" {
		obj = global.Get("Int8Array").(*goja.Object).Prototype()
	} else {
		obj, _ = global.Get(parts[0]).(*goja.Object)
	}
	for _, p := range parts[1:] {
		if obj == nil {
			break
		}
		obj, _ = obj.Get(p).(*goja.Object)
	}
	if obj == nil {
		return nil, fmt.Errorf("sandbox: no built-in object %s", path)
	}
	return obj, nil
}

// countBuiltins puts counting proxies in place of the counted built-ins
// that every execution can reach, and arranges for the lazy ones.
func (g *nativeGuards) countBuiltins(global *goja.Object) error {
	methods, err := builtinMethods()
	if err != nil {
		return err
	}
	for i, c := range countedObjects[:lazyObjects] {
		obj, err := resolvePath(g.vm, global, c.path)
		if err != nil {
			return err
		}
		g.countMethods(obj, i, methods)
	}
	for i, c := range renamedOnly {
		if obj, err := resolvePath(g.vm, global, c.path); err == nil {
			g.countMethods(obj, len(countedObjects)+i, methods)
		}
	}
	regexpProto, _ := resolvePath(g.vm, global, "RegExp.prototype")
	g.countGetter(global, regexpProto, "flags")
	g.guardToString(global)
	g.countTypedLazily(global, methods)
	return nil
}

// countMethods counts the methods of obj, countedObjects[index].
func (g *nativeGuards) countMethods(obj *goja.Object, index int, methods []builtinMethod) {
	for _, m := range methods {
		if m.object != index {
			continue
		}
		var v goja.Value
		if m.sym != nil {
			v = obj.GetSymbol(m.sym)
		} else {
			v = obj.Get(m.key)
		}
		fn, ok := v.(*goja.Object)
		if !ok {
			continue
		}
		if fn.Get("name").String() != m.name {
			_ = fn.DefineDataProperty("name", g.vm.ToValue(m.name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
			_ = fn.DefineDataProperty("length", g.vm.ToValue(m.length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
		if !m.counted {
			continue
		}
		c := g.count(fn)
		if m.sym != nil {
			_ = obj.DefineDataPropertySymbol(m.sym, c, m.writable, goja.FLAG_TRUE, goja.FLAG_FALSE)
		} else {
			_ = obj.DefineDataProperty(m.key, c, m.writable, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
	}
}

// count is the counting proxy of a built-in, one per built-in: the same
// function under two keys (values and Symbol.iterator) stays one.
func (g *nativeGuards) count(fn *goja.Object) *goja.Object {
	if c, ok := g.counting[fn]; ok {
		return c
	}
	c := g.vm.ToValue(g.vm.NewProxy(fn, g.builtins)).(*goja.Object)
	g.counting[fn], g.original[c] = c, fn
	return c
}

// countGetter counts the getter of the accessor obj[key].
func (g *nativeGuards) countGetter(global, obj *goja.Object, key string) {
	gopd, _ := goja.AssertFunction(global.Get("Object").(*goja.Object).Get("getOwnPropertyDescriptor"))
	d, err := gopd(goja.Undefined(), obj, g.vm.ToValue(key))
	if err != nil {
		return
	}
	if get, ok := d.(*goja.Object).Get("get").(*goja.Object); ok {
		_ = obj.DefineAccessorProperty(key, g.count(get), goja.Undefined(), goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}

// guardToString replaces Function.prototype.toString so that a counting
// proxy shows as the built-in it stands for ("function map() { [native
// code] }"), not as a proxy.
func (g *nativeGuards) guardToString(global *goja.Object) {
	fnProto, _ := resolvePath(g.vm, global, "Function.prototype")
	orig, ok := goja.AssertFunction(fnProto.Get("toString"))
	if !ok {
		return
	}
	_ = defineMethod(g.vm, fnProto, "toString", 0, func(call goja.FunctionCall) goja.Value {
		if o, ok := call.This.(*goja.Object); ok {
			if fn, ok := g.original[o]; ok {
				return mustCall(orig, fn)
			}
		}
		return mustCall(orig, call.This)
	})
}

// countTypedLazily counts the typed array methods when the code first
// reaches a buffer global, which guards.go made accessors that install the
// guarded constructors: each is wrapped by one that also counts the
// methods (and guards the typed array sorts), once.
func (g *nativeGuards) countTypedLazily(global *goja.Object, methods []builtinMethod) {
	gopd, ok := global.Get("Object").(*goja.Object).Get("getOwnPropertyDescriptor").Export().(func(goja.FunctionCall) goja.Value)
	if !ok {
		return
	}
	gets := map[string]*goja.Object{}
	done := false
	// once reaches the prototypes through guards.go's own getters, which
	// answer with the guarded constructors until the code assigns one (it
	// runs before any assignment).
	once := func() {
		if done {
			return
		}
		done = true
		ctor := func(name string) *goja.Object {
			if get, ok := gets[name]; ok {
				o, _ := callObject(get, global, nil).(*goja.Object)
				return o
			}
			return nil
		}
		if i8 := ctor("Int8Array"); i8 != nil {
			typed := i8.Prototype()
			g.countMethods(typed, lazyObjects, methods)
			if proto, ok := typed.Get("prototype").(*goja.Object); ok {
				g.ex.guardTypedSorts(proto)
				g.countMethods(proto, lazyObjects+1, methods)
			}
		}
		if ab := ctor("ArrayBuffer"); ab != nil {
			if proto, ok := ab.Get("prototype").(*goja.Object); ok {
				g.countMethods(proto, lazyObjects+2, methods)
			}
		}
	}
	// The accessors become proxies of guards.go's, which run once first.
	firstUse := &goja.ProxyTrapConfig{Apply: func(fn *goja.Object, this goja.Value, args []goja.Value) goja.Value {
		once()
		return callObject(fn, this, args)
	}}
	for _, name := range bufferGlobals {
		desc, ok := gopd(goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{global, g.vm.ToValue(name)}}).(*goja.Object)
		if !ok {
			continue
		}
		get, ok1 := desc.Get("get").(*goja.Object)
		set, ok2 := desc.Get("set").(*goja.Object)
		if !ok1 || !ok2 {
			continue
		}
		gets[name] = get
		_ = global.DefineAccessorProperty(name, g.vm.ToValue(g.vm.NewProxy(get, firstUse)), g.vm.ToValue(g.vm.NewProxy(set, firstUse)),
			goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
}
