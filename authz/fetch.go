package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/boundedfetch"
)

const (
	// fetchTimeout bounds every request to an authorization server, so a
	// slow or silent one costs a caller this long at most.
	fetchTimeout = 5 * time.Second
	// maxDocument bounds what is read of a metadata document, a JWKS or an
	// introspection answer.
	maxDocument = 1 << 20
	// maxRedirects is how many redirects a request follows, as
	// docs/authorization.md says.
	maxRedirects = 3
)

// newHTTPClient returns the client for authorization servers: bounded in
// time and size, through the proxy the environment names, and following
// redirects only to URLs that pass the same https rule as the
// configuration.
func newHTTPClient() *boundedfetch.Client {
	return boundedfetch.New(boundedfetch.Policy{
		Timeout:      fetchTimeout,
		MaxSize:      maxDocument,
		MaxRedirects: maxRedirects,
		Allow:        func(u *url.URL) error { return checkServerURL(u.String()) },
		Proxy:        http.ProxyFromEnvironment,
	})
}

// getJSON reads a JSON document at target into dst.
func getJSON(ctx context.Context, client *boundedfetch.Client, target string, dst any) error {
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
func postForm(ctx context.Context, client *boundedfetch.Client, target string, form url.Values, user, password string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(password))
	return doJSON(client, req, dst)
}

func doJSON(client *boundedfetch.Client, req *http.Request, dst any) error {
	body, err := client.Do(req)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("%s: not a JSON document: %w", boundedfetch.Shown(req.URL), err)
	}
	return nil
}
