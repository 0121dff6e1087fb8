// The official TypeScript SDK's client (Streamable HTTP transport) against
// the endpoints of interop/fixtures/Caddyfile. Each section connects, lists
// and calls tools, and checks every answer; it prints one line per check and
// exits 1 on any mismatch.
//
//	node sdk-client.mjs mcp <url>         the `mcp` endpoint (REST tools), in four protocol revisions
//	node sdk-client.mjs codemode <url>    the `codemode` endpoint: the tool, code, errors, four revisions
//	node sdk-client.mjs everything <url>  code calling server-everything and the `mcp` endpoint

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, LATEST_PROTOCOL_VERSION, McpError } from "@modelcontextprotocol/sdk/types.js";

import * as checks from "./checks.mjs";
import { assertError, assertOK, check, text } from "./checks.mjs";

const [section, url] = process.argv.slice(2);
const fixture = (name) => readFileSync(new URL(`../fixtures/rest/${name}`, import.meta.url));

// The protocol revisions before the SDK's latest that the endpoints serve.
const OLDER_VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05"];

// connect connects a client. With version, the initialize request asks for
// that protocol revision instead of the SDK's latest (the SDK has no option
// for it); the SDK then speaks the revision the server answers with.
async function connect(version) {
  const client = new Client({ name: "caddy-mcp-interop", version: "1.0.0" });
  const pin = async (input, init) => {
    if (typeof init?.body === "string") {
      const msg = JSON.parse(init.body);
      if (msg.method === "initialize") {
        msg.params.protocolVersion = version;
        init = { ...init, body: JSON.stringify(msg) };
      }
    }
    return fetch(input, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), version ? { fetch: pin } : undefined);
  await client.connect(transport);
  return { client, transport };
}

// checkOlderVersions connects once per older revision and runs call.
async function checkOlderVersions(call) {
  for (const version of OLDER_VERSIONS) {
    await check(`protocol ${version}: negotiated, tools/list and tools/call`, async () => {
      const { client, transport } = await connect(version);
      try {
        assert.equal(transport.protocolVersion, version);
        await client.listTools();
        await call(client);
      } finally {
        await client.close();
      }
    });
  }
}

const rejectsWith = (promise, code) => checks.rejectsWith(promise, McpError, code);

