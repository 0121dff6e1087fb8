package caddymcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/authtest"
)

// A WWW-Authenticate value of the Bearer scheme, every parameter a quoted
// string of printable ASCII; challengeParam reads one parameter.
var (
	challengeValue = `"(?:[^"\\\x00-\x1f\x7f-\xff]|\\[\x20-\x7e])*"`
	challengeForm  = regexp.MustCompile(`^Bearer(?: [a-z_]+=` + challengeValue + `(?:, [a-z_]+=` + challengeValue + `)*)?$`)
	challengeParam = regexp.MustCompile(`([a-z_]+)="((?:[^"\\]|\\.)*)"`)
	// bearerPrefix is a scheme that BearerToken takes: "Bearer" in any
	// ASCII case, then spaces.
	bearerPrefix = regexp.MustCompile(`^[Bb][Ee][Aa][Rr][Ee][Rr] +$`)
)

// FuzzAuthorizedEndpoint sends tools/calls with fuzzed Authorization
// headers and query strings to an mcp handler with an authorization block
// (require_scopes mcp; get_order also needs orders:read) and requires:
// 200 and an upstream request only for a valid token with the scopes,
// sent as "Bearer <token>" with no access_token in the query; otherwise
// the status the refusal calls for (401, or 403 for missing scopes), a
// JSON-RPC error, no upstream request, and a well-formed challenge naming
// the metadata, whose error fits the status; the token is never shown.
//
// pick: bits 0-2 what follows prefix in the header (header alone; a
// token with both scopes; with mcp only; with no scope; for another
// resource; expired), then suffix; bit 3 calls get_order instead of echo;
// bit 4 adds access_token=<a valid token> to query.
func FuzzAuthorizedEndpoint(f *testing.F) {
	f.Add(byte(0), "", "", "", "")
	f.Add(byte(0), "Basic dXNlcjpwYXNz", "", "", "")
	f.Add(byte(0), "Bearer abc", "x=1", "", "")
	f.Add(byte(1), "", "", "Bearer ", "")
	f.Add(byte(1), "", "", "bEaReR   ", "")
	f.Add(byte(1+8), "", "", "Bearer ", "")
	f.Add(byte(2+8), "", "", "Bearer ", "")
	f.Add(byte(2), "", "", "Bearer ", "")
	f.Add(byte(3), "", "", "Bearer ", "")
	f.Add(byte(4), "", "", "Bearer ", "")
	f.Add(byte(5), "", "", "Bearer ", "")
	f.Add(byte(1), "", "", "Bearer\t", "")
	f.Add(byte(1), "", "", "Bearer ", "=")
	f.Add(byte(1), "", "", "Bearer ", " x")
	f.Add(byte(1), "", "", "Bearer ", ",Bearer x")
	f.Add(byte(1), "", "", "Bearer ", "\r\nX-Injected: 1")
	f.Add(byte(1), "", "access_token=x", "Bearer ", "")
	f.Add(byte(1), "", "a=1&Access_Token=x", "Bearer ", "")
	f.Add(byte(1), "", "access%5Ftoken=x", "Bearer ", "")
	f.Add(byte(1), "", "access_token", "Bearer ", "")
	f.Add(byte(1+16), "", "a=1", "Bearer ", "")

	as := authtest.New(f)
	const resource = "https://mcp.example.com/mcp"
	const metadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	up := &upstreamLog{}
	api := httptest.NewServer(up.record(fuzzUpstream(&fuzzRecorded{})))
	f.Cleanup(api.Close)
	h := &Handler{Upstream: api.URL, Timeout: caddy.Duration(2 * time.Second), Endpoint: Endpoint{MaxRequestSize: 64 << 10,
		Authorization: &AuthorizationConfig{Issuers: []string{as.Issuer}, Resource: resource, RequireScopes: []string{"mcp"}}},
		Tools: []*Tool{
			{Name: "echo", Description: "Echo.", Method: "GET", Path: "/ok"},
			{Name: "get_order", Description: "Get one order.", Method: "GET", Path: "/orders/{id}", Scopes: []string{"orders:read"},
				Args: []*Arg{{Name: "id", Type: "integer", Required: true}}},
		}}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	f.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		f.Fatal(err)
	}
	h.logger = zap.NewNop()
	fuzzQuiet(&h.Endpoint)
	// tokens by pick&7 (1 to 5), with the scopes they carry; nil scopes
	// for a token that is not valid here.
	tokens := []struct {
		token  string
		scopes []string
	}{
		1: {as.Token(f, resource, "mcp orders:read", nil), []string{"mcp", "orders:read"}},
		2: {as.Token(f, resource, "mcp", nil), []string{"mcp"}},
		3: {as.Token(f, resource, "", nil), []string{}},
		4: {as.Token(f, "https://mcp.example.com/other", "mcp orders:read", nil), nil},
		5: {as.Token(f, resource, "mcp orders:read", map[string]any{"exp": time.Now().Add(-time.Hour), "iat": time.Now().Add(-2 * time.Hour)}), nil},
	}

	f.Fuzz(func(t *testing.T, pick byte, header, query, prefix, suffix string) {
		var token string
		var scopes []string
		if i := int(pick & 7); 0 < i && i < len(tokens) {
			token, scopes = tokens[i].token, tokens[i].scopes
			header = prefix + token + suffix
		}
		// A request target: printable ASCII, no space, no fragment.
		query = strings.Map(func(r rune) rune {
			if r <= ' ' || r >= 0x7f || r == '#' {
				return -1
			}
			return r
		}, query)
		queryToken := ""
		if pick&16 != 0 {
			queryToken = tokens[1].token
			query += "&access_token=" + queryToken
		}
		tool, body := "echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
		if pick&8 != 0 {
			tool, body = "get_order", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_order","arguments":{"id":1}}}`
		}
		httpHeader := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		if header != "" {
			httpHeader.Set("Authorization", header)
		}
		if query != "" {
			query = "?" + query
		}
		up.take()
		status, w, _ := fuzzServe(t, func(w http.ResponseWriter, r *http.Request) error { return h.ServeHTTP(w, r, nil) },
			fuzzRequest{method: http.MethodPost, body: []byte(body), header: httpHeader, query: query})
		upstream := len(up.take())

		// What must happen, decided from the inputs.
		sent := token != "" && bearerPrefix.MatchString(prefix) // the token, as BearerToken reads it, if suffix adds nothing
		either := sent && suffix != "" && strings.Trim(suffix, "=") == ""
		if sent && suffix != "" {
			scopes = nil
		}
		var want int
		var wantError string
		needed := []string{"mcp"}
		if tool == "get_order" {
			needed = append(needed, "orders:read")
		}
		switch {
		case queryNames(query, "access_token"):
			want, wantError = http.StatusUnauthorized, "invalid_request"
		case header == "":
			want = http.StatusUnauthorized
		case !sent || scopes == nil:
			want, wantError = http.StatusUnauthorized, "invalid_token"
		case !slices.Contains(scopes, "mcp") || !slices.Contains(scopes, needed[len(needed)-1]):
			want, wantError = http.StatusForbidden, "insufficient_scope"
		default:
			want = http.StatusOK
		}
		if either && status == http.StatusOK {
			want, wantError = http.StatusOK, "" // the token with its padding spelled out
		}
		if status != want {
			t.Fatalf("header %q, query %q: status %d, want %d; body %s", header, query, status, want, w.Body)
		}
		if (status == http.StatusOK) != (upstream == 1) {
			t.Fatalf("status %d with %d upstream requests", status, upstream)
		}
		for _, secret := range []string{token, queryToken} {
			if secret != "" && (strings.Contains(w.Body.String(), secret) || strings.Contains(strings.Join(w.Header().Values("WWW-Authenticate"), "\n"), secret)) {
				t.Fatalf("the answer shows a token: %s", w.Body)
			}
		}
		challenges := w.Header().Values("WWW-Authenticate")
		if status == http.StatusOK {
			if len(challenges) != 0 || !strings.Contains(w.Body.String(), `"result"`) {
				t.Fatalf("200 with challenges %q: %s", challenges, w.Body)
			}
			return
		}
		var answer mcp.JSONRPCError
		if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || answer.Error.Code != mcp.INVALID_REQUEST {
			t.Fatalf("body %s: want a JSON-RPC error", w.Body)
		}
		if len(challenges) != 1 || !challengeForm.MatchString(challenges[0]) {
			t.Fatalf("WWW-Authenticate %q is not one Bearer challenge", challenges)
		}
		params := map[string]string{}
		var names []string
		for _, m := range challengeParam.FindAllStringSubmatch(challenges[0], -1) {
			names = append(names, m[1])
			params[m[1]] = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
		}
		order := []string{"error", "error_description", "scope", "resource_metadata"}
		if !slices.IsSortedFunc(names, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) }) ||
			slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(order, n) }) || len(params) != len(names) {
			t.Fatalf("WWW-Authenticate %q: parameters %q", challenges[0], names)
		}
		if params["resource_metadata"] != metadata || params["error"] != wantError {
			t.Fatalf("WWW-Authenticate %q: want error %q and resource_metadata %s", challenges[0], wantError, metadata)
		}
		wantScope := "mcp" // require_scopes, then the tool's too
		if slices.Contains(scopes, "mcp") {
			wantScope = strings.Join(needed, " ")
		}
		if status == http.StatusForbidden && params["scope"] != wantScope {
			t.Fatalf("WWW-Authenticate %q: want scope %q", challenges[0], wantScope)
		}
	})
}

// queryNames reports whether query ("?..." or "") has a parameter name,
// percent-decoded: pairs split at '&', or ';' as older servers do, the
// name before any '='.
func queryNames(query, name string) bool {
	pairs := strings.Split(strings.ReplaceAll(strings.TrimPrefix(query, "?"), ";", "&"), "&")
	return slices.ContainsFunc(pairs, func(pair string) bool {
		decoded, err := url.QueryUnescape(strings.SplitN(pair, "=", 2)[0])
		return err == nil && decoded == name
	})
}
