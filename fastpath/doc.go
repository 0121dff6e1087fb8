// Package fastpath answers the plain tools/calls and tools/lists of an
// mcp-go streamable HTTP endpoint itself, with the bytes mcp-go would
// write, and hands every other request to mcp-go.
package fastpath
