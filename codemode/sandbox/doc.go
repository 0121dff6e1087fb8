// Package sandbox runs one execution of model-written JavaScript or
// TypeScript in a fresh goja runtime of this process, whose only exits are
// the bindings it is given.
package sandbox
