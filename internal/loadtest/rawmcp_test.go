//go:build linux

package loadtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The load side speaks MCP over plain HTTP/1.1 keep-alive connections,
// one per client, with requests prepared once as bytes (as bench/ does):
// it shares two cores with the Caddy it measures, so its own cost per
// request has to stay small.

// The protocol eras every MCP endpoint serves.
const (
	eraLegacy = "2025-11-25" // initialize, then plain requests
	eraModern = "2026-07-28" // stateless: every request carries its metadata
)

var eras = []string{eraLegacy, eraModern}

// rawConn is one client connection.
type rawConn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
	used bool // an answer has come back on c: it is a reused connection now
	body bytes.Buffer
	// sessionID is the Mcp-Session-Id of the last answer that had one.
	sessionID string
}

// answer is one HTTP answer. start is when the attempt that got it began:
// after a retry, the second attempt's start.
type answer struct {
	status  int
	body    []byte // valid until the next request on the connection
	start   time.Time
	retried bool
}

var errNothingBack = errors.New("the connection closed before any answer came back")

func (rc *rawConn) dial() error {
	c, err := net.DialTimeout("tcp", rc.addr, 5*time.Second)
	if err != nil {
		return err
	}
	rc.c, rc.r, rc.used = c, bufio.NewReaderSize(c, 16<<10), false
	return nil
}

func (rc *rawConn) close() {
	if rc.c != nil {
		rc.c.Close()
		rc.c = nil
	}
}

// do sends req and reads the answer. A request that failed on a reused
// keep-alive connection before any byte of an answer came back is sent once
// more on a new connection, as net/http does for idempotent requests: that
// is HTTP/1.1's keep-alive race (a server closes an idle connection, on a
// reload or at its idle timeout, just as the client sends on it; Go's
// server then never ran a handler for it). Every call these tests make is
// read-only, so sending one again is safe in any case. The retries are
// counted and logged. Every other failure is an error.
func (rc *rawConn) do(req []byte, deadline time.Time) (answer, error) {
	for attempt := 0; ; attempt++ {
		if rc.c == nil {
			if err := rc.dial(); err != nil {
				return answer{}, err
			}
		}
		a := answer{start: time.Now(), retried: attempt > 0}
		reused := rc.used
		rc.c.SetDeadline(deadline)
		status, closeAfter, err := rc.roundTrip(req)
		if err == nil {
			rc.used = true
			if closeAfter {
				rc.close()
			}
			a.status, a.body = status, rc.body.Bytes()
			return a, nil
		}
		rc.close()
		if attempt == 0 && reused && errors.Is(err, errNothingBack) {
			continue
		}
		return a, err
	}
}

func (rc *rawConn) roundTrip(req []byte) (status int, closeAfter bool, err error) {
	if _, err = rc.c.Write(req); err != nil {
		if isConnClosed(err) {
			err = fmt.Errorf("%w: %v", errNothingBack, err)
		}
		return
	}
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		if len(line) == 0 && isConnClosed(err) {
			err = fmt.Errorf("%w: %v", errNothingBack, err)
		}
		return
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, false, fmt.Errorf("bad status line %q", line)
	}
	status, _ = strconv.Atoi(string(line[9:12]))
	length, chunked := -1, false
	for {
		h, err := rc.r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		if len(h) <= 2 {
			break
		}
		k, v, _ := bytes.Cut(bytes.TrimRight(h, "\r\n"), []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("content-length")):
			length, _ = strconv.Atoi(string(v))
		case bytes.EqualFold(k, []byte("transfer-encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("connection")):
			closeAfter = bytes.EqualFold(v, []byte("close"))
		case bytes.EqualFold(k, []byte("mcp-session-id")):
			rc.sessionID = string(v)
		}
	}
	rc.body.Reset()
	switch {
	case chunked:
		for {
			l, err := rc.r.ReadSlice('\n')
			if err != nil {
				return 0, false, err
			}
			sizeText, _, _ := bytes.Cut(l, []byte(";"))
			size, err := strconv.ParseInt(string(bytes.TrimSpace(sizeText)), 16, 64)
			if err != nil {
				return 0, false, fmt.Errorf("bad chunk size %q", l)
			}
			if size == 0 {
				for { // trailers, then the empty line
					t, err := rc.r.ReadSlice('\n')
					if err != nil {
						return 0, false, err
					}
					if len(t) <= 2 {
						break
					}
				}
				break
			}
			if _, err := io.CopyN(&rc.body, rc.r, size); err != nil {
				return 0, false, err
			}
			if _, err := rc.r.Discard(2); err != nil {
				return 0, false, err
			}
		}
	case length >= 0:
		if _, err := io.CopyN(&rc.body, rc.r, int64(length)); err != nil {
			return 0, false, err
		}
	case status == 204 || status == 304 || status < 200:
	default:
		return 0, false, errors.New("an answer without a length")
	}
	return status, closeAfter, nil
}

func isConnClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}

// heldCall is a request sent but for its last bytes: the server has read
// its headers and waits, in the handler, for the rest of the body. It
// starts before a reload and ends after it.
type heldCall struct {
	name string
	conn rawConn
	rest []byte
}

