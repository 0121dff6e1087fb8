package caddymcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/net/http/httpguts"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
	"github.com/caddy-mcp/caddy-mcp/internal/version"
)

func init() {
	caddy.RegisterModule(CodeMode{})
}

// coldStartWait is how long tools/list waits, after provisioning, for the
// backends' first connections before describing a backend as unavailable.
const coldStartWait = 2 * time.Second

// CodeMode aggregates several MCP backends behind one MCP endpoint that
// offers a single tool. The tool takes JavaScript or TypeScript written by
// the model and runs it in a fresh, network-less goja sandbox, where each
// backend is a global with one typed async function per backend tool. The
// tool's description carries TypeScript declarations generated from the
// backends' tool schemas. The model chains and filters calls in code and
// reads only what the code prints or returns. When the declarations grow
// past max_declarations (discovery auto, the default) or with discovery
// search, a second tool, search, answers with the declarations of the
// tools that match a query, and the description lists only tool names.
//
// The sandbox's only exits are the bindings, which call the backends from
// Go with the configured headers; the code never sees them. Backends are
// connected in the background and kept across config reloads.
//
// Executions run in worker processes of the same binary: a worker is
// killed at its execution's timeout or past max_memory, and whatever the
// code does, Caddy is untouched. See the README.
//
// This handler sets these placeholders:
//
// Placeholder | Description
// ------------|-------------
// `{http.mcp.method}` | The JSON-RPC method of the request
// `{http.mcp.tool}` | The tool name of a tools/call
//
// With Caddy's metrics on, it counts, in these Prometheus metrics (label
// values come from the config and the backends' tool lists, never from a
// request or the code):
//
// Metric | Labels
// -------|-------
// `caddy_mcp_requests_total` | handler, method
// `caddy_mcp_rejected_requests_total` | handler, reason
// `caddy_mcp_tool_calls_total` | handler, server, tool, outcome
// `caddy_mcp_tool_call_duration_seconds` | handler, server, tool
// `caddy_mcp_backend_requests_total` | backend, via
//
// Label | Values
// ------|-------
// handler | `codemode`
// method | `initialize`, `ping`, `tools/list`, `tools/call`, `server/discover`, `notifications/initialized`, `notifications/cancelled`, `notifications/other`, `other`
// reason | `forbidden` (Origin or Host), `method` (not POST), `too_large` (max_request_size), `batch` (a JSON-RPC batch), `unauthorized` (no valid token), `insufficient_scope` (authorization: require_scopes)
// server | the name
// tool | the tool_name, for executions; `search` for the search tool; `<backend>.<tool>` for a backend call, with the backend tool's own name; `unknown` for a call of a name on no tool list (the code may call any name on a backend that is down)
// outcome, of an execution | `ok`, `invalid_arguments`, `syntax_error`, `uncaught_error` (the code threw), `timeout`, `canceled`, `limit_exceeded` (max_tool_calls, max_code_size and the sandbox's bounds), `memory_limit` (max_memory), `stack_overflow`, `busy` (max_concurrent), `worker_failed` (a worker process died, could not start or broke its pipe)
// outcome, of a search | `ok`, `invalid_arguments`
// backend | a backend's name
// via | `in_process` (a server of this same Caddy served the request without the network, see the README), `http`
// outcome, of a backend call | `ok`, `upstream_status` (the tool answered with an error), `upstream_error` (the backend could not be reached or failed), `timeout`, `too_large`, `canceled`, `insufficient_scope` (the caller's token lacks the tool's backend scopes)
type CodeMode struct {
	// Name is the server name reported in initialize. Default: caddy-mcp-codemode.
	Name string `json:"name,omitempty"`

	// Instructions tell clients how to use the server. Default: none.
	Instructions string `json:"instructions,omitempty"`

	// ToolName is the name of the single tool. Default: execute.
	ToolName string `json:"tool_name,omitempty"`

	// Backends are the MCP servers the code can call.
	Backends []*CodeModeBackend `json:"backends,omitempty"`

	// Timeout bounds one execution, wall clock. Default: 30s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxToolCalls bounds the backend calls of one execution. Default: 100.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`

	// MaxOutput bounds the logs and result returned to the model, in
	// bytes. Default: 24KiB.
	MaxOutput int64 `json:"max_output,omitempty"`

	// MaxCodeSize bounds the code input, in bytes. Default: 64KiB.
	MaxCodeSize int64 `json:"max_code_size,omitempty"`

	// MaxConcurrent bounds the executions running at once; beyond it a
	// call gets a busy error. Default: 2 x GOMAXPROCS.
	MaxConcurrent int `json:"max_concurrent,omitempty"`

	// Isolation is process, the only one: each execution in a worker
	// process, killed at its timeout or past max_memory. in_process is a
	// config error that says why.
	Isolation string `json:"isolation,omitempty"`

	// MaxMemory bounds the memory of one execution's worker process, in
	// bytes: past it the worker is killed. Default: 256MiB.
	MaxMemory int64 `json:"max_memory,omitempty"`

	// Workers is how many worker processes are kept running, in process
	// isolation. Default: max_concurrent.
	Workers int `json:"workers,omitempty"`

	// Discovery is how the model learns the backends' tools. all: the
	// execute tool's description declares every tool in TypeScript.
	// search: tools/list holds a second tool, search ({query, limit?}),
	// answering with the declarations of the best-matching tools and
	// their backends' instructions, and the execute description, within
	// max_description, names the backends, their tool counts and as many
	// tool identifiers as fit; every tool stays callable from the code.
	// auto: all while the whole description fits in max_description and
	// the declarations in max_declarations, search past it, decided for
	// each description served (each backend tool list, each set of
	// backend scopes a caller holds). In search mode the code can await
	// tools.search(query, limit?). Default: auto.
	Discovery string `json:"discovery,omitempty"`

	// MaxDescription is the size, in bytes, of the execute tool's whole
	// description in auto and search modes: Claude Code shows the model
	// the first 2 KB of a description. At least 1.5KiB. Default: 2KiB.
	MaxDescription int64 `json:"max_description,omitempty"`

	// MaxDeclarations bounds, in bytes, the TypeScript declarations
	// alone in auto mode. Default: 32KiB.
	MaxDeclarations int64 `json:"max_declarations,omitempty"`

	Endpoint

	runner      *worker.Runner
	poolKey     string // in workerPools, when the executions run in workers
	backends    []*backendRef
	logger      *zap.Logger
	metrics     *metrics
	provisioned time.Time
	describe    *description
	relisted    int32 // atomic: the first request re-listed the backends
	released    int32 // atomic: Cleanup released the backends
}

