package codemode

import (
	"encoding/binary"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Sorts. Without a comparator, goja's Array.prototype.sort turns both
// elements into strings at every comparison, in one native call: four
// million numbers took minutes. When every element is a primitive, this
// one makes each string once and sorts by them in linear time (a radix
// sort on eight bytes at a time); otherwise it sorts as goja does (the
// same stable sort, the same comparisons). The elements are read as goja
// reads them, once each. Undefined sorts last and holes go to the end, deleted, as
// the specification says and goja does. toSorted is the same on a copy,
// where holes read as undefined. Typed arrays are sorted as their Go
// slices (NaN last, -0 before +0), in place or in a copy.
//
// A comparator is left to goja, with a native wrapper that looks for a
// pending interrupt every few thousand comparisons: the comparator may be
// a built-in (Math.min), which the interrupt alone would never stop.

func (ex *execution) guardSorts(proto *goja.Object) {
	reflectHas, _ := goja.AssertFunction(ex.vm.GlobalObject().Get("Reflect").(*goja.Object).Get("has"))
	ex.replaceMethod(proto, "sort", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		obj, n, ok := ex.defaultSortOf(call, "Array.prototype.sort")
		if !ok {
			return mustCall(prev, call.This, ex.stepped(call.Argument(0)))
		}
		// goja asks whether each index is there, then reads it; only a
		// Proxy can tell the asking from the reading.
		var has goja.Callable
		if hasProxy(obj) {
			has = reflectHas
		}
		sorted := ex.sortValues(ex.readItems(obj, n, true, has))
		for i, v := range sorted {
			if err := obj.Set(strconv.Itoa(i), v); err != nil {
				panic(err)
			}
			ex.step()
		}
		for i := int64(len(sorted)); i < n; i++ {
			if err := obj.Delete(strconv.FormatInt(i, 10)); err != nil {
				panic(err)
			}
			ex.step()
		}
		return obj
	})
	ex.replaceMethod(proto, "toSorted", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		obj, n, ok := ex.defaultSortOf(call, "Array.prototype.toSorted")
		if !ok {
			return mustCall(prev, call.This, ex.stepped(call.Argument(0)))
		}
		sorted := ex.sortValues(ex.readItems(obj, n, false, nil))
		items := make([]any, len(sorted))
		for i, v := range sorted {
			items[i] = v
			ex.step()
		}
		return ex.vm.NewArray(items...)
	})
}

// defaultSortOf is the object a sort without a comparator sorts, and its
// length; not ok when the original sorts: with a comparator, or on a this
// that is not an object.
func (ex *execution) defaultSortOf(call goja.FunctionCall, what string) (*goja.Object, int64, bool) {
	obj, ok := call.This.(*goja.Object)
	if !goja.IsUndefined(call.Argument(0)) || !ok {
		return nil, 0, false
	}
	n := ex.lengthOf(obj)
	ex.checkLength(n, what)
	return obj, n, true
}

// guardTypedSorts replaces %TypedArray%.prototype.sort and toSorted.
func (ex *execution) guardTypedSorts(proto *goja.Object) {
	toReversed, _ := goja.AssertFunction(proto.Get("toReversed"))
	typed := func(v goja.Value) (*goja.Object, bool) {
		o, ok := v.(*goja.Object)
		return o, ok && isTypedArray(o)
	}
	ex.replaceMethod(proto, "sort", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		o, ok := typed(call.This)
		if !goja.IsUndefined(call.Argument(0)) || !ok {
			return mustCall(prev, call.This, ex.stepped(call.Argument(0)))
		}
		sortNumbers(o.Export())
		return o
	})
	ex.replaceMethod(proto, "toSorted", 1, func(prev goja.Callable, call goja.FunctionCall) goja.Value {
		o, ok := typed(call.This)
		if !goja.IsUndefined(call.Argument(0)) || !ok || toReversed == nil {
			return mustCall(prev, call.This, ex.stepped(call.Argument(0)))
		}
		// toReversed makes an array of the same type and length, as
		// toSorted does; its elements are copied over as they are (its
		// own copy went through values, which loses a NaN's payload).
		c := mustCall(toReversed, o).(*goja.Object)
		reflect.Copy(reflect.ValueOf(c.Export()), reflect.ValueOf(o.Export()))
		sortNumbers(c.Export())
		return c
	})
}

// stepped wraps a comparator so that sorting with it looks for interrupts.
func (ex *execution) stepped(cmp goja.Value) goja.Value {
	fn, ok := goja.AssertFunction(cmp)
	if !ok {
		return cmp // undefined, or what the original refuses
	}
	return ex.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		ex.step()
		return mustCall(fn, goja.Undefined(), call.Arguments...)
	})
}

