package caddymcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddy-mcp/caddy-mcp/fastpath"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// defaultMaxRequestSize bounds a JSON-RPC request body.
const defaultMaxRequestSize = 1 << 20

// defaultListTTL is the ttlMs of a list answer: a reload is seen within
// it, and a client that lists before every turn lists once in it.
const defaultListTTL = time.Minute

// Endpoint holds the settings every MCP endpoint of this plugin shares:
// the request size limit and the browser Origin and Host policy.
type Endpoint struct {
	// MaxRequestSize bounds the JSON-RPC request body, in bytes; larger
	// requests are answered 413. Default: 1MiB.
	MaxRequestSize int64 `json:"max_request_size,omitempty"`

	// AllowOrigins lists the browser origins (scheme://host[:port]) that may
	// call this endpoint, besides same-origin pages; "*" allows any.
	// Requests without an Origin header (non-browser clients) are always
	// allowed. Default: none.
	AllowOrigins []string `json:"allow_origins,omitempty"`

	// AllowHosts lists extra Host values accepted on loopback connections,
	// where only localhost, 127.0.0.1 and [::1] are accepted otherwise (the
	// DNS rebinding guard). Requests from Caddy's trusted proxies are not
	// held to it. Default: none.
	AllowHosts []string `json:"allow_hosts,omitempty"`

	// Authorization makes the endpoint an OAuth 2.1 resource server: every
	// request needs a bearer token from one of its issuers. Default: none
	// (anyone who reaches the endpoint may use it).
	Authorization *AuthorizationConfig `json:"authorization,omitempty"`

	// ListTTL is how long a 2026-07-28 client may reuse an answer to
	// tools/list or server/discover before asking again (the answer's
	// ttlMs), in whole milliseconds; 0 asks it to ask every time. The
	// list changes only with the config (and, in codemode, with the
	// backends' lists), and a client that lists before every turn fetches
	// it, megabytes for a large API, once a minute instead. A tools/list
	// that depends on the caller's token (tool scopes, backend scopes) is
	// cacheScope private, kept apart per token; any other answer is
	// public. Default: 1m.
	ListTTL *caddy.Duration `json:"list_ttl,omitempty"`

	origins    map[string]bool
	anyOrigin  bool
	hosts      map[string]bool
	transport  *server.StreamableHTTPServer
	logger     *zap.Logger
	metrics    *metrics
	handlerTag string
	auth       *endpointAuth // nil without an authorization block
	// mirrored are the tools with arguments mirrored into headers (see
	// mirror.go), by name.
	mirrored map[string]*mcp.Tool
	// allowHeaders answers a CORS preflight: the MCP headers, and the
	// Mcp-Param headers of the mirrored arguments.
	allowHeaders string
	// callTarget, when set, names the tool whose scopes a tools/call of
	// name with these arguments needs (see refuseTool); unset, it is name.
	callTarget func(name string, args json.RawMessage) string
}

// provisionEndpoint checks the settings and mounts srv behind them.
func (e *Endpoint) provisionEndpoint(ctx caddy.Context, srv *server.MCPServer, tag string, logger *zap.Logger, m *metrics) error {
	if err := e.provisionPolicy(tag, logger, m); err != nil {
		return err
	}
	e.transport = fastpath.NewTransport(srv, ctx.Slogger())
	e.mirrored = fastpath.MirroredTools(srv)
	e.allowHeaders = corsAllowHeaders(e.mirrored)
	return nil
}

// corsHeaders are the request headers a browser client of any endpoint
// sends.
const corsHeaders = "Content-Type, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"

// corsAllowHeaders are corsHeaders and the Mcp-Param headers of tools: a
// browser sends no header a preflight did not allow, and there is no
// wildcard for a prefix.
func corsAllowHeaders(tools map[string]*mcp.Tool) string {
	var params []string
	for _, tool := range tools {
		for _, b := range mcp.ExtractParamHeaderBindings(tool) {
			if name := b.HeaderName(); !slices.Contains(params, name) {
				params = append(params, name)
			}
		}
	}
	slices.Sort(params)
	return strings.Join(append([]string{corsHeaders}, params...), ", ")
}

