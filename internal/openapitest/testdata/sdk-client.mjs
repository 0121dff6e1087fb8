// The official TypeScript SDK's client (Streamable HTTP transport) calling
// tools imported from an OpenAPI document. It reads one JSON object on
// standard input,
//
//	{"url": "http://127.0.0.1:<port>/wire", "calls": [{"name": "...", "arguments": {...}}]}
//
// connects, lists the tools, calls each named one in order, and prints one
// JSON object: {"tools": [names], "results": [{name, isError, text,
// structuredContent}]}. The SDK comes from interop/node_modules, whose
// folder is SDK_ROOT (the SDK's own package folder).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = process.env.SDK_ROOT;
const load = (file) => import(pathToFileURL(join(sdk, "dist", "esm", file)).href);
const { Client } = await load("client/index.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");

const input = JSON.parse(readFileSync(0, "utf8"));
const client = new Client({ name: "openapitest-sdk", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(input.url));
await client.connect(transport);

const listed = await client.listTools();
const results = [];
for (const call of input.calls) {
  const res = await client.callTool({ name: call.name, arguments: call.arguments });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  results.push({ name: call.name, isError: res.isError === true, text, structuredContent: res.structuredContent ?? null });
}
console.log(JSON.stringify({ tools: listed.tools.map((t) => t.name), results }));
await transport.terminateSession().catch(() => {});
await client.close();
