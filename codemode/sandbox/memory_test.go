package sandbox

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// TestCollectPacer: a heap that stays over the ceiling is collected with
// a growing wait between collections, not on every tick; one that grows
// by a quarter of the ceiling is collected at once.
func TestCollectPacer(t *testing.T) {
	const limit = 1 << 30
	start := time.Unix(0, 0)
	var p collectPacer
	collections := 0
	for tick := time.Duration(0); tick < 10*time.Second; tick += memoryWatchInterval {
		if now := start.Add(tick); p.due(now, 2*limit, limit) {
			collections++
			p.collected(now, 2*limit)
		}
	}
	// Waits of 5 ms doubling to 1 s: 9 collections in the first 1.3 s,
	// then one a second. On every tick it would be 2,000.
	if collections < 10 || collections > 20 {
		t.Errorf("%d forced collections in 10 s of a heap over the ceiling, want 10 to 20", collections)
	}

	now := p.last // backed off: the next wait is a second
	if p.due(now.Add(memoryWatchInterval), 2*limit+limit/8, limit) {
		t.Error("collected again at once for a heap that grew by an eighth of the ceiling")
	}
	if !p.due(now.Add(memoryWatchInterval), 2*limit+limit/2, limit) {
		t.Error("not collected at once for a heap that grew by half the ceiling")
	}
	// Left alone for a while, the wait starts again from the shortest.
	later := now.Add(3 * maxCollectInterval)
	p.collected(later, 2*limit)
	if !p.due(later.Add(memoryWatchInterval), 2*limit, limit) {
		t.Error("the wait did not start again after the heap was left alone")
	}
}

// TestWatcherBacksOffCollections runs the watcher itself against a heap
// that never comes under the ceiling: it interrupts the execution after
// each forced collection, and forces few of them.
func TestWatcherBacksOffCollections(t *testing.T) {
	idle := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			watcher.Lock()
			running := watcher.running
			watcher.Unlock()
			if !running {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the memory watcher does not stop")
			}
		}
	}
	idle()
	var collections, interrupts atomic.Int32
	watcher.Lock()
	watcher.heap = func() int64 { return 2 << 30 }
	watcher.collect = func() { collections.Add(1) }
	watcher.Unlock()
	defer func() {
		idle()
		watcher.Lock()
		watcher.heap, watcher.collect = readHeap, runtime.GC
		watcher.Unlock()
	}()

	stop := watchMemory(1<<30, func(e *codemode.Error) {
		if e.Kind != codemode.KindMemory {
			t.Errorf("interrupted with %v", e)
		}
		interrupts.Add(1)
	})
	time.Sleep(400 * time.Millisecond)
	stop()
	idle()
	// Waits of 5, 10, 20, ... ms: 7 collections in 400 ms, fewer on a
	// slow machine; on every tick it would be 80.
	if n := collections.Load(); n < 1 || n > 8 {
		t.Errorf("%d forced collections in 400 ms, want 1 to 8", n)
	}
	// Each collection that leaves the heap over the ceiling interrupts; a
	// stop that lands between the collection and the check may take the
	// last one's interrupt away.
	if i, c := interrupts.Load(), collections.Load(); i != c && i != c-1 {
		t.Errorf("%d interrupts after %d collections over the ceiling", i, c)
	}
}
