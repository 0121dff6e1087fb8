// Package caddymcp is the Caddy glue of caddy-mcp: the `mcp` handler
// (http.handlers.mcp), which fronts a REST API as an MCP server from tool
// definitions in its config, and the `codemode` handler
// (http.handlers.codemode), which puts MCP backends behind one tool that
// runs code against them in a sandbox, with their Caddyfile directives,
// logs and metrics. It is the only package that imports Caddy: REST
// operations are in upstream, the MCP backend client in mcpbackend, the
// fast path beside mcp-go in fastpath, code mode in codemode and its
// subpackages. ARCHITECTURE.md walks through one tools/call.
package caddymcp
