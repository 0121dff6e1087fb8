package caddymcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readLogs parses a JSON log file into entries.
func readLogs(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// TestLiveLogsPlaceholdersMetrics checks the log line per tool call, the
// placeholders the handler sets, and the Prometheus metrics.
func TestLiveLogsPlaceholdersMetrics(t *testing.T) {
	bin := startHTTPBin(t)
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