async function mcpEndpoint() {
  const { client, transport } = await connect();
  try {
    await check("initialize: server info, protocol version, tools capability", () => {
      assert.deepEqual(client.getServerVersion(), { name: "interop-rest", version: "1.0.0" });
      assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
      assert.ok(client.getServerCapabilities()?.tools, "no tools capability");
      assert.equal(client.getInstructions(), "Tools in front of a small fixture REST API.");
      assert.equal(transport.sessionId, undefined, "a stateless endpoint hands out no session id");
    });

    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    await check("tools/list: every fixture tool, with schemas and annotations", () => {
      assert.deepEqual(Object.keys(byName).sort(), [
        "echo_region", "get_product", "json_schema_2020_12_tool", "test_audio_content", "test_embedded_resource",
        "test_error_handling", "test_image_content", "test_simple_text",
      ]);
      const p = byName.get_product;
      assert.equal(p.description, "Get a product by SKU: name, price and stock.");
      assert.deepEqual(p.inputSchema.required, ["sku"]);
      assert.deepEqual(p.inputSchema.properties.sku, { type: "string", description: "Product SKU, such as TEA-01" });
      assert.equal(p.annotations?.readOnlyHint, true);
      const s = byName.json_schema_2020_12_tool.inputSchema;
      assert.equal(s.$schema, "https://json-schema.org/draft/2020-12/schema");
      assert.deepEqual(s.properties.address, { $ref: "#/$defs/address" });
      assert.equal(s.additionalProperties, false);
      assert.equal(s.$defs?.address?.$anchor, "addressDef");
      assert.deepEqual(s.allOf, [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }]);
      assert.deepEqual([s.then, s.else], [{ required: ["phone"] }, { required: ["email"] }]);
    });

    await check("text answer: text content", async () => {
      const r = await client.callTool({ name: "test_simple_text" });
      assertOK(r);
      assert.deepEqual(r.content, [{ type: "text", text: "This is a simple text response for testing." }]);
    });

    await check("image/png answer: image content, the file's bytes", async () => {
      const r = await client.callTool({ name: "test_image_content", arguments: {} });
      assertOK(r);
      assert.deepEqual(r.content, [{ type: "image", mimeType: "image/png", data: fixture("image.png").toString("base64") }]);
    });

    await check("audio/wav answer: audio content, the file's bytes", async () => {
      const r = await client.callTool({ name: "test_audio_content", arguments: {} });
      assertOK(r);
      assert.deepEqual(r.content, [{ type: "audio", mimeType: "audio/wav", data: fixture("audio.wav").toString("base64") }]);
    });

    await check("binary answer: an embedded blob resource", async () => {
      const r = await client.callTool({ name: "test_embedded_resource", arguments: {} });
      assertOK(r);
      assert.equal(r.content.length, 1);
      const { type, resource } = r.content[0];
      assert.equal(type, "resource");
      assert.equal(resource.uri, "caddy-mcp://test_embedded_resource/resource.txt.gz");
      assert.equal(resource.mimeType, "application/gzip");
      assert.equal(gunzipSync(Buffer.from(resource.blob, "base64")).toString(), "This is an embedded resource content.\n");
    });

    await check("upstream 500: isError with the status and the body", async () => {
      const r = await client.callTool({ name: "test_error_handling", arguments: {} });
      assertError(r, "GET /error", "500 Internal Server Error", "This tool intentionally returns an error for testing");
    });

    await check("JSON answer: the JSON as text", async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: "TEA-01" } });
      assertOK(r);
      assert.deepEqual(JSON.parse(text(r)), { sku: "TEA-01", name: "Green tea, 100 g", price: 8.5, stock: 7 });
    });

    await check("progress token: a progress notification, then the result (SSE)", async () => {
      const progress = [];
      const r = await client.callTool({ name: "get_product", arguments: { sku: "MUG-02" } }, undefined,
        { onprogress: (p) => progress.push(p) });
      assertOK(r);
      assert.equal(JSON.parse(text(r)).name, "Stoneware mug");
      assert.ok(progress.length >= 1, "no progress notification");
      assert.equal(progress[0].message, "calling get_product");
    });

    await check("schema violation: isError listing the violation, no upstream call", async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: 42 } });
      assertError(r, "invalid arguments for tool get_product", "/sku", "expected string, but got number");
    });

    await check("missing required argument: isError naming it", async () => {
      const r = await client.callTool({ name: "get_product", arguments: {} });
      assertError(r, "invalid arguments for tool get_product", "missing properties: 'sku'");
    });

    await check("upstream 404: isError with the status", async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: "NOPE-00" } });
      assertError(r, "GET /products/NOPE-00.json", "404 Not Found");
    });

    await check("a path value of .. is refused", async () => {
      const r = await client.callTool({ name: "get_product", arguments: { sku: ".." } });
      assertError(r, "invalid arguments for tool get_product");
    });

    await check("JSON Schema 2020-12: $ref into $defs validates, the body reaches the upstream", async () => {
      const args = { name: "Ada", address: { street: "12 St James's Square", city: "London" }, email: "ada@example.com" };
      const r = await client.callTool({ name: "json_schema_2020_12_tool", arguments: args });
      assertOK(r);
      assert.deepEqual(JSON.parse(text(r)), args);
    });

    await check("JSON Schema 2020-12: if/then/else, phone wanted when contactMethod is phone", async () => {
      const r = await client.callTool({ name: "json_schema_2020_12_tool", arguments: { contactMethod: "phone", email: "ada@example.com" } });
      assertError(r, "invalid arguments for tool json_schema_2020_12_tool", "phone");
    });

    await check("JSON Schema 2020-12: additionalProperties false and $ref violations", async () => {
      const r = await client.callTool({ name: "json_schema_2020_12_tool", arguments: { nickname: "A", address: { city: 7 } } });
      assertError(r, "invalid arguments for tool json_schema_2020_12_tool", "nickname", "/address/city");
    });

    await check("unknown tool: JSON-RPC error -32602", async () => {
      await rejectsWith(client.callTool({ name: "no_such_tool", arguments: {} }), ErrorCode.InvalidParams);
    });

    await check("ping", async () => {
      assert.deepEqual(await client.ping(), {});
    });
  } finally {
    await client.close();
  }
  await checkOlderVersions(async (client) => {
    const r = await client.callTool({ name: "get_product", arguments: { sku: "TEA-01" } });
    assertOK(r);
    assert.equal(JSON.parse(text(r)).stock, 7);
  });
}