// CodeModeBackend is one MCP backend of a codemode handler.
type CodeModeBackend struct {
	// Name is the global the code uses: await <name>.<tool>({...}). It must
	// be a JavaScript identifier that does not shadow a sandbox global.
	Name string `json:"name"`

	// URL is the backend's MCP endpoint.
	URL string `json:"url"`

	// Headers are sent on every request to the backend; placeholders are
	// allowed. The code never sees them. Default: none.
	Headers http.Header `json:"headers,omitempty"`

	// Transport is streamable_http or sse. Default: streamable_http.
	Transport string `json:"transport,omitempty"`

	// Tools are globs of the backend tools to expose. Default: all.
	Tools []string `json:"tools,omitempty"`

	// Timeout bounds one call to the backend. Default: 30s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxTools bounds the tools kept from the backend's list: past it the
	// first ones are kept and the rest refused, with a warning in the log.
	// Default: 2000.
	MaxTools int `json:"max_tools,omitempty"`

	// MaxToolsSize bounds the JSON of the tools the backend lists, in
	// bytes, across all pages, counting the tools that the tools globs
	// leave out: past it the first tools are kept and the rest refused,
	// with a warning in the log. Default: 16MiB.
	MaxToolsSize int64 `json:"max_tools_size,omitempty"`

	// MaxResponseSize bounds one answer from the backend, in bytes, and
	// each line and event of its event streams; a larger answer fails the
	// call. Default: 16MiB.
	MaxResponseSize int64 `json:"max_response_size,omitempty"`

	// MaxStreamSize bounds, in bytes, the event stream of an sse backend's
	// session, which carries every answer: past it the backend is
	// reconnected. Default: 1GiB.
	MaxStreamSize int64 `json:"max_stream_size,omitempty"`

	// Scopes must all be carried by the caller's token for any tool of the
	// backend to be declared to the code or called. Needs the handler's
	// authorization block. Default: none.
	Scopes []string `json:"scopes,omitempty"`

	// ToolScopes add scopes for the backend tools matching a glob: a tool
	// the caller lacks them for is left out of the declarations, and a
	// call to it fails. Needs the handler's authorization block.
	ToolScopes []BackendToolScopes `json:"tool_scopes,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (CodeMode) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.codemode",
		New: func() caddy.Module { return new(CodeMode) },
	}
}

// Provision checks the backends, takes their clients from the pool (or
// starts them in the background) and sets up the MCP server.
func (cm *CodeMode) Provision(ctx caddy.Context) error {
	cm.logger = ctx.Logger()
	cm.provisioned = time.Now()
	if cm.Name == "" {
		cm.Name = "caddy-mcp-codemode"
	}
	if cm.ToolName == "" {
		cm.ToolName = "execute"
	}
	if cm.Timeout == 0 {
		cm.Timeout = caddy.Duration(codemode.DefaultTimeout)
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"max_tool_calls", int64(cm.MaxToolCalls)}, {"max_output", cm.MaxOutput}, {"max_code_size", cm.MaxCodeSize},
		{"max_concurrent", int64(cm.MaxConcurrent)}, {"max_memory", cm.MaxMemory}, {"timeout", int64(cm.Timeout)},
		{"workers", int64(cm.Workers)}, {"max_declarations", cm.MaxDeclarations}, {"max_description", cm.MaxDescription}} {
		if v.n < 0 {
			return fmt.Errorf("%s must not be negative", v.name)
		}
	}
	if err := cm.provisionDiscovery(); err != nil {
		return err
	}
	if err := cm.provisionRunner(); err != nil {
		return err
	}

	backendRequests, err := newBackendRequests(ctx.GetMetricsRegistry())
	if err != nil {
		return err
	}
	httpApp := httpAppOf(ctx)
	seen := make(map[string]bool, len(cm.Backends))
	for _, b := range cm.Backends {
		if b == nil {
			continue
		}
		if err := codemode.CheckBackendName(b.Name); err != nil {
			return fmt.Errorf("backend %q: %v", b.Name, err)
		}
		if seen[b.Name] {
			return fmt.Errorf("backend %q is defined twice", b.Name)
		}
		seen[b.Name] = true
		if _, err := httpURL(b.URL); err != nil {
			return fmt.Errorf("backend %q: url %q: %w", b.Name, b.URL, err)
		}
		switch b.Transport {
		case "", "streamable_http", "sse":
		default:
			return fmt.Errorf("backend %q: transport %q: want streamable_http or sse", b.Name, b.Transport)
		}
		if b.Timeout < 0 {
			return fmt.Errorf("backend %q: timeout must not be negative", b.Name)
		}
		for _, v := range []struct {
			name string
			n    int64
		}{{"max_tools", int64(b.MaxTools)}, {"max_tools_size", b.MaxToolsSize}, {"max_response_size", b.MaxResponseSize}, {"max_stream_size", b.MaxStreamSize}} {
			if v.n < 0 {
				return fmt.Errorf("backend %q: %s must not be negative", b.Name, v.name)
			}
		}
		for field := range b.Headers {
			if !httpguts.ValidHeaderFieldName(field) {
				return fmt.Errorf("backend %q: invalid header field name %q", b.Name, field)
			}
		}
		scopes, err := newBackendScopes(b, cm.Authorization != nil)
		if err != nil {
			return fmt.Errorf("backend %q: %w", b.Name, err)
		}
		ref, err := loadBackend(b, cm.logger)
		if err != nil {
			return fmt.Errorf("backend %q: %v", b.Name, err)
		}
		ref.scopes = scopes
		if ref.local != nil {
			// The pool outlives the config: the counts go to the newest.
			ref.local.requests.Store(backendRequests)
		}
		logLocal(cm.logger, b.Name, b.URL, httpApp)
		cm.backends = append(cm.backends, ref)
	}

	if cm.metrics, err = newMetrics(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	cm.describe = &description{cm: cm}
	tool := mcp.NewToolWithRawSchema(cm.ToolName, "", codeInputSchema)
	tool.RawOutputSchema = codeOutputSchema
	tool.Annotations.Title = "Run code against the tools of " + cm.Name
	srv := server.NewMCPServer(cm.Name, version.Version,
		server.WithToolCapabilities(false),
		server.WithInstructions(cm.Instructions),
		server.WithRecovery(),
		// Backend tools are only known at run time: the description is
		// written when the tools are listed.
		server.WithToolFilter(cm.describe.filter),
	)
	warnLongTexts(cm.logger, cm.Instructions, nil)
	srv.AddTool(tool, cm.execute)
	if cm.Discovery != codemode.DiscoveryAll {
		srv.AddTool(searchTool(cm.ToolName), cm.search)
	}
	cm.offerListCaching(srv, cm.scoped())
	return cm.provisionEndpoint(ctx, srv, "codemode", cm.logger, cm.metrics)
}

// Validate checks the configuration. The settings Provision starts
// something with (the sandbox limits, the backends) it checks before it
// does.
func (cm *CodeMode) Validate() error {
	if !toolNamePattern.MatchString(cm.ToolName) {
		return fmt.Errorf("tool_name %q: use 1 to 128 letters, digits, '_', '-' or '.'", cm.ToolName)
	}
	if len(cm.backends) == 0 {
		return errors.New("codemode needs at least one backend")
	}
	return cm.Endpoint.validate()
}

// Cleanup releases this handler's hold on the backend clients, once; a
// client closes when no loaded config uses it any more. On a reload Caddy
// cleans up the old config without waiting for its requests to finish, so
// executions may still start on this handler afterwards: cm.backends
// stays, and a backend the new config keeps stays open.
func (cm *CodeMode) Cleanup() error {
	if !atomic.CompareAndSwapInt32(&cm.released, 0, 1) {
		return nil
	}
	for _, b := range cm.backends {
		b.release()
	}
	if cm.poolKey != "" {
		_, _ = workerPools.Delete(cm.poolKey)
	}
	return nil
}

// ServeHTTP serves the MCP endpoint. The first request after provisioning
// lists the connected backends' tools again: a pooled backend served by
// this same Caddy was listed while the previous config still served.
func (cm *CodeMode) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if atomic.CompareAndSwapInt32(&cm.relisted, 0, 1) {
		ctx, cancel := context.WithTimeout(r.Context(), coldStartWait)
		for _, b := range cm.backends {
			b.backend.Relist(ctx)
		}
		cancel()
	}
	return cm.serveEndpoint(w, r, nil, nil)
}

var codeInputSchema = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"JavaScript or TypeScript: the body of an async function. Use await, and return the result."}},"required":["code"],"additionalProperties":false}`)

var codeOutputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"result":{"description":"The value the code returned; absent if it returned nothing or if it did not fit in max_output (see result_preview)."},` +
	`"result_preview":{"type":"string","description":"Only when the returned value did not fit in max_output: the start of its JSON text."},` +
	`"logs":{"type":"array","items":{"type":"string"},"description":"Console output: the lines that fit, then a line saying how many more were cut, if any."},` +
	`"truncated":{"type":"boolean","description":"Whether the result or the console output was cut to fit max_output."}},` +
	`"required":["logs","truncated"]}`)

// execute is the tool: it runs the code with one binding per backend.
func (cm *CodeMode) execute(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	args, _ := req.Params.Arguments.(map[string]any)
	code, ok := args["code"].(string)
	if !ok {
		return cm.invalidArguments(ctx, start, `the "code" argument is required: a string of JavaScript or TypeScript`), nil
	}
	for k := range args {
		if k != "code" {
			// As the input schema says: a misspelt or invented argument
			// is not silently dropped.
			return cm.invalidArguments(ctx, start, fmt.Sprintf(`unknown argument %q: execute takes only "code"`, k)), nil
		}
	}
	runCtx, span := startExecutionSpan(ctx)
	bindings := cm.bindings(runCtx)
	res := cm.runner.RunWithSearch(runCtx, code, bindings, cm.searchFor(runCtx))
	endExecutionSpan(span, res)
	cm.observe(res, errors.Is(ctx.Err(), context.Canceled), time.Since(start))

	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(res.Text)}}
	if res.Err != nil {
		out.IsError = true
		traceToolResult(ctx, out, res.Err.Kind)
		return out, nil
	}
	logs := res.Logs
	if logs == nil {
		logs = []string{}
	}
	// The same parts as the text, so that a client reading only the
	// structured content reads no more than max_output and knows a cut.
	// A value that did not fit is not in result, where a client would take
	// the cut text for a string the code returned.
	structured := map[string]any{"logs": logs, "truncated": res.Cut}
	switch {
	case res.ValueCut:
		structured["result_preview"] = res.ValueShown
	case res.Value != nil:
		structured["result"] = res.Value
	}
	out.StructuredContent = structured
	return out, nil
}

// invalidArguments is the answer to an execute call whose arguments are
// not one string of code, counted and traced.
func (cm *CodeMode) invalidArguments(ctx context.Context, start time.Time, msg string) *mcp.CallToolResult {
	cm.count(outcomeInvalidArgs, time.Since(start))
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent(msg)}}
	traceToolResult(ctx, res, outcomeInvalidArgs)
	return res
}

// count counts one execution in the metrics.
func (cm *CodeMode) count(outcome string, d time.Duration) {
	cm.metrics.toolCalls.WithLabelValues("codemode", cm.Name, cm.ToolName, outcome).Inc()
	cm.metrics.toolDuration.WithLabelValues("codemode", cm.Name, cm.ToolName).Observe(d.Seconds())
}

// observe logs one execution and counts it.
func (cm *CodeMode) observe(res *codemode.Result, canceled bool, d time.Duration) {
	outcome := executionOutcome(res.Err, canceled)
	cm.count(outcome, d)
	level := zapcore.DebugLevel
	if res.Err != nil {
		switch res.Err.Kind {
		case codemode.KindMemory, codemode.KindBusy, codemode.KindStack, codemode.KindWorker:
			level = zapcore.WarnLevel
		}
	}
	if c := cm.logger.Check(level, "execution"); c != nil {
		fields := []zap.Field{
			zap.String("outcome", outcome),
			zap.Int("tool_calls", res.ToolCalls),
			zap.Duration("duration", d),
			zap.Int("output_bytes", len(res.Text)),
		}
		if res.Err != nil {
			fields = append(fields, loggedText("error", res.Err.Message)...)
		}
		c.Write(fields...)
	}
}

// maxLoggedText bounds, in bytes, a string a log line takes from the
// sandbox or a backend: an error message the code threw may be 32 MiB.
const maxLoggedText = 1 << 10

// loggedText is the log fields of a string from the sandbox or a backend:
// the string, cut at maxLoggedText bytes, and its length when it was cut.
func loggedText(key, text string) []zap.Field {
	if len(text) <= maxLoggedText {
		return []zap.Field{zap.String(key, text)}
	}
	return []zap.Field{zap.String(key, cutLogged(text)), zap.Int(key+"_bytes", len(text))}
}

// cutLogged is text cut at maxLoggedText bytes, on a character boundary,
// with "..." when it was cut.
func cutLogged(text string) string {
	if len(text) <= maxLoggedText {
		return text
	}
	return cutText(text, maxLoggedText) + "..."
}

// Interface guards
var (
	_ caddy.Provisioner           = (*CodeMode)(nil)
	_ caddy.Validator             = (*CodeMode)(nil)
	_ caddy.CleanerUpper          = (*CodeMode)(nil)
	_ caddyhttp.MiddlewareHandler = (*CodeMode)(nil)
)
