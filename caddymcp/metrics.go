package caddymcp

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/mcpbackend"
)

// metrics are the handlers' Prometheus collectors, registered on each
// Provision with the config's registry.
type metrics struct {
	requests     *prometheus.CounterVec
	rejected     *prometheus.CounterVec
	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	schemaDrift  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "caddy", "mcp"
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "requests_total",
			Help: "JSON-RPC requests received, by handler and method.",
		}, []string{"handler", "method"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "rejected_requests_total",
			Help: "HTTP requests refused before reaching MCP, by handler and reason.",
		}, []string{"handler", "reason"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "tool_calls_total",
			Help: "Tool calls, by handler, server name, tool and outcome.",
		}, []string{"handler", "server", "tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "tool_call_duration_seconds",
			Help:    "Time to answer a tool call, by handler, server name and tool.",
			Buckets: prometheus.DefBuckets,
		}, []string{"handler", "server", "tool"}),
		schemaDrift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "schema_drift_total",
			Help: "Answers of imported tools that did not match the output schema from their document, by server name and tool.",
		}, []string{"server", "tool"}),
	}
	var err error
	if m.requests, err = register(reg, m.requests); err != nil {
		return nil, err
	}
	if m.rejected, err = register(reg, m.rejected); err != nil {
		return nil, err
	}
	if m.toolCalls, err = register(reg, m.toolCalls); err != nil {
		return nil, err
	}
	if m.toolDuration, err = register(reg, m.toolDuration); err != nil {
		return nil, err
	}
	if m.schemaDrift, err = register(reg, m.schemaDrift); err != nil {
		return nil, err
	}
	return m, nil
}

// Outcomes of a codemode execution, beside those of call.go that it
// shares (ok, invalid_arguments, timeout, canceled): the snake_case of the
// codemode error kinds the model reads.
const (
	outcomeSyntaxError   = "syntax_error"
	outcomeUncaught      = "uncaught_error"
	outcomeLimit         = "limit_exceeded"
	outcomeMemoryLimit   = "memory_limit"
	outcomeStackOverflow = "stack_overflow"
	outcomeBusy          = "busy"
	outcomeWorkerFailed  = "worker_failed"

	// A backend call the caller's token lacks the scopes for.
	outcomeInsufficientScope = "insufficient_scope"
)

// toolLabelUnknown is the tool label of a backend call whose name is on
// no tool list: the code may make up any name while a backend is down.
const toolLabelUnknown = "unknown"

// executionOutcome is the outcome label of an execution that ended with e.
func executionOutcome(e *codemode.Error, canceled bool) string {
	if e == nil {
		return outcomeOK
	}
	switch e.Kind {
	case codemode.KindSyntax:
		return outcomeSyntaxError
	case codemode.KindTimeout:
		if canceled {
			return outcomeCanceled
		}
		return outcomeTimeout
	case codemode.KindLimit:
		return outcomeLimit
	case codemode.KindMemory:
		return outcomeMemoryLimit
	case codemode.KindStack:
		return outcomeStackOverflow
	case codemode.KindBusy:
		return outcomeBusy
	case codemode.KindWorker:
		return outcomeWorkerFailed
	}
	return outcomeUncaught
}

// backendOutcome is the outcome label of a backend call that returned err.
func backendOutcome(err error) string {
	var be *mcpbackend.BackendError
	var tooLarge *mcpbackend.AnswerTooLargeError
	switch {
	case err == nil:
		return outcomeOK
	case errors.As(err, &be):
		return outcomeStatus
	case errors.As(err, &tooLarge):
		return outcomeTooLarge
	case errors.Is(err, context.DeadlineExceeded):
		return outcomeTimeout
	case errors.Is(err, context.Canceled):
		return outcomeCanceled
	}
	return outcomeUnreachable
}

// register registers c, or returns the collector already registered under
// its name (another handler of the same config registered it first).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}
