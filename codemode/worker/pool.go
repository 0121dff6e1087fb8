package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Command starts a worker: a program that calls Main (or Serve)
	// first. Default: this program with the argument Command.
	Command []string
	// MaxMemory bounds one worker's private memory, in bytes: its
	// collector aims below it, its address space is capped near it, and
	// the pool kills it past it. Default: 256MiB.
	MaxMemory int64
	// Workers is how many workers are kept running, idle or busy. Busy
	// ones beyond it are started when needed, maxStarting at a time, and
	// stopped after. Default 1.
	Workers int
	// Notify, when set, hears of workers that failed: one that died, was
	// killed, or could not start. It must not block.
	Notify func(event string, pid int, detail string)
}

// Defaults for PoolConfig.
const (
	DefaultMemory = 256 << 20
	// MinMemory is the least max_memory a worker can run with: the
	// program itself takes some tens of MiB.
	MinMemory = 64 << 20
)

// Pool keeps worker processes warm for the executions of one or more
// Runners. It is safe for concurrent use.
type Pool struct {
	cfg  PoolConfig
	path string // the program to run, when not cfg.Command[0]

	mu sync.Mutex
	// changed is closed, and replaced, when a worker or a start changed
	// (wakeLocked): one was put back or reaped, or a start ended. The
	// executions waiting in get for a worker, and shut, wait on it.
	changed chan struct{}
	idle    []*process
	// all is the pool's workers, idle or busy; procs every worker process
	// not yet reaped, also those being stopped.
	all   map[*process]struct{}
	procs map[*process]struct{}
	// draining is the workers that Close lets finish their execution
	// without waiting for them: those busy when it came, and those started
	// after it for executions of the old config still arriving.
	draining map[*process]bool
	// starting counts the starts under way, fills those of them in the
	// background (fill), not for an execution; awaiting counts the
	// executions in get waiting for a background start to end.
	starting, fills, awaiting int
	filling                   bool
	closed                    bool // by Close or Kill
	killed                    bool // by Kill
	noted                     bool // noteUnenforced has spoken
	// closing ends the background starts when the pool closes; killing
	// ends every start, and the waits in get, when it is killed.
	closing, killing context.Context
	close, kill      context.CancelFunc
}

// NewPool returns a Pool and starts its workers in the background.
func NewPool(cfg PoolConfig) (*Pool, error) {
	path := ""
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding the program to start workers from: %v", err)
		}
		cfg.Command = []string{exe, Command}
		// The program running now, even if a newer one replaced its file
		// (an upgrade before a reload): a worker must speak this Caddy's
		// protocol.
		path = selfExecutable()
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = DefaultMemory
	}
	if cfg.MaxMemory < MinMemory {
		return nil, fmt.Errorf("a worker's max_memory of %d MiB is too small: at least %d MiB", cfg.MaxMemory>>20, MinMemory>>20)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	p := &Pool{cfg: cfg, path: path, all: make(map[*process]struct{}), procs: make(map[*process]struct{}), draining: make(map[*process]bool)}
	p.changed = make(chan struct{})
	p.closing, p.close = context.WithCancel(context.Background())
	p.killing, p.kill = context.WithCancel(context.Background())
	p.fill()
	return p, nil
}

// Config returns the pool's configuration, defaults filled in.
func (p *Pool) Config() PoolConfig { return p.cfg }

// heapCeiling is the heap an execution may use before the worker stops it
// with a MemoryLimitError: below max_memory, so that the precise error
// comes before the kill.
func (p *Pool) heapCeiling() int64 { return p.cfg.MaxMemory * 3 / 4 }

var errPoolClosed = errors.New("the code mode handler is shutting down")

// maxStarting bounds the worker processes being started at once: past
// it, an execution waits for a worker to come free or a start to end
// rather than start one more. Each start is a whole program's; a burst of
// executions starting one each on a busy machine shared the cores until
// every start missed startTimeout together.
const maxStarting = 2

