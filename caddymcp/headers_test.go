package caddymcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestLiveStandardHeaders holds 2026-07-28 requests to their Mcp-Method
// and Mcp-Name headers, as the conformance suite's header scenarios do,
// on mcp (a plain tools/call and tools/list, which the fast path would
// take, and a call with progress, which mcp-go takes) and on codemode: a
// header that is missing or differs from the body (values are
// case-sensitive) is a 400 with -32020 and runs nothing; header names in
// any case, and white space around a value, are fine.
func TestLiveStandardHeaders(t *testing.T) {
	api, hits := countingUpstream(t)
	loadCaddyfile(t, "", fmt.Sprintf(`http://127.0.0.1:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool get {
			description "Get."
			get /get
		}
	}
	codemode /code {
		backend rest http://127.0.0.1:{$LIVE_PORT}/mcp
	}
}
`, api.URL))

	body := func(method, params string) string {
		if params != "" {
			params += ","
		}
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + modernMeta + `}}`
	}
	progressMeta := strings.Replace(modernMeta, `"_meta":{`, `"_meta":{"progressToken":"p",`, 1)
	bodies := map[string]string{
		"/mcp call":          body("tools/call", `"name":"get","arguments":{}`),
		"/mcp call progress": `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get","arguments":{},` + progressMeta + `}}`,
		"/mcp list":          body("tools/list", ""),
		"/code call":         body("tools/call", `"name":"execute","arguments":{"code":"return await rest.get({})"}`),
		"/code list":         body("tools/list", ""),
		"/code discover":     body("server/discover", ""),
	}
	for _, tt := range []struct {
		name        string
		request     string
		method, tag string // the Mcp-Method and Mcp-Name headers; "-": none
		refused     bool
	}{
		{"a call", "/mcp call", "tools/call", "get", false},
		{"a call with progress", "/mcp call progress", "tools/call", "get", false},
		{"a call with another name", "/mcp call", "tools/call", "wrong_tool_name", true},
		{"a call with progress and another name", "/mcp call progress", "tools/call", "wrong_tool_name", true},
		{"a call without Mcp-Name", "/mcp call", "tools/call", "-", true},
		{"a call without Mcp-Method", "/mcp call", "-", "get", true},
		{"a call named a list", "/mcp call", "tools/list", "get", true},
		{"a call in capitals", "/mcp call", "TOOLS/CALL", "get", true},
		{"a list", "/mcp list", "tools/list", "-", false},
		{"a list named another method", "/mcp list", "prompts/list", "-", true},
		{"a list without Mcp-Method", "/mcp list", "-", "-", true},
		{"a list in capitals", "/mcp list", "TOOLS/LIST", "-", true},
		{"an execution", "/code call", "tools/call", "execute", false},
		{"an execution with another name", "/code call", "tools/call", "search", true},
		{"an execution without Mcp-Name", "/code call", "tools/call", "-", true},
		{"an execution named a list", "/code call", "tools/list", "execute", true},
		{"a code mode list", "/code list", "tools/list", "-", false},
		{"a code mode list named a call", "/code list", "tools/call", "-", true},
		{"a discover", "/code discover", "server/discover", "-", false},
		{"a discover without Mcp-Method", "/code discover", "-", "-", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path, _, _ := strings.Cut(tt.request, " ")
			header := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
			if tt.method != "-" {
				header["mcp-method"] = tt.method // header names are not case-sensitive
			}
			if tt.tag != "-" {
				header["MCP-NAME"] = tt.tag
			}
			before := hits.Load()
			resp, answer := rawPost(t, path, []byte(bodies[tt.request]), header)
			var got rpcAnswer
			if err := json.Unmarshal(answer, &got); err != nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d: %s", resp.StatusCode, answer)
			}
			if !tt.refused {
				if resp.StatusCode != http.StatusOK || got.Error != nil || strings.Contains(string(answer), `"isError":true`) {
					t.Errorf("status %d: %s", resp.StatusCode, answer)
				}
				if strings.HasSuffix(tt.request, "call") && hits.Load() != before+1 {
					t.Errorf("%d upstream requests, want 1", hits.Load()-before)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest || got.Error == nil || got.Error.Code != mcp.HEADER_MISMATCH || !strings.HasPrefix(got.Error.Message, "header mismatch: Mcp-") {
				t.Errorf("status %d %s, want 400 with -32020", resp.StatusCode, answer)
			}
			if hits.Load() != before {
				t.Errorf("the upstream got %d requests", hits.Load()-before)
			}
		})
	}

	// Go's client trims the values it sends and writes names in their
	// canonical case; a client that does neither is read as HTTP says:
	// names in any case, values without the white space around them.
	t.Run("white space around the values, names in other cases", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", liveAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
		b := bodies["/mcp call"]
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"MCP-Protocol-Version: 2026-07-28\r\nmcp-method:   tools/call  \r\nMCP-NAME: \t get \t\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", liveAddr, len(b), b)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got rpcAnswer
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || got.Result == nil || got.Result.IsError {
			t.Errorf("status %d, %+v, %v", resp.StatusCode, got, err)
		}
	})
}
