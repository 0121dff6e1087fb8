// The TypeScript SDK 2.x client (@modelcontextprotocol/client, Streamable
// HTTP) against the endpoints of interop/fixtures/Caddyfile, once per
// versionNegotiation mode: `auto` (server/discover first, the 2025
// handshake only on a legacy answer) and pinned to 2026-07-28 (no fallback).
// Both must land on 2026-07-28, the stateless revision. Each mode connects,
// lists and calls tools, and checks every answer; it prints one line per
// check and exits 1 on any mismatch.
//
//	node sdk2-client.mjs mcp <url>       the `mcp` endpoint (REST tools)
//	node sdk2-client.mjs codemode <url>  the `codemode` endpoint (execute over the `mcp` endpoint)

import assert from "node:assert/strict";

import { Client, ProtocolError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

import * as checks from "./checks.mjs";
import { assertError, assertOK, check, text } from "./checks.mjs";

const [section, url] = process.argv.slice(2);
const MODERN = "2026-07-28";
const MODES = [["auto", "auto"], [`pinned ${MODERN}`, { pin: MODERN }]];
const INVALID_PARAMS = -32602;

const rejectsWith = (promise, code) => checks.rejectsWith(promise, ProtocolError, code);

// connect connects a client in one negotiation mode and checks that it
// negotiated the modern era with the server it expects.
async function connect(label, mode, serverName) {
  const client = new Client({ name: "caddy-mcp-interop", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await check(`${label}: server/discover negotiated ${MODERN}, server info, tools capability`, () => {
    assert.equal(client.getNegotiatedProtocolVersion(), MODERN);
    assert.equal(client.getProtocolEra(), "modern");
    assert.equal(client.getServerVersion()?.name, serverName);
    assert.ok(client.getServerCapabilities()?.tools, "no tools capability");
  });
  return client;
}

// listTools lists the tools and checks the 2026-07-28 caching hints; their
// values are configuration (list_ttl, authorization), so only their shape.
async function listTools(label, client) {
  const list = await client.listTools();
  await check(`${label}: tools/list carries caching hints (ttlMs, cacheScope)`, () => {
    assert.ok(Number.isInteger(list.ttlMs) && list.ttlMs >= 0, `ttlMs ${JSON.stringify(list.ttlMs)}`);
    assert.ok(["public", "private"].includes(list.cacheScope), `cacheScope ${JSON.stringify(list.cacheScope)}`);
  });
  return list.tools;
}

async function mcpEndpoint(label, mode) {
  const client = await connect(label, mode, "interop-rest");
  try {
    const tools = await listTools(label, client);
    await check(`${label}: tools/list: every fixture tool, get_product's schema`, () => {
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        "echo_region", "get_product", "json_schema_2020_12_tool", "test_audio_content", "test_embedded_resource",
        "test_error_handling", "test_image_content", "test_simple_text",
      ]);
      const p = tools.find((t) => t.name === "get_product");
      assert.deepEqual(p.inputSchema.required, ["sku"]);
      assert.deepEqual(p.inputSchema.properties.sku, { type: "string", description: "Product SKU, such as TEA-01" });
      assert.equal(p.annotations?.readOnlyHint, true);
    });

    await check(`${label}: a call: the JSON answer as text`, async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: "TEA-01" } });
      assertOK(r);
      assert.deepEqual(JSON.parse(text(r)), { sku: "TEA-01", name: "Green tea, 100 g", price: 8.5, stock: 7 });
    });

    await check(`${label}: schema violation: isError listing the violation`, async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: 42 } });
      assertError(r, "invalid arguments for tool get_product", "/sku: expected string, but got number");
    });

    await check(`${label}: upstream 500 (/error): isError with the status and the body`, async () => {
      const r = await client.callTool({ name: "test_error_handling", arguments: {} });
      assertError(r, "GET /error", "500 Internal Server Error", "This tool intentionally returns an error for testing");
    });

    await check(`${label}: upstream 404: isError with the status`, async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: "NOPE-00" } });
      assertError(r, "GET /products/NOPE-00.json", "404 Not Found");
    });

    await check(`${label}: progress token: the handler's progress notification, then the result`, async () => {
      const progress = [];
      const r = await client.callTool({ name: "get_product", arguments: { sku: "MUG-02" } },
        { onprogress: (p) => progress.push(p) });
      assertOK(r);
      assert.equal(JSON.parse(text(r)).name, "Stoneware mug");
      assert.deepEqual(progress, [{ progress: 0, message: "calling get_product" }]);
    });

    await check(`${label}: mirror_header: x-mcp-header in the schema, and a call whose mirrored header the endpoint checked`, async () => {
      const e = tools.find((t) => t.name === "echo_region");
      assert.equal(e.inputSchema.properties.region["x-mcp-header"], "Region");
      const r = await client.callTool({ name: "echo_region", arguments: { region: "eu" } });
      assertOK(r);
      assert.deepEqual(JSON.parse(text(r)), { region: "eu" });
    });

    await check(`${label}: unknown tool: JSON-RPC error -32602`, async () => {
      await rejectsWith(client.callTool({ name: "no_such_tool", arguments: {} }), INVALID_PARAMS);
    });
  } finally {
    await client.close();
  }
}

