// Package loadtest runs real Caddy processes built from this checkout and
// puts them under load: many MCP clients at once for a bounded time (the
// load and soak test), `caddy reload` while clients are calling, and two
// instances behind a round-robin `reverse_proxy` (scale-out).
//
// Everything is in the tests; this file only names the package. The tests
// start processes in groups of their own and read /proc, so they run on
// Linux only. `go test -short` skips them.
//
// The load test runs a short form by default (a few seconds per endpoint)
// and a long form with CADDY_MCP_SOAK=1 (60 s per endpoint):
//
//	CADDY_MCP_SOAK=1 go test ./internal/loadtest -run TestLoad -v -timeout 10m
package loadtest
