// Package version names the plugin and its release, in one place: the MCP
// servers it serves report them in initialize, and the clients it runs
// against MCP backends report them too.
package version

const (
	// Name is the plugin's name in an MCP implementation's info.
	Name = "caddy-mcp"
	// Version is the plugin's release.
	Version = "0.1.0"
)
