package caddymcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddy-mcp/caddy-mcp/upstream"
)

// Outcomes of a tool call, for logs and metrics.
const (
	outcomeOK          = "ok"
	outcomeInvalidArgs = "invalid_arguments"
	outcomeStatus      = "upstream_status" // the upstream answered, but not 2xx
	outcomeBadAnswer   = "invalid_answer"  // 2xx that does not fit (bad JSON, output_schema)
	outcomeUnreachable = "upstream_error"
	outcomeTimeout     = "timeout"
	outcomeTooLarge    = "too_large"
	outcomeCanceled    = "canceled"
	outcomeUnhandled   = "unhandled" // route mode: nothing after mcp answered
)

// outcome is what one call leaves for logs and metrics.
type outcome struct {
	label  string // the request, as upstream.Target.Label names it
	status int
	kind   string // one of the outcome constants
	err    error
	// refs are the placeholders of the tool's configuration text; observe
	// checks which resolve to empty text only when it logs the call.
	refs []configRef
	// sub is the caller's sub, with an authorization block; no other claim
	// is logged.
	sub string
	// drift are the violations of an imported tool's output schema by
	// the answer, which the result holds whole.
	drift []string
}

// toolHandler is mcp-go's way into a tool, and runTool the fast path's;
// both run the call with callTool.
func (h *Handler) toolHandler(p *provisioned) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			notifyProgress(ctx, req.Params.Meta.ProgressToken, p.op.Name())
		}
		var raw any = req.Params.Arguments
		if args, ok := ctx.Value(argsKey{}).(map[string]any); ok {
			raw = args
		}
		return h.callTool(ctx, p, raw), nil
	}
}

// runTool is the fast path's way into a tool (see package fastpath); a
// panic is logged, and answered by the fast path as mcp-go answers it.
func (h *Handler) runTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool) {
	defer func() {
		if p := recover(); p != nil {
			h.logger.Error("panic in tool handler", zap.String("tool", name), zap.Any("panic", p))
			panic(p)
		}
	}()
	if h.disc != nil {
		return h.runMeta(ctx, name, args)
	}
	p := h.tools[name]
	if p == nil {
		return nil, false
	}
	return h.callTool(ctx, p, args), true
}

// callTool runs one call of p with its arguments as decoded, and logs and
// counts it.
func (h *Handler) callTool(ctx context.Context, p *provisioned, raw any) *mcp.CallToolResult {
	start := time.Now()
	res, out := h.call(ctx, p, raw)
	if caller := callerOf(ctx); caller != nil {
		out.sub = caller.id.Subject
	}
	h.observe(p.op.Name(), out, time.Since(start))
	traceToolResult(ctx, res, out.kind)
	return res
}

// call is one call: the operation checks the arguments and builds the
// request, which goes to the upstream, or in route mode to the handlers
// after mcp, within the tool's timeout; the operation maps the answer.
func (h *Handler) call(ctx context.Context, p *provisioned, raw any) (*mcp.CallToolResult, outcome) {
	args, err := p.op.Check(raw)
	if err != nil {
		return upstream.ErrorResult(err.Error()), outcome{kind: outcomeInvalidArgs}
	}

	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.timeout))
	defer cancel()
	repl, _ := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	var r upstream.Replacer
	if repl != nil {
		r = repl
	}
	route, _ := ctx.Value(ctxKey{}).(*routeInfo)

	base, err := h.baseURL(r)
	if err != nil {
		return upstream.ErrorResult(err.Error()), outcome{label: p.op.Label(args), kind: outcomeUnreachable, err: err, refs: p.refs}
	}
	req, target, err := p.op.Request(ctx, base, args, r)
	if err != nil {
		return upstream.ErrorResult(err.Error()), outcome{label: target.Label, kind: outcomeInvalidArgs}
	}
	out := outcome{label: target.Label, refs: p.refs}

	var resp *upstream.Response
	if h.client != nil {
		resp, err = h.client.Do(req, h.MaxResponseSize)
	} else {
		resp, err = serveRoute(ctx, route, req, target, p.op.Name(), h.MaxResponseSize)
	}
	if err != nil {
		out.err = err
		var tooLarge *upstream.TooLargeError
		var unhandled *unhandledError
		var msg string
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			out.kind = outcomeTimeout
			msg = fmt.Sprintf("%s: no complete answer within the tool's timeout of %s", target.Label, time.Duration(p.timeout))
		case errors.Is(err, context.Canceled):
			out.kind = outcomeCanceled
			msg = fmt.Sprintf("%s: the call was canceled", target.Label)
		case errors.As(err, &tooLarge):
			out.kind = outcomeTooLarge
			msg = fmt.Sprintf("%s: %v", target.Label, err)
		case errors.As(err, &unhandled):
			out.kind = outcomeUnhandled
			msg = err.Error()
		default:
			out.kind = outcomeUnreachable
			msg = fmt.Sprintf("%s: the upstream request failed: %v", target.Label, err)
		}
		return upstream.ErrorResult(msg), out
	}
	out.status = resp.Status
	res, drift := p.op.ResultDrift(ctx, target, resp, p.shape)
	out.drift = drift
	switch {
	case !res.IsError:
		out.kind = outcomeOK
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		out.kind = outcomeTimeout // the jq filter ran into the deadline
	case resp.Status >= 200 && resp.Status < 300:
		out.kind = outcomeBadAnswer
	default:
		out.kind = outcomeStatus
	}
	return res, out
}

