package caddymcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
	"github.com/caddy-mcp/caddy-mcp/mcpbackend"
)

var snakeCase = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// TestExecutionOutcome: every error kind the model reads has its own
// snake_case outcome label.
func TestExecutionOutcome(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tt := range []struct {
		kind     string
		canceled bool
		want     string
	}{
		{codemode.KindSyntax, false, "syntax_error"},
		{codemode.KindException, false, "uncaught_error"},
		{codemode.KindTimeout, false, "timeout"},
		{codemode.KindTimeout, true, "canceled"},
		{codemode.KindLimit, false, "limit_exceeded"},
		{codemode.KindMemory, false, "memory_limit"},
		{codemode.KindStack, false, "stack_overflow"},
		{codemode.KindBusy, false, "busy"},
	} {
		got := executionOutcome(&codemode.Error{Kind: tt.kind}, tt.canceled)
		if got != tt.want {
			t.Errorf("%s (canceled %v): outcome %q, want %q", tt.kind, tt.canceled, got, tt.want)
		}
		if seen[got] || !snakeCase.MatchString(got) {
			t.Errorf("outcome %q is taken twice or is not snake_case", got)
		}
		seen[got] = true
	}
	if got := executionOutcome(nil, false); got != "ok" {
		t.Errorf("no error: outcome %q", got)
	}
}

func TestBackendOutcome(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&mcpbackend.BackendError{Message: "no such issue"}, "upstream_status"},
		{&mcpbackend.AnswerTooLargeError{Limit: 1 << 20}, "too_large"},
		{fmt.Errorf("no answer within 30s: %w", context.DeadlineExceeded), "timeout"},
		{fmt.Errorf("unavailable: %w", context.Canceled), "canceled"},
		{errors.New("unavailable: connection refused"), "upstream_error"},
	} {
		if got := backendOutcome(tt.err); got != tt.want {
			t.Errorf("%v: outcome %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestLiveLogsPlaceholdersMetrics checks the log line per tool call, the
// placeholders the handler sets, and the Prometheus metrics.
func TestLiveLogsPlaceholdersMetrics(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	dir := t.TempDir()
	debugLog, accessLog := filepath.Join(dir, "debug.log"), filepath.Join(dir, "access.log")
	loadCaddyfile(t, fmt.Sprintf(`log {
		output file %s
		level DEBUG
	}
	metrics`, debugLog), fmt.Sprintf(`http://:{$LIVE_PORT} {
	log {
		output file %s
	}
	log_append mcp_method {http.mcp.method}
	log_append mcp_tool {http.mcp.tool}
	mcp /mcp {
		upstream %s
		tool status {
			description "Answer a status code."
			get /status/{code}
			arg code integer required
		}
	}
}`, accessLog, bin))

	c := connect(t, "/mcp", eras[0], nil)
	wantOK(t, callTool(t, c, "status", map[string]any{"code": 200}))
	wantToolError(t, callTool(t, c, "status", map[string]any{"code": 418}))
	wantToolError(t, callTool(t, c, "status", map[string]any{"code": "x"}))

	// One debug line per call: tool, request, status, duration, outcome.
	var calls []map[string]any
	for _, e := range readLogs(t, debugLog) {
		if e["msg"] == "tool call" {
			calls = append(calls, e)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("%d tool call log lines, want 3", len(calls))
	}
	wantOutcomes := []string{"ok", "upstream_status", "invalid_arguments"}
	for i, e := range calls {
		if e["level"] != "debug" || e["tool"] != "status" || e["outcome"] != wantOutcomes[i] || e["duration"] == nil {
			t.Errorf("log line %d: %v", i, e)
		}
	}
	if calls[1]["status"] != float64(418) || calls[1]["request"] != "GET /status/418" {
		t.Errorf("log line for the 418: %v", calls[1])
	}

	// Placeholders reach the access log.
	var methods, toolsSeen []string
	for _, e := range readLogs(t, accessLog) {
		if m, ok := e["mcp_method"].(string); ok && m != "" {
			methods = append(methods, m)
		}
		if tool, ok := e["mcp_tool"].(string); ok && tool != "" {
			toolsSeen = append(toolsSeen, tool)
		}
	}
	if !strings.Contains(strings.Join(methods, ","), "tools/call") || strings.Join(toolsSeen, ",") != "status,status,status" {
		t.Errorf("access log placeholders: methods %v tools %v", methods, toolsSeen)
	}

	// Metrics.
	_, body := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/metrics"))
	for _, want := range []string{
		`caddy_mcp_tool_calls_total{handler="mcp",outcome="ok",server="caddy-mcp",tool="status"} 1`,
		`caddy_mcp_tool_calls_total{handler="mcp",outcome="upstream_status",server="caddy-mcp",tool="status"} 1`,
		`caddy_mcp_tool_calls_total{handler="mcp",outcome="invalid_arguments",server="caddy-mcp",tool="status"} 1`,
		`caddy_mcp_requests_total{handler="mcp",method="tools/call"} 3`,
		`caddy_mcp_tool_call_duration_seconds_count{handler="mcp",server="caddy-mcp",tool="status"} 3`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestLiveCodeModeMetrics: code mode's series in Caddy's metrics. Names
// the code makes up on a backend that is down are all counted as tool
// "unknown", and outcomes are snake_case.
func TestLiveCodeModeMetrics(t *testing.T) {
	loadCaddyfile(t, "metrics", fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend down http://%s/mcp
	}
}`, mcptest.ClosedAddr(t)))
	c := connect(t, "/code", eras[0], nil)
	wantToolError(t, execute(t, c, `const names = Array.from({length: 20}, (_, i) => "made_up_" + i);
for (const n of names) { try { await down[n]({}) } catch (e) {} }
throw new Error("done")`), "UncaughtError")
	wantToolError(t, execute(t, c, "return ("), "SyntaxError")

	_, body := do(t, mustRequest(t, http.MethodGet, "http://"+adminAddr+"/metrics"))
	for _, want := range []string{
		`caddy_mcp_tool_calls_total{handler="codemode",outcome="upstream_error",server="caddy-mcp-codemode",tool="unknown"} 20`,
		`caddy_mcp_tool_calls_total{handler="codemode",outcome="uncaught_error",server="caddy-mcp-codemode",tool="execute"} 1`,
		`caddy_mcp_tool_calls_total{handler="codemode",outcome="syntax_error",server="caddy-mcp-codemode",tool="execute"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(string(body), "made_up") {
		t.Error("a name the code made up is a label value")
	}
}
