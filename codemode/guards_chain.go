package codemode

import (
	"fmt"
	"reflect"
	"weak"

	"github.com/dop251/goja"
)

// Native recursion. When a goja built-in calls a function it was handed
// (a getter, a toString, a proxy trap, a bound function's target) and that
// function is native too, the call is a Go call: the JavaScript call stack
// limit never sees it, and a Go stack that passes its ceiling is a fatal
// error that no recover catches. One line of code was enough:
//
//	const o = {}; o.toString = Object.prototype.toLocaleString; String(o)
//
// and so was a chain of 600,000 proxies whose apply trap is Reflect.apply.
// Two bounds close this:
//
//   - chains: a proxy is one level deeper than its target and its handler,
//     a bound function one level deeper than its target, its this and its
//     bound arguments; new Proxy, Proxy.revocable and bind refuse a chain
//     deeper than maxChainDepth. A chain of proxies forwards an operation
//     down to its end without any trap, so only its length bounds it.
//   - nesting: the built-ins that can call back into what they are given,
//     bound functions and proxy traps are counted while they run, and
//     more than max_stack_depth of them inside each other end the
//     execution. Every native cycle passes through one of them (see
//     guards_nesting.go).
//
// Chain depths live in a map keyed by weak pointers, so that it keeps no
// proxy alive; entries of collected objects are pruned as the map grows.

// maxChainDepth bounds how many proxies and bound functions deep one may be
// built on another. Real code stacks two or three; each level costs from
// about 110 bytes of Go stack (a get through empty handlers) to 1.1 KiB (an
// apply trap of Reflect.apply), and a chain may be walked once per counted
// call (see nativeGuards), so the bound keeps 2048 nested walks of the
// longest chain within a few tens of MiB of the 512 MiB the Go stack can
// grow to.
const maxChainDepth = 100

// maxNativeNesting caps the counted native calls that may run inside each
// other, whatever max_stack_depth says: one holds from 0.5 to 2 KiB of Go
// stack, or up to 16 KiB with a chain of maxChainDepth proxies walked under
// it, so 8192 of them stay within 128 MiB.
const maxNativeNesting = 8192

// nativeGuards is the per-execution state of the recursion guards.
type nativeGuards struct {
	ex        *execution
	vm        *goja.Runtime
	nested    int // counted native calls running inside each other
	maxNested int
	depths    chainDepths
	// counting holds the counting proxies of the built-ins (see count),
	// original the built-in behind each.
	counting map[*goja.Object]*goja.Object
	original map[*goja.Object]*goja.Object
	builtins *goja.ProxyTrapConfig
	// hasInstance is Function.prototype[Symbol.hasInstance], and
	// boundHasInstance what a bound target's counting proxy gives instead
	// (see counted).
	hasInstance, boundHasInstance goja.Value
}

var (
	proxyType = reflect.TypeOf(goja.Proxy{})
	funcType  = reflect.TypeOf((func(goja.FunctionCall) goja.Value)(nil))
)

// guardNativeWork installs the guards of native work that the guards in
// guards.go do not bound by size: recursion through built-ins (this file
// and guards_nesting.go), string searches (guards_search.go), sorts
// (guards_sort.go) and normalize (guards_strings.go).
func (ex *execution) guardNativeWork(global *goja.Object) error {
	g := &nativeGuards{ex: ex, vm: ex.vm, maxNested: min(ex.limits.MaxStackDepth, maxNativeNesting),
		counting: make(map[*goja.Object]*goja.Object), original: make(map[*goja.Object]*goja.Object)}
	g.builtins = &goja.ProxyTrapConfig{Apply: func(fn *goja.Object, this goja.Value, args []goja.Value) goja.Value {
		return g.call(fn, this, args)
	}}
	proto := func(name string) *goja.Object {
		return global.Get(name).(*goja.Object).Get("prototype").(*goja.Object)
	}
	ex.guardSearches(proto("String"))
	ex.guardNormalize(proto("String"))
	ex.guardSorts(proto("Array"))
	g.guardProxy(global)
	g.guardBind(proto("Function"))
	return g.countBuiltins(global)
}

// call calls fn, counted.
func (g *nativeGuards) call(fn *goja.Object, this goja.Value, args []goja.Value) goja.Value {
	defer g.leave()
	g.enter()
	return callObject(fn, this, args)
}

