package caddymcp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/upstream"
)

var snakeCase = regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)

// TestExecutionOutcome: every error kind the model reads has its own
// snake_case outcome label.
func TestExecutionOutcome(t *testing.T) {
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
	for _, tt := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&upstream.BackendError{Message: "no such issue"}, "upstream_status"},
		{&upstream.AnswerTooLargeError{Limit: 1 << 20}, "too_large"},
		{fmt.Errorf("no answer within 30s: %w", context.DeadlineExceeded), "timeout"},
		{fmt.Errorf("unavailable: %w", context.Canceled), "canceled"},
		{errors.New("unavailable: connection refused"), "upstream_error"},
	} {
		if got := backendOutcome(tt.err); got != tt.want {
			t.Errorf("%v: outcome %q, want %q", tt.err, got, tt.want)
		}
	}
}
