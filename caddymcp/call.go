package caddymcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
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

// callRecord is what one call leaves for logs and metrics.
type callRecord struct {
	label   string
	status  int
	outcome string
	err     error
	// refs are the placeholders of the tool's configuration text; observe
	// checks which resolve to empty text only when it logs the call.
	refs []configRef
}

func (h *Handler) toolHandler(ct *compiledTool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			notifyProgress(ctx, req.Params.Meta.ProgressToken, ct.name)
		}
		var raw any = req.Params.Arguments
		if args, ok := ctx.Value(argsKey{}).(map[string]any); ok {
			raw = args
		}
		res, rec := h.call(ctx, ct, raw)
		h.observe(ct.name, rec, time.Since(start))
		return res, nil
	}
}

// runTool is the fast path's way into a tool (see fastpath.go).
func (h *Handler) runTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, bool) {
	ct := h.tools[name]
	if ct == nil {
		return nil, false
	}
	if args == nil {
		args = map[string]any{}
	}
	start := time.Now()
	res, rec := h.call(ctx, ct, args)
	h.observe(ct.name, rec, time.Since(start))
	return res, true
}

func (h *Handler) call(ctx context.Context, ct *compiledTool, raw any) (*mcp.CallToolResult, callRecord) {
	args, ok := raw.(map[string]any)
	if raw == nil {
		args, ok = map[string]any{}, true
	}
	if !ok {
		return upstream.ErrorResult("arguments must be a JSON object"), callRecord{outcome: outcomeInvalidArgs}
	}
	args = ct.request.ApplyDefaults(args)
	if !ct.quick.accepts(args) {
		if err := ct.input.Validate(args); err != nil {
			msg := fmt.Sprintf("invalid arguments for tool %s:\n- %s", ct.name, strings.Join(upstream.Violations(err), "\n- "))
			return upstream.ErrorResult(msg), callRecord{outcome: outcomeInvalidArgs}
		}
	}

	ctx, cancel := context.WithTimeout(ctx, time.Duration(ct.timeout))
	defer cancel()
	repl, _ := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	var r upstream.Replacer
	if repl != nil {
		r = repl
	}
	route, _ := ctx.Value(ctxKey{}).(*routeInfo)

	base, err := h.baseURL(r)
	if err != nil {
		return upstream.ErrorResult(err.Error()), callRecord{label: ct.request.Label(args), outcome: outcomeUnreachable, err: err, refs: ct.refs}
	}
	req, call, err := ct.request.NewRequest(ctx, base, args, r)
	if err != nil {
		msg := fmt.Sprintf("invalid arguments for tool %s: %v", ct.name, err)
		return upstream.ErrorResult(msg), callRecord{label: call.Label, outcome: outcomeInvalidArgs}
	}
	call.URI = "caddy-mcp://" + ct.name + call.Path
	call.Sent, call.Base = req.URL.EscapedPath(), strings.TrimSuffix(base.EscapedPath(), "/")
	rec := callRecord{label: call.Label, refs: ct.refs}

	var resp *upstream.Response
	if h.client != nil {
		resp, err = h.client.Do(req, h.MaxResponseSize)
	} else {
		resp, err = serveRoute(ctx, route, req, call, ct.name, h.MaxResponseSize)
	}
	if err != nil {
		rec.err = err
		var tooLarge *upstream.TooLargeError
		var unhandled *unhandledError
		var msg string
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			rec.outcome = outcomeTimeout
			msg = fmt.Sprintf("%s: no complete answer within the tool's timeout of %s", call.Label, time.Duration(ct.timeout))
		case errors.Is(err, context.Canceled):
			rec.outcome = outcomeCanceled
			msg = fmt.Sprintf("%s: the call was canceled", call.Label)
		case errors.As(err, &tooLarge):
			rec.outcome = outcomeTooLarge
			msg = fmt.Sprintf("%s: %v", call.Label, err)
		case errors.As(err, &unhandled):
			rec.outcome = outcomeUnhandled
			msg = err.Error()
		default:
			rec.outcome = outcomeUnreachable
			msg = fmt.Sprintf("%s: the upstream request failed: %v", call.Label, err)
		}
		return upstream.ErrorResult(msg), rec
	}
	rec.status = resp.Status
	res := resp.Result(call, ct.output)
	switch {
	case !res.IsError:
		rec.outcome = outcomeOK
	case resp.Status >= 200 && resp.Status < 300:
		rec.outcome = outcomeBadAnswer
	default:
		rec.outcome = outcomeStatus
	}
	return res, rec
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
func (h *Handler) observe(tool string, rec callRecord, d time.Duration) {
	h.metrics.toolCalls.WithLabelValues("mcp", h.Name, tool, rec.outcome).Inc()
	h.metrics.toolDuration.WithLabelValues("mcp", h.Name, tool).Observe(d.Seconds())
	level := zapcore.DebugLevel
	switch rec.outcome {
	case outcomeUnreachable, outcomeTimeout, outcomeTooLarge, outcomeUnhandled:
		level = zapcore.WarnLevel
	}
	// Which placeholders were empty is read (the environment, files) only
	// for a line that is written, or may be: a refusal is logged at warn
	// when one was.
	var empty []configRef
	if rec.outcome == outcomeStatus || h.logger.Core().Enabled(level) {
		if empty = emptyRefs(rec.refs); rec.outcome == outcomeStatus && len(empty) > 0 {
			level = zapcore.WarnLevel
		}
	}
	c := h.logger.Check(level, "tool call")
	if c == nil {
		return
	}
	fields := []zap.Field{
		zap.String("tool", tool),
		zap.String("request", rec.label),
		zap.Int("status", rec.status),
		zap.Duration("duration", d),
		zap.String("outcome", rec.outcome),
	}
	if rec.err != nil {
		fields = append(fields, zap.Error(rec.err))
	}
	if len(empty) > 0 {
		byKind := map[string][]string{}
		for _, ref := range empty {
			byKind[ref.kind] = append(byKind[ref.kind], ref.name)
		}
		for _, kind := range sortedKeys(byKind) {
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
