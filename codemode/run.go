package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Binding is one backend as the code sees it: a global with one async
// function per tool.
type Binding struct {
	// Name is the global, checked with CheckBackendName.
	Name string
	// Tools maps each identifier the code calls to the backend's tool name
	// (BackendAPI.Binding sets it from the names the declarations show).
	// The sandbox only reads it: one map may serve every execution until
	// the backend's tool list changes.
	Tools map[string]string
	// Hidden are tools the caller may not call, by identifier, with the
	// reason: calling one throws an Error that says it. Calling a name
	// that is neither throws one naming the closest tools.
	Hidden map[string]string
	// Call calls a tool with the arguments as JSON text and returns the
	// tool's answer. A *ToolError becomes an Error thrown in the code with
	// the backend's message.
	Call func(ctx context.Context, tool string, args []byte) (Answer, error)
	// Unavailable, when set, says why the backend's tools are not known
	// (it is down). The global then turns any method the code calls into
	// a call of the tool of that name, so a backend that comes back during
	// the run can be used, and one that stays down fails with its reason.
	Unavailable string
}

// Answer is a tool's result as the code receives it.
type Answer struct {
	// Value is the result as JSON text.
	Value json.RawMessage
	// Cut, when the backend cut the result to its size bound, is its
	// record of what it left out, a JSON object: tools.cut(value) gives
	// it to the code. nil when the result is whole.
	Cut json.RawMessage
}

// Limits bound one execution. Zero values take the defaults.
type Limits struct {
	Timeout       time.Duration // wall clock per execution; default 30s
	MaxToolCalls  int           // binding calls per execution; default 100
	MaxOutput     int           // bytes of logs and result returned; default 24KiB
	MaxCodeSize   int           // bytes of code; default 64KiB
	MaxConcurrent int           // executions at once; default 2 x GOMAXPROCS
	// MaxMemory is a ceiling on the process heap, watched while executions
	// run; past it, running executions are interrupted. Default 1GiB.
	MaxMemory int64

	// MaxString bounds the text JSON.stringify makes, and MaxArray the
	// values one JSON text may hold. Defaults 32MiB and 4Mi values. Other
	// built-ins are bounded by the worker's memory.
	MaxString int
	MaxArray  int
	// MaxParallelCalls bounds binding calls in flight per execution;
	// default 16.
	MaxParallelCalls int
	// MaxStackDepth bounds the JavaScript call stack; default 2048.
	MaxStackDepth int
}

// Defaults for Limits.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxToolCalls = 100
	DefaultMaxOutput    = 24 << 10
	DefaultMaxCodeSize  = 64 << 10
	DefaultMaxMemory    = 1 << 30
)

// WithDefaults returns l with its zero values set to the defaults.
func (l Limits) WithDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxToolCalls <= 0 {
		l.MaxToolCalls = DefaultMaxToolCalls
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = DefaultMaxOutput
	}
	if l.MaxCodeSize <= 0 {
		l.MaxCodeSize = DefaultMaxCodeSize
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
	}
	if l.MaxMemory <= 0 {
		l.MaxMemory = DefaultMaxMemory
	}
	if l.MaxString <= 0 {
		l.MaxString = 32 << 20
	}
	if l.MaxArray <= 0 {
		l.MaxArray = 4 << 20
	}
	if l.MaxParallelCalls <= 0 {
		l.MaxParallelCalls = 16
	}
	if l.MaxStackDepth <= 0 {
		l.MaxStackDepth = 2048
	}
	return l
}

// Admit takes one of a runner's slots, one per execution running (made
// with room for max_concurrent), for code; or it returns why the
// execution cannot run: its code is past max_code_size, or every slot
// is taken.
func (l Limits) Admit(code string, slots chan<- struct{}) *Error {
	if len(code) > l.MaxCodeSize {
		return &Error{Kind: KindLimit, Message: fmt.Sprintf("the code is %d bytes; max_code_size is %d bytes", len(code), l.MaxCodeSize)}
	}
	select {
	case slots <- struct{}{}:
		return nil
	default:
		return &Error{Kind: KindBusy, Message: fmt.Sprintf("%d executions are already running (max_concurrent); try again in a moment", l.MaxConcurrent)}
	}
}

// Result is the outcome of one execution.
type Result struct {
	// Value is the JSON text of the value the code returned; nil when it
	// returned nothing (undefined).
	Value json.RawMessage
	// Logs are the console lines Text shows: as many as max_output
	// allows, then a line saying how many more were cut, if any, then
	// the sandbox's own notes.
	Logs []string
	// Err is why the execution failed; nil on success.
	Err *Error
	// ToolCalls counts binding calls made.
	ToolCalls int
	Duration  time.Duration
	// Text is what the model reads: the result, the logs and the error,
	// capped at max_output with a marker saying what was cut.
	Text string
	// Cut reports that Text leaves out part of the result, of the error
	// or of the console lines.
	Cut bool
	// ValueCut reports that Value did not fit in Text; ValueShown is then
	// the start of its JSON text that Text shows.
	ValueCut   bool
	ValueShown string
}

// TimeoutMessage says that an execution ran past its timeout d.
func TimeoutMessage(d time.Duration) string {
	return fmt.Sprintf("the execution did not finish within its timeout of %s", d)
}

// WaitingFor says which binding calls, by label (backend.tool), an
// execution that ran out of time was waiting for, to follow
// TimeoutMessage; "" for none.
func WaitingFor(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	slices.Sort(labels)
	if len(labels) > 3 {
		labels = append(labels[:3], "...")
	}
	return " (" + strings.Join(labels, ", ") + ": no answer before the time ran out)"
}