// hasProxy reports whether obj or its prototype chain holds a Proxy.
func hasProxy(obj *goja.Object) bool {
	for o := obj; o != nil; o = o.Prototype() {
		if o.ExportType() == proxyType {
			return true
		}
	}
	return false
}

// readItems reads obj[0..n), in order; a hole is skipped, or read as
// undefined. With has, each index is asked for first.
func (ex *execution) readItems(obj *goja.Object, n int64, skipHoles bool, has goja.Callable) []goja.Value {
	vals := make([]goja.Value, 0, n)
	for i := int64(0); i < n; i++ {
		key := strconv.FormatInt(i, 10)
		if has != nil && !mustCall(has, goja.Undefined(), obj, ex.vm.ToValue(key)).ToBoolean() {
			continue
		}
		v := obj.Get(key)
		if v == nil {
			if skipHoles {
				continue
			}
			v = goja.Undefined()
		}
		vals = append(vals, v)
		ex.step()
	}
	return vals
}

// sortValues sorts as the default comparator does: by ToString, undefined
// last, stable.
func (ex *execution) sortValues(vals []goja.Value) []goja.Value {
	ascii := true
	for _, v := range vals {
		switch v := v.(type) {
		case *goja.Object, *goja.Symbol:
			sort.Stable(&defaultOrder{ex, vals})
			return vals
		case goja.String:
			ascii = ascii && asciiOnly(v)
		}
	}
	var keys sortKeys
	idx := make([]int32, 0, len(vals))
	if ascii {
		keys.ascii = make([]string, 0, len(vals))
	} else {
		keys.utf16 = make([]goja.String, 0, len(vals))
	}
	for i, v := range vals {
		if goja.IsUndefined(v) {
			continue
		}
		idx = append(idx, int32(i))
		if ascii {
			keys.ascii = append(keys.ascii, v.String())
		} else {
			keys.utf16 = append(keys.utf16, ex.jsString(v))
		}
		ex.step()
	}
	out := make([]goja.Value, 0, len(vals))
	for _, i := range ex.sortByKeys(keys) {
		out = append(out, vals[idx[i]])
		ex.step()
	}
	for len(out) < len(vals) {
		out = append(out, goja.Undefined())
	}
	return out
}

// defaultOrder is goja's own default comparison, for elements whose
// conversion to a string may run code: the same sort makes the same calls.
type defaultOrder struct {
	ex   *execution
	vals []goja.Value
}

func (d *defaultOrder) Len() int      { return len(d.vals) }
func (d *defaultOrder) Swap(i, j int) { d.vals[i], d.vals[j] = d.vals[j], d.vals[i] }
func (d *defaultOrder) Less(i, j int) bool {
	d.ex.step()
	x, y := d.vals[i], d.vals[j]
	switch {
	case goja.IsUndefined(x):
		return false
	case goja.IsUndefined(y):
		return true
	}
	return d.ex.jsString(x).CompareTo(d.ex.jsString(y)) < 0
}

// keyItem is one key in the radix sort: eight bytes of it from the depth
// being sorted (four UTF-16 code units, big-endian), how many of those it
// has, and its index.
type keyItem struct {
	prefix uint64
	avail  uint8
	idx    int32
}

// sortKeys are the strings to sort: as Go strings when all are ASCII,
// whose bytes order as their code units, else as goja strings.
type sortKeys struct {
	ascii []string
	utf16 []goja.String
}

func (k *sortKeys) len() int {
	if k.utf16 != nil {
		return len(k.utf16)
	}
	return len(k.ascii)
}

// fill sets the items' prefixes at depth (in bytes, or code units).
func (k *sortKeys) fill(items []keyItem, depth int) {
	for i := range items {
		it := &items[i]
		if k.utf16 == nil {
			s := k.ascii[it.idx]
			var b [8]byte
			it.avail = uint8(copy(b[:], s[min(depth, len(s)):]))
			it.prefix = binary.BigEndian.Uint64(b[:])
			continue
		}
		s := k.utf16[it.idx]
		n := min(max(s.Length()-depth, 0), 4)
		it.prefix, it.avail = 0, uint8(n)
		for j := 0; j < 4; j++ {
			it.prefix <<= 16
			if j < n {
				it.prefix |= uint64(s.CharAt(depth + j))
			}
		}
	}
}

