//go:build race

package worker

// raceEnabled: the race detector reserves terabytes of address space, so
// a worker built with it cannot cap its own.
const raceEnabled = true
