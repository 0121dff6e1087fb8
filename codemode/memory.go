package codemode

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// memoryWatchInterval is how often the heap is sampled while executions run.
const memoryWatchInterval = 5 * time.Millisecond

// heapSample is the runtime metric for the bytes of live and not yet swept
// heap objects: cheap to read, with no stop-the-world.
const heapSample = "/memory/classes/heap/objects:bytes"

// watcher samples the process heap while any execution runs and interrupts
// the executions whose ceiling it passes. One goroutine serves all.
var watcher = struct {
	sync.Mutex
	watched map[*watch]struct{}
	running bool
}{watched: make(map[*watch]struct{})}

type watch struct {
	limit     int64
	interrupt func(*Error)
}

// watchMemory registers an execution with its heap ceiling; the returned
// function unregisters it.
func watchMemory(limit int64, interrupt func(*Error)) func() {
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
	sample := []metrics.Sample{{Name: heapSample}}
	ticker := time.NewTicker(memoryWatchInterval)
	defer ticker.Stop()
	for range ticker.C {
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
		watcher.Unlock()

		metrics.Read(sample)
		heap := int64(sample[0].Value.Uint64())
		if heap <= lowest {
			continue
		}
		// Garbage counts until it is swept: collect, then look again.
		runtime.GC()
		metrics.Read(sample)
		heap = int64(sample[0].Value.Uint64())
		watcher.Lock()
		var over []*watch
		for w := range watcher.watched {
			if heap > w.limit {
				over = append(over, w)
			}
		}
		watcher.Unlock()
		for _, w := range over {
			w.interrupt(&Error{Kind: KindMemory, Message: fmt.Sprintf(
				"the process heap reached %d MiB, past the sandbox's ceiling of %d MiB (max_memory); the execution was stopped",
				heap>>20, w.limit>>20)})
		}
	}
}
