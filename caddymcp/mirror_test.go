package caddymcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// modernMeta is the _meta of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`

// rpcAnswer is what the tests here read of an answer.
type rpcAnswer struct {
	Result *mcp.CallToolResult `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestMirroredArguments: a tool whose args are mirrored into Mcp-Param
// headers lists x-mcp-header; a call whose headers match its arguments is
// the tool's call, on the fast path; one whose headers disagree, or, from
// a 2026-07-28 client, are missing, is refused with 400 and -32020 before
// the upstream hears of it; mcp-go answers each alike.
func TestMirroredArguments(t *testing.T) {
	api, hits := countingUpstream(t)
	load := func(fast bool) *Handler {
		h := &Handler{Upstream: api.URL, Tools: []*Tool{{
			Name: "items", Description: "List the items of a region.", Method: "GET", Path: "/items",
			Args: []*Arg{
				{Name: "region", Required: true, MirrorHeader: "Region"},
				{Name: "limit", Type: "integer", MirrorHeader: "Limit"},
				{Name: "all", Type: "boolean", MirrorHeader: "All"},
				{Name: "q"},
			},
		}}}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		t.Cleanup(cancel)
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		if err := h.Validate(); err != nil {
			t.Fatal(err)
		}
		h.logger, h.Endpoint.logger = zap.NewNop(), zap.NewNop()
		if !fast {
			h.fast = nil
		}
		return h
	}
	fast, slow := load(true), load(false)

	schema, _ := json.Marshal(fast.tools["items"].mcpTool.InputSchema)
	if raw := fast.tools["items"].mcpTool.RawInputSchema; raw != nil {
		schema = raw
	}
	for _, want := range []string{`"region":{"type":"string","x-mcp-header":"Region"}`, `"limit":{"type":"integer","x-mcp-header":"Limit"}`, `"all":{"type":"boolean","x-mcp-header":"All"}`, `"q":{"type":"string"}`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema %s lacks %s", schema, want)
		}
	}

	modern := func(args string, params map[string]string) (string, map[string]string) {
		h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "items"}
		for k, v := range params {
			h[k] = v
		}
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"items","arguments":` + args + `,` + modernMeta + `}}`, h
	}
	legacy := func(args string, params map[string]string) (string, map[string]string) {
		h := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		for k, v := range params {
			h[k] = v
		}
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"items","arguments":` + args + `}}`, h
	}
	// Calls whose era mcp-go reads as earlier than their _meta seems to
	// say: a key in other letters, a version that is not a string.
	oddMeta := func(args string, params map[string]string) (string, map[string]string) {
		body, h := legacy(args, params)
		return strings.Replace(body, `"arguments"`, `"_meta":{"IO.MODELCONTEXTPROTOCOL/PROTOCOLVERSION":"2026-07-28"},"arguments"`, 1), h
	}
	numberMeta := func(args string, params map[string]string) (string, map[string]string) {
		body, h := legacy(args, params)
		delete(h, "Mcp-Protocol-Version")
		return strings.Replace(body, `"arguments"`, `"_meta":{"io.modelcontextprotocol/protocolVersion":1},"arguments"`, 1), h
	}
	type request func(string, map[string]string) (string, map[string]string)
	tests := []struct {
		name     string
		era      request
		args     string
		headers  map[string]string
		refusal  string // the start of the -32020 message; "": the call runs
		wantFast bool
	}{
		{"every header matches", modern, `{"region":"eu","limit":5,"all":true,"q":"x"}`,
			map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "5", "Mcp-Param-All": "true"}, "", true},
		{"an argument not sent needs no header", modern, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "eu"}, "", true},
		{"a value in Base64", modern, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "=?base64?ZXU=?="}, "", true},
		{"header names in lowercase", modern, `{"region":"eu"}`, map[string]string{"mcp-param-region": "eu"}, "", true},
		{"a header that disagrees", modern, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "us"},
			`header mismatch: Mcp-Param-Region: header value "us" does not match body value`, false},
		{"an integer that disagrees", modern, `{"region":"eu","limit":5}`, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "6"},
			`header mismatch: Mcp-Param-Limit`, false},
		{"a header missing", modern, `{"region":"eu","all":false}`, map[string]string{"Mcp-Param-Region": "eu"},
			`header mismatch: Mcp-Param-All: missing header for parameter "all"`, false},
		{"a header for an argument not sent", modern, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "5"},
			`header mismatch: Mcp-Param-Limit: unexpected header for absent or null parameter "limit"`, false},
		{"bad Base64", modern, `{"region":"Hello"}`, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="},
			`header mismatch: Mcp-Param-Region: invalid Base64 encoding`, false},
		{"an earlier revision sends none", legacy, `{"region":"eu","limit":5}`, nil, "", true},
		{"an earlier revision that mirrors", legacy, `{"region":"eu","limit":5}`, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "5"}, "", true},
		{"an earlier revision with a header that disagrees", legacy, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "us"},
			`header mismatch: Mcp-Param-Region: header value "us" does not match body value`, false},
		{"an earlier revision with a header for an argument not sent", legacy, `{"region":"eu"}`, map[string]string{"Mcp-Param-All": "true"},
			`header mismatch: Mcp-Param-All: unexpected header`, false},
		{"a _meta key in capitals", oddMeta, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "us"},
			`header mismatch: Mcp-Param-Region: header value "us" does not match body value`, false},
		{"a version that is a number", numberMeta, `{"region":"eu"}`, map[string]string{"Mcp-Param-Region": "us"},
			`header mismatch: Mcp-Param-Region: header value "us" does not match body value`, false},
	}
	send := func(h *Handler, body string, header map[string]string) *httptest.ResponseRecorder {
		return servePost(t, h, body, header)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, header := tt.era(tt.args, tt.headers)
			before, answered := hits.Load(), fast.fast.Answered()
			a := send(fast, body, header)
			if took := fast.fast.Answered() > answered; took != tt.wantFast {
				t.Errorf("answered by the fast path: %v, want %v", took, tt.wantFast)
			}
			b := send(slow, body, header)
			if a.Code != b.Code || a.Body.String() != b.Body.String() {
				t.Errorf("answers differ:\nfast:   %d %s\nmcp-go: %d %s", a.Code, a.Body, b.Code, b.Body)
			}
			var got rpcAnswer
			if err := json.Unmarshal(a.Body.Bytes(), &got); err != nil {
				t.Fatalf("answer %d %q: %v", a.Code, a.Body, err)
			}
			if tt.refusal == "" {
				if a.Code != http.StatusOK || got.Result == nil || got.Result.IsError || hits.Load() != before+2 {
					t.Errorf("status %d, %d upstream requests: %s", a.Code, hits.Load()-before, a.Body)
				}
				return
			}
			if a.Code != http.StatusBadRequest || got.Error == nil || got.Error.Code != mcp.HEADER_MISMATCH || !strings.HasPrefix(got.Error.Message, tt.refusal) {
				t.Errorf("status %d %s, want 400 with -32020 %q", a.Code, a.Body, tt.refusal)
			}
			if hits.Load() != before {
				t.Errorf("the upstream got %d requests", hits.Load()-before)
			}
		})
	}
}

// TestMirrorHeaderConfig: mirror_header is refused where no header could
// carry it, whether it comes from an arg line or an input_schema.
func TestMirrorHeaderConfig(t *testing.T) {
	for _, tt := range []struct {
		name, tool, want string
	}{
		{"an array", `{"name":"t","description":"d","method":"GET","path":"/","args":[{"name":"a","type":"string[]","mirror_header":"A"}]}`,
			`tool "t": arg "a": mirror_header A: only a string, integer or boolean arg is mirrored into a header, not string[]`},
		{"a name twice", `{"name":"t","description":"d","method":"GET","path":"/","args":[{"name":"a","mirror_header":"A"},{"name":"b","mirror_header":"a"}]}`,
			`tool "t": arg "b": mirror_header a: arg "a" mirrors into Mcp-Param-A already`},
		{"a bad name", `{"name":"t","description":"d","method":"GET","path":"/","args":[{"name":"a","mirror_header":"A/B"}]}`,
			`tool "t": arg "a": mirror_header "A/B": not a header field name`},
		{"an input_schema annotation on an object", `{"name":"t","description":"d","method":"POST","path":"/","input_schema":{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}}`,
			`tool "t": input_schema: property "a": x-mcp-header can only be applied to primitive types`},
	} {
		_, err := loadMCP(t, `{"upstream":"http://127.0.0.1:9","tools":[`+tt.tool+`]}`)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestLiveMirroredHeaderRoutes: Caddy's header matcher routes on an
// argument that a 2026-07-28 client mirrors: mcp-go's client, having
// listed the tools, sends Mcp-Param-Region, and the call for eu reaches
// the eu upstream. A 2025-11-25 client sends no such header and takes the
// default route; a request whose header names another region than its
// argument is refused, so that the route taken is the argument's. A
// browser's preflight is told it may send the header.
func TestLiveMirroredHeaderRoutes(t *testing.T) {
	eu, us := mcptest.StartHTTPBin(t), mcptest.StartHTTPBin(t)
	// As docs/mcp.md shows it: the tools in a snippet, one mcp per route.
	loadCaddyfile(t, "", fmt.Sprintf(`(region_tools) {
	tool items {
		description "List the items of a region."
		get /anything/items
		arg region string required {
			enum eu us
			mirror_header Region
		}
	}
}