// hold sends all of req but its last two bytes on a new connection.
func hold(addr, name string, req []byte) (*heldCall, error) {
	h := &heldCall{name: name, conn: rawConn{addr: addr}}
	if err := h.conn.dial(); err != nil {
		return nil, err
	}
	cut := len(req) - 2
	if _, err := h.conn.c.Write(req[:cut]); err != nil {
		h.conn.close()
		return nil, err
	}
	h.rest = req[cut:]
	return h, nil
}

// finish sends the rest of the request and reads the answer.
func (h *heldCall) finish() (answer, error) {
	defer h.conn.close()
	a := answer{start: time.Now()}
	h.conn.c.SetDeadline(time.Now().Add(requestTimeout))
	status, _, err := h.conn.roundTrip(h.rest)
	a.status, a.body = status, h.conn.body.Bytes()
	return a, err
}

// mcpSession is one MCP client of one endpoint in one era, on a
// connection of its own.
type mcpSession struct {
	era  string
	u    *url.URL
	conn rawConn
}

// newMCPSession connects a client; in the 2025-11-25 era it initializes
// first (initialize, notifications/initialized).
func newMCPSession(endpoint, era string) (*mcpSession, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	s := &mcpSession{era: era, u: u, conn: rawConn{addr: u.Host}}
	if era != eraLegacy {
		return s, nil
	}
	deadline := time.Now().Add(10 * time.Second)
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"loadtest","version":"1"}}}`, era)
	a, err := s.conn.do(s.request("initialize", "", []byte(init)), deadline)
	if err != nil {
		return nil, fmt.Errorf("initialize: %v", err)
	}
	if a.status != 200 || !bytes.Contains(a.body, []byte(`"protocolVersion":"`+era+`"`)) {
		return nil, fmt.Errorf("initialize: %d %.300s", a.status, a.body)
	}
	a, err = s.conn.do(s.request("notifications/initialized", "", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)), deadline)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %v", err)
	}
	if a.status/100 != 2 {
		return nil, fmt.Errorf("notifications/initialized: %d %.300s", a.status, a.body)
	}
	return s, nil
}

// request builds the HTTP request of one JSON-RPC message.
func (s *mcpSession) request(method, name string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", s.u.RequestURI(), s.u.Host)
	b.WriteString("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	fmt.Fprintf(&b, "Mcp-Protocol-Version: %s\r\n", s.era)
	if s.conn.sessionID != "" {
		fmt.Fprintf(&b, "Mcp-Session-Id: %s\r\n", s.conn.sessionID)
	}
	if s.era == eraModern {
		fmt.Fprintf(&b, "Mcp-Method: %s\r\n", method)
		if name != "" {
			fmt.Fprintf(&b, "Mcp-Name: %s\r\n", name)
		}
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	return b.Bytes()
}

// meta is the _meta member a 2026-07-28 request carries, with a comma
// before it; empty in the 2025-11-25 era.
func (s *mcpSession) meta(progress bool) string {
	var m []string
	if s.era == eraModern {
		m = append(m, fmt.Sprintf(`"io.modelcontextprotocol/protocolVersion":%q`, s.era),
			`"io.modelcontextprotocol/clientCapabilities":{}`,
			`"io.modelcontextprotocol/clientInfo":{"name":"loadtest","version":"1"}`)
	}
	if progress {
		m = append(m, `"progressToken":"p1"`)
	}
	if len(m) == 0 {
		return ""
	}
	return `,"_meta":{` + strings.Join(m, ",") + `}`
}

// toolCall prepares a tools/call. With progress, the request asks for
// progress notifications, so the answer streams as SSE through mcp-go
// rather than the endpoint's plain-JSON fast path.
func (s *mcpSession) toolCall(tool string, args any, progress bool) []byte {
	a, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s%s}}`, tool, a, s.meta(progress))
	return s.request("tools/call", tool, []byte(body))
}

// toolsList prepares a tools/list.
func (s *mcpSession) toolsList() []byte {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"`
	if m := s.meta(false); m != "" {
		body += `,"params":{` + m[1:] + `}`
	}
	return s.request("tools/list", "", []byte(body+"}"))
}

var (
	resultMark    = []byte(`"result"`)
	isErrorMark   = []byte(`"isError":true`)
	busyMark      = []byte(`BusyError: `)
	maxConcurMark = []byte(`max_concurrent`)
)

// errBusy is codemode's documented busy answer (max_concurrent).
var errBusy = errors.New("busy (max_concurrent)")

// check reads an answer to a tools/call or tools/list: nil for a result
// holding want, errBusy for codemode's busy error, else what was wrong.
func check(a answer, want string) error {
	if a.status != 200 {
		return fmt.Errorf("status %d: %.300s", a.status, a.body)
	}
	if !bytes.Contains(a.body, resultMark) {
		return fmt.Errorf("not a result: %.300s", a.body)
	}
	if bytes.Contains(a.body, isErrorMark) {
		if bytes.Contains(a.body, busyMark) && bytes.Contains(a.body, maxConcurMark) {
			return errBusy
		}
		return fmt.Errorf("tool error: %.300s", a.body)
	}
	if !bytes.Contains(a.body, []byte(want)) {
		return fmt.Errorf("the result lacks %q: %.300s", want, a.body)
	}
	return nil
}
