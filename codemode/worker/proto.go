package worker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/caddy-mcp/caddy-mcp/codemode"
)

// The pipe between Caddy and a worker carries frames: a 4-byte big-endian
// length of the rest, a 4-byte length of the header, the header (one
// message as JSON), then the message's payload as raw bytes: the code, a
// call's arguments, a call's or the execution's value, which are JSON
// already and would only be scanned again inside a JSON header. Caddy
// reads what a worker sends as it would read any untrusted peer: bounded
// in size, checked in shape, a value checked to be JSON.

// Message types.
const (
	msgHello  = "hello"  // Caddy -> worker: the worker's limits, once
	msgReady  = "ready"  // worker -> Caddy: set up, waiting for code
	msgRun    = "run"    // Caddy -> worker: run code
	msgCancel = "cancel" // Caddy -> worker: stop the execution (its caller left)
	msgCall   = "call"   // worker -> Caddy: call a backend tool
	msgSearch = "search" // worker -> Caddy: tools.search; answered by a return
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

	// Payload is the code (run), the arguments (call) or the value
	// (return, done), carried after the header.
	Payload []byte `json:"-"`

	// run
	Limits   *codemode.Limits `json:"limits,omitempty"`
	Bindings []wireBinding    `json:"bindings,omitempty"`
	// Search says the code has tools.search: its searches come back as
	// search messages, with {query, limit} as the payload.
	Search bool `json:"search,omitempty"`

	// call, search and return
	Call    uint64 `json:"call,omitempty"`
	Backend int    `json:"backend,omitempty"` // index in Bindings
	Tool    string `json:"tool,omitempty"`
	// Alone marks a call the execution waits on with nothing else to do:
	// Caddy may make it on the goroutine that reads the pipe.
	Alone bool `json:"alone,omitempty"`
	// Error is why the call failed; ToolFailed says it is the tool's own
	// error result.
	Error      string `json:"error,omitempty"`
	ToolFailed bool   `json:"tool_failed,omitempty"`
	// Cut is the record of a value its backend cut (Answer.Cut).
	Cut json.RawMessage `json:"cut,omitempty"`
	// ErrorKind tells Error's cause where the code sees it:
	// "deadline" or "canceled".
	ErrorKind string `json:"error_kind,omitempty"`

	// log
	Line string `json:"line,omitempty"`

	// done
	Result *wireResult `json:"result,omitempty"`
	// Stuck reports that the execution's goroutine is still running in a
	// built-in: the worker cannot serve again.
	Stuck bool `json:"stuck,omitempty"`
}

// wireBinding is a Binding as it crosses the pipe: its calls come back.
type wireBinding struct {
	Name        string            `json:"name"`
	Tools       map[string]string `json:"tools,omitempty"`
	Hidden      map[string]string `json:"hidden,omitempty"` // sent every time: it is the caller's
	Unavailable string            `json:"unavailable,omitempty"`
	// Same says the tools are those this binding had in the worker's
	// last execution: they are not sent again.
	Same bool `json:"same,omitempty"`
}

// wireResult is a Result before Format: Caddy formats it for the model.
type wireResult struct {
	Lines     []string        `json:"lines,omitempty"`
	CutLines  int             `json:"cut_lines,omitempty"`
	Notes     []string        `json:"notes,omitempty"`
	Err       *codemode.Error `json:"error,omitempty"`
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
	// Room for the lengths, then the header, as the code wrote its
	// strings: no HTML escaping.
	buf := bytes.NewBuffer(fw.buf[:0])
	buf.Write(make([]byte, 8))
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	body := buf.Bytes()
	if len(body)+len(m.Payload) > math.MaxUint32 {
		return fmt.Errorf("a message of %d bytes", len(body)+len(m.Payload))
	}
	binary.BigEndian.PutUint32(body, uint32(len(body)-4+len(m.Payload)))
	binary.BigEndian.PutUint32(body[4:], uint32(len(body)-8))
	if _, err := fw.w.Write(body); err != nil {
		return err
	}
	if _, err := fw.w.Write(m.Payload); err != nil {
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
	if n < 4 {
		return nil, fmt.Errorf("an unreadable message: %d bytes", n)
	}
	h := int(binary.BigEndian.Uint32(body))
	if h > n-4 {
		return nil, fmt.Errorf("an unreadable message: a header of %d bytes in %d", h, n)
	}
	m := new(message)
	if err := json.Unmarshal(body[4:4+h], m); err != nil {
		return nil, fmt.Errorf("an unreadable message: %v", err)
	}
	if len(body) > 4+h {
		m.Payload = body[4+h:]
	}
	if m.Type == "" {
		return nil, fmt.Errorf("a message without a type")
	}
	return m, nil
}
