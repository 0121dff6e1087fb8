package incaddy

import "github.com/caddy-mcp/caddy-mcp/codemode/worker"

// A test binary that runs Caddy in its own process is also the program
// its code mode handlers start their workers from (worker.PoolConfig's
// default): started as a worker, it serves as one, before any test runs.
func init() { worker.Main() }
