// Package codemode is the contract of a code execution: what the code is
// given (bindings to backend tools, their declarations and search, limits)
// and what it gives back (a result or an error, formatted for the model).
package codemode
