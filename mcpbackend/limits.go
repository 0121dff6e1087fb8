package mcpbackend

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Bounds on what a backend sends. mcp-go reads a JSON answer whole, reads
// an event stream with bufio's ReadString('\n') and joins the data lines
// of an event into one string, all with no cap. Every answer body is read
// through an answerBody, which counts as the bytes go by and fails the
// read past a bound: mcp-go then holds at most one bounded line, event or
// message, and drops it with the error.

// DefaultMaxBackendStream bounds a session's event stream (the SSE
// transport's GET) when the config sets no limit.
const DefaultMaxBackendStream = 1 << 30

// DefaultMaxBackendResponse bounds a backend answer when the config sets
// no limit. It is well above the mcp handler's max_response_size, since an
// answer carries a REST body escaped as JSON text.
const DefaultMaxBackendResponse = 16 << 20

// copiesPerEvent bounds the copying of an event split into data lines:
// mcp-go copies the data gathered so far on each line, so an event of n
// one-byte lines costs n²/2. An event may cost this many times its size,
// plus splitEventAllowance for the small ones.
const (
	copiesPerEvent      = 64
	splitEventAllowance = 1 << 20
)

// StreamLimitError reports an event stream that broke one of its bounds.
type StreamLimitError struct{ msg string }

func (e *StreamLimitError) Error() string { return e.msg }

// answerBody is an answer body that fails once it is longer than limit, or
// once a line or event in it is, rather than end early: a cut answer must
// not pass for a whole one. Every body is read as an event stream: a JSON
// answer has no data lines, and its total bound is the tighter one.
type answerBody struct {
	io.ReadCloser
	read, limit int64
	stream      bool // a session's event stream, not one answer
	frame       eventFrame
	state       *callState // may be nil: learns of the broken bound
	err         error
}

// tooLong is the error of a body past its limit.
func (b *answerBody) tooLong() error {
	if b.stream {
		return &StreamLimitError{fmt.Sprintf("the backend's event stream passed max_stream_size (%s)", upstream.FormatSize(b.limit))}
	}
	return &AnswerTooLargeError{Limit: b.limit}
}

func (b *answerBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if left := b.limit - b.read; int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if b.read += int64(n); b.read > b.limit {
		n -= int(b.read - b.limit)
		return b.fail(n, b.tooLong())
	}
	if good, ferr := b.frame.scan(p[:n]); ferr != nil {
		return b.fail(good, ferr)
	}
	return n, err
}

func (b *answerBody) fail(n int, err error) (int, error) {
	b.err = err
	if b.state != nil {
		b.state.breakBound(err)
	}
	return n, err
}

// eventFrame follows the lines and events of an event stream as mcp-go
// splits them: lines end at '\n', a line of nothing but '\r' ends an
// event, and "data:" lines make up its data.
type eventFrame struct {
	maxLine, maxEvent int64

	line    int64   // bytes of the current line so far
	cr      int64   // the '\r' at its end, which mcp-go trims
	head    [6]byte // its first bytes: is it a data line?
	headLen int
	data    int64 // bytes of the current event's data, as mcp-go joins them
	lines   int64 // its data lines
	copied  int64 // bytes mcp-go copied joining them
}

// lineAllowance is what a data line may hold beside its value: the field
// name, a space, the '\r' of a CRLF.
const lineAllowance = 64

// scan follows p; on a broken bound it returns how many bytes of p came
// before the line that broke it.
func (f *eventFrame) scan(p []byte) (int, error) {
	done := 0
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		if err := f.add(seg); err != nil {
			return done, err
		}
		if i < 0 {
			return done + len(p), nil
		}
		if err := f.endLine(); err != nil {
			return done, err
		}
		done += i + 1
		p = p[i+1:]
	}
	return done, nil
}

func (f *eventFrame) add(seg []byte) error {
	if f.headLen < len(f.head) {
		f.headLen += copy(f.head[f.headLen:], seg)
	}
	if cr := int64(len(seg) - len(bytes.TrimRight(seg, "\r"))); cr == int64(len(seg)) {
		f.cr += cr
	} else {
		f.cr = cr
	}
	f.line += int64(len(seg))
	maxLine := f.maxLine
	if f.isData() {
		if f.joined() > f.maxEvent {
			return &StreamLimitError{fmt.Sprintf("the backend sent an event larger than %s", upstream.FormatSize(f.maxEvent))}
		}
		maxLine += lineAllowance
	}
	if f.line > maxLine {
		return &StreamLimitError{fmt.Sprintf("the backend sent an event stream line longer than %s", upstream.FormatSize(f.maxLine))}
	}
	return nil
}

