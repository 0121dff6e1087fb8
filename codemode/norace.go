//go:build !race

package codemode

import "time"

const raceEnabled = false

// startTimeout bounds a worker's start, from fork to its ready message.
const startTimeout = 10 * time.Second
