package sandbox

import (
	"context"
	"fmt"
	"sync"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/stack"
)

// Priming a fresh runtime (console, timers, JSON, the timed regular
// expressions) is a good part of what an execution with a few tool calls
// costs, and none of it depends on the code. So each Runner, and each worker process, keeps one
// runtime primed ahead: an execution takes it and starts priming the next
// in the background, and the wait for the setup moves off the request.
// Only an execution that runs alone primes ahead: when several run at
// once the cores are busy, and priming ahead would only add a handoff.
// A spare serves one execution only, as a runtime primed on the spot
// would: nothing of an execution is left in the next.

// spares holds at most one primed execution, for one set of limits.
type spares struct {
	mu     sync.Mutex
	spare  *execution
	limits codemode.Limits // the spare's, or the fill's under way, as primeLimits
	// filled is closed when the fill under way is done; nil when none is.
	filled chan struct{}
	waiter bool // an execution waits for the fill under way
}

// take returns an execution primed for l, the spare if it fits, and
// starts priming the next one if ahead.
func (s *spares) take(l codemode.Limits, ahead bool) *execution {
	key := primeLimits(l)
	s.mu.Lock()
	if s.spare == nil && s.filled != nil && s.limits == key && !s.waiter {
		// Executions back to back: the fill under way began before this
		// one, so it is done sooner than a new one would be.
		s.waiter = true
		filled := s.filled
		s.mu.Unlock()
		<-filled
		s.mu.Lock()
		s.waiter = false
	}
	ex := s.spare
	if ex != nil && s.limits != key {
		ex = nil
	}
	s.spare = nil
	if s.filled == nil && ahead {
		s.filled, s.limits = make(chan struct{}), key
		go s.fill(l, s.filled)
	}
	s.mu.Unlock()
	if ex == nil {
		ex = primedExecution(l)
	}
	return ex
}

func (s *spares) fill(l codemode.Limits, filled chan struct{}) {
	stack.Grow()
	ex := primedExecution(l)
	s.mu.Lock()
	s.spare, s.limits, s.filled = ex, primeLimits(l), nil
	s.mu.Unlock()
	close(filled)
}

// primeLimits is what of l priming depends on: the stack depth, which
// the runtime takes at once. Every other limit is read when it applies,
// so a spare serves handlers that differ in them (those sharing a pool of
// workers, say); begin sets them. The JSON bounds are kept too, to be
// safe.
func primeLimits(l codemode.Limits) codemode.Limits {
	return codemode.Limits{MaxStackDepth: l.MaxStackDepth, MaxString: l.MaxString, MaxArray: l.MaxArray}
}

// primedExecution is a fresh execution, primed; the code, its bindings
// and its context come in begin. A panic while priming is a bug of the
// sandbox, reported as the execution's error, as run reports one.
func primedExecution(l codemode.Limits) (ex *execution) {
	ex = newExecution(context.Background(), l, nil, nil)
	defer func() {
		if p := recover(); p != nil {
			ex.primeErr = fmt.Errorf("internal error in the sandbox: %v", p)
		}
	}()
	ex.primeErr = ex.prime()
	return ex
}

// begin gives a primed execution its limits, code, bindings and context.
func (ex *execution) begin(ctx context.Context, l codemode.Limits, s *script, bindings []codemode.Binding, search *codemode.Binding) {
	ex.ctx, ex.limits, ex.script, ex.bindings, ex.search = ctx, l, s, bindings, search
	ex.logs.limit = l.MaxOutput
	if cap(ex.callSlot) != l.MaxParallelCalls {
		ex.callSlot = make(chan struct{}, l.MaxParallelCalls)
	}
}
