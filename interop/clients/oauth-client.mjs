// The official TypeScript SDK client's own OAuth support against the
// endpoints of interop/fixtures/oauth.Caddyfile, with oidc-provider
// (interop/oauth/provider.mjs) as the authorization server. The SDK reads
// the 401, the resource metadata and the authorization server's metadata,
// registers itself, and asks for authorization; the provider below plays
// the user at oidc-provider's login and consent pages with fetch (no
// browser) and hands the code back. Prints one line per check and exits 1
// on any failure.
//
//	node oauth-client.mjs <caddy base url> <issuer>
//
// SERVICE_SECRET in the environment: the secret of provider.mjs's client
// `service` (client credentials grant).

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { assertOK, check, finish, text } from "./checks.mjs";

const [base, issuer] = process.argv.slice(2);
const serviceSecret = process.env.SERVICE_SECRET;
if (!base || !issuer || !serviceSecret) {
  console.error("usage: SERVICE_SECRET=... node oauth-client.mjs <caddy base url> <issuer>");
  process.exit(2);
}
const mcpURL = new URL("/mcp", base);
const codeURL = new URL("/code", base);
const opaqueURL = new URL("/opaque", base);
// Where the authorization server sends the browser back. Nothing listens
// there: the code is read from the redirect's Location.
const REDIRECT_URI = "http://127.0.0.1:9/callback";


// claims decodes a JWT's payload (the signature is Caddy's business).
function claims(token) {
  const parts = token.split(".");
  assert.equal(parts.length, 3, "the access token is not a JWT");
  return JSON.parse(Buffer.from(parts[1], "base64url").toString());
}

// CookieJar keeps the authorization server's cookies by name (one server,
// so paths are not told apart).
class CookieJar {
  #cookies = new Map();

  store(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.trim().split("=");
        return (k.toLowerCase() === "expires" && Date.parse(v) <= Date.now()) || (k.toLowerCase() === "max-age" && Number(v) <= 0);
      });
      if (expired || value === "") {
        this.#cookies.delete(name);
      } else {
        this.#cookies.set(name, value);
      }
    }
  }

  header() {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

// formOf reads the one form of an oidc-provider interaction page: its
// action and its input fields with their values.
function formOf(html) {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  assert.ok(form, `no form on the interaction page: ${html.slice(0, 200)}`);
  const fields = {};
  for (const input of form[2].matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    if (name) fields[name] = /value="([^"]*)"/.exec(input[0])?.[1] ?? "";
  }
  return { action: form[1].replaceAll("&amp;", "&"), fields };
}

// authorizeHeadless is the user agent: it opens the authorization URL,
// follows redirects, signs in as login on the login page and confirms the
// consent page, until the server redirects to the client's redirect URI.
// It returns that redirect's query and the pages it went through.
async function authorizeHeadless(authorizationURL, jar, login) {
  let url = new URL(authorizationURL);
  let init = { method: "GET" };
  const pages = [];
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, { ...init, redirect: "manual", headers: { ...init.headers, cookie: jar.header() } });
    jar.store(res);
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const next = new URL(res.headers.get("location"), url);
      if (next.href.startsWith(REDIRECT_URI)) {
        return { params: next.searchParams, pages };
      }
      url = next;
      init = { method: "GET" };
      continue;
    }
    const html = await res.text();
    assert.equal(res.status, 200, `${url.pathname}: HTTP ${res.status}: ${html.slice(0, 300)}`);
    const { action, fields } = formOf(html);
    if ("login" in fields) {
      pages.push("login");
      fields.login = login;
      fields.password = "any password";
    } else {
      pages.push("consent");
    }
    url = new URL(action, url);
    init = {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    };
  }
  throw new Error("the authorization server never redirected back to the client");
}

// HeadlessProvider is an OAuthClientProvider for a public client (PKCE, no
// secret) that registers itself; redirectToAuthorization runs the user's
// part in authorizeHeadless and keeps the code for transport.finishAuth.
class HeadlessProvider {
  constructor(login) {
    this.login = login;
    this.jar = new CookieJar();
    this.registrations = [];
    this.authorizations = []; // { url, pages, params }
    this._state = undefined;
  }

