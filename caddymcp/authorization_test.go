package caddymcp

import (
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
)

// The JSON config is checked as Caddy loads it: the authorization block
// through authz's rules, tool scopes only with a block to check them, and
// the introspection secret resolved at Provision without ever being shown.
func TestAuthorizationConfigLoad(t *testing.T) {
	t.Setenv("AUTHZ_TEST_SECRET", "s3cret-value")
	t.Setenv("AUTHZ_TEST_EMPTY", "")
	tool := func(scopes string) string {
		return `{"name":"t","description":"d","method":"GET","path":"/x"` + scopes + `}`
	}
	load := func(authorization, toolJSON string) error {
		config := `{"upstream":"http://127.0.0.1:9","tools":[` + toolJSON + `]` + authorization + `}`
		_, err := loadMCP(t, config)
		return err
	}
	for _, tc := range []struct {
		name          string
		authorization string
		tool          string
		wantErr       string // "" loads
	}{
		{"jwt", `,"authorization":{"issuers":["https://auth.example.com"],"resource":"https://api.example.com/mcp","cache_ttl":"2m"}`, tool(`,"scopes":["orders:read"]`), ""},
		{"introspection secret from env", `,"authorization":{"issuers":["https://auth.example.com"],"introspect":{"url":"https://auth.example.com/i","client_id":"rs","client_secret":"{env.AUTHZ_TEST_SECRET}"}}`, tool(""), ""},
		{"introspection secret empty", `,"authorization":{"issuers":["https://auth.example.com"],"introspect":{"url":"https://auth.example.com/i","client_id":"rs","client_secret":"{env.AUTHZ_TEST_EMPTY}"}}`, tool(""), `client_secret {env.AUTHZ_TEST_EMPTY} resolves to empty text`},
		{"no issuer", `,"authorization":{"resource":"https://api.example.com/mcp"}`, tool(""), `authorization: issuer: at least one is required`},
		{"clear-text resource", `,"authorization":{"issuers":["https://auth.example.com"],"resource":"http://api.example.com/mcp"}`, tool(""), `resource "http://api.example.com/mcp": must be https://`},
		{"tool scopes without authorization", "", tool(`,"scopes":["orders:read"]`), `tool "t": scopes need an authorization block`},
		{"tool scope not a token", `,"authorization":{"issuers":["https://auth.example.com"]}`, tool(`,"scopes":["a b"]`), `tool "t": scopes: "a b" is not a scope token`},
		{"unknown field", `,"authorization":{"issuers":["https://auth.example.com"],"audience":"x"}`, tool(""), `unknown field "audience"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := load(tc.authorization, tc.tool)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("does not load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret-value") {
				t.Fatalf("the error shows the client secret: %v", err)
			}
		})
	}
}

// A literal client secret is never named in an error about it.
func TestAuthorizationSecretNotShown(t *testing.T) {
	a := &AuthorizationConfig{Issuers: []string{"http://auth.example.com"}, Introspect: &IntrospectConfig{URL: "https://auth.example.com/i", ClientID: "rs", ClientSecret: "literal-s3cret"}}
	for _, err := range []error{a.validate(), func() error { _, err := a.newVerifier(); return err }()} {
		if err == nil || strings.Contains(err.Error(), "literal-s3cret") {
			t.Fatalf("want an error without the secret, got %v", err)
		}
	}
}

// loadAuthorized starts an authorization server and a counting upstream,
// and (with extraGlobal in the global options) serves an mcp and a codemode endpoint, each with an authorization
// block of that server (plus the line extra), on a site with a host name,
// so that their resources default to http://127.0.0.1:<port><path>.
func loadAuthorized(t *testing.T, extraGlobal, extra string) (*authtest.Server, *atomic.Int64) {
	as := authtest.New(t)
	api, upstreamHits := countingUpstream(t)
	if extra != "" {
		extra = "\n\t\t\t" + extra
	}
	loadCaddyfile(t, extraGlobal, fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /mcp {
		upstream %[2]s
		authorization {
			issuer %[1]s
			scopes orders:read orders:write%[3]s
		}
		tool echo {
			description "Echo."
			get /ok
		}
	}
	codemode /code {
		backend shop http://127.0.0.1:{$LIVE_PORT}/mcp
		authorization {
			issuer %[1]s%[3]s
		}
	}
}
`, as.Issuer, api.URL, extra))
	return as, upstreamHits
}

const toolsCallBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`

// Every request to an endpoint with an authorization block needs a valid
// token for that endpoint: anything else is a 401 with a challenge that
// sends the client to the metadata, and a JSON-RPC error that says why,
// before anything reaches the upstream (on the fast path too: the body is
// a plain tools/call).
func TestAuthorizationChallenge(t *testing.T) {
	as, upstreamHits := loadAuthorized(t, "", "")
	mcpResource := "http://" + liveAddr + "/mcp"
	codeResource := "http://" + liveAddr + "/code"
	other := authtest.New(t)
	now := time.Now()
	for _, endpoint := range []struct{ path, resource string }{{"/mcp", mcpResource}, {"/code", codeResource}} {
		metadata := "http://" + liveAddr + "/.well-known/oauth-protected-resource" + endpoint.path
		noError := `Bearer resource_metadata="` + metadata + `"`
		invalid := func(why string) string {
			return `Bearer error="invalid_token", error_description="` + why + `", resource_metadata="` + metadata + `"`
		}
		for _, tc := range []struct {
			name      string
			header    string
			query     string
			challenge string
			body      string
		}{
			{"no token", "", "", noError, "unauthorized: no bearer token"},
			{"basic scheme", "Basic dXNlcjpwYXNz", "", invalid("the Authorization header is not of the Bearer scheme"), "not of the Bearer scheme"},
			{"garbage", "Bearer not-a-jwt", "", "", "unauthorized: "},
			{"another issuer", "Bearer " + other.Token(t, endpoint.resource, "", nil), "", "", "unauthorized: "},
			{"another audience", "Bearer " + as.Token(t, "https://elsewhere.example/mcp", "", nil), "", "", "unauthorized: "},
			{"the other endpoint's token", "Bearer " + as.Token(t, map[string]string{mcpResource: codeResource, codeResource: mcpResource}[endpoint.resource], "", nil), "", "", "unauthorized: "},
			{"expired", "Bearer " + as.Token(t, endpoint.resource, "", map[string]any{"exp": now.Add(-time.Hour), "iat": now.Add(-2 * time.Hour)}), "", "", "unauthorized: "},
			{"not yet valid", "Bearer " + as.Token(t, endpoint.resource, "", map[string]any{"nbf": now.Add(time.Hour)}), "", "", "unauthorized: "},
			{"alg none", "Bearer " + unsignedToken(t, map[string]any{"iss": as.Issuer, "aud": endpoint.resource, "sub": "mallory", "exp": now.Add(time.Hour).Unix()}), "", "", "unauthorized: "},
			{"hmac keyed with the public key", "Bearer " + publicKeyHMACToken(t, as, map[string]any{"iss": as.Issuer, "aud": endpoint.resource, "sub": "mallory", "exp": now.Add(time.Hour).Unix()}), "", "", "unauthorized: "},
			{"signed by another key", "Bearer " + authtest.Sign(t, other.RSA, jwa.RS256(), map[string]any{"iss": as.Issuer, "aud": endpoint.resource, "exp": now.Add(time.Hour)}), "", "", "unauthorized: "},
			{"in the query", "", "?access_token=" + as.Token(t, endpoint.resource, "", nil), `Bearer error="invalid_request", error_description="send the token in the Authorization header, not in the URL", resource_metadata="` + metadata + `"`, "not in the URL"},
			{"valid in the header, another in the query", "Bearer " + as.Token(t, endpoint.resource, "", nil), "?access_token=x", "", "not in the URL"},
		} {
			t.Run(endpoint.path+"/"+tc.name, func(t *testing.T) {
				before := upstreamHits.Load()
				header := map[string]string{}
				if tc.header != "" {
					header["Authorization"] = tc.header
				}
				resp, body := rawPost(t, endpoint.path+tc.query, []byte(toolsCallBody), header)
				if resp.StatusCode != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
				}
				got := resp.Header.Get("WWW-Authenticate")
				if tc.challenge != "" && got != tc.challenge {
					t.Errorf("WWW-Authenticate\n%s\nwant\n%s", got, tc.challenge)
				}
				if !strings.HasPrefix(got, "Bearer ") || !strings.HasSuffix(got, `resource_metadata="`+metadata+`"`) {
					t.Errorf("WWW-Authenticate %q does not send the client to %s", got, metadata)
				}
				var answer mcp.JSONRPCError
				if err := json.Unmarshal(body, &answer); err != nil || answer.Error.Code != mcp.INVALID_REQUEST || !strings.Contains(answer.Error.Message, tc.body) {
					t.Errorf("body %s: want a JSON-RPC error containing %q", body, tc.body)
				}
				if token := strings.TrimPrefix(tc.header, "Bearer "); len(token) > 20 && (strings.Contains(string(body), token) || strings.Contains(got, token)) {
					t.Error("the answer shows the token")
				}
				if n := upstreamHits.Load() - before; n != 0 {
					t.Errorf("the upstream got %d requests", n)
				}
			})
		}
	}

	// Host matchers ignore the port: a Host naming another port than the
	// connection's (or none, which means the scheme's default) must not
	// move the audience to another endpoint's, such as the one on the
	// default port. Without a resource configured, such a request cannot
	// be checked at all.
	for _, tc := range []struct{ name, host, audience string }{
		{"another port's token, that port in Host", "127.0.0.1:1", "http://127.0.0.1:1/mcp"},
		{"the default port's token, no port in Host", "127.0.0.1", "http://127.0.0.1/mcp"},
		{"the default port's token, that port in Host", "127.0.0.1:80", "http://127.0.0.1/mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := upstreamHits.Load()
			token := as.Token(t, tc.audience, "", nil)
			resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), map[string]string{"Host": tc.host, "Authorization": "Bearer " + token})
			if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "set resource") || upstreamHits.Load() != before {
				t.Fatalf("status %d, upstream requests %d: %s", resp.StatusCode, upstreamHits.Load()-before, body)
			}
		})
	}
	t.Run("valid token", func(t *testing.T) {
		resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), map[string]string{"Authorization": "Bearer " + as.Token(t, mcpResource, "", nil)})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) || strings.Contains(string(body), `"isError":true`) {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("valid token on codemode", func(t *testing.T) {
		resp, body := rawPost(t, "/code", []byte(pingBody), map[string]string{"Authorization": "Bearer " + as.Token(t, codeResource, "", nil)})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result":{}`) {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("preflight", func(t *testing.T) {
		req := mustRequest(t, http.MethodOptions, "http://"+liveAddr+"/mcp")
		req.Header.Set("Origin", "http://"+liveAddr)
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, _ := do(t, req)
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("WWW-Authenticate") != "" {
			t.Fatalf("preflight: status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})
	t.Run("challenge readable by a browser", func(t *testing.T) {
		resp, _ := rawPost(t, "/mcp", []byte(pingBody), map[string]string{"Origin": "http://" + liveAddr})
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
			t.Fatalf("status %d, Access-Control-Expose-Headers %q", resp.StatusCode, resp.Header.Get("Access-Control-Expose-Headers"))
		}
	})
}

// require_scopes: a token without them is a 401 that names them when
// absent, a 403 insufficient_scope (step-up) when it lacks one.
func TestAuthorizationRequireScopes(t *testing.T) {
	as, upstreamHits := loadAuthorized(t, "", "require_scopes orders:read orders:write")
	resource := "http://" + liveAddr + "/mcp"
	metadata := "http://" + liveAddr + "/.well-known/oauth-protected-resource/mcp"
	for _, tc := range []struct {
		name      string
		scope     string
		status    int
		challenge string
	}{
		{"no token", "-", http.StatusUnauthorized, `Bearer scope="orders:read orders:write", resource_metadata="` + metadata + `"`},
		{"no scope", "", http.StatusForbidden, `Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="orders:read orders:write", resource_metadata="` + metadata + `"`},
		{"one of two", "orders:read", http.StatusForbidden, `Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="orders:read orders:write", resource_metadata="` + metadata + `"`},
		{"both", "orders:write orders:read profile", http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := upstreamHits.Load()
			header := map[string]string{}
			if tc.scope != "-" {
				header["Authorization"] = "Bearer " + as.Token(t, resource, tc.scope, nil)
			}
			resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), header)
			if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge {
				t.Fatalf("status %d, WWW-Authenticate %q\nwant %d, %q\n%s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.status, tc.challenge, body)
			}
			if tc.status == http.StatusForbidden && (!strings.Contains(string(body), "insufficient scope") || upstreamHits.Load() != before) {
				t.Fatalf("body %s, upstream requests %d", body, upstreamHits.Load()-before)
			}
		})
	}
}

// Without resource, the audience comes from the request's Host only when
// that is one of the site's host names: on a site answering any host, a
// client naming another endpoint's host must not get that endpoint's
// tokens accepted, so the endpoint refuses to check and says what to set.
func TestAuthorizationResourceNeedsSiteHost(t *testing.T) {
	as := authtest.New(t)
	api, upstreamHits := countingUpstream(t)
	bin := api.URL
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		authorization {
			issuer %s
		}
		tool echo {
			description "Echo."
			get /ok
		}
	}
}
`, bin, as.Issuer))
	for _, host := range []string{liveAddr, "localhost:" + livePort} {
		token := as.Token(t, "http://"+host+"/mcp", "", nil)
		resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), map[string]string{"Host": host, "Authorization": "Bearer " + token})
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "set resource in its authorization block") {
			t.Fatalf("Host %s: status %d: %s", host, resp.StatusCode, body)
		}
	}
	if upstreamHits.Load() != 0 {
		t.Fatalf("the upstream got %d requests", upstreamHits.Load())
	}

	// A site with a host name, served without TLS to a host that is not
	// loopback (behind a proxy that ends TLS): the client's URL is not the
	// request's, so neither https:// nor http:// may be assumed.
	loadCaddyfile(t, "", fmt.Sprintf(`http://api.example.test:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		allow_hosts api.example.test
		authorization {
			issuer %s
		}
		tool echo {
			description "Echo."
			get /ok
		}
	}
}
`, bin, as.Issuer))
	host := "api.example.test:" + livePort
	for _, audience := range []string{"https://api.example.test/mcp", "https://" + host + "/mcp", "http://" + host + "/mcp"} {
		resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), map[string]string{"Host": host, "Authorization": "Bearer " + as.Token(t, audience, "", nil)})
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "set resource in its authorization block") {
			t.Fatalf("plain HTTP, token for %s: status %d: %s", audience, resp.StatusCode, body)
		}
	}
	if upstreamHits.Load() != 0 {
		t.Fatalf("the upstream got %d requests", upstreamHits.Load())
	}
}

// An authorization server that is down or hangs, at start or during
// traffic (cache_ttl 1s, so the keys are read again): each request is a
// 401 within the fetch bound, the server is not asked by every request,
// the log says why once rather than per request and never shows the
// token, nothing reaches the upstream, the endpoint recovers when the
// server does, and no goroutine is left behind.
func TestAuthorizationServerDown(t *testing.T) {
	debugLog := filepath.Join(t.TempDir(), "debug.log")
	as, upstreamHits := loadAuthorized(t, fmt.Sprintf("log {\n\t\toutput file %s\n\t}", debugLog), "cache_ttl 1s")
	resource := "http://" + liveAddr + "/mcp"
	// A minute per request is a hang guard, far above the key fetch's own
	// bound (5s): a request that waited for the hanging server to come
	// back would fail by it, not by a measured time.
	client := &http.Client{Timeout: time.Minute, Transport: rawClient.Transport}
	post := func(token string) (int, string, error) {
		req, err := http.NewRequest(http.MethodPost, resource, strings.NewReader(toolsCallBody))
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), err
	}
	// refused sends n requests at once, each with a new token, and wants
	// every one refused with invalid_token.
	refused := func(t *testing.T, n int) {
		t.Helper()
		errs := make(chan error, n)
		for range n {
			token := as.Token(t, resource, "", nil)
			go func() {
				status, challenge, err := post(token)
				if err == nil && (status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`)) {
					err = fmt.Errorf("status %d, WWW-Authenticate %q", status, challenge)
				}
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	}
	recovered := func(t *testing.T) {
		t.Helper()
		token := as.Token(t, resource, "", nil)
		deadline := time.Now().Add(30 * time.Second) // a hang guard
		for {
			status, _, err := post(token)
			if err == nil && status == http.StatusOK {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("not served again after the authorization server came back: status %d, %v", status, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	as.SetDown(true)
	refused(t, 20)
	if n := as.Hits("/.well-known/oauth-authorization-server"); n == 0 || n > 3 {
		t.Errorf("20 requests asked the authorization server %d times, want 1 to 3", n)
	}
	as.SetDown(false)
	recovered(t)
	served := upstreamHits.Load()
	goroutines := len(proctest.Working())

	time.Sleep(1100 * time.Millisecond) // past cache_ttl
	// While the server hangs, each request is refused: the key fetch's
	// bound ended it, since the server answers nothing until SetHang(false).
	as.SetHang(true)
	start := time.Now()
	refused(t, 10)
	t.Logf("10 requests refused in %s while the authorization server hung", time.Since(start).Round(time.Millisecond))
	as.SetHang(false)
	recovered(t)
	if n := upstreamHits.Load(); n != served+1 {
		t.Errorf("the upstream got %d requests while tokens could not be checked", n-served-1)
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard: they usually end at once
	for len(proctest.Working()) > goroutines+5 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if working := proctest.Working(); len(working) > goroutines+5 {
		t.Errorf("%d goroutines besides idle connections after the outage, %d before:\n%s", len(working), goroutines, strings.Join(working, "\n\n"))
	}

	var warned int
	for _, e := range readLogs(t, debugLog) {
		if line := fmt.Sprint(e); strings.Contains(line, "eyJ") {
			t.Errorf("a log line shows a token: %v", e)
		}
		if e["msg"] == "authorization server unavailable; request refused" && e["level"] == "warn" {
			warned++
			if warned == 1 && !strings.Contains(fmt.Sprint(e["error"]), "503") {
				t.Errorf("the first line does not say why: %v", e)
			}
		}
	}
	if warned == 0 || warned > 3 {
		t.Errorf("%d warn lines for 30 refused requests, want 1 to 3", warned)
	}
}

// Opaque tokens through introspection: an active one is served, and once
// it is revoked it is refused as soon as its cached answer (cache_ttl)
// runs out, with nothing sent upstream. The client secret comes from an
// {env.X} placeholder.
func TestAuthorizationIntrospection(t *testing.T) {
	as := authtest.New(t)
	api, upstreamHits := countingUpstream(t)
	t.Setenv("LIVE_INTROSPECTION_SECRET", authtest.IntrospectionSecret)
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		authorization {
			issuer %[2]s
			introspect %[2]s/introspect {
				client_id %[3]s
				client_secret {env.LIVE_INTROSPECTION_SECRET}
			}
			cache_ttl 1s
		}
		tool echo {
			description "Echo."
			get /ok
		}
	}
}
`, api.URL, as.Issuer, authtest.IntrospectionClient))
	token := as.Opaque("http://"+liveAddr+"/mcp", "")
	header := map[string]string{"Authorization": "Bearer " + token}
	if resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), header); resp.StatusCode != http.StatusOK || upstreamHits.Load() != 1 {
		t.Fatalf("active token: status %d, upstream requests %d: %s", resp.StatusCode, upstreamHits.Load(), body)
	}
	as.Revoke(token)
	time.Sleep(1100 * time.Millisecond)
	resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), header)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) || upstreamHits.Load() != 1 {
		t.Fatalf("revoked token: status %d, WWW-Authenticate %q, upstream requests %d: %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), upstreamHits.Load(), body)
	}
	other := as.Opaque("http://"+liveAddr+"/other", "")
	if resp, body := rawPost(t, "/mcp", []byte(toolsCallBody), map[string]string{"Authorization": "Bearer " + other}); resp.StatusCode != http.StatusUnauthorized || upstreamHits.Load() != 1 {
		t.Fatalf("another audience: status %d: %s", resp.StatusCode, body)
	}
}

// The protected resource metadata (RFC 9728) is served with no token and
// no Caddyfile line beyond the authorization block, for both endpoints, at
// the URL the challenge names, with CORS as for the endpoint.
func TestAuthorizationResourceMetadata(t *testing.T) {
	as, _ := loadAuthorized(t, "", "")
	for _, tc := range []struct {
		path   string
		scopes []string
	}{
		{"/mcp", []string{"orders:read", "orders:write"}},
		{"/code", nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, _ := rawPost(t, tc.path, []byte(pingBody), nil)
			metadataURL := strings.TrimSuffix(strings.TrimPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer resource_metadata="`), `"`)
			if metadataURL != "http://"+liveAddr+"/.well-known/oauth-protected-resource"+tc.path {
				t.Fatalf("the challenge names %q", metadataURL)
			}
			req := mustRequest(t, http.MethodGet, metadataURL)
			req.Header.Set("Origin", "http://"+liveAddr)
			resp, body := do(t, req)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "http://"+liveAddr {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			var doc struct {
				Resource               string   `json:"resource"`
				AuthorizationServers   []string `json:"authorization_servers"`
				ScopesSupported        []string `json:"scopes_supported"`
				BearerMethodsSupported []string `json:"bearer_methods_supported"`
			}
			if err := json.Unmarshal(body, &doc); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if doc.Resource != "http://"+liveAddr+tc.path || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != as.Issuer ||
				fmt.Sprint(doc.ScopesSupported) != fmt.Sprint(tc.scopes) || fmt.Sprint(doc.BearerMethodsSupported) != "[header]" {
				t.Errorf("document %s", body)
			}
		})
	}
	t.Run("foreign origin", func(t *testing.T) {
		req := mustRequest(t, http.MethodGet, "http://"+liveAddr+"/.well-known/oauth-protected-resource/mcp")
		req.Header.Set("Origin", "https://evil.example")
		if resp, body := do(t, req); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("preflight", func(t *testing.T) {
		req := mustRequest(t, http.MethodOptions, "http://"+liveAddr+"/.well-known/oauth-protected-resource/mcp")
		req.Header.Set("Origin", "http://"+liveAddr)
		req.Header.Set("Access-Control-Request-Method", "GET")
		if resp, _ := do(t, req); resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://"+liveAddr {
			t.Fatalf("status %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("post", func(t *testing.T) {
		if resp, body := rawPost(t, "/.well-known/oauth-protected-resource/mcp", []byte(pingBody), nil); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
}

// An endpoint serves its metadata itself when the request reaches it, as
// with a matcher that is not a path (none, the whole site; or a named
// matcher that adds the metadata path, as docs/authorization.md shows), and the
// configured resource is the one shown.
func TestAuthorizationMetadataFromEndpoint(t *testing.T) {
	as := authtest.New(t)
	api, _ := countingUpstream(t)
	for _, tc := range []struct{ name, matcher, endpoint string }{
		{"no matcher", "", "/"},
		{"named matcher", "@mcp path /mcp /.well-known/oauth-protected-resource/mcp\n\tmcp @mcp", "/mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			directive := "mcp"
			if tc.matcher != "" {
				directive = tc.matcher
			}
			loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	%s {
		upstream %s
		authorization {
			issuer %s
			resource https://api.example.com/mcp
		}
		tool echo {
			description "Echo."
			get /ok
		}
	}
}
`, directive, api.URL, as.Issuer))
			resp, body := do(t, mustRequest(t, http.MethodGet, "http://"+liveAddr+"/.well-known/oauth-protected-resource/mcp"))
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"resource":"https://api.example.com/mcp"`) {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			resp, _ = rawPost(t, tc.endpoint, []byte(pingBody), nil)
			if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource/mcp"` {
				t.Fatalf("WWW-Authenticate %q", got)
			}
		})
	}
}

// A tool's scopes: tools/list leaves it out for a token without them, and
// calling it is 403 insufficient_scope naming what a new token needs (the
// endpoint's require_scopes and the tool's), on the fast path and on the
// mcp-go path (a call asking for progress), before the upstream is asked.
func TestAuthorizationToolScopes(t *testing.T) {
	as := authtest.New(t)
	api, upstreamHits := countingUpstream(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		authorization {
			issuer %s
			require_scopes orders:read
		}
		tool echo {
			description "Echo."
			get /ok
		}
		tool refund {
			description "Refund."
			post /ok
			scopes refunds:write orders:read
		}
	}
}
`, api.URL, as.Issuer))
	resource := "http://" + liveAddr + "/mcp"
	metadata := "http://" + liveAddr + "/.well-known/oauth-protected-resource/mcp"
	const listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	call := func(progress bool) []byte {
		meta := ""
		if progress {
			meta = `,"_meta":{"progressToken":"p1"}`
		}
		return []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"refund","arguments":{}` + meta + `}}`)
	}
	for _, tc := range []struct {
		name   string
		scope  string
		listed string
		status int
	}{
		{"without the tool's scope", "orders:read", `["echo"]`, http.StatusForbidden},
		{"with it", "orders:read refunds:write", `["echo","refund"]`, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{"Authorization": "Bearer " + as.Token(t, resource, tc.scope, nil)}
			resp, body := rawPost(t, "/mcp", []byte(listBody), header)
			var list struct {
				Result struct {
					Tools []struct{ Name string } `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal(body, &list); resp.StatusCode != http.StatusOK || err != nil {
				t.Fatalf("tools/list: status %d: %s", resp.StatusCode, body)
			}
			var names []string
			for _, tool := range list.Result.Tools {
				names = append(names, tool.Name)
			}
			if got, _ := json.Marshal(names); string(got) != tc.listed {
				t.Errorf("tools/list names %s, want %s", got, tc.listed)
			}
			// On 2026-07-28, a list that depends on the token says so.
			modern := map[string]string{"Authorization": header["Authorization"], "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
			resp, body = rawPost(t, "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`), modern)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"cacheScope":"private"`) {
				t.Errorf("2026-07-28 tools/list: status %d: %s", resp.StatusCode, body)
			}
			for _, progress := range []bool{false, true} {
				before := upstreamHits.Load()
				resp, body := rawPost(t, "/mcp", call(progress), header)
				if resp.StatusCode != tc.status {
					t.Fatalf("tools/call (progress %v): status %d, want %d: %s", progress, resp.StatusCode, tc.status, body)
				}
				if tc.status != http.StatusForbidden {
					continue
				}
				want := `Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="orders:read refunds:write", resource_metadata="` + metadata + `"`
				if got := resp.Header.Get("WWW-Authenticate"); got != want {
					t.Errorf("WWW-Authenticate\n%s\nwant\n%s", got, want)
				}
				if !strings.Contains(string(body), "tool refund needs refunds:write orders:read") || upstreamHits.Load() != before {
					t.Errorf("body %s, upstream requests %d", body, upstreamHits.Load()-before)
				}
			}
		})
	}
}

// The caller's identity reaches the upstream through placeholders in a
// tool's header lines, and the call's log line names its sub; the
// client's token and its other claims go to neither.
func TestAuthorizationIdentity(t *testing.T) {
	as := authtest.New(t)
	bin := mcptest.StartHTTPBin(t)
	debugLog := filepath.Join(t.TempDir(), "debug.log")
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
		level DEBUG
	}`, debugLog), fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		authorization {
			issuer %s
		}
		tool whoami {
			description "Who am I."
			get /anything
			header X-User {http.auth.user.id}
			header X-Scopes {http.auth.user.scopes}
			header X-Email {http.auth.user.email}
		}
	}
}
`, bin, as.Issuer))
	token := as.Token(t, "http://"+liveAddr+"/mcp", "orders:read profile", map[string]any{"email": "ann@example.com", "sub": "ann"})
	for _, progress := range []string{"", `,"_meta":{"progressToken":"p"}`} {
		resp, body := rawPost(t, "/mcp", []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}`+progress+`}}`), map[string]string{"Authorization": "Bearer " + token})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		text := string(body)
		if i := strings.LastIndex(text, "data: "); i >= 0 { // an SSE answer: its last event
			text = strings.TrimSpace(text[i+len("data: "):])
		}
		var answer struct {
			Result mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal([]byte(text), &answer); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		echo := parseEcho(t, &answer.Result)
		for name, want := range map[string]string{"X-User": "ann", "X-Scopes": "orders:read profile", "X-Email": "ann@example.com"} {
			if got := echo.Headers[name]; len(got) != 1 || got[0] != want {
				t.Errorf("progress %q: upstream header %s = %q, want %q", progress, name, got, want)
			}
		}
		if got, ok := echo.Headers["Authorization"]; ok {
			t.Errorf("the upstream got the client's Authorization header: %q", got)
		}
	}

	// The call's log line names the sub, and no other claim or the token.
	var calls int
	for _, e := range readLogs(t, debugLog) {
		line := fmt.Sprint(e)
		if strings.Contains(line, token) || strings.Contains(line, "ann@example.com") {
			t.Errorf("a log line shows the token or a claim: %v", e)
		}
		if e["msg"] == "tool call" {
			calls++
			if e["sub"] != "ann" {
				t.Errorf("tool call log line without the sub: %v", e)
			}
		}
	}
	if calls != 2 {
		t.Errorf("%d tool call log lines, want 2", calls)
	}
}

