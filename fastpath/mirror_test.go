package fastpath

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkParamHeadersMatch is the fast path's check of a 2026-07-28
// call of a tool with three mirrored arguments (mcp-go's own check, which
// reads the tool's schema again on each call).
func BenchmarkParamHeadersMatch(b *testing.B) {
	tool := mcp.NewToolWithRawSchema("items", "d", json.RawMessage(`{"type":"object","properties":{`+
		`"region":{"type":"string","x-mcp-header":"Region"},"limit":{"type":"integer","x-mcp-header":"Limit"},`+
		`"all":{"type":"boolean","x-mcp-header":"All"},"q":{"type":"string"}},"additionalProperties":false}`))
	header := http.Header{"Mcp-Param-Region": {"eu"}, "Mcp-Param-Limit": {"5"}, "Mcp-Param-All": {"true"}}
	params := []byte(`{"name":"items","arguments":{"region":"eu","limit":5,"all":true,"q":"x"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := ParamHeadersMatch(&tool, header, params, true); err != nil {
			b.Fatal(err)
		}
	}
}
