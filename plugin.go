package caddymcp

import (
	_ "github.com/caddy-mcp/caddy-mcp/caddymcp"
)
