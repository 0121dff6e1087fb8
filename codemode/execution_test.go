package codemode

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestAbandonedExecution: an execution whose goroutine does not come back
// (stuck in a call that ignores its context, as native code ignores the
// interrupt) is answered without it, with what it did so far. Run it with
// -race: the answer is read while the goroutine still runs.
func TestAbandonedExecution(t *testing.T) {
	release := make(chan struct{})
	returned := make(chan struct{})
	stuck := Binding{Name: "api", Tools: map[string]string{"hang": "hang"},
		Call: func(context.Context, string, []byte) ([]byte, error) {
			defer close(returned)
			<-release
			return []byte(`1`), nil
		}}
	t.Cleanup(func() {
		close(release)
		<-returned
	})
	// In this process: a worker process is not stuck when a call is.
	res := NewRunner(Limits{Timeout: 50 * time.Millisecond}).Run(context.Background(), `console.log("before"); return await api.hang()`, []Binding{stuck})
	wantError(t, res, KindTimeout, "stuck")
	if res.ToolCalls != 1 || !reflect.DeepEqual(res.Logs, []string{"before"}) {
		t.Errorf("tool calls %d, logs %q; want 1, [before]", res.ToolCalls, res.Logs)
	}
}
