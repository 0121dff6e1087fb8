package worker_test

import (
	"os"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// The tests run their executions in worker processes of this test binary,
// as every execution runs in Caddy; started as a broken worker, it serves
// as one.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == worker.BrokenWorker {
		worker.ServeBrokenly(os.Args[2])
		os.Exit(0)
	}
	codemodetest.Main(m)
}
