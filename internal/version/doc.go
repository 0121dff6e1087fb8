// Package version names the plugin and its release, in one place: the MCP
// servers it serves report them in initialize, and the clients it runs
// against MCP backends report them too.
package version
