package openapitest

import (
	"context"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

func contextWithTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), mcptest.Timeout)
}
