package sandbox

import (
	"context"

	"github.com/dop251/goja"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// What the tests of package sandbox_test reach inside the package.
const (
	GraceAfterTimeout = graceAfterTimeout
	MaxJSONNesting    = maxJSONNesting
)

var (
	DecodeJSON    = decodeJSON
	JSONShape     = jsonShape
	ModuleKeyword = moduleKeyword
)

// Fresh runs code to its end in a fresh execution of this process under
// l, unformatted, and returns its result, the runtime it ran in, for a
// test to walk what the code could reach, and the execution itself.
func Fresh(ctx context.Context, code string, l codemode.Limits, bindings []codemode.Binding) (*codemode.Result, *goja.Runtime, any, error) {
	s, err := prepare(code)
	if err != nil {
		return nil, nil, nil, err
	}
	ex := newExecution(ctx, l, s, bindings)
	return ex.run().Result, ex.vm, ex, nil
}