async function codemodeEndpoint() {
  const { client } = await connect();
  try {
    await check("initialize: server info", () => {
      assert.equal(client.getServerVersion()?.name, "interop-code");
      assert.ok(client.getServerCapabilities()?.tools, "no tools capability");
    });

    const { tools } = await client.listTools();
    await check("tools/list: one tool, execute, declaring both backends", () => {
      assert.deepEqual(tools.map((t) => t.name), ["execute"]);
      const [tool] = tools;
      assert.deepEqual(tool.inputSchema.required, ["code"]);
      assert.equal(tool.outputSchema?.type, "object");
      for (const want of [
        "declare const shop: {",
        "get_product(input: { /** Product SKU, such as TEA-01 */ sku: string }): Promise<unknown>;",
        "declare const everything: {",
        "echo(input: { /** Message to echo */ message: string }): Promise<unknown>;",
      ]) {
        assert.ok(tool.description.includes(want), `the description lacks ${JSON.stringify(want)}`);
      }
      assert.ok(!tool.description.includes("unavailable"), "the description says a backend is unavailable");
    });

    const run = (code) => client.callTool({ name: "execute", arguments: { code } });

    await check("JavaScript: a call, a log line, a returned value (structuredContent)", async () => {
      const r = await run(`
const p = await shop.get_product({ sku: "TEA-01" });
console.log("stock", p.stock);
return { name: p.name, value: p.price * p.stock };`);
      assertOK(r);
      assert.deepEqual(r.structuredContent, { result: { name: "Green tea, 100 g", value: 59.5 }, logs: ["stock 7"], truncated: false });
    });

    await check("TypeScript: types are stripped, calls run in parallel", async () => {
      const r = await run(`
interface Product { sku: string; name: string; price: number; stock: number }
const skus: string[] = ["TEA-01", "MUG-02"];
const all: Product[] = await Promise.all(skus.map((sku) => shop.get_product({ sku })));
return all.filter((p: Product) => p.stock > 0).map((p) => p.sku);`);
      assertOK(r);
      assert.deepEqual(r.structuredContent.result, ["TEA-01"]);
    });

    await check("upstream error: the call throws an Error the code catches", async () => {
      const r = await run(`
try {
  await shop.get_product({ sku: "NOPE-00" });
  return "no error";
} catch (e) {
  return [e instanceof Error, e.backend, e.tool, e.message.includes("404 Not Found")];
}`);
      assertOK(r);
      assert.deepEqual(r.structuredContent.result, [true, "shop", "get_product", true]);
    });

    await check("schema violation through a binding: the backend's message reaches the code", async () => {
      const r = await run(`
try {
  await shop.get_product({ sku: 42 });
  return "no error";
} catch (e) {
  return e.message;
}`);
      assertOK(r);
      const msg = r.structuredContent.result;
      assert.ok(msg.includes("invalid arguments for tool get_product") && msg.includes("/sku"), `message ${JSON.stringify(msg)}`);
    });

    await check("an uncaught error fails the execution: isError", async () => {
      const r = await run(`await shop.get_product({ sku: "NOPE-00" }); return "unreachable";`);
      assertError(r, "shop.get_product", "404");
    });

    await check("a syntax error: isError with the line of the model's code", async () => {
      const r = await run("const a = 1;\nconst = 2;");
      assertError(r, "SyntaxError", "line 2, column 7");
    });

    await check("missing code argument: a schema error, not a crash", async () => {
      const r = await client.callTool({ name: "execute", arguments: {} });
      assertError(r, "code");
    });

    await check("unknown tool: JSON-RPC error -32602", async () => {
      await rejectsWith(client.callTool({ name: "test_simple_text", arguments: {} }), ErrorCode.InvalidParams);
    });
  } finally {
    await client.close();
  }
  await checkOlderVersions(async (client) => {
    const r = await client.callTool({ name: "execute", arguments: { code: 'return (await shop.get_product({ sku: "TEA-01" })).stock;' } });
    assertOK(r);
    assert.equal(r.structuredContent.result, 7);
  });
}

