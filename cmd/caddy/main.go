// Command caddy is Caddy with its standard modules and the caddy-mcp plugin.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/caddy-mcp/caddy-mcp"
)

func main() {
	caddycmd.Main()
}
