//go:build unix

package worker

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// expectFor is how long a side of the pipe polls for an answer it expects
// before it sleeps: a binding call's return, the next call of code that
// makes them one after another.
const expectFor = 50 * time.Microsecond

// pipeReader reads one end of a pipe between Caddy and a worker. After
// expect, a read that finds the pipe empty polls it for a while instead of
// sleeping at once: waking a thread that slept costs tens of microseconds
// on a virtual machine, a few times what a binding call costs otherwise.
type pipeReader struct {
	r  io.Reader
	f  *os.File        // r, where the runtime polls it
	rc syscall.RawConn // f's, nil where r cannot be polled
	// until is when polling for the expected answer ends, in Unix
	// nanoseconds.
	until atomic.Int64
}

// newPipeReader reads r; a file the runtime polls can be polled for an
// expected answer.
func newPipeReader(r io.Reader) *pipeReader {
	p := &pipeReader{r: r}
	if f, ok := r.(*os.File); ok && f.SetReadDeadline(time.Time{}) == nil {
		if rc, err := f.SyscallConn(); err == nil {
			p.f, p.rc = f, rc
		}
	}
	return p
}

// pollable is f made non-blocking, so that the runtime polls it and a
// pipeReader of it can be woken. f must stay open as long as the program
// runs (it is a worker's standard input).
func pollable(f *os.File) *os.File {
	if f.SetReadDeadline(time.Time{}) == nil {
		return f
	}
	fd := f.Fd()
	if syscall.SetNonblock(int(fd), true) != nil {
		return f
	}
	return os.NewFile(fd, f.Name())
}

// expect says an answer should come soon; a read sleeping on the pipe is
// woken to poll for it.
func (p *pipeReader) expect() {
	if p.rc == nil {
		return
	}
	p.until.Store(time.Now().Add(expectFor).UnixNano())
	_ = p.f.SetReadDeadline(time.Now())
}

func (p *pipeReader) Read(b []byte) (int, error) {
	if p.rc == nil {
		return p.r.Read(b)
	}
	for {
		var n int
		var err error
		rerr := p.rc.Read(func(fd uintptr) bool {
			for {
				n, err = syscall.Read(int(fd), b)
				switch {
				case err == syscall.EINTR:
					continue
				case err != syscall.EAGAIN:
					return true
				case time.Now().UnixNano() > p.until.Load():
					return false // sleep until the pipe is readable
				}
				runtime.Gosched() // what else there is to do comes first
			}
		})
		switch {
		case errors.Is(rerr, os.ErrDeadlineExceeded):
			// The wake-up of expect: poll.
			_ = p.f.SetReadDeadline(time.Time{})
			continue
		case rerr != nil:
			return 0, rerr
		case err != nil:
			return 0, err
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
