package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Response is an upstream answer, read whole into memory.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// TooLargeError reports a response body over the size limit.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the upstream response is larger than max_response_size (%s)", FormatSize(e.Limit))
}

// ExactReadMax is the largest declared body length read into one
// allocation made before the bytes arrive.
const ExactReadMax = 64 << 10

// ReadResponse reads resp's body, at most limit bytes, and closes it. A
// body over limit is an error, never a truncated success.
func ReadResponse(resp *http.Response, limit int64) (*Response, error) {
	defer resp.Body.Close()
	if resp.ContentLength > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	if limit > math.MaxInt64-1 {
		limit = math.MaxInt64 - 1
	}
	var body []byte
	var err error
	if n := resp.ContentLength; n >= 0 && n <= ExactReadMax {
		// A small known length: one exact allocation. A large one is not
		// taken on trust; memory follows the bytes that arrive.
		body = make([]byte, n)
		_, err = io.ReadFull(resp.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	}
	if err != nil {
		return nil, CleanError(err)
	}
	if int64(len(body)) > limit {
		return nil, &TooLargeError{Limit: limit}
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// Client sends tool requests to REST upstreams over pooled keep-alive
// connections. It never follows redirects: a redirect to another host must
// not carry the configured headers, so the 3xx is the result. Having no
// redirects, cookies or client timeout to handle, it sends on the
// transport directly; http.Client would copy every request's headers in
// case of a redirect.
type Client struct {
	transport *http.Transport
}

// NewClient returns a client with its own connection pool.
func NewClient() *Client {
	tr := &http.Transport{
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &Client{transport: tr}
}

// Do sends req and reads the answer, at most limit bytes. Errors name what
// went wrong without the request URL, whose query may hold a key.
func (c *Client) Do(req *http.Request, limit int64) (*Response, error) {
	if req.URL.User != nil {
		// http.Client would turn it into an Authorization header.
		return nil, errors.New("the upstream URL holds credentials; put them in a header")
	}
	req, span := StartRequestSpan(req)
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		err = CleanError(err)
		span.End(0, err)
		return nil, err
	}
	out, err := ReadResponse(resp, limit)
	if err != nil {
		span.End(0, err)
		return nil, err
	}
	span.End(out.Status, nil)
	return out, nil
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// CleanError strips the URL that net/http puts in its errors and keeps the
// cause. Context errors stay matchable with errors.Is.
func CleanError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	return err
}

// FormatSize writes a byte count the way the configuration does (4MiB).
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
