// A real OAuth 2.1 authorization server for the `oauth` interop check:
// oidc-provider (panva), configured as an MCP client meets it in the wild.
// interop/run.sh starts it; clients/oauth-client.mjs drives it.
//
// Environment:
//
//	OAUTH_PORT             the port to listen on, on 127.0.0.1; the issuer is http://127.0.0.1:<port>
//	MCP_RESOURCE           the resource URL of the `mcp` endpoint (JWT access tokens)
//	CODE_RESOURCE          the resource URL of the `codemode` endpoint (JWT access tokens)
//	OPAQUE_RESOURCE        the resource URL of the `mcp` endpoint that introspects (opaque tokens)
//	INTROSPECT_SECRET      the secret of client `caddy` (Caddy's introspection credentials)
//	SERVICE_SECRET         the secret of client `service` (client credentials grant)
//
// What it offers: resource indicators (RFC 8707) with one resource server
// per resource above, authorization code with PKCE, client credentials,
// dynamic client registration (RFC 7591), introspection (RFC 7662) and
// revocation (RFC 7009), and oidc-provider's development login and consent
// pages (any login name, any password; the name is the token's sub).

import { generateKeyPairSync, randomBytes } from "node:crypto";

import Provider from "oidc-provider";

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`provider.mjs: ${name} is not set`);
    process.exit(2);
  }
  return v;
};

const port = Number(env("OAUTH_PORT"));
const issuer = `http://127.0.0.1:${port}`;

// The scopes each resource server grants; a requested scope outside them
// is left out of that resource's access token.
const resourceServers = {
  [env("MCP_RESOURCE")]: { scope: "mcp orders:read orders:write", accessTokenFormat: "jwt" },
  [env("CODE_RESOURCE")]: { scope: "mcp", accessTokenFormat: "jwt" },
  [env("OPAQUE_RESOURCE")]: { scope: "mcp", accessTokenFormat: "opaque" },
};
const scopes = ["openid", ...new Set(Object.values(resourceServers).flatMap((s) => s.scope.split(" ")))];

// A fresh signing key for each run.
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: "jwk" }), kid: "interop", use: "sig", alg: "RS256" };

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString("base64url")] },
  scopes,
  clients: [
    {
      // Caddy authenticates to the introspection endpoint as this client.
      client_id: "caddy",
      client_secret: env("INTROSPECT_SECRET"),
      grant_types: [],
      response_types: [],
      redirect_uris: [],
    },
    {
      // A machine client: tokens with the client credentials grant.
      client_id: "service",
      client_secret: env("SERVICE_SECRET"),
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
    },
  ],
  // The TypeScript SDK registers with the scope of the first challenge
  // (`mcp`), and oidc-provider holds a client to its registered scope, so
  // stepping up to orders:write would be invalid_scope. RFC 7591 lets the
  // server replace what a client asks to register: every client may ask
  // for every scope here, and consent decides what it gets.
  extraClientMetadata: {
    properties: ["scope"],
    validator(ctx, key, value, metadata) {
      metadata.scope = scopes.join(" ");
    },
  },
  responseTypes: ["code"],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // A request without resource gets no access token for any of them.
      defaultResource: () => undefined,
      // The token endpoint issues for the resource granted at authorization.
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, resource) {
        const server = resourceServers[resource];
        if (!server) {
          throw new Provider.errors.InvalidTarget(`unknown resource ${resource}`);
        }
        return {
          ...server,
          audience: resource,
          accessTokenTTL: 600,
          ...(server.accessTokenFormat === "jwt" ? { jwt: { sign: { alg: "RS256" } } } : {}),
        };
      },
    },
  },
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    ClientCredentials: 600,
    Grant: 3600,
    IdToken: 600,
    Interaction: 600,
    Session: 3600,
  },
});

provider.on("server_error", (ctx, err) => console.error("server_error", err));

provider.listen(port, "127.0.0.1", () => {
  console.log(`oidc-provider ${issuer}`);
});
