// The test page's script, bundled by the Go test with esbuild for the
// browser: the TypeScript SDK's client over its Streamable HTTP transport,
// which in a page is the browser's own fetch, with its CORS rules. The page's
// query names the endpoint, the protocol negotiation mode, the tool to call
// and its arguments; what happened ends up in window.outcome, for the
// driver to read.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const params = new URLSearchParams(location.search);

async function run() {
  const mode = params.get("mode") || "legacy";
  const outcome = { origin: location.origin, mode, steps: [] };
  let client;
  try {
    const endpoint = params.get("endpoint");
    const tool = params.get("tool");
    if (!endpoint || !tool) {
      throw new Error("the page's query needs endpoint and tool");
    }
    const args = JSON.parse(params.get("args") || "{}");
    client = new Client(
      { name: "caddy-mcp-browsertest", version: "1" },
      { versionNegotiation: { mode: mode === "legacy" || mode === "auto" ? mode : { pin: mode } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(endpoint));
    await client.connect(transport, { timeout: 20000 });
    outcome.steps.push("connected");
    outcome.protocolVersion = transport.protocolVersion ?? null;
    outcome.server = client.getServerVersion() ?? null;
    const list = await client.listTools(undefined, { timeout: 20000 });
    outcome.steps.push("listed");
    outcome.tools = list.tools.map((t) => t.name).sort();
    const result = await client.callTool({ name: tool, arguments: args }, { timeout: 20000 });
    outcome.steps.push("called");
    outcome.result = result;
  } catch (e) {
    outcome.error = { name: e?.name ?? null, message: String(e?.message ?? e) };
  } finally {
    try {
      await client?.close();
    } catch {
      // The outcome is what the test reads; a failed close adds nothing.
    }
  }
  return outcome;
}

run().then((outcome) => {
  window.outcome = outcome;
});
