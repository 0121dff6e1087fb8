package codemode

import (
	"context"
	"testing"
)

// processPool is a pool of this test binary's workers, closed at the end.
func processPool(t *testing.T, cfg PoolConfig) *Pool {
	t.Helper()
	p, err := NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestProcessRunnerRunsCode(t *testing.T) {
	p := processPool(t, PoolConfig{})
	r := NewProcessRunner(Limits{}, p)
	var e echoBackend
	res := r.Run(context.Background(), `console.log("hi"); const a = await api.echo({x: 1}); return a.args.x + 1`, []Binding{e.binding("api")})
	wantValue(t, res, `2`)
	if len(res.Logs) != 1 || res.Logs[0] != "hi" {
		t.Fatalf("logs = %q", res.Logs)
	}
}