func (k *sortKeys) compare(a, b int32) int {
	if k.utf16 == nil {
		return strings.Compare(k.ascii[a], k.ascii[b])
	}
	return k.utf16[a].CompareTo(k.utf16[b])
}

// sortByKeys returns the indexes of the keys in their order by UTF-16
// code units, equal keys in index order: a radix sort on a prefix of each
// key, repeated deeper on the runs that share it.
func (ex *execution) sortByKeys(keys sortKeys) []int32 {
	full := uint8(8)
	if keys.utf16 != nil {
		full = 4
	}
	less := func(a, b keyItem) int {
		if c := keys.compare(a.idx, b.idx); c != 0 {
			return c
		}
		return int(a.idx - b.idx)
	}
	n := keys.len()
	items, scratch := make([]keyItem, n), make([]keyItem, n)
	for i := range items {
		items[i].idx = int32(i)
	}
	type run struct{ lo, hi, depth int }
	todo := []run{{0, n, 0}}
	for len(todo) > 0 {
		r := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		part := items[r.lo:r.hi]
		if len(part) <= 16 {
			slices.SortFunc(part, less)
			continue
		}
		keys.fill(part, r.depth)
		radixSort(part, scratch[:len(part)], ex.checkpoint)
		for lo := 0; lo < len(part); {
			hi := lo + 1
			for hi < len(part) && part[hi].prefix == part[lo].prefix && part[hi].avail == part[lo].avail {
				hi++
			}
			ex.step()
			if hi-lo > 1 && part[lo].avail == full && !allSame(part[lo:hi], keys.compare) {
				todo = append(todo, run{r.lo + lo, r.lo + hi, r.depth + int(full)})
			}
			lo = hi
		}
	}
	out := make([]int32, n)
	for i, it := range items {
		out[i] = it.idx
	}
	return out
}

func allSame(items []keyItem, compare func(a, b int32) int) bool {
	for _, it := range items[1:] {
		if compare(items[0].idx, it.idx) != 0 {
			return false
		}
	}
	return true
}

// radixSort sorts items by (prefix, avail), stably: a pass per byte, the
// least significant first, skipping the bytes all items share; between
// runs after each.
func radixSort(items, scratch []keyItem, between func()) {
	src, dst := items, scratch
	for pass := -1; pass < 8; pass++ {
		digit := func(it keyItem) byte {
			if pass < 0 {
				return it.avail
			}
			return byte(it.prefix >> (8 * pass))
		}
		var count [257]int
		for _, it := range src {
			count[int(digit(it))+1]++
		}
		if slices.Contains(count[1:], len(src)) {
			continue
		}
		for i := 1; i < len(count); i++ {
			count[i] += count[i-1]
		}
		for _, it := range src {
			d := digit(it)
			dst[count[d]] = it
			count[d]++
		}
		src, dst = dst, src
		between()
	}
	if &src[0] != &items[0] {
		copy(items, src)
	}
}

// sortNumbers sorts a typed array's elements, as exported, in place: by
// value, NaN last in their order, -0 before +0.
func sortNumbers(v any) {
	switch s := v.(type) {
	case []int8:
		countingSort(s, math.MinInt8, 1<<8)
	case []uint8:
		countingSort(s, 0, 1<<8)
	case []int16:
		countingSort(s, math.MinInt16, 1<<16)
	case []uint16:
		countingSort(s, 0, 1<<16)
	case []int32:
		slices.Sort(s)
	case []uint32:
		slices.Sort(s)
	case []float32:
		sortFloats(s)
	case []float64:
		sortFloats(s)
	}
}

// countingSort sorts small integers, from lowest to lowest+size-1, in
// linear time: a Uint8Array of 32 Mi elements in milliseconds.
func countingSort[T int8 | uint8 | int16 | uint16](s []T, lowest, size int) {
	count := make([]int, size)
	for _, x := range s {
		count[int(x)-lowest]++
	}
	i := 0
	for v, n := range count {
		for ; n > 0; n-- {
			s[i] = T(v + lowest)
			i++
		}
	}
}

func sortFloats[F float32 | float64](s []F) {
	numbers := s[:0:0]
	var nans []F
	for _, f := range s {
		if f != f {
			nans = append(nans, f)
		} else {
			numbers = append(numbers, f)
		}
	}
	slices.SortFunc(numbers, func(x, y F) int {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		case x == 0 && math.Signbit(float64(x)) != math.Signbit(float64(y)):
			if math.Signbit(float64(x)) {
				return -1
			}
			return 1
		}
		return 0
	})
	copy(s[copy(s, numbers):], nans)
}