// get returns a worker for one execution: an idle one, else the one a
// background start is about to give, else a new one, else the first that
// comes free. A closed pool still serves the
// executions that reach it (requests of the config a reload replaced,
// still arriving), each in a worker of its own, stopped after it; a
// killed one refuses them.
func (p *Pool) get(ctx context.Context) (*process, error) {
	p.mu.Lock()
	for {
		for len(p.idle) > 0 {
			w := p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
			if w.alive() && len(w.frames) == 0 {
				p.mu.Unlock()
				return w, nil
			}
			p.forgetLocked(w)
			w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "it ended or spoke while idle"})
		}
		if p.killed {
			p.mu.Unlock()
			return nil, errPoolClosed
		}
		// A background start under way ends sooner than a new one: wait
		// for it rather than start a second worker beside it.
		awaitFill := p.fills > p.awaiting
		if !awaitFill && p.starting < maxStarting {
			break
		}
		if awaitFill {
			p.awaiting++
		}
		changed := p.changed
		p.mu.Unlock()
		var err error
		select {
		case <-changed:
		case <-p.killing.Done():
		case <-ctx.Done():
			err = ctx.Err()
		}
		p.mu.Lock()
		if awaitFill {
			p.awaiting--
		}
		if err != nil {
			p.mu.Unlock()
			return nil, err
		}
	}
	p.starting++
	p.mu.Unlock()
	w, err := p.start(ctx, true)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.starting--
	p.wakeLocked()
	if err != nil {
		return nil, err
	}
	if p.killed {
		// Killed since the start, which Kill stopped too.
		return nil, errPoolClosed
	}
	if p.closed {
		// Closed before or since the start: the worker serves this
		// execution and is stopped after (put); Close, which may be
		// waiting, does not wait for it.
		p.draining[w] = true
		p.wakeLocked()
		return w, nil
	}
	p.all[w] = struct{}{}
	p.noteUnenforced(w)
	return w, nil
}

// put takes a worker back after an execution it served to the end. A
// worker beyond Workers stays idle for surplusLinger, for the next burst,
// and is stopped then if still not needed.
func (p *Pool) put(w *process) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !w.alive() {
		p.forgetLocked(w)
		w.stop()
		return
	}
	p.idle = append(p.idle, w)
	p.wakeLocked()
	if len(p.all) > p.cfg.Workers {
		time.AfterFunc(surplusLinger, p.trim)
	}
}

// surplusLinger is how long a worker beyond Workers is kept idle.
const surplusLinger = 2 * time.Second

// trim stops idle workers beyond Workers, the longest idle first.
func (p *Pool) trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.all) > p.cfg.Workers && len(p.idle) > 0 {
		w := p.idle[0]
		p.forgetLocked(w)
		w.stop()
	}
}

// discard forgets a worker that was killed or must not serve again, and
// starts its replacement in the background.
func (p *Pool) discard(w *process) {
	p.mu.Lock()
	p.forgetLocked(w)
	p.mu.Unlock()
	if w.alive() {
		w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "it was retired"})
	}
	p.fill()
}

// forgetLocked takes w out of the pool's workers, idle ones included.
func (p *Pool) forgetLocked(w *process) {
	delete(p.all, w)
	for i, idle := range p.idle {
		if idle == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			break
		}
	}
}

// fill starts workers in the background until Workers are running.
func (p *Pool) fill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.filling || p.closed || len(p.all)+p.starting >= p.cfg.Workers {
		return
	}
	p.filling = true
	go p.fillLoop()
}

func (p *Pool) fillLoop() {
	backoff := time.Duration(0)
	for {
		if backoff > 0 {
			select {
			case <-time.After(backoff):
			case <-p.closing.Done():
			}
		}
		p.mu.Lock()
		if p.closed || len(p.all)+p.starting >= p.cfg.Workers {
			p.filling = false
			p.mu.Unlock()
			return
		}
		// Counted where it is decided, so that an execution in get sees
		// it and waits for it rather than start a second worker.
		p.starting++
		p.fills++
		p.mu.Unlock()
		w, err := p.start(p.closing, false)
		if hook := afterFillStart.Load(); hook != nil {
			(*hook)(p)
		}
		// The start ends, and its worker joins the idle ones, in one step:
		// an execution waiting for it finds it there.
		p.mu.Lock()
		p.starting--
		p.fills--
		p.wakeLocked()
		if err != nil {
			p.mu.Unlock()
			// Tried again later, less and less often: a program that
			// cannot start now may after a fix, and executions start
			// workers of their own meanwhile.
			backoff = min(max(2*backoff, time.Second), maxStartBackoff)
			continue
		}
		backoff = 0
		if p.closed {
			// Closed since the start, and waiting for this process.
			w.stop()
			p.filling = false
			p.mu.Unlock()
			return
		}
		p.all[w] = struct{}{}
		p.idle = append(p.idle, w)
		p.noteUnenforced(w)
		p.mu.Unlock()
	}
}

