// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli) against
// both endpoints: tools/list and tools/call, as a user would run it
// (`mcp-inspector-cli --cli <url> --transport http --method ...`). It prints
// one line per check and exits 1 on any mismatch.
//
//	node inspector-cli.mjs <mcp-url> <codemode-url>
//
// The CLI reads ../package.json relative to its working directory for its
// client name, so it runs from this folder (interop/ has a package.json).
// --transport http is needed: without it, a URL that does not end in /mcp
// is taken for the old SSE transport.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { check, finish, text } from "./checks.mjs";

const [mcpURL, codeURL] = process.argv.slice(2);
const here = fileURLToPath(new URL(".", import.meta.url));
const cli = fileURLToPath(new URL("../node_modules/.bin/mcp-inspector-cli", import.meta.url));


// inspect runs the CLI and returns its JSON output.
async function inspect(url, ...args) {
  const argv = ["--cli", url, "--transport", "http", ...args];
  let stdout;
  try {
    ({ stdout } = await promisify(execFile)(cli, argv, { cwd: here, timeout: 60_000 }));
  } catch (err) {
    throw new Error(`mcp-inspector-cli ${argv.join(" ")}: ${err.message}\n${err.stderr ?? ""}`);
  }
  try {
    return JSON.parse(stdout);
  } catch {
    throw new Error(`mcp-inspector-cli ${argv.join(" ")} printed no JSON:\n${stdout}`);
  }
}

if (!mcpURL || !codeURL) {
  console.error("usage: node inspector-cli.mjs <mcp-url> <codemode-url>");
  process.exit(2);
}

await check("mcp: tools/list", async () => {
  const res = await inspect(mcpURL, "--method", "tools/list");
  const names = res.tools.map((t) => t.name);
  for (const want of ["get_product", "test_simple_text", "test_image_content", "json_schema_2020_12_tool"]) {
    assert.ok(names.includes(want), `tools ${names} lack ${want}`);
  }
});

await check("mcp: tools/call with an argument", async () => {
  const res = await inspect(mcpURL, "--method", "tools/call", "--tool-name", "get_product", "--tool-arg", "sku=TEA-01");
  assert.ok(!res.isError, text(res));
  assert.equal(JSON.parse(text(res)).name, "Green tea, 100 g");
});

await check("mcp: tools/call, an image", async () => {
  const res = await inspect(mcpURL, "--method", "tools/call", "--tool-name", "test_image_content");
  assert.equal(res.content[0].type, "image");
  assert.equal(res.content[0].mimeType, "image/png");
});

await check("mcp: tools/call, an upstream error", async () => {
  const res = await inspect(mcpURL, "--method", "tools/call", "--tool-name", "get_product", "--tool-arg", "sku=NOPE-00");
  assert.equal(res.isError, true);
  assert.ok(text(res).includes("404 Not Found"), text(res));
});

await check("codemode: tools/list", async () => {
  const res = await inspect(codeURL, "--method", "tools/list");
  assert.deepEqual(res.tools.map((t) => t.name), ["execute"]);
  assert.ok(res.tools[0].description.includes("declare const shop: {"), "the description does not declare shop");
});

await check("codemode: tools/call execute", async () => {
  const code = 'const p = await shop.get_product({ sku: "TEA-01" }); return p.stock * 2;';
  const res = await inspect(codeURL, "--method", "tools/call", "--tool-name", "execute", "--tool-arg", `code=${code}`);
  assert.ok(!res.isError, text(res));
  assert.equal(res.structuredContent.result, 14);
});

finish("inspector cli");
