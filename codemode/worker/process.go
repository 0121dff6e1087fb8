package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/sandbox"
)

// maxFromWorker bounds a frame a worker sends: a result or a call's
// arguments, each at most max_string bytes of JSON, and a little more.
const maxFromWorker = 2*(32<<20) + 1<<20

// process is one worker process as Caddy sees it.
type process struct {
	cmd    *exec.Cmd
	pid    int
	w      *frameWriter
	stdin  *os.File
	pipe   *pipeReader   // the worker's standard output
	frames chan *message // what the worker sent, in order; closed when its pipe ends
	dead   chan struct{} // closed once the process has exited and been reaped
	stderr head

	// killed is why Caddy killed the worker, if it did.
	killed atomic.Pointer[codemode.Error]
	// unenforced is what the worker could not enforce on itself.
	unenforced []string
	// memory reads the worker's private memory, where the system allows.
	memory func() (int64, error)

	execs   uint64
	readied bool // read has passed the ready message on
	// lastExec is the number of the execution the worker last got.
	lastExec atomic.Uint64
	// current is the execution the worker runs, if any.
	current atomic.Pointer[execution]
	// sent is the tools map of each binding the worker was last sent, by
	// name: an unchanged map is not sent again. Kept, so that its address
	// is not another map's.
	sent map[string]map[string]string
}

// startProcess starts a worker process, the program at path (default:
// command[0]) with command as its arguments, and waits for it to be ready.
func startProcess(ctx context.Context, path string, command []string, maxMemory int64) (*process, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	w := &process{
		pipe:   newPipeReader(stdoutR),
		frames: make(chan *message, 64),
		dead:   make(chan struct{}),
		stdin:  stdinW,
		w:      newFrameWriter(stdinW),
		sent:   make(map[string]map[string]string),
	}
	cmd := exec.Command(command[0], command[1:]...)
	if path != "" {
		cmd.Path, cmd.Err = path, nil
	}
	cmd.Env = []string{} // no secrets, no settings: the worker gets its limits from its hello
	cmd.Dir = os.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, &w.stderr
	cmd.SysProcAttr = workerAttr()
	// A worker that started a process of its own (where the system lets
	// it) could hold its pipes open past its death: Wait gives up on them.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, err
	}
	w.cmd, w.pid = cmd, cmd.Process.Pid
	read, doneReading, err := memoryReader(w.pid)
	if err == nil {
		w.memory = read
	}
	go w.read(stdoutR)
	go func() {
		_ = cmd.Wait()
		stdinW.Close()
		// The same for the pipe it answers on, once what it wrote before
		// it ended was read.
		time.AfterFunc(time.Second, func() { stdoutR.Close() })
		if doneReading != nil {
			doneReading()
		}
		close(w.dead)
	}()

	fail := func(e error) (*process, error) {
		w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: e.Error()})
		<-w.dead
		return nil, e
	}
	if err := w.w.write(&message{Type: msgHello, MaxMemory: maxMemory}); err != nil {
		return fail(w.startError(err))
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case m, ok := <-w.frames:
		if !ok {
			<-w.dead
			return fail(w.startError(fmt.Errorf("it ended before it was ready (%v)", cmd.ProcessState)))
		}
		if m.Type != msgReady {
			return fail(fmt.Errorf("the worker sent %q before it was ready", m.Type))
		}
		w.unenforced = m.Unenforced
		return w, nil
	case <-timer.C:
		return fail(fmt.Errorf("the worker was not ready within %s", startTimeout))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
}

// startError says why a worker could not start, with what it printed.
func (w *process) startError(err error) error {
	if last := w.stderr.lastLine(); last != "" {
		return fmt.Errorf("%v: %s", err, last)
	}
	return err
}