// enter counts a native call that begins, and ends the execution if it is
// one too many; leave, deferred before, counts it out.
func (g *nativeGuards) enter() {
	if g.nested++; g.nested > g.maxNested {
		g.tooDeep()
	}
}

func (g *nativeGuards) leave() { g.nested-- }

func (g *nativeGuards) tooDeep() {
	g.ex.limit(fmt.Sprintf("built-in functions, getters, proxy traps and bound functions called each other more than %d deep "+
		"(max_stack_depth): a recursion through native code, which the call stack limit does not see", g.maxNested))
}

// callObject calls a function as a built-in would: a Go call, which
// throws by panicking.
func callObject(fn *goja.Object, this goja.Value, args []goja.Value) goja.Value {
	if raw, ok := fn.Export().(func(goja.FunctionCall) goja.Value); ok {
		return orUndefined(raw(goja.FunctionCall{This: this, Arguments: args}))
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		panic(fmt.Errorf("sandbox: %s is not callable", fn.ClassName()))
	}
	return mustCall(call, this, args...)
}

// counted returns a proxy of fn whose calls and constructions are counted;
// with this set, fn is called with it whatever it was called on (a trap is
// called on the handler the code gave, not on the one goja holds).
func (g *nativeGuards) counted(fn *goja.Object, this goja.Value) *goja.Object {
	var self *goja.Object
	cfg := &goja.ProxyTrapConfig{Apply: func(t *goja.Object, that goja.Value, args []goja.Value) goja.Value {
		if this != nil {
			that = this
		}
		return g.call(t, that, args)
	}}
	if this == nil {
		// goja's instanceof cannot see through a proxy of a function, and
		// a bound function's instanceof asks its target.
		cfg.GetSym = func(t *goja.Object, s *goja.Symbol, _ goja.Value) goja.Value {
			v := t.GetSymbol(s)
			if s == goja.SymHasInstance && v == g.hasInstance {
				return g.boundHasInstance
			}
			return orUndefined(v)
		}
	}
	if construct, ok := goja.AssertConstructor(fn); ok {
		cfg.Construct = func(t *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			defer g.leave()
			g.enter()
			return constructFor(construct, self, t, newTarget, args)
		}
	}
	self = g.vm.ToValue(g.vm.NewProxy(fn, cfg)).(*goja.Object)
	return self
}

// constructFor constructs with construct as a proxy self of t does: new
// self is new t.
func constructFor(construct goja.Constructor, self, t, newTarget *goja.Object, args []goja.Value) *goja.Object {
	if newTarget == self {
		newTarget = t
	}
	o, err := construct(newTarget, args...)
	if err != nil {
		panic(err)
	}
	return o
}

