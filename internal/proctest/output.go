package proctest

import (
	"bytes"
	"sync"
)

// Output keeps what a child process of a test writes (its stdout or
// stderr) for the test to show when something fails: written as it
// comes and read at any time, safely, and kept to its first MiB, enough
// for any failure message.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// maxOutput bounds what an Output keeps.
const maxOutput = 1 << 20

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.buf.Len() > maxOutput {
		return len(p), nil
	}
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
