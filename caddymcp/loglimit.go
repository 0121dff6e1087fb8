package caddymcp

import (
	"sync"
	"time"
)

// logInterval is how often at most a line a limiter guards is written.
const logInterval = 10 * time.Second

// logLimit lets one line through per logInterval and counts the lines it
// held back: a line written per request would flood the log while an
// authorization server is down or a site is misconfigured.
type logLimit struct {
	every time.Duration // 0: logInterval
	mu    sync.Mutex
	next  time.Time
	held  int
}

// allow reports whether a line may be written at now, and how many were
// held back since the last one written.
func (l *logLimit) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Before(l.next) {
		l.held++
		return false, 0
	}
	every := l.every
	if every == 0 {
		every = logInterval
	}
	held := l.held
	l.next, l.held = now.Add(every), 0
	return true, held
}
