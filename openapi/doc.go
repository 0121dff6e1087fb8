// Package openapi turns an OpenAPI document into tool definitions: one
// tool per operation, each an upstream.Definition (and the Operation
// built from it) with the name, description, annotations and schemas a
// tool list shows.
//
// A caller reads a file itself, or fetches a URL once with Fetch, then:
//
//	doc, err := openapi.Load(data)
//	res, err := doc.Tools(openapi.Curation{Include: []string{"repos/*"}}, handlerHeaders)
//	// res.Tools, and res.Skipped with a reason each, to log
//
// Loading. OpenAPI 3.0 and 3.1 and Swagger 2.0 (converted to 3.0), JSON
// or YAML, with kin-openapi, which reads 3.1's type unions, numeric
// exclusive bounds and const. References inside the document are
// resolved; a reference to another file or a URL is an error naming it,
// and nothing is ever fetched for one; a component that is a reference to
// itself through references alone is an error naming the cycle. Bounds:
// MaxDocumentSize bytes, MaxOperations operations (counted before the
// full parse), and for Fetch FetchTimeout, MaxFetchSize and five
// redirects, https or http to a loopback host only.
//
// Schemas become JSON Schema 2020-12, written out in full where the
// document refers to them. A schema met again inside itself (a tree, a
// linked list) becomes the unconstrained schema {} at that point: the
// first level is kept, the recursion is not. A schema is also written out
// at most maxSchemaDepth deep and maxInputNodes (input) or maxOutputNodes
// (output) subschemas in all, {} beyond, so that no document makes a huge
// schema. Keywords JSON Schema lacks (example, xml, discriminator) are
// left out; so are patterns Go's regexp cannot read, and defaults that
// their property's own type or enum refuses. Left-out keywords only ever
// accept more.
//
// Mapping, one tool per operation:
//   - name: the operationId with what is not a letter, digit, '_' or '-'
//     made '_', at most 64 characters (cut ones end in a short hash),
//     else <method>_<path words>; a name already taken gets the hash of
//     its method and path;
//   - description: the summary, then the description;
//   - path, query and header parameters are arguments with their schema,
//     required, default and enum; a name that is not an identifier
//     (filter[status], $top, X-Api-Version) becomes one (filter_status,
//     top, X_Api_Version) and keeps the real name as the wire name (the
//     header name for a header; a path slot is renamed instead);
//   - an application/json (or +json) object body's properties are
//     arguments, one whose name a parameter has renamed body_<name>;
//     readOnly properties are left out; any other JSON body (an array, a
//     oneOf, a nullable object) is the one argument body, sent whole; a
//     URL-encoded form's properties are arguments sent as a form;
//   - arrays and objects are written as the parameter's style and
//     explode say (see upstream.Style): in the query form (the key
//     repeated, comma-joined, or an object's properties as keys),
//     spaceDelimited, pipeDelimited and deepObject; in the path and
//     headers simple. Swagger's collectionFormat csv (its default),
//     ssv, pipes and multi are the same styles. Where OpenAPI leaves a
//     pair undefined, spaceDelimited and pipeDelimited with explode are
//     the key repeated, and deepObject is exploded whatever explode says;
//     one level is written, so an object property that is an array or an
//     object is refused per call;
//   - nullable (3.0) and type unions with null (3.1) let the schema take
//     null; upstream leaves a null out of a query, a header and a form,
//     and sends it as null in a JSON body;
//   - the object schema of the first 2xx JSON answer is the output
//     schema, writeOnly properties left out; the 2xx media types make the
//     Accept header (JSON first), a body media type other than the body
//     mode's own the Content-Type header;
//   - GET and HEAD are read_only, DELETE destructive, PUT and DELETE
//     idempotent.
//
// Skipped, with the reason: cookie parameters, parameters described by
// content, path styles label and matrix, arrays of arrays or of objects
// outside a body, arrays in style deepObject, Swagger's collectionFormat
// tsv (and any but csv in a path or a header), bodies
// other than JSON and URL-encoded forms (multipart, octet-stream, text),
// form properties that are objects, operations with a server of their own,
// methods other than GET, HEAD, POST, PUT, PATCH and DELETE, and anything
// upstream.NewOperation refuses (a header it will not let an argument
// set, a header the caller's headers fix).
package openapi
