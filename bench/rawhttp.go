package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// rawConn is a minimal HTTP/1.1 keep-alive client for one connection: it
// writes a request prepared once, as bytes, and reads the answer into a
// buffer it reuses. The load generator shares the machine with the servers
// it measures, so its own cost per request must be as small as it can be,
// and the same for every configuration: net/http's client costs tens of
// microseconds per request, more for a POST than for a GET.
type rawConn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
	body bytes.Buffer
}

func (rc *rawConn) dial() error {
	c, err := net.DialTimeout("tcp", rc.addr, 5*time.Second)
	if err != nil {
		return err
	}
	rc.c, rc.r = c, bufio.NewReaderSize(c, 16<<10)
	return nil
}

func (rc *rawConn) close() {
	if rc.c != nil {
		rc.c.Close()
		rc.c = nil
	}
}

// do sends req and returns the status and the body (valid until the next
// call). A connection the server closed is dialed again once.
func (rc *rawConn) do(req []byte, deadline time.Time) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		if rc.c == nil {
			if err := rc.dial(); err != nil {
				return 0, nil, err
			}
		}
		rc.c.SetDeadline(deadline)
		status, body, closeAfter, err := rc.roundTrip(req)
		if err == nil {
			if closeAfter {
				rc.close()
			}
			return status, body, nil
		}
		rc.close()
		if attempt > 0 || errors.Is(err, errTimeout) {
			return 0, nil, err
		}
	}
}

var errTimeout = errors.New("timeout")

func (rc *rawConn) roundTrip(req []byte) (status int, body []byte, closeAfter bool, err error) {
	if _, err = rc.c.Write(req); err != nil {
		return
	}
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			err = errTimeout
		}
		return
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, nil, false, fmt.Errorf("bad status line %q", line)
	}
	status, _ = strconv.Atoi(string(line[9:12]))
	length, chunked := -1, false
	for {
		h, err := rc.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, false, err
		}
		if len(h) <= 2 {
			break
		}
		k, v, _ := bytes.Cut(bytes.TrimRight(h, "\r\n"), []byte(":"))
		v = bytes.TrimSpace(v)
		switch {
		case asciiEqualFold(k, "content-length"):
			length, _ = strconv.Atoi(string(v))
		case asciiEqualFold(k, "transfer-encoding"):
			chunked = asciiEqualFold(v, "chunked")
		case asciiEqualFold(k, "connection"):
			closeAfter = asciiEqualFold(v, "close")
		}
	}
	rc.body.Reset()
	switch {
	case chunked:
		for {
			l, err := rc.r.ReadSlice('\n')
			if err != nil {
				return 0, nil, false, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(l, []byte(";"), 2)[0])), 16, 64)
			if err != nil {
				return 0, nil, false, fmt.Errorf("bad chunk size %q", l)
			}
			if size == 0 {
				// Trailers, then the empty line.
				for {
					t, err := rc.r.ReadSlice('\n')
					if err != nil {
						return 0, nil, false, err
					}
					if len(t) <= 2 {
						break
					}
				}
				break
			}
			if _, err := io.CopyN(&rc.body, rc.r, size); err != nil {
				return 0, nil, false, err
			}
			if _, err := rc.r.Discard(2); err != nil {
				return 0, nil, false, err
			}
		}
	case length >= 0:
		if _, err := io.CopyN(&rc.body, rc.r, int64(length)); err != nil {
			return 0, nil, false, err
		}
	default:
		if status != 204 && status != 304 && status >= 200 {
			return 0, nil, false, errors.New("an answer without a length")
		}
	}
	return status, rc.body.Bytes(), closeAfter, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// rawRequest builds the bytes of a request to target URL u.
func rawRequest(u *url.URL, method string, header [][2]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.RequestURI(), u.Host)
	for _, h := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	if body != nil {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}