async function codemodeEndpoint(label, mode) {
  const client = await connect(label, mode, "interop-code");
  try {
    const tools = await listTools(label, client); // the SDK checks structuredContent against the listed outputSchema
    await check(`${label}: tools/list: one tool, execute, declaring the shop backend`, () => {
      assert.deepEqual(tools.map((t) => t.name), ["execute"]);
      assert.deepEqual(tools[0].inputSchema.required, ["code"]);
      assert.ok(tools[0].description.includes("get_product(input: { /** Product SKU, such as TEA-01 */ sku: string }): Promise<unknown>;"),
        "the description lacks shop.get_product");
    });

    const run = (code, options) => client.callTool({ name: "execute", arguments: { code } }, options);

    await check(`${label}: a call: code calls the mcp endpoint, structuredContent`, async () => {
      const r = await run(`const p = await shop.get_product({ sku: "TEA-01" }); console.log(p.sku); return p.price * p.stock;`);
      assertOK(r);
      assert.deepEqual(r.structuredContent, { result: 59.5, logs: ["TEA-01"], truncated: false });
    });

    await check(`${label}: schema violation of execute (no code): isError naming code`, async () => {
      const r = await client.callTool({ name: "execute", arguments: {} });
      assertError(r, "code");
    });

    await check(`${label}: schema violation through a binding: the backend's message reaches the code`, async () => {
      const r = await run(`try { await shop.get_product({ sku: 42 }); return "no error"; } catch (e) { return e.message; }`);
      assertOK(r);
      const msg = r.structuredContent.result;
      assert.ok(msg.includes("invalid arguments for tool get_product") && msg.includes("/sku"), `message ${JSON.stringify(msg)}`);
    });

    await check(`${label}: upstream 500 (/error) through a binding: an Error with backend, tool and status`, async () => {
      const r = await run(`
try {
  await shop.test_error_handling({});
  return "no error";
} catch (e) {
  return [e instanceof Error, e.backend, e.tool, e.message.includes("500 Internal Server Error")];
}`);
      assertOK(r);
      assert.deepEqual(r.structuredContent.result, [true, "shop", "test_error_handling", true]);
    });

    await check(`${label}: an uncaught upstream error fails the execution: isError`, async () => {
      const r = await run(`await shop.test_error_handling({}); return "unreachable";`);
      assertError(r, "shop.test_error_handling", "500");
    });

    // execute reports no progress of its own (the code's binding calls are
    // not progress steps); a progress token must not disturb the call.
    await check(`${label}: progress token: the call completes, any progress is well formed`, async () => {
      const progress = [];
      const r = await run("return 6 * 7;", { onprogress: (p) => progress.push(p) });
      assertOK(r);
      assert.equal(r.structuredContent.result, 42);
      for (const p of progress) assert.equal(typeof p.progress, "number");
      console.log(`     (${progress.length} progress notifications)`);
    });

    await check(`${label}: unknown tool: JSON-RPC error -32602`, async () => {
      await rejectsWith(client.callTool({ name: "get_product", arguments: { sku: "TEA-01" } }), INVALID_PARAMS);
    });
  } finally {
    await client.close();
  }
}

const sections = { mcp: mcpEndpoint, codemode: codemodeEndpoint };
if (!sections[section] || !url) {
  console.error(`usage: node sdk2-client.mjs ${Object.keys(sections).join("|")} <url>`);
  process.exit(2);
}
for (const [label, mode] of MODES) {
  try {
    await sections[section](label, mode);
  } catch (err) {
    checks.fail(`${section}, ${label}`, err);
  }
}
checks.finish(`sdk 2.x client, ${section}`);