http://:{$LIVE_PORT} {
	@eu header Mcp-Param-Region eu
	handle @eu {
		mcp /mcp {
			upstream %s
			header X-Served-By eu
			import region_tools
		}
	}
	handle {
		mcp /mcp {
			upstream %s
			header X-Served-By us
			allow_origins https://app.example.com
			import region_tools
		}
	}
}`, eu, us))

	servedBy := func(t *testing.T, res *mcp.CallToolResult) string {
		t.Helper()
		var echo struct{ Headers map[string][]string }
		if err := json.Unmarshal([]byte(wantOK(t, res)), &echo); err != nil {
			t.Fatal(err)
		}
		return strings.Join(echo.Headers["X-Served-By"], ",")
	}
	for _, tt := range []struct {
		era, region, want string
	}{
		{"2026-07-28", "eu", "eu"},
		{"2026-07-28", "us", "us"},
		{"2025-11-25", "eu", "us"}, // sends no Mcp-Param-Region: the default route
	} {
		t.Run(tt.era+" "+tt.region, func(t *testing.T) {
			c := connect(t, "/mcp", tt.era, nil)
			if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
				t.Fatal(err)
			}
			if got := servedBy(t, callTool(t, c, "items", map[string]any{"region": tt.region})); got != tt.want {
				t.Errorf("served by %q, want %q", got, tt.want)
			}
		})
	}

	// A browser sends the header only if the preflight allows it.
	resp := preflight(t, "/mcp", "https://app.example.com")
	if got := resp.Header.Get("Access-Control-Allow-Headers"); !strings.HasSuffix(got, ", Mcp-Method, Mcp-Name, Mcp-Param-Region") {
		t.Errorf("preflight: Access-Control-Allow-Headers %q lacks Mcp-Param-Region", got)
	}

	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(era+" routed by a header that disagrees", func(t *testing.T) {
			header := map[string]string{"MCP-Protocol-Version": era, "Mcp-Param-Region": "eu"}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"items","arguments":{"region":"us"}}}`
			if era == "2026-07-28" {
				header["Mcp-Method"], header["Mcp-Name"] = "tools/call", "items"
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"items","arguments":{"region":"us"},` + modernMeta + `}}`
			}
			resp, answer := rawPost(t, "/mcp", []byte(body), header)
			var got rpcAnswer
			_ = json.Unmarshal(answer, &got)
			if resp.StatusCode != http.StatusBadRequest || got.Error == nil || got.Error.Code != mcp.HEADER_MISMATCH {
				t.Errorf("status %d: %s", resp.StatusCode, answer)
			}
		})
	}
}

// TestMirroredHeaderTwice: a mirrored header sent twice is refused in
// either era, even when its first value is the argument: Caddy's header
// matcher would match the second.
func TestMirroredHeaderTwice(t *testing.T) {
	api, hits := countingUpstream(t)
	h, err := loadMCP(t, `{"upstream":"`+api.URL+`","tools":[{"name":"items","description":"d","method":"GET","path":"/items",`+
		`"args":[{"name":"region","required":true,"mirror_header":"Region"}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"items","arguments":{"region":"us"}}}`
		if version == "2026-07-28" {
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"items","arguments":{"region":"us"},` + modernMeta + `}}`
		}
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": version, "Mcp-Method": "tools/call", "Mcp-Name": "items"} {
			req.Header.Set(k, v)
		}
		req.Header.Add("Mcp-Param-Region", "us")
		req.Header.Add("Mcp-Param-Region", "eu")
		req = req.WithContext(context.WithValue(req.Context(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
		w := httptest.NewRecorder()
		before := hits.Load()
		if err := h.ServeHTTP(w, req, nil); err != nil {
			t.Fatal(err)
		}
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code":-32020`) || !strings.Contains(w.Body.String(), "Mcp-Param-Region sent 2 times") {
			t.Errorf("%s: %d %s, want 400 with -32020", version, w.Code, w.Body)
		}
		if hits.Load() != before {
			t.Errorf("%s: the upstream got %d requests", version, hits.Load()-before)
		}
	}
}
