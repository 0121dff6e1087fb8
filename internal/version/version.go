package version

const (
	// Name is the plugin's name in an MCP implementation's info.
	Name = "caddy-mcp"
	// Version is the plugin's release.
	Version = "0.1.0"
)
