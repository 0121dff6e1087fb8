package sandbox_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// TestAbandonedExecution: an execution whose goroutine does not come back
// (stuck in a call that ignores its context, as native code ignores the
// interrupt) is answered without it, with what it did so far. Run it with
// -race: the answer is read while the goroutine still runs.
func TestAbandonedExecution(t *testing.T) {
	release := make(chan struct{})
	returned := make(chan struct{})
	stuck := codemode.Binding{Name: "api", Tools: map[string]string{"hang": "hang"},
		Call: func(context.Context, string, []byte) (codemode.Answer, error) {
			defer close(returned)
			<-release
			return codemode.Answer{Value: []byte(`1`)}, nil
		}}
	t.Cleanup(func() {
		close(release)
		<-returned
	})
	// In this process: a worker process is not stuck when a call is.
	res := sandbox.NewRunner(codemode.Limits{Timeout: 50 * time.Millisecond}).Run(context.Background(), `console.log("before"); return await api.hang()`, []codemode.Binding{stuck})
	codemodetest.WantError(t, res, codemode.KindTimeout, "stuck")
	if res.ToolCalls != 1 || !reflect.DeepEqual(res.Logs, []string{"before"}) {
		t.Errorf("tool calls %d, logs %q; want 1, [before]", res.ToolCalls, res.Logs)
	}
}

// TestTimeoutNamesTheCallsWaitedFor: an execution that runs out of time
// while it waits on binding calls is a TimeoutError that names them,
// whether the call's failure or the interrupt ends the code first.
func TestTimeoutNamesTheCallsWaitedFor(t *testing.T) {
	hang := func(ctx context.Context, _ string, _ []byte) (codemode.Answer, error) {
		<-ctx.Done()
		return codemode.Answer{}, ctx.Err()
	}
	b := codemode.Binding{Name: "api", Tools: map[string]string{"hang": "hang", "other": "other"}, Call: hang}
	for _, code := range []string{
		`return await api.hang()`,
		`return await Promise.all([api.hang(), api.other()])`,
		`try { await api.hang() } catch (e) { for (;;) {} }`,
	} {
		res := codemodetest.Runner(codemode.Limits{Timeout: 100 * time.Millisecond}).Run(context.Background(), code, []codemode.Binding{b})
		codemodetest.WantError(t, res, codemode.KindTimeout, "api.hang")
		codemodetest.WantError(t, res, codemode.KindTimeout, "no answer before the time ran out")
	}
}
