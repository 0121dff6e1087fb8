package codemode

import (
	"context"
	"sync"
)

// Priming a fresh runtime (the built-in guards, console, timers, JSON) is
// most of what an execution with a few tool calls costs, and none of it
// depends on the code. So each Runner, and each worker process, keeps one
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
	limits Limits // the spare's, or the fill's under way
	// filled is closed when the fill under way is done; nil when none is.
	filled chan struct{}
	waiter bool // an execution waits for the fill under way
}

// take returns an execution primed for l, the spare if it fits, and
// starts priming the next one if ahead.
func (s *spares) take(l Limits, ahead bool) *execution {
	s.mu.Lock()
	if s.spare == nil && s.filled != nil && s.limits == l && !s.waiter {
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
	if ex != nil && s.limits != l {
		ex = nil
	}
	s.spare = nil
	if s.filled == nil && ahead {
		s.filled, s.limits = make(chan struct{}), l
		go s.fill(l, s.filled)
	}
	s.mu.Unlock()
	if ex == nil {
		ex = primedExecution(l)
	}
	return ex
}

func (s *spares) fill(l Limits, filled chan struct{}) {
	ex := primedExecution(l)
	s.mu.Lock()
	s.spare, s.limits, s.filled = ex, l, nil
	s.mu.Unlock()
	close(filled)
}

// primedExecution is a fresh execution, primed; the code, its bindings
// and its context come in begin.
func primedExecution(l Limits) *execution {
	ex := newExecution(context.Background(), l, nil, nil)
	ex.primeErr = ex.prime()
	return ex
}

// begin gives a primed execution its code, bindings and context.
func (ex *execution) begin(ctx context.Context, s *script, bindings []Binding, search searchCall) {
	ex.ctx, ex.script, ex.bindings, ex.search = ctx, s, bindings, search
}
