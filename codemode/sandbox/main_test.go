package sandbox_test

import (
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// The tests run their executions in worker processes of this test binary,
// as every execution runs in Caddy.
func TestMain(m *testing.M) { codemodetest.Main(m) }
