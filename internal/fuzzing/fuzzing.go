// Package fuzzing holds what the fuzz targets of several packages share.
package fuzzing

import (
	"fmt"
	"runtime/debug"
	"testing"
	"time"
)

// Within runs fn and fails the test if it has not returned after d: a
// hang is a finding, reported with the input that caused it. A panic in fn
// is raised again on the test's goroutine with fn's stack, so the fuzzer
// records the input (a panic left on another goroutine kills the worker
// without a word).
func Within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Sprintf("%s panicked: %v\n\n%s", what, p, debug.Stack())
				return
			}
			done <- ""
		}()
		fn()
	}()
	select {
	case p := <-done:
		if p != "" {
			panic(p)
		}
	case <-time.After(d):
		t.Fatalf("%s did not return within %s", what, d)
	}
}