// provisionPolicy sets up what every request passes through before MCP:
// the Origin and Host policy and the authorization.
func (e *Endpoint) provisionPolicy(tag string, logger *zap.Logger, m *metrics) error {
	if e.MaxRequestSize == 0 {
		e.MaxRequestSize = defaultMaxRequestSize
	}
	e.origins = make(map[string]bool, len(e.AllowOrigins))
	for _, o := range e.AllowOrigins {
		if o == "*" {
			e.anyOrigin = true
			continue
		}
		norm, err := normalizeOrigin(o)
		if err != nil {
			return fmt.Errorf("allow_origins: %v", err)
		}
		e.origins[norm] = true
	}
	e.hosts = make(map[string]bool, len(e.AllowHosts))
	for _, h := range e.AllowHosts {
		e.hosts[strings.ToLower(h)] = true
	}
	if e.Authorization != nil {
		verifier, err := e.Authorization.newVerifier()
		if err != nil {
			return err
		}
		e.auth = &endpointAuth{verifier: verifier}
	}
	e.logger, e.metrics, e.handlerTag = logger, m, tag
	return nil
}

// validate checks the endpoint settings, for the Validate of mcp and
// codemode.
func (e *Endpoint) validate() error {
	if e.MaxRequestSize < 0 {
		return fmt.Errorf("max_request_size must not be negative")
	}
	for _, h := range e.AllowHosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			return fmt.Errorf("allow_hosts: %q is not a host name", h)
		}
	}
	if err := checkListTTL(e.ListTTL); err != nil {
		return err
	}
	if e.Authorization != nil {
		return e.Authorization.validate()
	}
	return nil
}

// checkListTTL refuses a list_ttl that no ttlMs says: negative, or not
// whole milliseconds.
func checkListTTL(ttl *caddy.Duration) error {
	if ttl == nil {
		return nil
	}
	if d := time.Duration(*ttl); d < 0 || d%time.Millisecond != 0 {
		return fmt.Errorf("list_ttl %s: want 0 or more whole milliseconds, such as 30s", d)
	}
	return nil
}

// offerListCaching sets the caching hints of srv's 2026-07-28 list
// answers (mcp-go writes none for earlier revisions, which have no such
// fields): the list_ttl, and a scope that is private when the tool list
// depends on the caller's token. The fast path's prepared tools/list is
// mcp-go's own answer, so it carries them too.
func (e *Endpoint) offerListCaching(srv *server.MCPServer, perCaller bool) {
	ttl := defaultListTTL
	if e.ListTTL != nil {
		ttl = time.Duration(*e.ListTTL)
	}
	scope := mcp.CacheScopePublic
	if perCaller {
		scope = mcp.CacheScopePrivate
	}
	server.WithMethodCacheHints(mcp.MethodToolsList, ttl.Milliseconds(), scope)(srv)
	// What discover says (versions, capabilities, instructions) is the
	// same for every caller.
	server.WithMethodCacheHints(mcp.MethodServerDiscover, ttl.Milliseconds(), mcp.CacheScopePublic)(srv)
}

type ctxKey struct{}

// argsKey carries a tools/call's arguments decoded with json.Number, so
// integers past 2**53 reach the upstream unchanged (mcp-go decodes them as
// float64).
type argsKey struct{}