  get redirectUrl() {
    return REDIRECT_URI;
  }

  get clientMetadata() {
    return {
      client_name: "caddy-mcp interop (TypeScript SDK)",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state() {
    this._state = randomBytes(16).toString("base64url");
    return this._state;
  }

  clientInformation() {
    return this._client;
  }

  saveClientInformation(info) {
    this.registrations.push(info);
    this._client = info;
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    this._tokens = tokens;
  }

  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }

  codeVerifier() {
    return this._verifier;
  }

  async redirectToAuthorization(url) {
    const { params, pages } = await authorizeHeadless(url, this.jar, this.login);
    this.authorizations.push({ url: new URL(url), pages, params });
  }

  // code is the code of the last authorization, checked: the state sent,
  // the issuer (RFC 9207), no error.
  code() {
    const last = this.authorizations.at(-1);
    assert.ok(last, "the SDK never asked for authorization");
    const { params } = last;
    assert.equal(params.get("error"), null, `authorization error: ${params.get("error")}: ${params.get("error_description")}`);
    assert.equal(params.get("state"), this._state, "state");
    assert.equal(params.get("iss"), issuer, "iss of the authorization response");
    assert.ok(params.get("code"), "no code");
    return params.get("code");
  }
}

function newClient() {
  return new Client({ name: "caddy-mcp-interop-oauth", version: "1.0.0" });
}

// connectAuthorized connects as login the way an application does: the
// first connect fails with UnauthorizedError once the user has been sent to
// authorize; the application then hands the code to finishAuth and
// connects again.
async function connectAuthorized(url, provider, opts = {}) {
  const first = new StreamableHTTPClientTransport(url, { ...opts, authProvider: provider });
  await assert.rejects(newClient().connect(first), UnauthorizedError, "connect without a token");
  await first.finishAuth(provider.code());
  await first.close();
  const transport = new StreamableHTTPClientTransport(url, { ...opts, authProvider: provider });
  const client = newClient();
  await client.connect(transport);
  return { client, transport };
}

// recorder is a fetch for the transport that keeps the status and
// WWW-Authenticate of every answer from url.
function recorder(url) {
  const answers = [];
  const fetchFn = async (input, init) => {
    const res = await fetch(input, init);
    if (String(input) === url.href) {
      answers.push({ status: res.status, challenge: res.headers.get("www-authenticate") });
    }
    return res;
  };
  return { fetchFn, answers };
}

// post sends one JSON-RPC request with a bearer token, without the SDK.
async function post(url, token, body = { jsonrpc: "2.0", id: 1, method: "tools/list" }) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify(body),
  });
  await res.text();
  return res;
}

let asMetadata;

await check("resource metadata (RFC 9728) names the resource and oidc-provider; oidc-provider's metadata offers what the SDK needs", async () => {
  const res = await fetch(new URL("/.well-known/oauth-protected-resource/mcp", base));
  assert.equal(res.status, 200);
  const doc = await res.json();
  assert.equal(doc.resource, mcpURL.href);
  assert.deepEqual(doc.authorization_servers, [issuer]);
  assert.deepEqual(doc.scopes_supported, ["mcp", "orders:read", "orders:write"]);
  asMetadata = await (await fetch(new URL("/.well-known/oauth-authorization-server", issuer))).json();
  assert.equal(asMetadata.issuer, issuer);
  assert.ok(asMetadata.registration_endpoint, "no registration_endpoint");
  assert.deepEqual(asMetadata.code_challenge_methods_supported, ["S256"]);
});

