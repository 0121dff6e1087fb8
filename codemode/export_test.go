package codemode

// ToolsOf is the tools a BackendAPI was made of.
func ToolsOf(a *BackendAPI) []APITool {
	tools := make([]APITool, len(a.decl.Tools))
	for i, t := range a.decl.Tools {
		tools[i] = APITool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
	}
	return tools
}

// Rank ranks the catalog's tools for query, as Search does before it
// declares the matches, and returns how many match.
func Rank(c *Catalog, query string, limit int) int {
	_, total := c.index.Search(query, limit, nil)
	return total
}
