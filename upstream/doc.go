// Package upstream turns a tool call of the mcp directive into one REST
// request, and its answer into the tool result, with no Caddy in it.
//
// NewOperation compiles a tool's Definition into an Operation once, at
// provision time. A call then goes Operation.Check (the arguments against
// the input schema), Operation.Request (the HTTP request, sent by a Client
// or, in route mode, through Caddy's routes), and Operation.Result (the
// Response, through the tool's jq filter and output schema, cut to the
// Shaping's max_result_size with a Cut record). Configuration text goes
// through a Replacer; argument values never do, so a value such as
// "{env.API_KEY}" stays literal text.
package upstream
