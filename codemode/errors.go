package codemode

import "fmt"

// Kinds of execution errors.
const (
	KindSyntax    = "SyntaxError"      // the code does not parse
	KindException = "UncaughtError"    // the code threw, or a returned promise rejected
	KindTimeout   = "TimeoutError"     // the execution ran past its timeout
	KindLimit     = "LimitError"       // max_tool_calls, max_code_size, nesting, allocation bounds
	KindMemory    = "MemoryLimitError" // the process heap passed max_memory
	KindStack     = "StackOverflowError"
	KindBusy      = "BusyError"   // max_concurrent executions are running
	KindWorker    = "WorkerError" // the worker process failed: it died, could not start, or broke its pipe
)

// Error is why an execution failed, as the model reads it.
type Error struct {
	Kind    string
	Message string
	// Stack is the JavaScript stack trace, positions in the model's code.
	Stack string
}

func (e *Error) Error() string {
	if e.Stack != "" {
		return fmt.Sprintf("%s: %s\n%s", e.Kind, e.Message, e.Stack)
	}
	return e.Kind + ": " + e.Message
}

// ToolError is a backend tool's own error result (isError). The binding
// throws it into the code as an Error carrying the backend's message.
type ToolError struct {
	Message string
}

func (e *ToolError) Error() string { return e.Message }
