// Package declarations writes the TypeScript declarations a model reads
// before it writes code: one global per backend, a typed method per tool,
// from the tools' JSON Schemas, within a size budget.
package declarations