// guardProxy replaces Proxy and Proxy.revocable: each checks the depth of
// the chain and gives the original a handler whose traps are counted.
func (g *nativeGuards) guardProxy(global *goja.Object) {
	orig, ok := global.Get("Proxy").(*goja.Object)
	if !ok {
		return
	}
	construct, _ := goja.AssertConstructor(orig)
	call, _ := goja.AssertFunction(orig)
	var self *goja.Object
	p := g.vm.NewProxy(orig, &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			return mustCall(call, this, args...) // throws: Proxy needs new
		},
		Construct: func(t *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			args, depth := g.proxyArgs(args, "new Proxy")
			o := constructFor(construct, self, t, newTarget, args)
			g.depths.set(o, depth)
			return o
		},
	})
	self = g.vm.ToValue(p).(*goja.Object)
	g.original[self] = orig
	if revocable, ok := goja.AssertFunction(orig.Get("revocable")); ok {
		_ = defineMethod(g.vm, orig, "revocable", 2, func(c goja.FunctionCall) goja.Value {
			args, depth := g.proxyArgs(c.Arguments, "Proxy.revocable")
			r := mustCall(revocable, c.This, args...)
			if p, ok := r.(*goja.Object).Get("proxy").(*goja.Object); ok {
				g.depths.set(p, depth)
			}
			return r
		})
	}
	_ = global.DefineDataProperty("Proxy", self, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// proxyArgs checks the chain a new proxy of args[0] with handler args[1]
// makes, and returns the arguments for the original, the handler replaced.
// Arguments the original refuses are left for it to refuse.
func (g *nativeGuards) proxyArgs(args []goja.Value, what string) ([]goja.Value, int) {
	if len(args) < 2 {
		return args, 0
	}
	target, ok1 := args[0].(*goja.Object)
	handler, ok2 := args[1].(*goja.Object)
	if !ok1 || !ok2 {
		return args, 0
	}
	depth := 1 + max(g.depths.of(target), g.depths.of(handler))
	g.checkChain(depth, what)
	return []goja.Value{target, g.handlerFor(handler)}, depth
}

// handlerFor is the handler goja holds for a proxy with the code's handler
// h: each trap it is asked for is looked up on h, as goja would, and
// handed back counted, to be called on h.
func (g *nativeGuards) handlerFor(h *goja.Object) *goja.Object {
	type trap struct{ fn, counted *goja.Object }
	traps := map[string]trap{}
	hp := g.vm.NewProxy(g.vm.NewObject(), &goja.ProxyTrapConfig{
		Get: func(_ *goja.Object, name string, _ goja.Value) goja.Value {
			v := h.Get(name)
			fn, ok := v.(*goja.Object)
			if !ok || fn.ExportType() != funcType && fn.ExportType() != proxyType {
				return orUndefined(v)
			}
			if _, callable := goja.AssertFunction(fn); !callable {
				return v
			}
			if t, ok := traps[name]; ok && t.fn == fn {
				return t.counted
			}
			c := g.counted(fn, h)
			traps[name] = trap{fn, c}
			return c
		},
	})
	return g.vm.ToValue(hp).(*goja.Object)
}

// guardBind replaces Function.prototype.bind: it checks the depth of the
// chain, and binds a counted proxy of the target, so that calling the
// bound function is counted.
func (g *nativeGuards) guardBind(fnProto *goja.Object) {
	orig, ok := goja.AssertFunction(fnProto.Get("bind"))
	if !ok {
		return
	}
	g.hasInstance = fnProto.GetSymbol(goja.SymHasInstance)
	g.boundHasInstance = g.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		p, _ := call.This.Export().(goja.Proxy)
		return g.vm.ToValue(p.Target() != nil && g.vm.InstanceOf(call.Argument(0), p.Target()))
	})
	_ = defineMethod(g.vm, fnProto, "bind", 1, func(call goja.FunctionCall) goja.Value {
		target, ok := call.This.(*goja.Object)
		if _, callable := goja.AssertFunction(call.This); !ok || !callable {
			return mustCall(orig, call.This, call.Arguments...) // throws
		}
		depth := g.depths.of(target)
		for _, a := range call.Arguments {
			depth = max(depth, g.depths.of(a))
		}
		depth++
		g.checkChain(depth, "Function.prototype.bind")
		bound := mustCall(orig, g.counted(target, nil), call.Arguments...)
		g.depths.set(bound.(*goja.Object), depth)
		return bound
	})
}

func (g *nativeGuards) checkChain(depth int, what string) {
	if depth > maxChainDepth {
		g.ex.limit(fmt.Sprintf("%s: a chain of %d proxies and bound functions, each built on the last, is over the sandbox's limit of %d",
			what, depth, maxChainDepth))
	}
}

// chainDepths maps proxies and bound functions to the depth of their
// chain; what it does not hold has depth 0.
type chainDepths struct {
	m       map[weak.Pointer[goja.Object]]int
	pruneAt int
}

func (c *chainDepths) of(v goja.Value) int {
	o, ok := v.(*goja.Object)
	if !ok || len(c.m) == 0 {
		return 0
	}
	if t := o.ExportType(); t != funcType && t != proxyType {
		return 0 // only functions and proxies are ever in the map
	}
	return c.m[weak.Make(o)]
}

func (c *chainDepths) set(o *goja.Object, depth int) {
	if c.m == nil {
		c.m, c.pruneAt = make(map[weak.Pointer[goja.Object]]int), 1024
	}
	if len(c.m) >= c.pruneAt {
		for k := range c.m {
			if k.Value() == nil {
				delete(c.m, k)
			}
		}
		c.pruneAt = max(1024, 2*len(c.m))
	}
	c.m[weak.Make(o)] = depth
}
