package incaddy

import "github.com/caddy-mcp/caddy-mcp/codemode"

// A test binary that runs Caddy in its own process is also the program
// its code mode handlers start their workers from (codemode.PoolConfig's
// default): started as a worker, it serves as one, before any test runs.
func init() { codemode.WorkerMain() }