// BenchmarkAuthorizedToolCall measures one plain tools/call (the fast
// path) through the handler to an in-process upstream, without and with an
// authorization block, in the same run; the token is RS256 or ES256, with
// the issuer's keys already read. The difference is what authorization
// adds to a call.
func BenchmarkAuthorizedToolCall(b *testing.B) {
	as := authtest.New(b)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":42,"status":"open","total":99.5}`)
	}))
	defer api.Close()
	const resource = "https://mcp.example.com/mcp"
	handler := func(authorization *AuthorizationConfig) *Handler {
		return &Handler{
			Upstream: api.URL,
			Endpoint: Endpoint{Authorization: authorization},
			Tools: []*Tool{{
				Name: "get_order", Description: "Get an order.", Method: "GET", Path: "/orders/{id}",
				Args: []*Arg{{Name: "id", Type: "integer", Required: true}},
			}},
		}
	}
	plain := handler(nil)
	defer provisionBench(b, plain)()
	authorized := handler(&AuthorizationConfig{Issuers: []string{as.Issuer}, Resource: resource})
	defer provisionBench(b, authorized)()
	const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_order","arguments":{"id":42}}}`
	version := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	b.Run("without", func(b *testing.B) { benchToolCall(b, plain, body, version) })
	for _, alg := range []struct {
		name  string
		token string
	}{
		{"RS256", as.Token(b, resource, "", nil)},
		{"ES256", authtest.Sign(b, as.EC, jwa.ES256(), map[string]any{"iss": as.Issuer, "aud": resource, "sub": "user-1", "exp": time.Now().Add(time.Hour)})},
	} {
		b.Run("with/"+alg.name, func(b *testing.B) {
			benchToolCall(b, authorized, body, map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Authorization": "Bearer " + alg.token})
		})
	}
}

// unsignedToken is a JWT of claims with alg "none" and no signature.
func unsignedToken(t *testing.T, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc.EncodeToString(payload) + "."
}

// publicKeyHMACToken is a JWT of claims under HS256, keyed with the PEM
// of as's public RSA key: the key confusion an RS256 verifier that took
// the token's alg would accept.
func publicKeyHMACToken(t *testing.T, as *authtest.Server, claims map[string]any) string {
	t.Helper()
	public, err := as.RSA.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	var raw rsa.PublicKey
	if err := jwk.Export(public, &raw); err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&raw)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT","kid":"rsa-1"}`)) + "." + enc.EncodeToString(payload)
	mac := hmac.New(sha256.New, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	mac.Write([]byte(input))
	return input + "." + enc.EncodeToString(mac.Sum(nil))
}
