package caddymcp

import (
	"errors"
	"fmt"
	"maps"
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

	"github.com/caddy-mcp/caddy-mcp/fastpath"
	"github.com/caddy-mcp/caddy-mcp/internal/version"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

const (
	defaultTimeout         = 30 * time.Second
	defaultMaxResponseSize = 4 << 20
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler serves an MCP endpoint whose tools are calls to a REST API. Each
// tool is defined in the configuration: a name, a description, a JSON Schema
// for its arguments, and how the arguments become an HTTP request. A
// tools/call is validated against the schema and becomes one request, either
// to the `upstream` base URL or, without one, through the handlers that
// follow this one in the route (such as reverse_proxy). The upstream's answer
// becomes the tool result. Tools may also come from OpenAPI documents
// (`openapi`), one per operation, read once at load; they are ordinary
// tools afterwards.
//
// The endpoint speaks MCP Streamable HTTP, both the 2025-11-25 revision (and
// the earlier ones clients ask for) and the stateless 2026-07-28 revision. It
// keeps no session state, so any number of instances serve one endpoint.
//
// Configuration text (headers, query values, the upstream URL, path
// templates) may hold placeholders, resolved per call; argument values from
// clients are never run through the replacer. Use {env.X} for secrets:
// {$X} is substituted when the Caddyfile is adapted and ends up in the JSON
// config.
//
// This handler sets these placeholders:
//
// Placeholder | Description
// ------------|-------------
// `{http.mcp.method}` | The JSON-RPC method of the request (tools/call, ...)
// `{http.mcp.tool}` | The tool name of a tools/call
// `{http.auth.user.id}` | With an authorization block: the token's sub
// `{http.auth.user.scopes}` | With an authorization block: the token's scopes, space-separated
// `{http.auth.user.<claim>}` | With an authorization block: a top-level string claim of the token
//
// With Caddy's metrics on, it counts, in these Prometheus metrics (label
// values come from the config, never from a request):
//
// Metric | Labels
// -------|-------
// `caddy_mcp_requests_total` | handler, method
// `caddy_mcp_rejected_requests_total` | handler, reason
// `caddy_mcp_tool_calls_total` | handler, server, tool, outcome
// `caddy_mcp_tool_call_duration_seconds` | handler, server, tool
//
// Label | Values
// ------|-------
// handler | `mcp`
// method | `initialize`, `ping`, `tools/list`, `tools/call`, `server/discover`, `notifications/initialized`, `notifications/cancelled`, `notifications/other`, `other`
// reason | `forbidden` (Origin or Host), `method` (not POST), `too_large` (max_request_size), `batch` (a JSON-RPC batch), `unauthorized` (no valid token), `insufficient_scope` (authorization: require_scopes)
// server | the name
// tool | a configured or imported tool's name; with discovery search also `search_tools`, and `call_tool` for a call_tool that names no tool it can call
// outcome | `ok`, `invalid_arguments`, `upstream_status` (not 2xx), `invalid_answer` (a 2xx that does not fit: bad JSON, output_schema), `upstream_error` (unreachable), `timeout`, `too_large` (max_response_size), `canceled`, `unhandled` (route mode: nothing after mcp answered)
type Handler struct {
	// Name is the server name reported in initialize. Default: caddy-mcp.
	Name string `json:"name,omitempty"`

	// Version is the server version reported in initialize.
	// Default: the plugin version.
	Version string `json:"version,omitempty"`

	// Instructions tell clients how to use the server. Default: none.
	Instructions string `json:"instructions,omitempty"`

	// Upstream is the REST API's base URL; its path is a prefix of every
	// tool path. Placeholders are allowed. Without it, tool calls go
	// through the handlers that follow in the route. Default: none.
	Upstream string `json:"upstream,omitempty"`

	// Headers are sent on every upstream request; placeholders are allowed,
	// e.g. {env.API_KEY}. The MCP client's own headers are never forwarded.
	// Default: none.
	Headers http.Header `json:"headers,omitempty"`

	// Timeout bounds one tool call, from the request to the last byte of
	// the answer. Default: 30s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxResponseSize bounds the upstream answer, in bytes; a larger answer
	// is a tool error. Default: 4MiB.
	MaxResponseSize int64 `json:"max_response_size,omitempty"`

	// MaxResultSize bounds, in bytes, each tool's result text and,
	// separately, its structuredContent, for tools that set none of their
	// own; see Tool.MaxResultSize. Default: no bound.
	MaxResultSize int64 `json:"max_result_size,omitempty"`

	// StructuredText is the text of a result that has structuredContent:
	// "full", the same JSON (as the MCP spec advises, for clients that
	// read only text), or "summary", a short line (the status, the counts,
	// "see structuredContent") for clients that read structuredContent,
	// so its bytes are not sent twice. Default: full.
	StructuredText string `json:"structured_text,omitempty"`

	Endpoint

	// Tools are the tools this server offers, beside those of OpenAPI.
	Tools []*Tool `json:"tools,omitempty"`

	// OpenAPI are documents whose operations become tools too, read once
	// at load; a tool name given twice (by a tool and an operation, or by
	// two documents) is an error. Without an upstream, the documents'
	// first server URL is the upstream. Default: none.
	OpenAPI []*OpenAPISource `json:"openapi,omitempty"`

	// Discovery is how clients find the tools: "all" lists every tool in
	// tools/list; "search" lists two, search_tools (the tools that best
	// match a query, with their schemas) and call_tool (calls any tool by
	// name, validated, limited, scoped and counted as a direct call is),
	// for APIs with more tools than a model should read. Default: all.
	Discovery string `json:"discovery,omitempty"`

	base     *url.URL
	baseText upstream.Text
	client   *upstream.Client
	tools    map[string]*provisioned
	// importKeys are the imports this handler holds in the imports pool.
	importKeys []string
	logger     *zap.Logger
	metrics    *metrics
	fast       *fastpath.Path // nil: every request goes through mcp-go
	disc       *discovery     // nil: discovery all
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.mcp",
		New: func() caddy.Module { return new(Handler) },
	}
}

// announceSize puts a tool's size hint (upstream.ResultSizeHintKey) in
// its _meta, for a client that holds back large results to show them.
func announceSize(t *mcp.Tool, hint int) {
	if hint > 0 {
		t.Meta = upstream.MetaWith(t.Meta, upstream.ResultSizeHintKey, hint)
	}
}

// Provision compiles the tools and sets up the MCP server.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.Name == "" {
		h.Name = version.Name
	}
	if h.Version == "" {
		h.Version = version.Version
	}
	if h.Timeout == 0 {
		h.Timeout = caddy.Duration(defaultTimeout)
	}
	if h.MaxResponseSize == 0 {
		h.MaxResponseSize = defaultMaxResponseSize
	}
	// The documents first: without an upstream, theirs is the upstream.
	// A document URL is the one network wait of a load, fetched once
	// within openapi.FetchTimeout.
	docs, err := h.loadOpenAPI(ctx)
	if err != nil {
		return err
	}
	if h.Upstream != "" {
		if err := h.provisionUpstream(); err != nil {
			return err
		}
		h.client = upstream.NewClient()
	}

	h.tools = make(map[string]*provisioned, len(h.Tools))
	var offered []*provisioned
	srv := server.NewMCPServer(h.Name, h.Version,
		server.WithToolCapabilities(false),
		server.WithInstructions(h.Instructions),
		server.WithRecovery(),
		server.WithToolFilter(h.filterTools),
	)
	for _, t := range h.Tools {
		if t == nil {
			continue
		}
		ct, err := compileTool(t, h.Headers, h.base)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		if ct.timeout == 0 {
			ct.timeout = h.Timeout
		}
		ct.refs = addRefs(ct.refs, h.Upstream)
		h.tools[t.Name] = ct
		offered = append(offered, ct)
	}
	err = h.importTools(docs, func(p *provisioned) {
		h.tools[p.mcpTool.Name] = p
		offered = append(offered, p)
	})
	if err != nil {
		return err
	}
	releaseImport(docs)
	for _, p := range h.tools {
		if p.shape.MaxSize == 0 {
			p.shape.MaxSize = h.MaxResultSize
		}
		p.shape.SummaryText = h.StructuredText == structuredTextSummary
		announceSize(&p.mcpTool, p.shape.SizeHint())
	}
	if err := h.offerTools(srv, offered); err != nil {
		return err
	}

	h.warnEmptyPlaceholders()
	descriptions := make(map[string]string, len(h.tools))
	for name, p := range h.tools {
		descriptions[name] = p.mcpTool.Description
	}
	warnLongTexts(h.logger, h.Instructions, descriptions)

	if h.metrics, err = newMetrics(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	if err := h.provisionEndpoint(ctx, srv, "mcp", h.logger, h.metrics); err != nil {
		return err
	}
	if h.auth != nil {
		h.auth.toolScopes = make(map[string][]string)
		for name, p := range h.tools {
			if len(p.scopes) > 0 {
				h.auth.toolScopes[name] = p.scopes
			}
		}
	}
	h.fast = fastpath.New(h.runTool, srv, h.transport, mcp.Implementation{Name: h.Name, Version: h.Version}, ctx.Slogger())
	shared := h.auth == nil || len(h.auth.toolScopes) == 0 || h.disc != nil
	h.offerListCaching(srv, !shared)
	if shared {
		// One list for every caller: it is answered from bytes. With tool
		// scopes each caller's list is filtered, by mcp-go; with discovery
		// search it holds two tools that need no scope.
		h.fast.PrepareList(srv)
	}
	return nil
}

