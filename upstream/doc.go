// Package upstream holds the parts of caddy-mcp that talk to what sits
// behind it, with no Caddy in them: the REST requests of the mcp handler's
// tools, and the MCP clients of the codemode handler's backends.
//
// For the mcp handler, New compiles a tool definition (a Spec) into a
// Tool once, at provision time; a tool call's arguments then become one
// HTTP request (Tool.NewRequest), sent by a Client, whose Response becomes
// the tool result (Response.Result). A Template keeps argument values out
// of the Replacer that resolves the configuration's placeholders: a value
// such as "{env.API_KEY}" stays literal text.
//
// For the codemode handler, a Backend is a client of one MCP server,
// described by a BackendConfig. It connects and reconnects in the
// background, re-initializes a session the server forgot, keeps the
// server's tool list (RemoteTool) fresh, and calls its tools
// (Backend.Call). It bounds everything the server sends, and never sends
// a call again once it may have reached the tool.
package upstream
