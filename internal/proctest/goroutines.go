package proctest

import (
	"runtime"
	"strings"
)

// idleConnection marks the stack of a goroutine that serves a keep-alive
// connection, on either side.
var idleConnection = []string{"net/http.(*persistConn).", "net/http.(*conn).serve"}

// Working returns the stacks of this process's goroutines that are not
// serving a keep-alive connection: HTTP clients and servers keep those
// up to their idle timeouts, however many a test's load opened, so a
// count of goroutines before and after compares the rest. A goroutine
// whose stack holds one of besides is left out too.
func Working(besides ...string) []string {
	buf := make([]byte, 8<<20)
	var out []string
	for _, stack := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		idle := false
		for _, mark := range idleConnection {
			idle = idle || strings.Contains(stack, mark)
		}
		for _, mark := range besides {
			idle = idle || strings.Contains(stack, mark)
		}
		if !idle {
			out = append(out, stack)
		}
	}
	return out
}
