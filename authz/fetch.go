package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

const (
	// fetchTimeout bounds every request to an authorization server, so a
	// slow or silent one costs a caller this long at most.
	fetchTimeout = 5 * time.Second
	// maxDocument bounds what is read of a metadata document, a JWKS or an
	// introspection answer.
	maxDocument  = 1 << 20
	maxRedirects = 3
)

// newHTTPClient returns the client for authorization servers: bounded in
// time, and following redirects only to URLs that pass the same https rule
// as the configuration.
func newHTTPClient() *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = fetchTimeout
	return &http.Client{
		Transport: transport,
		Timeout:   fetchTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if err := checkServerURL(req.URL.String()); err != nil {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
			}
			return nil
		},
	}
}

// getJSON reads a JSON document at target into dst.
func getJSON(ctx context.Context, client *http.Client, target string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	return doJSON(client, req, dst)
}

// postForm sends form to target, authenticated with HTTP Basic as RFC 6749
// section 2.3.1 says (each part form-encoded first), and reads the JSON
// answer into dst.
func postForm(ctx context.Context, client *http.Client, target string, form url.Values, user, password string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(password))
	return doJSON(client, req, dst)
}

func doJSON(client *http.Client, req *http.Request, dst any) error {
	ctx, cancel := context.WithTimeout(req.Context(), fetchTimeout)
	defer cancel()
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return timedOut(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return timedOut(fmt.Errorf("reading %s: %w", req.URL.Redacted(), err))
	}
	if len(body) > maxDocument {
		return fmt.Errorf("%s: answer larger than %d bytes", req.URL.Redacted(), maxDocument)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", req.URL.Redacted(), resp.StatusCode)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("%s: not a JSON document: %w", req.URL.Redacted(), err)
	}
	return nil
}

// timedOut says plainly that a request ran out of time. Three bounds of
// fetchTimeout race (the request's context, the client's timeout and the
// transport's wait for headers), and the first to end names itself its
// own way: "context deadline exceeded" does not say "timeout".
func timedOut(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timeout: no answer within %s: %w", fetchTimeout, err)
	}
	return err
}
