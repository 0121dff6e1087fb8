//go:build race

package worker

import "time"

// raceEnabled: the race detector reserves terabytes of address space, so
// a worker built with it cannot cap its own.
const raceEnabled = true

// startTimeout bounds a worker's start, from fork to its ready message. A
// binary built with the race detector starts several times slower, more
// so on a loaded machine.
const startTimeout = 30 * time.Second