// everything: a codemode endpoint whose backends are server-everything,
// which no one here wrote, and the `mcp` endpoint.
async function everythingBackends() {
  const { client } = await connect();
  try {
    await client.listTools(); // the SDK checks structuredContent against the listed outputSchema
    const run = (code) => client.callTool({ name: "execute", arguments: { code } });

    await check("code calls tools of both backends and combines the answers", async () => {
      const r = await run(`
const [echo, sum, product] = await Promise.all([
  everything.echo({ message: "hello from codemode" }),
  everything.get_sum({ a: 19, b: 23 }),
  shop.get_product({ sku: "TEA-01" }),
]);
const n = Number(/ is (-?[0-9.]+)\\.$/.exec(sum)[1]);
console.log("sum says:", sum);
return { echo, n, total: n + product.stock };`);
      assertOK(r);
      assert.deepEqual(r.structuredContent, {
        result: { echo: "Echo: hello from codemode", n: 42, total: 49 },
        logs: ["sum says: The sum of 19 and 23 is 42."],
        truncated: false,
      });
    });

    await check("TypeScript chaining: a product's price goes into server-everything", async () => {
      const r = await run(`
const p: { name: string; price: number } = await shop.get_product({ sku: "MUG-02" });
const total: string = await everything.get_sum({ a: p.price, b: 0.5 });
return await everything.echo({ message: \`\${p.name}: \${total}\` });`);
      assertOK(r);
      assert.equal(r.structuredContent.result, "Echo: Stoneware mug: The sum of 12.25 and 0.5 is 12.75.");
    });

    await check("structured content from server-everything is a typed value", async () => {
      const r = await run(`const w = await everything.get_structured_content({ location: "Chicago" }); return typeof w.humidity;`);
      assertOK(r);
      assert.equal(r.structuredContent.result, "number");
    });

    await check("image content from server-everything comes back as the content array", async () => {
      const r = await run(`
const content = await everything.get_tiny_image({});
return content.map((c) => c.type === "image" ? [c.type, c.mimeType] : [c.type]);`);
      assertOK(r);
      assert.deepEqual(r.structuredContent.result, [["text"], ["image", "image/png"], ["text"]]);
    });

    await check("a failing server-everything call throws an Error naming backend and tool", async () => {
      const r = await run(`
try {
  await everything.get_sum({ a: "nineteen", b: 23 });
  return "no error";
} catch (e) {
  return [e instanceof Error, e.backend, e.tool];
}`);
      assertOK(r);
      assert.deepEqual(r.structuredContent.result, [true, "everything", "get_sum"]);
    });
  } finally {
    await client.close();
  }
}

const sections = { mcp: mcpEndpoint, codemode: codemodeEndpoint, everything: everythingBackends };
if (!sections[section] || !url) {
  console.error(`usage: node sdk-client.mjs ${Object.keys(sections).join("|")} <url>`);
  process.exit(2);
}
try {
  await sections[section]();
} catch (err) {
  checks.fail(section, err);
}
checks.finish(`sdk client, ${section}`);