// serveEndpoint answers one HTTP request on the MCP endpoint. ctxValue is
// made available to tool handlers through the request context. fast, if
// not nil, answers the tools/calls it takes; mcp-go answers the rest.
func (e *Endpoint) serveEndpoint(w http.ResponseWriter, r *http.Request, ctxValue any, fast *fastpath.Path) error {
	origin := r.Header.Get("Origin")
	if reason := e.refuse(r, origin); reason != "" {
		e.reject(w, r, http.StatusForbidden, "forbidden", reason)
		return nil
	}
	if origin != "" {
		e.cors(w, origin)
	}
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)

	// Before anything reads the body, so no path (the fast path included)
	// runs without a token; a preflight carries none, nor does a read of
	// the metadata that says where to get one.
	if e.auth != nil && r.Method != http.MethodOptions {
		if endpointPath, ok := metadataPath(r); ok {
			e.serveMetadata(w, r, endpointPath)
			return nil
		}
		if r = e.authorize(w, r); r == nil {
			return nil
		}
	}

	switch r.Method {
	case http.MethodOptions:
		if origin != "" && r.Header.Get("Access-Control-Request-Method") != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Methods", "POST, GET, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", cmp.Or(e.allowHeaders, corsHeaders))
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		w.Header().Set("Allow", "POST, DELETE, OPTIONS")
		w.WriteHeader(http.StatusNoContent)
		return nil
	case http.MethodGet:
		// Stateless: there is no standalone event stream to open.
		w.Header().Set("Allow", "POST, DELETE, OPTIONS")
		e.reject(w, r, http.StatusMethodNotAllowed, "method", "this endpoint is stateless and opens no GET event stream; send requests with POST")
		return nil
	case http.MethodPost, http.MethodDelete:
	default:
		w.Header().Set("Allow", "POST, DELETE, OPTIONS")
		e.reject(w, r, http.StatusMethodNotAllowed, "method", fmt.Sprintf("method %s is not used by MCP; send requests with POST", r.Method))
		return nil
	}

	var body []byte
	if r.Method == http.MethodPost {
		var err error
		var buf *[]byte
		body, buf, err = fastpath.ReadBody(w, r, e.MaxRequestSize)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				if r.ProtoMajor == 1 {
					// The rest of the body is not wanted: without this, net/http
					// reads up to 256KiB of it before the answer goes out, so a
					// client that waits for the answer before sending would
					// wait for nothing.
					w.Header().Set("Connection", "close")
				}
				e.reject(w, r, http.StatusRequestEntityTooLarge, "too_large",
					fmt.Sprintf("the request body is larger than max_request_size (%s)", upstream.FormatSize(e.MaxRequestSize)))
				return nil
			}
			return caddyhttp.Error(http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
		}
		trimmed := bytes.TrimLeft(body, " \t\r\n")
		if len(trimmed) > 0 && trimmed[0] == '[' {
			e.rpcError(w, http.StatusBadRequest, mcp.RequestId{}, mcp.INVALID_REQUEST, "JSON-RPC batches are not supported: send one request per HTTP POST")
			e.metrics.rejected.WithLabelValues(e.handlerTag, "batch").Inc()
			return nil
		}
		info := fastpath.NewMessage()
		defer info.Release()
		if info.Decode(body) && info.Method != "" {
			if info.Method == string(mcp.MethodSubscriptionsListen) {
				e.rpcError(w, http.StatusOK, info.ID(), mcp.METHOD_NOT_FOUND, "subscriptions/listen is not offered: this server sends no notifications")
				return nil
			}
			e.metrics.requests.WithLabelValues(e.handlerTag, metricMethod(info.Method)).Inc()
			var span *requestSpan
			w, r, span = startRequestSpan(w, r, info)
			defer span.end()
			if repl != nil {
				repl.Set("http.mcp.method", info.Method)
				if info.Method == string(mcp.MethodToolsCall) {
					repl.Set("http.mcp.tool", info.Params.Name)
				}
			}
			if info.Method == string(mcp.MethodToolsList) && fast.ServeList(w, r, body, info) {
				fastpath.ReleaseBody(buf)
				return nil
			}
			if info.Method == string(mcp.MethodToolsCall) {
				// Before either path runs the tool.
				tool := info.Params.Name
				if e.callTarget != nil {
					tool = e.callTarget(tool, info.Params.Arguments)
				}
				if e.refuseTool(w, r, tool) || e.refuseMirror(w, r, info) {
					return nil
				}
				if fast.ServeCall(w, r.WithContext(contextWith(r.Context(), ctxValue)), body, info) {
					fastpath.ReleaseBody(buf)
					return nil
				}
				if len(info.Params.Arguments) > 0 {
					if args := fastpath.DecodeArgs(info.Params.Arguments); args != nil {
						r = r.WithContext(context.WithValue(r.Context(), argsKey{}, args))
					}
				}
			}
		}
	}

	fastpath.HandOn(contextWith(r.Context(), ctxValue), e.transport, w, r, body)
	return nil
}

