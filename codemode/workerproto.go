package codemode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// The pipe between Caddy and a worker carries frames: a 4-byte big-endian
// length, then one message as JSON. Caddy reads what a worker sends as it
// would read any untrusted peer: bounded in size, checked in shape.

// Message types.
const (
	msgHello  = "hello"  // Caddy -> worker: the worker's limits, once
	msgReady  = "ready"  // worker -> Caddy: set up, waiting for code
	msgRun    = "run"    // Caddy -> worker: run code
	msgCancel = "cancel" // Caddy -> worker: stop the execution (its caller left)
	msgCall   = "call"   // worker -> Caddy: call a backend tool
	msgReturn = "return" // Caddy -> worker: a call's answer
	msgLog    = "log"    // worker -> Caddy: a console line kept
	msgDone   = "done"   // worker -> Caddy: the execution's result
)

// message is one frame's content; each type uses some of the fields.
type message struct {
	Type string `json:"t"`
	// Exec numbers the executions of one worker: frames of an execution
	// that ended are dropped.
	Exec uint64 `json:"exec,omitempty"`

	// hello
	MaxMemory int64 `json:"max_memory,omitempty"`
	// ready: what the worker could not enforce on itself, if anything.
	Unenforced []string `json:"unenforced,omitempty"`

	// run
	Code     string          `json:"code,omitempty"`
	Limits   *Limits         `json:"limits,omitempty"`
	Bindings []workerBinding `json:"bindings,omitempty"`

	// call and return
	Call    uint64          `json:"call,omitempty"`
	Backend int             `json:"backend,omitempty"` // index in Bindings
	Tool    string          `json:"tool,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Value   json.RawMessage `json:"value,omitempty"`
	// Error is why the call failed; ToolFailed says it is the tool's own
	// error result.
	Error      string `json:"error,omitempty"`
	ToolFailed bool   `json:"tool_failed,omitempty"`
	// ErrorKind tells Error's cause where the code sees it:
	// "deadline" or "canceled".
	ErrorKind string `json:"error_kind,omitempty"`

	// log
	Line string `json:"line,omitempty"`

	// done
	Result *workerResult `json:"result,omitempty"`
	// Stuck reports that the execution's goroutine is still running in a
	// built-in: the worker cannot serve again.
	Stuck bool `json:"stuck,omitempty"`
}

// workerBinding is a Binding as it crosses the pipe: its calls come back.
type workerBinding struct {
	Name        string            `json:"name"`
	Tools       map[string]string `json:"tools,omitempty"`
	Unavailable string            `json:"unavailable,omitempty"`
	// Same says the tools are those this binding had in the worker's
	// last execution: they are not sent again.
	Same bool `json:"same,omitempty"`
}

// workerResult is a Result before format: Caddy formats it for the model.
type workerResult struct {
	Value     json.RawMessage `json:"value,omitempty"`
	Lines     []string        `json:"lines,omitempty"`
	CutLines  int             `json:"cut_lines,omitempty"`
	Notes     []string        `json:"notes,omitempty"`
	Err       *Error          `json:"error,omitempty"`
	ToolCalls int             `json:"tool_calls,omitempty"`
}

// frameWriter writes frames; safe for concurrent use.
type frameWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	buf []byte
}

func newFrameWriter(w io.Writer) *frameWriter {
	return &frameWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (fw *frameWriter) write(m *message) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	// Room for the length, then the JSON, as the code wrote it: no HTML
	// escaping of what a string holds.
	buf := bytes.NewBuffer(fw.buf[:0])
	buf.Write([]byte{0, 0, 0, 0})
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	body := buf.Bytes()
	binary.BigEndian.PutUint32(body, uint32(len(body)-4))
	if _, err := fw.w.Write(body); err != nil {
		return err
	}
	if cap(body) <= 1<<20 {
		fw.buf = body
	}
	return fw.w.Flush()
}

// frameReader reads frames of at most max bytes each.
type frameReader struct {
	r   *bufio.Reader
	max int
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// read returns the next message; io.EOF when the pipe closed between
// frames.
func (fr *frameReader) read() (*message, error) {
	var head [4]byte
	if _, err := io.ReadFull(fr.r, head[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	if n > fr.max {
		return nil, fmt.Errorf("a message of %d bytes, past the bound of %d", n, fr.max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(fr.r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	m := new(message)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("an unreadable message: %v", err)
	}
	if m.Type == "" {
		return nil, fmt.Errorf("a message without a type")
	}
	return m, nil
}
