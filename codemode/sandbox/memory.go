package sandbox

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// memoryWatchInterval is how often the heap is sampled while executions run.
const memoryWatchInterval = 5 * time.Millisecond

// maxCollectInterval bounds the backoff between two forced collections
// while the heap stays over a ceiling (see collectPacer).
const maxCollectInterval = time.Second

// heapSample is the runtime metric for the bytes of live and not yet swept
// heap objects: cheap to read, with no stop-the-world.
const heapSample = "/memory/classes/heap/objects:bytes"

// watcher samples the process heap while any execution runs and interrupts
// the executions whose ceiling it passes. One goroutine serves all.
var watcher = struct {
	sync.Mutex
	watched map[*watch]struct{}
	running bool
	// heap reads the heap and collect forces a collection; tests replace
	// them while no loop runs.
	heap    func() int64
	collect func()
}{watched: make(map[*watch]struct{}), heap: readHeap, collect: runtime.GC}

type watch struct {
	limit     int64
	interrupt func(*codemode.Error)
}

// releaseMemory hands the heap of a big execution back to the system, so
// that a worker's size says what the next execution uses.
func releaseMemory(ceiling int64) {
	if readHeap() > ceiling/4 {
		debug.FreeOSMemory()
	}
}

// inWorker is set in a worker process (by Serial): errors then speak of
// the execution's worker, not of the process heap.
var inWorker atomic.Bool

func readHeap() int64 {
	sample := []metrics.Sample{{Name: heapSample}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64())
}

// watchMemory registers an execution with its heap ceiling; the returned
// function unregisters it.
func watchMemory(limit int64, interrupt func(*codemode.Error)) func() {
	w := &watch{limit: limit, interrupt: interrupt}
	watcher.Lock()
	watcher.watched[w] = struct{}{}
	if !watcher.running {
		watcher.running = true
		go watchLoop()
	}
	watcher.Unlock()
	return func() {
		watcher.Lock()
		delete(watcher.watched, w)
		watcher.Unlock()
	}
}

func watchLoop() {
	ticker := time.NewTicker(memoryWatchInterval)
	defer ticker.Stop()
	var pacer collectPacer
	for now := range ticker.C {
		watcher.Lock()
		if len(watcher.watched) == 0 {
			watcher.running = false
			watcher.Unlock()
			return
		}
		lowest := int64(-1)
		for w := range watcher.watched {
			if lowest < 0 || w.limit < lowest {
				lowest = w.limit
			}
		}
		heapOf, collect := watcher.heap, watcher.collect
		watcher.Unlock()

		heap := heapOf()
		if heap <= lowest || !pacer.due(now, heap, lowest) {
			continue
		}
		// Garbage counts until it is swept: collect, then look again.
		collect()
		heap = heapOf()
		pacer.collected(now, heap)
		watcher.Lock()
		var over []*watch
		for w := range watcher.watched {
			if heap > w.limit {
				over = append(over, w)
			}
		}
		watcher.Unlock()
		for _, w := range over {
			w.interrupt(&codemode.Error{Kind: codemode.KindMemory, Message: heapMessage(heap, w.limit)})
		}
	}
}

// collectPacer spaces the collections the watcher forces. A heap that
// stays over a ceiling (the process's own data, not a sandbox's) would
// otherwise cost a full collection every tick: the wait between two
// doubles, up to maxCollectInterval, and starts again once the heap was
// left alone for a while. A heap that grew by a quarter of the ceiling
// since the last collection is collected at once: that may be a sandbox
// allocating.
type collectPacer struct {
	last  time.Time     // when the last forced collection ran
	wait  time.Duration // the least time before the next one
	after int64         // the heap the last one left
}

func (p *collectPacer) due(now time.Time, heap, limit int64) bool {
	return p.last.IsZero() || now.Sub(p.last) >= p.wait || heap-p.after > limit/4
}

func (p *collectPacer) collected(now time.Time, heap int64) {
	if p.last.IsZero() || now.Sub(p.last) >= 2*maxCollectInterval {
		p.wait = memoryWatchInterval
	} else {
		p.wait = min(2*p.wait, maxCollectInterval)
	}
	p.last, p.after = now, heap
}

// heapMessage says that the heap passed its ceiling: the process's, or in
// a worker the execution's own.
func heapMessage(heap, limit int64) string {
	if inWorker.Load() {
		return fmt.Sprintf("the execution's heap reached %d MiB, past the %d MiB its worker process allows (max_memory); the execution was stopped",
			heap>>20, limit>>20)
	}
	return fmt.Sprintf("the process heap reached %d MiB, past the sandbox's ceiling of %d MiB (max_memory); the execution was stopped",
		heap>>20, limit>>20)
}