await check("no token: 401 with WWW-Authenticate naming scope mcp and the metadata URL", async () => {
  const res = await fetch(mcpURL, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  assert.equal(res.status, 401);
  assert.equal(
    res.headers.get("www-authenticate"),
    `Bearer scope="mcp", resource_metadata="${new URL("/.well-known/oauth-protected-resource/mcp", base).href}"`,
  );
});

// --- mcp endpoint: authorization code with PKCE, dynamic registration, step-up
const alice = new HeadlessProvider("alice");
const shopAnswers = recorder(mcpURL);
let shop;

await check("mcp: the SDK registers (DCR), sends alice through login and consent, and gets a token for the resource", async () => {
  shop = await connectAuthorized(mcpURL, alice, { fetch: shopAnswers.fetchFn });
  assert.equal(alice.registrations.length, 1, "registrations");
  // Registered with the challenge's scope; provider.mjs widens it (see there).
  assert.equal(alice.registrations[0].scope, "openid mcp orders:read orders:write");
  const { url, pages } = alice.authorizations[0];
  assert.equal(url.origin + url.pathname, asMetadata.authorization_endpoint);
  assert.equal(url.searchParams.get("resource"), mcpURL.href, "resource indicator (RFC 8707)");
  assert.equal(url.searchParams.get("scope"), "mcp", "scope of the challenge");
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.equal(url.searchParams.get("client_id"), alice.registrations[0].client_id);
  assert.deepEqual(pages, ["login", "consent"]);
  const c = claims(alice.tokens().access_token);
  assert.equal(c.iss, issuer);
  assert.equal(c.aud, mcpURL.href);
  assert.equal(c.sub, "alice");
  assert.equal(c.scope, "mcp");
});

await check("mcp: tools/list leaves out place_order (needs orders:write)", async () => {
  const { tools } = await shop.client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ["get_product", "whoami"]);
});

await check("mcp: get_product answers with the product", async () => {
  const r = await shop.client.callTool({ name: "get_product", arguments: { sku: "TEA-01" } });
  assertOK(r);
  assert.deepEqual(JSON.parse(text(r)), { sku: "TEA-01", name: "Green tea, 100 g", price: 8.5, stock: 7 });
});

await check("mcp: whoami: the upstream got X-User = the token's sub ({http.auth.user.id})", async () => {
  const r = await shop.client.callTool({ name: "whoami", arguments: {} });
  assertOK(r);
  assert.equal(text(r), "alice");
});

await check("mcp: place_order: 403 insufficient_scope; the SDK asks for mcp orders:write itself, consent only", async () => {
  await assert.rejects(
    shop.client.callTool({ name: "place_order", arguments: { sku: "TEA-01", quantity: 2 } }),
    UnauthorizedError,
  );
  assert.deepEqual(shopAnswers.answers.at(-1), {
    status: 403,
    challenge: `Bearer error="insufficient_scope", error_description="the token lacks a scope this request needs", scope="mcp orders:write", resource_metadata="${new URL("/.well-known/oauth-protected-resource/mcp", base).href}"`,
  });
  assert.equal(alice.authorizations.length, 2, "authorizations");
  const { url, pages } = alice.authorizations[1];
  assert.equal(url.searchParams.get("scope"), "mcp orders:write");
  assert.equal(url.searchParams.get("resource"), mcpURL.href);
  assert.deepEqual(pages, ["consent"], "alice is signed in already: only the new scope is asked for");
});

await check("mcp: after finishAuth, the token has orders:write and place_order runs", async () => {
  await shop.transport.finishAuth(alice.code());
  assert.equal(claims(alice.tokens().access_token).scope, "mcp orders:write");
  const r = await shop.client.callTool({ name: "place_order", arguments: { sku: "TEA-01", quantity: 2 } });
  assertOK(r);
  assert.deepEqual(JSON.parse(text(r)), { sku: "TEA-01", quantity: 2 });
  const { tools } = await shop.client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), ["get_product", "place_order", "whoami"]);
  assert.equal(alice.registrations.length, 1, "no second registration");
});
await shop?.client.close();

// --- codemode endpoint
await check("codemode: the SDK authorizes bob for /code; tools/list and an execute call", async () => {
  const bob = new HeadlessProvider("bob");
  const { client } = await connectAuthorized(codeURL, bob);
  try {
    assert.equal(bob.authorizations[0].url.searchParams.get("resource"), codeURL.href);
    assert.deepEqual(bob.authorizations[0].pages, ["login", "consent"]);
    const c = claims(bob.tokens().access_token);
    assert.equal(c.aud, codeURL.href);
    assert.equal(c.sub, "bob");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["execute"]);
    const r = await client.callTool({
      name: "execute",
      arguments: { code: 'const p = await shop.get_product({ sku: "MUG-02" }); return [p.name, p.price];' },
    });
    assertOK(r);
    assert.deepEqual(r.structuredContent.result, ["Stoneware mug", 12.25]);
  } finally {
    await client.close();
  }
});

