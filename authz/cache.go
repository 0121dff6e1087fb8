package authz

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxCachedAnswers bounds each cache of answers (introspection answers,
// verified JWTs), which a stream of made-up tokens would otherwise grow
// without end.
const maxCachedAnswers = 10000

// answerCache keeps answers about tokens by a SHA-256 hash (never the
// token), each until its own time, at most maxCachedAnswers of them.
type answerCache[V any] struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]cached[V]
}

type cached[V any] struct {
	value V
	until time.Time
}

func newAnswerCache[V any]() *answerCache[V] {
	return &answerCache[V]{entries: make(map[[sha256.Size]byte]cached[V])}
}

// get returns the answer kept for key, if it is still kept at now.
func (c *answerCache[V]) get(key [sha256.Size]byte, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	entry, ok := c.entries[key]
	if ok && !now.Before(entry.until) {
		delete(c.entries, key)
		var zero V
		return zero, false
	}
	return entry.value, ok
}

// put keeps value for key until until. When full, it first drops what is
// no longer kept at now, then an arbitrary entry.
func (c *answerCache[V]) put(key [sha256.Size]byte, value V, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCachedAnswers {
		for k, old := range c.entries {
			if !now.Before(old.until) {
				delete(c.entries, k)
			}
		}
	}
	if len(c.entries) >= maxCachedAnswers {
		for k := range c.entries { // an arbitrary one: map order is random
			delete(c.entries, k)
			break
		}
	}
	c.entries[key] = cached[V]{value: value, until: until}
}

// len is how many answers are kept, expired or not.
func (c *answerCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