func (f *eventFrame) endLine() error {
	switch {
	case f.line == f.cr: // a blank line ends the event
		f.data, f.lines, f.copied = 0, 0, 0
	case f.isData():
		f.data, f.lines = f.joined(), f.lines+1
		f.copied += f.data
		if f.copied > copiesPerEvent*f.data+splitEventAllowance {
			return &StreamLimitError{fmt.Sprintf("the backend split an event of %s into %d data lines", upstream.FormatSize(f.data), f.lines)}
		}
	}
	f.line, f.cr, f.headLen = 0, 0, 0
	return nil
}

func (f *eventFrame) isData() bool {
	return f.headLen >= 5 && string(f.head[:5]) == "data:"
}

// joined is the size of the event's data with the current line's value.
func (f *eventFrame) joined() int64 {
	value := f.line - f.cr - 5
	if f.headLen == 6 && f.head[5] == ' ' && value > 0 {
		value--
	}
	if f.lines > 0 {
		value++ // the '\n' between the lines
	}
	return f.data + value
}

// boundAnswers reads every answer through its bounds, and tells the
// request's callState the status of the answer to a POST. A GET that
// resumes a request's stream (Last-Event-ID) carries one answer, as a
// POST does; any other GET is a session's event stream, which carries
// every answer of the SSE transport and is bounded by stream in total.
type boundAnswers struct {
	base          http.RoundTripper
	limit, stream int64
	// sse: a POST goes to the endpoint of the session's stream, so it
	// always carries a session.
	sse bool
}

func (t boundAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	state, _ := req.Context().Value(callStateKey{}).(*callState)
	if state != nil && req.Method == http.MethodPost {
		state.answered(resp.StatusCode, t.sse || req.Header.Get(transport.HeaderKeySessionID) != "")
	}
	body := &answerBody{ReadCloser: resp.Body, limit: t.limit, state: state,
		frame: eventFrame{maxLine: t.limit, maxEvent: t.limit}}
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") == "" {
		body.limit, body.stream = t.stream, true
	}
	if resp.ContentLength > body.limit {
		resp.Body.Close()
		err := body.tooLong()
		if state != nil {
			state.breakBound(err)
		}
		return nil, err
	}
	resp.Body = body
	return resp, nil
}

func (t boundAnswers) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// callState travels in the context of the requests of one call or one
// listing, and learns what the transport saw of their answers: mcp-go
// reports a stream that broke off only as "unexpected nil response", and
// the status of a refused request only in an error's text.
type callState struct {
	replayable bool // the request may run twice

	mu      sync.Mutex
	status  int  // of the attempt's first answered POST; 0 before one came
	session bool // that POST carried a session
	bound   error
	// result is the attempt's tools/call result, when the transport took
	// it for Call (see rawresult.go).
	result *toolResult
}

// answered records the status of the attempt's own request: the first
// POST answered since retry. Later POSTs under the same context are the
// client's answers to requests the server sent on the answer stream
// (ping, sampling, elicitation); a server that refuses one of those with
// 400 or 404 may already have run the tool, so their status must not make
// the call look refused.
func (s *callState) answered(status int, session bool) {
	s.mu.Lock()
	if s.status == 0 {
		s.status, s.session = status, session
	}
	s.mu.Unlock()
}

func (s *callState) breakBound(err error) {
	s.mu.Lock()
	if s.bound == nil {
		s.bound = err
	}
	s.mu.Unlock()
}

// answer is what the attempt's own POST got.
func (s *callState) answer() (status int, session bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status, s.session
}

// broken is the first bound the answers broke, or nil.
func (s *callState) broken() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bound
}

// retry forgets what the last attempt saw.
func (s *callState) retry() {
	s.mu.Lock()
	s.status, s.session, s.bound, s.result = 0, false, nil, nil
	s.mu.Unlock()
}

func (s *callState) setResult(r toolResult) {
	s.mu.Lock()
	s.result = &r
	s.mu.Unlock()
}

// takenResult is the result the transport took, or nil.
func (s *callState) takenResult() *toolResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.result
}

type callStateKey struct{}