// read passes the worker's frames on until its pipe ends or it sends
// something unreadable, which gets it killed.
func (w *process) read(pipe *os.File) {
	defer pipe.Close()
	defer close(w.frames)
	fr := newFrameReader(w.pipe, maxFromWorker)
	for {
		m, err := fr.read()
		if err != nil {
			// A worker that died mid-frame says why on its standard error.
			if !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "the sandbox's worker process sent " + err.Error() + "; it was stopped"})
			}
			return
		}
		x := w.current.Load()
		switch {
		case m.Type == msgReady && !w.readied:
			w.readied = true
			w.frames <- m // the first frame: the buffer has room
			continue
		case x == nil || m.Exec != x.exec:
			// A call or a line of an execution that ended (a call the
			// code did not await) is dropped; anything else is a worker
			// that speaks out of turn.
			if m.Exec < w.lastExec.Load() && (m.Type == msgCall || m.Type == msgSearch || m.Type == msgLog) {
				continue
			}
			w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: fmt.Sprintf("the sandbox's worker process sent a %q message out of turn; it was stopped", m.Type)})
			return
		case m.Type == msgCall || m.Type == msgSearch:
			why := ""
			if m.Type == msgCall {
				why = x.startCall(m)
			} else {
				why = x.startSearch(m)
			}
			if why != "" {
				w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "the sandbox's worker process " + why + "; it was stopped"})
			}
			continue
		}
		select {
		case w.frames <- m:
		case <-x.ended:
		case <-w.dead:
			return
		}
	}
}

// kill stops the worker at once; the first reason given is the one its
// execution reports.
func (w *process) kill(reason *codemode.Error) {
	w.killed.CompareAndSwap(nil, reason)
	killProcess(w.cmd.Process)
}

// alive reports whether the worker process has not ended.
func (w *process) alive() bool {
	select {
	case <-w.dead:
		return false
	default:
		return true
	}
}

// stop ends an idle worker: its pipe closes and it exits; a worker that
// does not is killed.
func (w *process) stop() {
	w.stdin.Close()
	go func() {
		select {
		case <-w.dead:
		case <-time.After(time.Second):
			w.kill(&codemode.Error{Kind: codemode.KindWorker, Message: "stopped"})
		}
	}()
}

// deathError says why a worker died under an execution: the reason Caddy
// killed it for, else what the Go runtime printed before it ended.
func (w *process) deathError(maxMemory int64) *codemode.Error {
	if e := w.killed.Load(); e != nil {
		return e
	}
	text := w.stderr.String()
	switch {
	case strings.Contains(text, "stack overflow") || strings.Contains(text, "stack exceeds"):
		return &codemode.Error{Kind: codemode.KindStack, Message: "the code nested built-in calls so deeply that its worker process overflowed its stack; the worker was stopped"}
	case sandbox.AllocationFailed(text):
		return &codemode.Error{Kind: codemode.KindMemory, Message: fmt.Sprintf(
			"the execution ran out of memory in its worker process (max_memory %d MiB); the worker was stopped", maxMemory>>20)}
	}
	how := "it ended"
	if st := w.cmd.ProcessState; st != nil {
		how = "it ended: " + st.String()
	}
	if last := w.stderr.lastLine(); last != "" {
		how += ", " + last
	}
	return &codemode.Error{Kind: codemode.KindWorker, Message: "the sandbox's worker process died during the execution (" + how + ")"}
}

// bindings is what the worker is sent of the bindings: a tools map it was
// sent before is not sent again.
func (w *process) bindings(bs []codemode.Binding) []wireBinding {
	out := make([]wireBinding, len(bs))
	for i, b := range bs {
		out[i] = wireBinding{Name: b.Name, Hidden: b.Hidden, Unavailable: b.Unavailable}
		if b.Unavailable != "" {
			delete(w.sent, b.Name)
			continue
		}
		if prev, ok := w.sent[b.Name]; ok && prev != nil && reflect.ValueOf(prev).Pointer() == reflect.ValueOf(b.Tools).Pointer() {
			out[i].Same = true
			continue
		}
		out[i].Tools = b.Tools
		w.sent[b.Name] = b.Tools
	}
	return out
}

// head keeps the first bytes a worker wrote to its standard error: a
// fatal error says what it is before the goroutine dump that follows.
type head struct {
	mu  sync.Mutex
	buf []byte
}

const headSize = 8 << 10

func (t *head) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := headSize - len(t.buf); room > 0 {
		t.buf = append(t.buf, p[:min(len(p), room)]...)
	}
	return len(p), nil
}

func (t *head) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastLine is the first line that says why the worker ended ("fatal
// error: ...", "panic: ..."), else the last non-empty line, cut short.
func (t *head) lastLine() string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	last := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "panic:") {
			last = l
			break
		}
		if l != "" {
			last = l
		}
	}
	return codemode.CutUTF8(last, 200)
}
