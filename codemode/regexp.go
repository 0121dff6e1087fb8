package codemode

import (
	"errors"
	"reflect"
	"sync"
	"unsafe"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// goja runs patterns with lookaround or backreferences on regexp2, which
// backtracks (/^(?=(a+)+b)/ on 40 a's never ends), and switches other
// patterns to regexp2 too when a match starts past the beginning. A
// regexp2 match stops only at its regexp's MatchTimeout, which goja
// leaves at regexp2's package default: forever. Setting that default
// would change every regexp2 user in the process, so the sandbox sets the
// timeout on its own regular expressions instead, one by one, before each
// match (see timed). goja keeps the compiled pattern in unexported
// fields; they are reached by reflection, and a goja whose layout is not
// the expected one fails every execution's setup rather than run
// unbounded matches.

// regexpFields is where goja keeps a RegExp object's compiled pattern.
type regexpFields struct {
	object      reflect.Type // *goja.regexpObject
	self        int          // goja.Object.self
	pattern     int          // regexpObject.pattern, a *regexpPattern
	src         int          // regexpPattern.src, the source regexp2 compiles
	flags       [4]int       // regexpPattern.multiline, dotAll, ignoreCase, unicode
	re2         int          // regexpPattern.regexpWrapper, Go's regexp
	backtracker int          // regexpPattern.regexp2Wrapper
	wrapper     reflect.Type // goja.regexp2Wrapper
	rx          int          // regexp2Wrapper.rx, the *regexp2.Regexp
}

var regexpLayout struct {
	once   sync.Once
	fields regexpFields
	err    error
}

// regexpFieldsOf finds goja's fields once, on a RegExp object of a
// throwaway runtime.
func regexpFieldsOf() (*regexpFields, error) {
	regexpLayout.once.Do(func() {
		regexpLayout.err = findRegexpFields(&regexpLayout.fields)
	})
	return &regexpLayout.fields, regexpLayout.err
}

func findRegexpFields(f *regexpFields) error {
	v, err := goja.New().RunString(`/a/`)
	if err != nil {
		return err
	}
	errLayout := errors.New("goja's RegExp objects are not laid out as the sandbox expects; regular expression matches cannot be bounded")
	field := func(t reflect.Type, name string, kind reflect.Kind) (int, reflect.Type, bool) {
		if t.Kind() != reflect.Struct {
			return 0, nil, false
		}
		sf, ok := t.FieldByName(name)
		if !ok || len(sf.Index) != 1 || sf.Type.Kind() != kind {
			return 0, nil, false
		}
		return sf.Index[0], sf.Type, true
	}
	var ok bool
	objType := reflect.TypeOf(v.(*goja.Object)).Elem()
	if f.self, _, ok = field(objType, "self", reflect.Interface); !ok {
		return errLayout
	}
	self := reflect.ValueOf(v.(*goja.Object)).Elem().Field(f.self)
	if self.IsNil() || self.Elem().Kind() != reflect.Pointer {
		return errLayout
	}
	f.object = self.Elem().Type()
	var patternType, wrapperPtr, rxType reflect.Type
	if f.pattern, patternType, ok = field(f.object.Elem(), "pattern", reflect.Pointer); !ok {
		return errLayout
	}
	pt := patternType.Elem()
	if f.src, _, ok = field(pt, "src", reflect.String); !ok {
		return errLayout
	}
	for i, name := range []string{"multiline", "dotAll", "ignoreCase", "unicode"} {
		if f.flags[i], _, ok = field(pt, name, reflect.Bool); !ok {
			return errLayout
		}
	}
	if f.re2, _, ok = field(pt, "regexpWrapper", reflect.Pointer); !ok {
		return errLayout
	}
	if f.backtracker, wrapperPtr, ok = field(pt, "regexp2Wrapper", reflect.Pointer); !ok {
		return errLayout
	}
	f.wrapper = wrapperPtr.Elem()
	if f.rx, rxType, ok = field(f.wrapper, "rx", reflect.Pointer); !ok || rxType != reflect.TypeOf((*regexp2.Regexp)(nil)) {
		return errLayout
	}
	return nil
}

// boundRegexp makes sure the match about to run on v, if v is a RegExp
// object, runs on a regexp2 regexp with the sandbox's match timeout,
// compiled once per pattern and execution.
func (ex *execution) boundRegexp(v goja.Value) {
	obj, ok := v.(*goja.Object)
	if !ok || ex.regexpFields == nil {
		return
	}
	f := ex.regexpFields
	self := reflect.ValueOf(obj).Elem().Field(f.self)
	if self.IsNil() || self.Elem().Type() != f.object {
		return
	}
	pp := self.Elem().Elem().Field(f.pattern)
	if pp.IsNil() {
		return
	}
	p := pp.Elem()
	if w := p.Field(f.backtracker); !w.IsNil() {
		rx := (*regexp2.Regexp)(unsafe.Pointer(w.Elem().Field(f.rx).Pointer()))
		if rx.MatchTimeout == regexMatchTimeout {
			return // bound already
		}
	} else if p.Field(f.re2).IsNil() {
		return
	}
	// A pattern Go's regexp runs may still go to regexp2 mid-match (goja
	// compiles it then): compile it now, as goja would, with the bound.
	src := p.Field(f.src).String()
	opts := regexp2.ECMAScript
	for i, o := range []regexp2.RegexOptions{regexp2.Multiline, regexp2.Singleline, regexp2.IgnoreCase, regexp2.Unicode} {
		if p.Field(f.flags[i]).Bool() {
			opts |= o
		}
	}
	key := regexpKey{src: src, opts: opts}
	rx, ok := ex.regexps[key]
	if !ok {
		var err error
		if rx, err = regexp2.Compile(src, opts); err != nil {
			return // goja compiled it; it will report the same itself
		}
		rx.MatchTimeout = regexMatchTimeout
		if ex.regexps == nil {
			ex.regexps = make(map[regexpKey]*regexp2.Regexp)
		}
		ex.regexps[key] = rx
	}
	w := reflect.New(f.wrapper)
	settable(w.Elem().Field(f.rx)).Set(reflect.ValueOf(rx))
	settable(p.Field(f.backtracker)).Set(w)
}

type regexpKey struct {
	src  string
	opts regexp2.RegexOptions
}

// settable returns an unexported field as a value that can be set.
func settable(v reflect.Value) reflect.Value {
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}
