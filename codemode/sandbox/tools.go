package sandbox

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// setupTools adds the global tools: its method cut, and search when the
// execution has one.
func (ex *execution) setupTools() error {
	vm := ex.vm
	obj := vm.NewObject()
	if err := defineMethod(vm, obj, "cut", 1, func(call goja.FunctionCall) goja.Value {
		if o, ok := call.Argument(0).(*goja.Object); ok {
			if rec, ok := ex.cuts[o]; ok {
				return rec
			}
		}
		return goja.Undefined()
	}); err != nil {
		return err
	}
	if ex.search != nil {
		b := *ex.search
		if err := defineMethod(vm, obj, "search", 2, func(call goja.FunctionCall) goja.Value {
			args := ex.searchArguments(call.Argument(0), call.Argument(1))
			ex.countCall()
			return ex.queueCall(b, "search", "search", args)
		}); err != nil {
			return err
		}
	}
	if err := defineMethod(vm, obj, "toString", 0, func(goja.FunctionCall) goja.Value {
		return vm.ToValue("[tools]")
	}); err != nil {
		return err
	}
	return vm.GlobalObject().DefineDataProperty(codemode.SearchGlobal, obj, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// noteCut keeps the record of a value its backend cut, for tools.cut. A
// value that is not an object or array (a cut text) has its note in it.
func (ex *execution) noteCut(v goja.Value, record []byte) {
	o, ok := v.(*goja.Object)
	if !ok {
		return
	}
	rec, err := ex.parseJSON(record)
	if err != nil {
		return
	}
	if ex.cuts == nil {
		ex.cuts = make(map[*goja.Object]goja.Value)
	}
	ex.cuts[o] = rec
}

// searchArguments checks the arguments of tools.search where the code
// made the call, and throws what is wrong with them.
func (ex *execution) searchArguments(query, limit goja.Value) []byte {
	q, ok := query.Export().(string)
	if !ok || goja.IsUndefined(query) || goja.IsNull(query) {
		panic(ex.newError("TypeError", "tools.search: the query must be a string: await tools.search(\"what the tool should do\", limit?)"))
	}
	n := codemode.DefaultSearchLimit
	if !goja.IsUndefined(limit) && !goja.IsNull(limit) {
		if _, isNumber := limit.Export().(int64); !isNumber {
			f, isFloat := limit.Export().(float64)
			if !isFloat || math.IsNaN(f) || f != math.Trunc(f) {
				panic(ex.newError("TypeError", "tools.search: the limit must be an integer"))
			}
		}
		f := limit.ToFloat()
		if f < 1 || f > codemode.MaxSearchLimit {
			panic(ex.newError("RangeError", fmt.Sprintf("tools.search: limit %s is out of range: use 1 to %d (default %d)",
				limit.String(), codemode.MaxSearchLimit, codemode.DefaultSearchLimit)))
		}
		n = int(f)
	}
	if err := codemode.CheckSearch(q, n); err != nil {
		panic(ex.newError("RangeError", "tools.search: "+err.Error()))
	}
	args, _ := json.Marshal(codemode.SearchArgs{Query: q, Limit: n})
	return args
}