// afterFillStart, set by a test, runs between a background start and
// the pool taking the worker in: where a Close may come.
var afterFillStart atomic.Pointer[func(*Pool)]

// maxStartBackoff bounds the wait between two background starts after
// failures.
const maxStartBackoff = time.Minute

// start starts a worker, counted in starting (and fills, if not
// forExecution) by its caller until it returns, and keeps track of its
// process until it is reaped. A start that ends after Kill is undone, and
// so is one in the background (not forExecution) that ends after Close.
func (p *Pool) start(ctx context.Context, forExecution bool) (*process, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.killing, cancel)()
	w, err := startProcess(ctx, p.path, p.cfg.Command, p.cfg.MaxMemory)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && (p.killed || p.closed && !forExecution) {
		return nil, errPoolClosed
	}
	if err != nil && ctx.Err() != nil {
		return nil, err // the caller left: not the worker's failure
	}
	if err != nil {
		p.notify("worker_start_failed", 0, err.Error())
		return nil, err
	}
	p.procs[w] = struct{}{}
	go func() {
		<-w.dead
		p.mu.Lock()
		delete(p.procs, w)
		delete(p.draining, w)
		_, member := p.all[w]
		p.forgetLocked(w)
		p.wakeLocked()
		p.mu.Unlock()
		if member {
			// It died idle, or busy before its execution let it go.
			p.fill()
		}
	}()
	if p.killed {
		w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: errPoolClosed.Error()})
		return nil, errPoolClosed
	}
	return w, nil
}

// wakeLocked tells shut and the executions waiting in get that a worker
// or a start changed.
func (p *Pool) wakeLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *Pool) notify(event string, pid int, detail string) {
	if p.cfg.Notify != nil {
		p.cfg.Notify(event, pid, detail)
	}
}

// noteUnenforced tells, once per pool, what its workers cannot enforce
// on themselves: the same for every worker of one program.
func (p *Pool) noteUnenforced(w *process) {
	if p.noted {
		return
	}
	p.noted = true
	for _, u := range w.unenforced {
		p.notify("worker_limit_unenforced", w.pid, u)
	}
}

// Workers returns the number of worker processes running, idle or busy.
func (p *Pool) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all)
}

// Close stops the pool as a reload wants it: idle workers and background
// starts are stopped and reaped before it returns, and a busy one finishes
// its execution (bounded by its timeout and a grace) and is stopped then.
// An execution that still comes (a request of the old config) runs in a
// worker of its own, which Close does not wait for.
func (p *Pool) Close() { p.shut(false) }

// Kill stops every worker at once, busy ones too, and waits until their
// processes are gone: executions still running get a WorkerError, and
// those that come after are refused.
func (p *Pool) Kill() { p.shut(true) }

func (p *Pool) shut(killBusy bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.close()
	if killBusy {
		p.killed = true
		p.kill()
	}
	for w := range p.all {
		p.draining[w] = true
	}
	for _, w := range p.idle {
		delete(p.draining, w)
		w.stop()
	}
	// Busy workers are stopped when their execution gives them back
	// (put), and killed if it cannot (discard).
	p.all = make(map[*process]struct{})
	p.idle = nil
	if killBusy {
		for w := range p.procs {
			w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "the execution was stopped: " + errPoolClosed.Error()})
		}
		clear(p.draining) // every process is waited for
	}
	// Close waits for the background starts, which it ended, not for the
	// starts of executions, which serve them; Kill for every start.
	for p.fills > 0 || p.killed && p.starting > 0 || len(p.procs) > countIn(p.procs, p.draining) {
		changed := p.changed
		p.mu.Unlock()
		<-changed
		p.mu.Lock()
	}
}

// countIn is how many of procs are in set.
func countIn(procs map[*process]struct{}, set map[*process]bool) int {
	n := 0
	for w := range procs {
		if set[w] {
			n++
		}
	}
	return n
}