// --- client credentials (the SDK's ClientCredentialsProvider)
function serviceProvider() {
  return new ClientCredentialsProvider({ clientId: "service", clientSecret: serviceSecret, scope: "mcp", expectedIssuer: issuer });
}

let codeToken;
await check("client credentials: the SDK's ClientCredentialsProvider gets a token itself; whoami sees the client", async () => {
  const service = serviceProvider();
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(mcpURL, { authProvider: service }));
  try {
    const c = claims(service.tokens().access_token);
    assert.equal(c.aud, mcpURL.href);
    assert.equal(c.scope, "mcp");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["get_product", "whoami"]);
    const r = await client.callTool({ name: "whoami", arguments: {} });
    assertOK(r);
    assert.equal(c.sub, "service");
    assert.equal(text(r), "service");
  } finally {
    await client.close();
  }
});

await check("a token for /code is refused at /mcp (401 invalid_token), accepted at /code", async () => {
  const service = serviceProvider();
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(codeURL, { authProvider: service }));
  await client.close();
  codeToken = service.tokens().access_token;
  assert.equal(claims(codeToken).aud, codeURL.href);
  const refused = await post(mcpURL, codeToken);
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get("www-authenticate"), /^Bearer error="invalid_token"/);
  assert.equal((await post(codeURL, codeToken)).status, 200);
});

await check("a token without the required scope mcp: 403 insufficient_scope naming mcp", async () => {
  // Straight from the token endpoint: the SDK's ClientCredentialsProvider
  // always asks for the scope it was built with.
  const res = await fetch(asMetadata.token_endpoint, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`service:${serviceSecret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials", resource: mcpURL.href, scope: "orders:read" }).toString(),
  });
  assert.equal(res.status, 200, "token endpoint");
  const { access_token: token } = await res.json();
  assert.equal(claims(token).scope, "orders:read");
  const refused = await post(mcpURL, token);
  assert.equal(refused.status, 403);
  assert.match(refused.headers.get("www-authenticate"), /^Bearer error="insufficient_scope", .*scope="mcp"/);
});

// --- introspection (opaque tokens) and revocation
await check("opaque token via introspection works; revoked at oidc-provider, refused once cache_ttl (1s) has passed", async () => {
  const service = serviceProvider();
  const client = newClient();
  const transport = new StreamableHTTPClientTransport(opaqueURL, { authProvider: service });
  await client.connect(transport);
  try {
    const token = service.tokens().access_token;
    assert.equal(token.split(".").length, 1, "want an opaque token");
    const r = await client.callTool({ name: "get_product", arguments: { sku: "MUG-02" } });
    assertOK(r);
    assert.equal(JSON.parse(text(r)).name, "Stoneware mug");
    assert.equal((await post(opaqueURL, token)).status, 200);

    const revoked = await fetch(asMetadata.revocation_endpoint, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`service:${serviceSecret}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
    });
    assert.equal(revoked.status, 200, "revocation");
    await new Promise((done) => setTimeout(done, 1500));
    const refused = await post(opaqueURL, token);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get("www-authenticate"), /^Bearer error="invalid_token"/);

    // The SDK, on that 401, gets a new token by itself and carries on.
    const again = await client.callTool({ name: "get_product", arguments: { sku: "TEA-01" } });
    assertOK(again);
    assert.notEqual(service.tokens().access_token, token, "a new token");
  } finally {
    await client.close();
  }
});

await check("a JWT for /mcp is refused at the introspecting /opaque", async () => {
  const res = await post(opaqueURL, alice.tokens().access_token);
  assert.equal(res.status, 401);
  assert.match(res.headers.get("www-authenticate"), /^Bearer error="invalid_token"/);
});

finish("oauth");
