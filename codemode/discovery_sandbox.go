package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/dop251/goja"
)

// SearchGlobal is the global that holds search in the sandbox:
// await tools.search(query, limit?). No backend may take its name
// (CheckBackendName).
const SearchGlobal = "tools"

// SearchFunc answers tools.search for one execution: the best matches for
// query, at most limit, among the tools its caller may call. query and
// limit passed CheckSearch. A *ToolError becomes an Error thrown in the
// code with its message.
type SearchFunc func(ctx context.Context, query string, limit int) ([]Found, error)

// searchCall is a search as it crosses into the host: {query, limit} as
// JSON text in, the matches as JSON text out.
type searchCall func(ctx context.Context, args []byte) ([]byte, error)

// RunWithSearch is Run with the global tools, whose search method asks
// search. It works in both isolations: from a worker process, the search
// comes back over the pipe, as binding calls do, and is answered here.
func (r *Runner) RunWithSearch(ctx context.Context, code string, bindings []Binding, search SearchFunc) *Result {
	if search == nil {
		return r.run(ctx, code, bindings, nil)
	}
	return r.run(ctx, code, bindings, search.call)
}

// searchArgs are the arguments of a search as they cross.
type searchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// call answers a search from its JSON arguments, checked again: in
// process isolation they come from the worker.
func (s SearchFunc) call(ctx context.Context, args []byte) ([]byte, error) {
	var in searchArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &ToolError{Message: "the arguments are not {query, limit}: " + err.Error()}
	}
	if err := CheckSearch(in.Query, in.Limit); err != nil {
		return nil, &ToolError{Message: err.Error()}
	}
	found, err := s(ctx, in.Query, in.Limit)
	if err != nil {
		return nil, err
	}
	if found == nil {
		found = []Found{}
	}
	return json.Marshal(found)
}

// searchBinding is the binding a search is queued on, as a tool call is:
// it counts against max_tool_calls and runs beside the other calls.
func searchBinding(search searchCall) Binding {
	return Binding{Name: SearchGlobal, Call: func(ctx context.Context, _ string, args []byte) (Answer, error) {
		found, err := search(ctx, args)
		return Answer{Value: found}, err
	}}
}

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
		b := searchBinding(ex.search)
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
	return vm.GlobalObject().DefineDataProperty(SearchGlobal, obj, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
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
	n := DefaultSearchLimit
	if !goja.IsUndefined(limit) && !goja.IsNull(limit) {
		if _, isNumber := limit.Export().(int64); !isNumber {
			f, isFloat := limit.Export().(float64)
			if !isFloat || math.IsNaN(f) || f != math.Trunc(f) {
				panic(ex.newError("TypeError", "tools.search: the limit must be an integer"))
			}
		}
		f := limit.ToFloat()
		if f < 1 || f > MaxSearchLimit {
			panic(ex.newError("RangeError", fmt.Sprintf("tools.search: limit %s is out of range: use 1 to %d (default %d)",
				limit.String(), MaxSearchLimit, DefaultSearchLimit)))
		}
		n = int(f)
	}
	if err := CheckSearch(q, n); err != nil {
		panic(ex.newError("RangeError", "tools.search: "+err.Error()))
	}
	args, _ := json.Marshal(searchArgs{Query: q, Limit: n})
	return args
}