func (h *Handler) provisionUpstream() error {
	if strings.Contains(h.Upstream, "{") {
		// Resolved per call; check what can be checked now.
		h.baseText = upstream.NewText(h.Upstream)
		return nil
	}
	u, err := parseBase(h.Upstream)
	if err != nil {
		return err
	}
	h.base = u
	return nil
}

func parseBase(s string) (*url.URL, error) {
	u, err := httpURL(s)
	if errors.Is(err, errNotHTTPURL) {
		return nil, fmt.Errorf("upstream %q: want an http:// or https:// base URL", s)
	}
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", s, err)
	}
	if u.User != nil {
		return nil, fmt.Errorf("upstream: put credentials in a header, not in the URL")
	}
	u.Fragment = ""
	return u, nil
}

var errNotHTTPURL = errors.New("want an http:// or https:// URL")

// httpURL parses s as an http or https URL with a host. For a URL
// without a scheme, such as 127.0.0.1:8090, Go's parser says "first path
// segment in URL cannot contain colon" or takes the host for a scheme;
// this says what is wanted instead (errNotHTTPURL).
func httpURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		return u, nil
	}
	var parseErr *url.Error
	if strings.Contains(s, "://") && errors.As(err, &parseErr) {
		return nil, parseErr.Err // an http URL with a flaw: the parser says which
	}
	return nil, errNotHTTPURL
}

