package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// TestSparesServeOneExecutionEach: the runtime primed ahead serves the
// next execution under the same limits, once, and under limits that are
// read only when they apply; one primed for another stack depth is not
// used; an execution that does not run alone primes none ahead.
func TestSparesServeOneExecutionEach(t *testing.T) {
	l := codemode.Limits{Timeout: time.Minute}.WithDefaults()
	s := &spares{}
	first := s.take(l, true)
	if !first.primed || first.primeErr != nil {
		t.Fatalf("primed %v, %v", first.primed, first.primeErr)
	}
	spare := waitSpare(t, s)
	if spare == first {
		t.Fatal("the spare is the execution just taken")
	}
	if got := s.take(l, true); got != spare {
		t.Fatal("the next execution did not get the spare")
	}
	next := waitSpare(t, s)
	if next == spare {
		t.Fatal("a spare served twice")
	}
	// Limits read when they apply do not matter to a spare: begin sets
	// them.
	looser := l
	looser.Timeout, looser.MaxOutput, looser.MaxParallelCalls, looser.MaxToolCalls = time.Hour, 10, 3, 7
	if got := s.take(looser, true); got != next {
		t.Fatal("an execution under other limits read when they apply did not get the spare")
	}
	next.begin(context.Background(), looser, nil, nil, nil)
	if next.limits != looser || next.logs.limit != 10 || cap(next.callSlot) != 3 {
		t.Fatalf("begin left limits %+v, a log limit of %d and %d call slots", next.limits, next.logs.limit, cap(next.callSlot))
	}
	next = waitSpare(t, s)
	other := l
	other.MaxStackDepth = 100
	if got := s.take(other, true); got == next || got.limits.MaxStackDepth != other.MaxStackDepth {
		t.Fatalf("an execution under other limits got the spare (%v), or not its limits (%d)", got == next, got.limits.MaxStackDepth)
	}
	last := waitSpare(t, s)
	if last.limits.MaxStackDepth != other.MaxStackDepth {
		t.Fatalf("the next spare has max_stack_depth %d, want %d", last.limits.MaxStackDepth, other.MaxStackDepth)
	}
	// An execution that does not run alone takes the spare and leaves
	// the next one unprimed.
	if got := s.take(other, false); got != last {
		t.Fatal("an execution not alone did not get the spare")
	}
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare != nil || s.filled != nil {
		t.Fatal("an execution not alone primed the next one")
	}
}

// waitSpare waits for the fill under way and returns the spare.
func waitSpare(t *testing.T, s *spares) *execution {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		ex, filling := s.spare, s.filled != nil
		s.mu.Unlock()
		if ex != nil && !filling {
			return ex
		}
	}
	t.Fatal("no spare within 10s")
	return nil
}
