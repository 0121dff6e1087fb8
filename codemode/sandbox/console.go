package sandbox

import (
	"errors"
	"strings"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// logBuffer keeps console lines up to a byte limit and counts the rest.
// Once a line does not fit, every later line is counted, not kept: what
// the model reads has no gaps.
type logBuffer struct {
	limit int
	kept  []string
	size  int
	cut   int // lines counted, not kept
	notes []string
	// onKeep, when set, hears each line kept.
	onKeep func(string)
}

func (b *logBuffer) add(line string) {
	if b.cut == 0 && b.size+len(line)+1 <= b.limit {
		b.kept = append(b.kept, line)
		b.size += len(line) + 1
		if b.onKeep != nil {
			b.onKeep(line)
		}
		return
	}
	b.cut++
}

// full reports whether further lines would only be counted.
func (b *logBuffer) full() bool { return b.cut > 0 }

// note adds a line from the sandbox itself, kept whatever the limit.
func (b *logBuffer) note(line string) { b.notes = append(b.notes, line) }

// output is what the buffer holds, for Format to fit beside the result.
func (b *logBuffer) output() codemode.Output {
	return codemode.Output{
		Lines: append([]string(nil), b.kept...),
		Cut:   b.cut,
		Notes: append([]string(nil), b.notes...),
	}
}

// setupConsole adds console.log, info, warn, error and debug. Lines are
// kept up to max_output; past it they are only counted.
func (ex *execution) setupConsole() error {
	vm := ex.vm
	console := vm.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		prefix := ""
		if level == "warn" || level == "error" {
			prefix = "[" + level + "] "
		}
		fn := func(call goja.FunctionCall) goja.Value {
			ex.mu.Lock()
			full := ex.logs.full()
			if full {
				// Counted without formatting: formatting may be costly,
				// and the line would not be kept.
				ex.logs.cut++
			}
			ex.mu.Unlock()
			if full {
				return goja.Undefined()
			}
			parts := make([]string, len(call.Arguments))
			for i, a := range call.Arguments {
				parts[i] = ex.inspect(a)
			}
			line := prefix + strings.Join(parts, " ")
			ex.mu.Lock()
			ex.logs.add(line)
			ex.mu.Unlock()
			return goja.Undefined()
		}
		if err := defineMethod(vm, console, level, 0, fn); err != nil {
			return err
		}
	}
	return vm.GlobalObject().DefineDataProperty("console", console, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// inspect formats one console argument: strings as they are, errors as
// their stack, functions by name, other values as JSON where they can be.
func (ex *execution) inspect(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsString(v):
		return v.String()
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return v.String()
	}
	if _, callable := goja.AssertFunction(obj); callable {
		name := obj.Get("name")
		if name == nil || name.String() == "" {
			return "[Function (anonymous)]"
		}
		return "[Function: " + name.String() + "]"
	}
	if isError(obj) {
		if st := obj.Get("stack"); st != nil && goja.IsString(st) {
			return ex.script.mapStack(st.String())
		}
	}
	text, err := ex.tryStringify(obj)
	if err != nil {
		return "[" + obj.ClassName() + ": " + err.Error() + "]"
	}
	return text
}

func isError(obj *goja.Object) bool { return obj.ClassName() == "Error" }

// tryStringify is JSON.stringify that reports an exception as an error
// instead of throwing it; uncatchable errors (interrupts) still propagate.
func (ex *execution) tryStringify(v goja.Value) (text string, err error) {
	if cerr := ex.guarded(func() { text, _ = ex.stringify(v, nil, nil) }); cerr != nil {
		var exc *goja.Exception
		if errors.As(cerr, &exc) {
			if o, ok := exc.Value().(*goja.Object); ok {
				return "", errors.New(safeString(o.Get("message")))
			}
			return "", errors.New(safeString(exc.Value()))
		}
		panic(cerr)
	}
	return text, nil
}