// refuse applies the Origin and Host rule and returns why a request is
// refused, or "".
//
// Host: on a loopback connection, Host must be a loopback name, unless
// the peer is one of Caddy's trusted proxies or Host is in allow_hosts.
// This stops DNS rebinding, where a page on evil.com, resolved to
// 127.0.0.1, sends Host: evil.com with a matching Origin.
//
// Origin: absent (not a browser), listed, or same-origin with a Host that
// passed the Host check.
func (e *Endpoint) refuse(r *http.Request, origin string) string {
	host := hostOnly(r.Host)
	if onLoopback(r) && !isLoopbackName(host) && !e.hosts[strings.ToLower(host)] && !e.hosts[strings.ToLower(r.Host)] && !proxied(r) {
		return fmt.Sprintf("host %q is not accepted on a loopback connection; add it to allow_hosts if a proxy on this machine forwards it", r.Host)
	}
	if origin == "" || e.anyOrigin {
		return ""
	}
	norm, err := normalizeOrigin(origin)
	if err != nil {
		return fmt.Sprintf("origin %q is not valid", origin)
	}
	if e.origins[norm] || sameOrigin(norm, r.Host) {
		return ""
	}
	return fmt.Sprintf("origin %s is not allowed; list it in allow_origins", norm)
}

// proxied reports whether a request came through one of Caddy's trusted
// proxies: the peer is trusted and the request says it was forwarded. A
// browser on the same machine is a trusted peer too when loopback is in
// trusted_proxies (private_ranges), but it sends no forwarding header
// without a preflight, which the Host check refuses.
func proxied(r *http.Request) bool {
	trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
	if !trusted {
		return false
	}
	return r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Forwarded") != ""
}

func (e *Endpoint) cors(w http.ResponseWriter, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	if e.auth != nil {
		// A browser client reads the challenge to find the authorization server.
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate")
	} else {
		h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id")
	}
	h.Add("Vary", "Origin")
}

// reject answers with status and a JSON-RPC error naming the reason.
func (e *Endpoint) reject(w http.ResponseWriter, r *http.Request, status int, label, reason string) {
	e.metrics.rejected.WithLabelValues(e.handlerTag, label).Inc()
	if c := e.logger.Check(zapcore.DebugLevel, "request refused"); c != nil {
		c.Write(zap.Int("status", status), zap.String("reason", reason),
			zap.String("remote_ip", hostOnly(r.RemoteAddr)))
	}
	e.rpcError(w, status, mcp.RequestId{}, mcp.INVALID_REQUEST, reason)
}

func (e *Endpoint) rpcError(w http.ResponseWriter, status int, id mcp.RequestId, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(mcp.JSONRPCError{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      id,
		Error:   mcp.JSONRPCErrorDetails{Code: code, Message: msg},
	})
}

func contextWith(ctx context.Context, v any) context.Context {
	if v == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, v)
}

func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return false
	}
	return isLoopbackName(hostOnly(addr.String()))
}

func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips a port and IPv6 brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// normalizeOrigin lowercases an origin and drops a default port.
func normalizeOrigin(o string) (string, error) {
	if o == "null" {
		return o, nil
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("%q is not an origin like https://app.example.com", o)
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return u.Scheme + "://" + host + ":" + port, nil
	}
	return u.Scheme + "://" + host, nil
}

// sameOrigin compares a normalized origin with the request's Host. Ports
// missing on either side are the default port of the origin's scheme, so
// a TLS-terminating proxy in front does not break it.
func sameOrigin(origin, hostHeader string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	defaultPort := "80"
	if u.Scheme == "https" {
		defaultPort = "443"
	}
	oport := u.Port()
	if oport == "" {
		oport = defaultPort
	}
	h, hport, err := net.SplitHostPort(hostHeader)
	if err != nil {
		h, hport = strings.Trim(hostHeader, "[]"), defaultPort
	}
	return strings.EqualFold(u.Hostname(), h) && oport == hport
}

func metricMethod(m string) string {
	switch m {
	case "initialize", "ping", "tools/list", "tools/call", "server/discover",
		"notifications/initialized", "notifications/cancelled":
		return m
	}
	if strings.HasPrefix(m, "notifications/") {
		return "notifications/other"
	}
	return "other"
}
