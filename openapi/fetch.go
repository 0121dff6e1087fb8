package openapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/boundedfetch"
)

// Bounds of Fetch.
const (
	FetchTimeout = 10 * time.Second
	MaxFetchSize = 16 << 20
	maxRedirects = 5
)

// Fetch reads a document from an https URL, or an http one on a loopback
// host (local development and tests), once: within FetchTimeout and
// MaxFetchSize, following at most five redirects, each to a URL that
// would be accepted itself. An answer other than 200 is an error.
func Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	return fetch(ctx, rawURL, FetchTimeout)
}

// fetch is Fetch within timeout, so that tests can make it short.
func fetch(ctx context.Context, rawURL string, timeout time.Duration) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("the document url is not a valid URL")
	}
	if err := fetchable(u); err != nil {
		return nil, fmt.Errorf("document url %s: %v", boundedfetch.Shown(u), err)
	}
	client := boundedfetch.New(boundedfetch.Policy{
		Timeout:      timeout,
		MaxSize:      MaxFetchSize,
		MaxRedirects: maxRedirects,
		Allow:        fetchable,
		// No proxy: one from the environment would be a route off
		// loopback.
		Proxy: nil,
	})
	defer client.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("document url %s: %v", boundedfetch.Shown(u), err)
	}
	req.Header.Set("Accept", "application/json, application/yaml, application/openapi+json, application/openapi+yaml, text/yaml, */*;q=0.5")
	return client.Do(req)
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
