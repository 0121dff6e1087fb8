package boundedfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// UserAgent is the User-Agent of every request.
const UserAgent = "caddy-mcp"

// Policy is what a caller chooses of a Client.
type Policy struct {
	// Timeout bounds a whole request, from dialling to the last byte of
	// the body.
	Timeout time.Duration
	// MaxSize bounds the body read, declared or not.
	MaxSize int64
	// MaxRedirects is how many redirects a request follows; one more is
	// an error.
	MaxRedirects int
	// Allow checks the URL of each redirect; an error refuses it. The
	// first URL is the caller's to check.
	Allow func(*url.URL) error
	// Proxy chooses a request's proxy, as http.Transport's Proxy does:
	// http.ProxyFromEnvironment to honour HTTPS_PROXY and NO_PROXY, nil
	// to go direct always.
	Proxy func(*http.Request) (*url.URL, error)
}

// Client makes requests within its Policy. It keeps connections between
// requests; Close lets them go.
type Client struct {
	policy Policy
	http   *http.Client
}

// New returns a Client for policy.
func New(policy Policy) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = policy.Proxy
	transport.DialContext = (&net.Dialer{Timeout: policy.Timeout, KeepAlive: 30 * time.Second}).DialContext
	transport.TLSHandshakeTimeout = policy.Timeout
	transport.ResponseHeaderTimeout = policy.Timeout
	return &Client{
		policy: policy,
		http: &http.Client{
			Transport: transport,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) > policy.MaxRedirects {
					return fmt.Errorf("more than %d redirects", policy.MaxRedirects)
				}
				if policy.Allow == nil {
					return nil
				}
				if err := policy.Allow(req.URL); err != nil {
					return fmt.Errorf("redirected to %s: %w", Shown(req.URL), err)
				}
				return nil
			},
		},
	}
}

// Close closes the connections the Client keeps.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// Do sends req within the policy and returns the body of a 200 answer.
// An error names req's URL as Shown does; one from the transport (the
// server down, a refused redirect, a timeout) still holds the
// *url.Error of net/http.
func (c *Client) Do(req *http.Request) ([]byte, error) {
	u := req.URL
	ctx, cancel := context.WithTimeout(req.Context(), c.policy.Timeout)
	defer cancel()
	req = req.WithContext(ctx)
	req.Header.Set("User-Agent", UserAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.failed(u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: the server answered %s (status %d, want 200)", Shown(u), resp.Status, resp.StatusCode)
	}
	if resp.ContentLength > c.policy.MaxSize {
		return nil, fmt.Errorf("fetching %s: the document is %d bytes, more than the %d allowed", Shown(u), resp.ContentLength, c.policy.MaxSize)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.policy.MaxSize+1))
	if err != nil {
		return nil, c.failed(u, err)
	}
	if int64(len(data)) > c.policy.MaxSize {
		return nil, fmt.Errorf("fetching %s: the document is larger than the limit: more than the %d bytes allowed", Shown(u), c.policy.MaxSize)
	}
	return data, nil
}

// Shown is u as errors show it: without credentials, query or fragment,
// which may carry a token.
func Shown(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// failed words err, which ended a request to u, and keeps it to unwrap.
// The bounds of a request race (its context, the dial, the TLS handshake,
// the wait for headers), and the first to end names itself its own way:
// "context deadline exceeded" does not say "timeout", so this does.
func (c *Client) failed(u *url.URL, err error) error {
	shown := err
	var ue *url.Error
	if errors.As(err, &ue) {
		shown = ue.Err // it names the URL again, query and all
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return &fetchError{fmt.Sprintf("fetching %s: timeout: no whole answer within %s", Shown(u), c.policy.Timeout), err}
	}
	return &fetchError{fmt.Sprintf("fetching %s: %v", Shown(u), shown), err}
}

// fetchError is a failed request in its own words, wrapping the error
// that ended it.
type fetchError struct {
	msg string
	err error
}

func (e *fetchError) Error() string { return e.msg }
func (e *fetchError) Unwrap() error { return e.err }
