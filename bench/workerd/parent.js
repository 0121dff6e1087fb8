// The parent worker: each POST carries a script, which runs in a fresh
// dynamic worker through @cloudflare/codemode's executor. The tools are
// functions of this worker answering from memory (the same JSON the
// bench's Caddy answers with), so that what is measured is the sandbox,
// not the tools' transport.
import { DynamicWorkerExecutor } from "index.js";

const order = { id: "1001", customer_id: "cus_001", shipment_id: "shp_001", total: 164.56, currency: "EUR", status: "delivered" };
const customer = { id: "cus_001", name: "Mateo García", email: "mateo@example.com" };
const shipment = { id: "shp_001", carrier: "DHL", status: "delivered" };

// providers are the tools of one request; hold waits in the bench's
// holder (the service HOLD), which knows so when an execution is live.
const providers = (env) => [
  {
    name: "shop",
    fns: {
      get_order: async () => order,
      get_customer: async () => customer,
      get_shipment: async () => shipment,
    },
  },
  {
    name: "slow",
    fns: {
      hold: async (args) => {
        const res = await env.HOLD.fetch("http://hold/hold/" + encodeURIComponent(String(args?.ms)));
        if (!res.ok) throw new Error("hold: " + res.status + " " + (await res.text()));
        return await res.json();
      },
    },
  },
];

export default {
  async fetch(request, env) {
    if (request.method !== "POST") {
      return new Response("POST a script to run\n", { status: 405 });
    }
    const code = await request.text();
    const executor = new DynamicWorkerExecutor({ loader: env.LOADER, timeout: 30000 });
    const out = await executor.execute(code, providers(env));
    return Response.json(out, { status: out.error ? 500 : 200 });
  },
};
