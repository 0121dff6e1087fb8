//go:build !race

// Package racetest tells tests whether the race detector is built in:
// a test whose work is a large import, not concurrency, skips under it,
// where it takes minutes and starves the timing of the tests beside it.
package racetest

// Enabled reports whether the race detector is built in.
const Enabled = false