// notifyProgress tells a client that asked for progress that the call has
// started. The response then streams as SSE, flushed through Caddy's writer.
func notifyProgress(ctx context.Context, token mcp.ProgressToken, tool string) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": token,
		"progress":      0,
		"message":       "calling " + tool,
	})
}

// baseURL is the upstream base URL for this call; empty in route mode.
func (h *Handler) baseURL(r upstream.Replacer) (*url.URL, error) {
	if h.base != nil {
		return h.base, nil
	}
	if h.Upstream == "" {
		return &url.URL{}, nil
	}
	// The upstream URL holds placeholders: resolve them for this call. The
	// resolved URL may hold a secret, so the error does not show it.
	u, err := parseBase(h.baseText.Resolve(r))
	if err != nil {
		return nil, fmt.Errorf("the upstream URL %s does not resolve to an http:// or https:// URL for this call", h.Upstream)
	}
	return u, nil
}

// observe logs one call and counts it. Production logs stay quiet: calls
// are logged at debug level, failures to reach the upstream at warn, and
// so is an upstream's refusal when a placeholder of the configuration
// text resolved to empty text for the call (the line names it: empty_env,
// empty_file), since that is the likely cause.
func (h *Handler) observe(tool string, out outcome, d time.Duration) {
	h.metrics.toolCalls.WithLabelValues("mcp", h.Name, tool, out.kind).Inc()
	h.metrics.toolDuration.WithLabelValues("mcp", h.Name, tool).Observe(d.Seconds())
	if len(out.drift) > 0 {
		h.observeDrift(tool, out)
	}
	level := zapcore.DebugLevel
	switch out.kind {
	case outcomeUnreachable, outcomeTimeout, outcomeTooLarge, outcomeUnhandled:
		level = zapcore.WarnLevel
	}
	// Which placeholders were empty is read (the environment, files) only
	// for a line that is written, or may be: a refusal is logged at warn
	// when one was.
	var empty []configRef
	if out.kind == outcomeStatus || h.logger.Core().Enabled(level) {
		if empty = emptyRefs(out.refs); out.kind == outcomeStatus && len(empty) > 0 {
			level = zapcore.WarnLevel
		}
	}
	c := h.logger.Check(level, "tool call")
	if c == nil {
		return
	}
	fields := []zap.Field{
		zap.String("tool", tool),
		zap.String("request", out.label),
		zap.Int("status", out.status),
		zap.Duration("duration", d),
		zap.String("outcome", out.kind),
	}
	if out.sub != "" {
		fields = append(fields, zap.String("sub", out.sub))
	}
	if out.err != nil {
		fields = append(fields, zap.Error(out.err))
	}
	if len(empty) > 0 {
		byKind := map[string][]string{}
		for _, ref := range empty {
			byKind[ref.kind] = append(byKind[ref.kind], ref.name)
		}
		for _, kind := range slices.Sorted(maps.Keys(byKind)) {
			fields = append(fields, zap.Strings("empty_"+kind, byKind[kind]))
		}
	}
	c.Write(fields...)
}

// routeInfo carries what route mode needs from the MCP request to the tool
// handler: the handlers after mcp, and the request they came with.
type routeInfo struct {
	next    caddyhttp.Handler
	request *http.Request
}

// maxDriftLogged is how many violations a drift log line names.
const maxDriftLogged = 5

// observeDrift counts an answer of an imported tool that broke its
// output schema, and logs it at most once a minute per tool: a drifting
// API drifts on every call.
func (h *Handler) observeDrift(tool string, out outcome) {
	h.metrics.schemaDrift.WithLabelValues(h.Name, tool).Inc()
	p := h.tools[tool]
	if p == nil {
		return
	}
	ok, held := p.driftLog.allow(time.Now())
	if !ok {
		return
	}
	h.logger.Warn("the API's answer does not match its document; the model got the answer as an error result",
		zap.String("tool", tool),
		zap.String("request", out.label),
		zap.Strings("violations", out.drift[:min(len(out.drift), maxDriftLogged)]),
		zap.Int("violations_total", len(out.drift)),
		zap.Int("held_back", held))
}
