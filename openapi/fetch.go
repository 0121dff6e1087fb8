package openapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Bounds of Fetch.
const (
	FetchTimeout   = 10 * time.Second
	MaxFetchSize   = 16 << 20
	maxRedirects   = 5
	fetchUserAgent = "caddy-mcp"
)

// Fetch reads a document from an https URL, or an http one on a loopback
// host (local development and tests), once: within FetchTimeout and
// MaxFetchSize, following at most five redirects, each to a URL that
// would be accepted itself. An answer other than 200 is an error.
func Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	return fetcher{timeout: FetchTimeout, maxSize: MaxFetchSize}.fetch(ctx, rawURL)
}

// fetcher holds Fetch's bounds, so that tests can make them small.
type fetcher struct {
	timeout time.Duration
	maxSize int64
}

func (f fetcher) fetch(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("the document url is not a valid URL")
	}
	if err := fetchable(u); err != nil {
		return nil, fmt.Errorf("document url %s: %v", shown(u), err)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	client := &http.Client{
		// The default transport would take a proxy from the environment,
		// and with it a route off loopback.
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: f.timeout}).DialContext,
			TLSHandshakeTimeout:   f.timeout,
			ResponseHeaderTimeout: f.timeout,
			DisableKeepAlives:     true,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if err := fetchable(req.URL); err != nil {
				return fmt.Errorf("redirected to %s: %v", shown(req.URL), err)
			}
			return nil
		},
	}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("document url %s: %v", shown(u), err)
	}
	req.Header.Set("Accept", "application/json, application/yaml, application/openapi+json, application/openapi+yaml, text/yaml, */*;q=0.5")
	req.Header.Set("User-Agent", fetchUserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fetchError(u, f.timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: the server answered %s", shown(u), resp.Status)
	}
	if resp.ContentLength > f.maxSize {
		return nil, fmt.Errorf("fetching %s: the document is %d bytes, more than the %d allowed", shown(u), resp.ContentLength, f.maxSize)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.maxSize+1))
	if err != nil {
		return nil, fetchError(u, f.timeout, err)
	}
	if int64(len(data)) > f.maxSize {
		return nil, fmt.Errorf("fetching %s: the document is more than the %d bytes allowed", shown(u), f.maxSize)
	}
	return data, nil
}

// fetchable checks that u is https, or http to a loopback host.
func fetchable(u *url.URL) error {
	if u.User != nil {
		return errors.New("credentials in the url are not sent")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !loopback(u.Hostname()) {
			return errors.New("http is allowed only to a loopback host (127.0.0.1, ::1, localhost); use https")
		}
	default:
		return fmt.Errorf("scheme %q: want https (or http to a loopback host)", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// shown is u as errors show it: without credentials, query or fragment,
// which may carry a token.
func shown(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

func fetchError(u *url.URL, timeout time.Duration, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // it names the URL again, query and all
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("fetching %s: no whole answer within %s", shown(u), timeout)
	}
	return fmt.Errorf("fetching %s: %v", shown(u), err)
}
