// Package openapi turns an OpenAPI document into tool definitions: one
// tool per operation, each an upstream.Definition with the name,
// description, annotations and schemas a tool list shows.
//
// It loads OpenAPI 3.0 and 3.1 and Swagger 2.0, JSON or YAML, with
// kin-openapi. A document comes as bytes (Load) or from a URL fetched once
// (Fetch). References inside the document are resolved; references to
// other files or URLs are refused, never fetched. A schema that refers to
// itself is followed once: where the cycle would start again it becomes
// the unconstrained schema {}, so every generated schema is finite (see
// schema.go for the other bounds).
//
// Document.Tools maps the operations that a Curation selects and reports
// those it could not map, each with the reason, so that the caller can log
// how many tools a document gave. Everything here is free of Caddy: the
// caddymcp package reads files, applies its own upstream URL and headers,
// and makes the tools ordinary tools.
package openapi