// warnEmptyPlaceholders logs one line for each {env.*} or {file.*}
// placeholder of the upstream URL, the headers, the query lines and the
// paths that resolves to empty text now, naming it and where it is used,
// never a value. (Calls say so too; see configRef.)
func (h *Handler) warnEmptyPlaceholders() {
	var refs []configRef
	used := make(map[configRef][]string)
	note := func(text, where string) {
		for _, ref := range configRefs(text) {
			if used[ref] == nil {
				refs = append(refs, ref)
			}
			if !slices.Contains(used[ref], where) {
				used[ref] = append(used[ref], where)
			}
		}
	}
	noteHeaders := func(header http.Header, prefix string) {
		for _, k := range slices.Sorted(maps.Keys(header)) {
			for _, v := range header[k] {
				note(v, prefix+"header "+http.CanonicalHeaderKey(k))
			}
		}
	}
	note(h.Upstream, "upstream")
	noteHeaders(h.Headers, "")
	for _, t := range h.Tools {
		if t == nil {
			continue
		}
		prefix := "tool " + t.Name + ": "
		noteHeaders(t.Headers, prefix)
		for _, k := range slices.Sorted(maps.Keys(t.Query)) {
			for _, v := range t.Query[k] {
				note(v, prefix+"query "+k)
			}
		}
		note(t.Path, prefix+"path")
	}
	for _, ref := range refs {
		if state := ref.missing(); state != "" {
			h.logger.Warn("a placeholder in the configuration resolves to empty text",
				zap.String(ref.kind, ref.name), zap.String("state", state), zap.Strings("used_in", used[ref]))
		}
	}
}

// Validate checks the configuration. What Provision compiles (the tools,
// the upstream URL, allow_origins) it checks as it compiles it.
func (h *Handler) Validate() error {
	if h.Timeout < 0 {
		return fmt.Errorf("timeout must not be negative")
	}
	if h.MaxResponseSize < 0 {
		return fmt.Errorf("max_response_size must not be negative")
	}
	if err := checkDiscovery(h.Discovery); err != nil {
		return err
	}
	if err := checkResultSize(h.MaxResultSize); err != nil {
		return err
	}
	if err := checkStructuredText(h.StructuredText); err != nil {
		return err
	}
	if len(h.tools) == 0 {
		return fmt.Errorf("mcp needs at least one tool")
	}
	seen := make(map[string]bool, len(h.Tools))
	for _, t := range h.Tools {
		if t == nil {
			continue
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q is defined twice", t.Name)
		}
		seen[t.Name] = true
		if err := h.checkToolScopes(t); err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
	}
	if err := h.checkOperationScopes(nil); err != nil {
		return err
	}
	return h.Endpoint.validate()
}

// The values of structured_text.
const (
	structuredTextFull    = "full"
	structuredTextSummary = "summary"
)

func checkStructuredText(v string) error {
	if v != "" && v != structuredTextFull && v != structuredTextSummary {
		return fmt.Errorf("structured_text %q: want %s or %s", v, structuredTextFull, structuredTextSummary)
	}
	return nil
}

// checkToolScopes refuses scopes that are not scope tokens, or that no
// authorization block would check.
func (h *Handler) checkToolScopes(t *Tool) error {
	if len(t.Scopes) == 0 {
		return nil
	}
	if h.Authorization == nil {
		return errScopesWithoutAuthorization
	}
	if err := checkScopes(t.Scopes); err != nil {
		return fmt.Errorf("scopes: %w", err)
	}
	return nil
}

// Cleanup releases the upstream connections.
func (h *Handler) Cleanup() error {
	if h.client != nil {
		h.client.Close()
	}
	for _, key := range h.importKeys {
		_, _ = imports.Delete(key)
	}
	h.importKeys = nil
	return nil
}

// ServeHTTP serves the MCP endpoint.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return h.serveEndpoint(w, r, &routeInfo{next: next, request: r}, h.fast)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
