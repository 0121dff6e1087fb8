// The "usual peer" of the benchmark: a REST endpoint wrapped as an MCP server
// with the official TypeScript SDK, the way most people wrap an API today
// (McpServer + StreamableHTTPServerTransport on node:http, no Express).
//
// SDK: @modelcontextprotocol/sdk 1.32.2 (pinned in package.json). It speaks
// MCP protocol versions 2025-11-25 (its latest), 2025-06-18, 2025-03-26,
// 2024-11-05 and 2024-10-07. It does NOT know 2026-07-28: a request with
// "MCP-Protocol-Version: 2026-07-28" is answered 400 "Unsupported protocol
// version", and an initialize asking for 2026-07-28 is answered with
// 2025-11-25. So both modes here are measured on 2025-11-25; "stateless"
// means the SDK's stateless mode (no session id, a fresh server and
// transport per request, tools/call accepted without a prior initialize),
// which is the closest the SDK comes to the 2026-07-28 stateless era.
//
// Tool: get_order {id: string} fetches `${UPSTREAM}/orders/${id}` with the
// global fetch (undici; keep-alive by default) and returns the body as text.
//
// Configuration (environment, or --key=value arguments, which win):
//   PORT      port to listen on, on 127.0.0.1 only (default 3000; 0 = any)
//   UPSTREAM  base URL of the REST API, e.g. http://127.0.0.1:8081
//   MODE      "session"   (default) sessions with sessionIdGenerator:
//                         randomUUID, one transport + server per session,
//                         as the SDK's simpleStreamableHttp example does
//             "stateless" sessionIdGenerator: undefined, a new server and
//                         transport per request, as the SDK's
//                         simpleStatelessStreamableHttp example does
//   RESPONSE  "sse" (default: the SDK's default, each POST answered with an
//             event stream) or "json" (enableJsonResponse: true)
//
// Endpoint: /mcp (POST; GET and DELETE in session mode). Prints
// "listening <port>" on stdout when ready. Node >= 20.
//
//   node server.mjs --port=3001 --upstream=http://127.0.0.1:8081 --mode=session
//   PORT=3002 UPSTREAM=http://127.0.0.1:8081 MODE=stateless node server.mjs

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

const args = Object.fromEntries(
  process.argv.slice(2).flatMap((a) => {
    const m = /^--([^=]+)=(.*)$/.exec(a);
    return m ? [[m[1].toUpperCase(), m[2]]] : [];
  }),
);
const opt = (k, d) => args[k] ?? process.env[k] ?? d;

const PORT = Number(opt('PORT', '3000'));
const UPSTREAM = String(opt('UPSTREAM', '')).replace(/\/+$/, '');
const MODE = opt('MODE', 'session');
const RESPONSE = opt('RESPONSE', 'sse');
if (!UPSTREAM) fail('UPSTREAM is required (base URL of the REST API)');
if (MODE !== 'session' && MODE !== 'stateless') fail(`MODE must be "session" or "stateless", not "${MODE}"`);
if (RESPONSE !== 'sse' && RESPONSE !== 'json') fail(`RESPONSE must be "sse" or "json", not "${RESPONSE}"`);
const enableJsonResponse = RESPONSE === 'json';

function fail(msg) {
  console.error(msg);
  process.exit(2);
}

function getServer() {
  const server = new McpServer({ name: 'bench-peer', version: '1.0.0' });
  server.registerTool(
    'get_order',
    {
      description: 'Get one order by its id.',
      inputSchema: { id: z.string().describe('Order id, such as ord_1001') },
    },
    async ({ id }) => {
      const res = await fetch(`${UPSTREAM}/orders/${encodeURIComponent(id)}`);
      const text = await res.text();
      if (!res.ok) {
        return { content: [{ type: 'text', text: `HTTP ${res.status}: ${text}` }], isError: true };
      }
      return { content: [{ type: 'text', text }] };
    },
  );
  return server;
}

// readBody reads and parses a JSON request body; undefined if it is not JSON
// (the transport then answers the parse error itself).
async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function sendError(res, status, code, message) {
  if (res.headersSent) return;
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

// Session mode: one transport (and one McpServer) per session.
const transports = new Map();

async function handleSession(req, res) {
  const sid = req.headers['mcp-session-id'];
  const body = req.method === 'POST' ? await readBody(req) : undefined;
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    if (sid) return sendError(res, 404, -32001, 'Session not found');
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return sendError(res, 400, -32000, 'Bad Request: No valid session ID provided');
    }
    const t = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse,
      onsessioninitialized: (id) => transports.set(id, t),
    });
    t.onclose = () => {
      if (t.sessionId) transports.delete(t.sessionId);
    };
    await getServer().connect(t);
    transport = t;
  }
  await transport.handleRequest(req, res, body);
}

// Stateless mode: a new server and transport for every request.
async function handleStateless(req, res) {
  if (req.method !== 'POST') return sendError(res, 405, -32000, 'Method not allowed.');
  const body = await readBody(req);
  const server = getServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

const handle = MODE === 'session' ? handleSession : handleStateless;

const httpServer = http.createServer(async (req, res) => {
  if (req.url !== '/mcp' && !req.url.startsWith('/mcp?')) return sendError(res, 404, -32000, 'Not found');
  try {
    await handle(req, res);
  } catch (err) {
    console.error('Error handling MCP request:', err);
    sendError(res, 500, -32603, 'Internal server error');
  }
});
httpServer.keepAliveTimeout = 65_000;

httpServer.listen(PORT, '127.0.0.1', () => {
  console.log(`listening ${httpServer.address().port}`);
});

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    httpServer.close();
    process.exit(0);
  });
}
