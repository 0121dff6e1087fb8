// Package caddymcp is the root of the caddy-mcp plugin: importing it
// registers the plugin's Caddy modules, so that
//
//	xcaddy build --with github.com/caddy-mcp/caddy-mcp
//
// builds a Caddy with them.
package caddymcp
