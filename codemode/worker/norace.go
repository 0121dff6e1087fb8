//go:build !race

package worker

import "time"

const raceEnabled = false

// startTimeout bounds a worker's start, from fork to its ready message.
const startTimeout = 10 * time.Second
