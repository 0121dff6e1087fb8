// Package search ranks tools for a natural-language query with BM25, in
// process: the index is built once from the tools' names, titles,
// descriptions and argument names and descriptions, and a query reads it
// without locks. It knows nothing of MCP, HTTP or Caddy.
//
// The ranking is BM25F: each field of a tool (its name, title, the first
// paragraph of its description, the rest of it, argument names, argument
// descriptions) has its own weight and its own length normalization, so
// a long description does not drown the name, and a term's frequencies
// in the fields are summed before BM25 saturates them. Words are split
// at camelCase and snake_case joins (and Chinese and Japanese text at
// each character), stop words dropped and the rest stemmed (Porter's
// steps 1 and 5), so "repositories" finds "repository". A query word
// also finds index words that are a prefix of it or that it is a prefix
// of, at a discount: names abbreviate (repo, env, org), and the words
// its thesaurus groups hold (thesaurus.go), at a larger discount for the
// words of its topic (temperature for weather) than for its synonyms.
// The words of asking (information, specific, latest) weigh less than
// the words of what is asked for. A tool whose name, title or summary
// holds the query's words outranks one that holds them only among its
// arguments, and one whose name the query holds the rarer words of
// outranks one whose name shares only a common verb with it. An answer
// leaves out the matches far weaker than its best (weakCut).
package search
