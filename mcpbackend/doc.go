// Package mcpbackend is the codemode directive's client of one MCP
// server: it connects, keeps the tool list fresh, calls tools, and bounds
// all the server sends.
//
// New starts a Backend, described by a Config, that connects and
// reconnects in the background, re-initializes a session the server
// forgot, and keeps the server's tool list (RemoteTool) and instructions.
// Backend.Call gives a tool's Answer, or the tool's own error as a
// *BackendError. Every answer and event stream is bounded
// (AnswerTooLargeError, StreamLimitError), and a call that may have
// reached the tool is never sent again.
package mcpbackend
