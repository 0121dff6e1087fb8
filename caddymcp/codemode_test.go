package caddymcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v5"
	"go.uber.org/zap"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/adapttest"
	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// TestExecuteStructuredContent: the structured content carries what the
// text shows, says when it was cut, and fits the tool's output schema.
func TestExecuteStructuredContent(t *testing.T) {
	compiler := jsonschema.NewCompiler()
	if err := compiler.AddResource("output.json", bytes.NewReader(codeOutputSchema)); err != nil {
		t.Fatal(err)
	}
	schema, err := compiler.Compile("output.json")
	if err != nil {
		t.Fatal(err)
	}
	cm, _ := loadObserved(t, `{"backends":[{"name":"api","url":"`+unreachableURL+`"}]}`)
	for _, tt := range []struct {
		name, code string
		want       string // the structured content, with the cut result's preview as "CUT"
	}{
		{"a value and a line", `console.log("a"); return {x: 1}`, `{"logs":["a"],"result":{"x":1},"truncated":false}`},
		{"no value", `console.log("only")`, `{"logs":["only"],"truncated":false}`},
		{"nothing", `const x = 1`, `{"logs":[],"truncated":false}`},
		{"a result too big, beside short lines",
			`console.log("one"); console.log("two"); console.log("three"); return Array(300).fill({pad: "x".repeat(100)})`,
			`{"logs":["one","two","three"],"result_preview":"CUT","truncated":true}`},
		{"a string returned, with the logs cut",
			`for (let i = 0; i < 5000; i++) console.log("line " + i); return "short"`,
			`{"logs":"LINES","result":"short","truncated":true}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := executeCode(cm, map[string]any{"code": tt.code})
			if res.IsError {
				t.Fatal(mcptest.ResultText(res))
			}
			got, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(got, &v); err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err != nil {
				t.Errorf("the structured content does not fit the output schema: %v", err)
			}
			if shown, ok := v["result_preview"].(string); ok && strings.Contains(tt.want, "CUT") {
				// The start of the value's JSON text, as the text shows it.
				if !strings.HasPrefix(shown, `[{"pad":"xxx`) || !strings.Contains(mcptest.ResultText(res), shown+"\n[cut: ") {
					t.Errorf("the cut result is not the part the text shows: %.80s", shown)
				}
				v["result_preview"] = "CUT"
				got, _ = json.Marshal(v)
			}
			if logs, ok := v["logs"].([]any); ok && strings.Contains(tt.want, "LINES") {
				// Some lines, then the count of the rest.
				if last, _ := logs[len(logs)-1].(string); len(logs) < 2 || !strings.Contains(last, "more") {
					t.Errorf("the cut logs end with %q, want a count of the lines left out", last)
				}
				v["logs"] = "LINES"
				got, _ = json.Marshal(v)
			}
			if string(got) != tt.want {
				t.Errorf("structured content %s, want %s", got, tt.want)
			}
		})
	}
}

// TestExecutionOutcomes: each way an execution ends is counted with its
// snake_case outcome.
func TestExecutionOutcomes(t *testing.T) {
	cm, _ := loadObserved(t, `{"timeout":"300ms","backends":[{"name":"api","url":"`+unreachableURL+`"}]}`)
	for _, args := range []map[string]any{
		{"code": "return 1"},
		{"code": "return ("},
		{"code": `throw new Error("no")`},
		{"code": "while (true) {}"},
		{"code": `"x".repeat(2 ** 40)`},
		{"code": strings.Repeat("1;", 40<<10)}, // past max_code_size
		{"code": "function f() { f() } f()"},
		{},
		{"code": "1", "language": "js"},
	} {
		executeCode(cm, args)
	}
	got := strings.Join(toolCallSeries(t, cm), "\n")
	want := strings.Join([]string{
		"execute invalid_arguments 2",
		"execute limit_exceeded 1",
		"execute memory_limit 1",
		"execute ok 1",
		"execute stack_overflow 1",
		"execute syntax_error 1",
		"execute timeout 1",
		"execute uncaught_error 1",
	}, "\n")
	if got != want {
		t.Errorf("series:\n%s\nwant:\n%s", got, want)
	}
}

// TestLoggedTextIsCapped: what a log line takes from the code (an error
// message, a tool name it made up) is cut at 1 KiB, with its length.
func TestLoggedTextIsCapped(t *testing.T) {
	cm, logs := loadObserved(t, `{"backends":[{"name":"api","url":"`+unreachableURL+`"}]}`)
	executeCode(cm, map[string]any{"code": `try { await api["é".repeat(3000)]({}) } catch (e) {}; throw new Error("e".repeat(100000))`})
	for _, tt := range []struct {
		msg, key string
		bytes    int64
	}{
		{"backend call", "tool", 6000},
		{"execution", "error", int64(len("Error: ") + 100000)},
	} {
		entries := logs.FilterMessage(tt.msg).All()
		if len(entries) != 1 {
			t.Fatalf("%d %q log lines, want 1", len(entries), tt.msg)
		}
		fields := entries[0].ContextMap()
		text, _ := fields[tt.key].(string)
		if len(text) > maxLoggedText+len("...") || !strings.HasSuffix(text, "...") || !utf8.ValidString(text) {
			t.Errorf("%s: %s is %d bytes: %.40s", tt.msg, tt.key, len(text), text)
		}
		if fields[tt.key+"_bytes"] != tt.bytes {
			t.Errorf("%s: %s_bytes = %v, want %d", tt.msg, tt.key, fields[tt.key+"_bytes"], tt.bytes)
		}
	}
}

// concurrencyAPI is a REST server that answers after a delay and records
// how many requests it served at once.
type concurrencyAPI struct {
	running, maxSeen atomic.Int32
}

func (c *concurrencyAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.running.Add(1)
	defer c.running.Add(-1)
	for {
		m := c.maxSeen.Load()
		if n <= m || c.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(150 * time.Millisecond)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":%q}`, r.URL.Query().Get("id"))
}

func TestLiveCodeMode(t *testing.T) {
	bin := mcptest.StartHTTPBin(t)
	api := &concurrencyAPI{}
	apiSrv := &http.Server{Handler: api}
	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go apiSrv.Serve(apiLn)
	defer apiSrv.Close()
	lateAddr := mcptest.ClosedAddr(t)

	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /rest {
		upstream %s
		tool echo {
			description "Echo the arguments."
			post /anything
			arg word string required
			arg n integer
		}
		tool status {
			description "Answer a status code."
			get /status/{code}
			arg code integer required
		}
	}
	mcp /slow {
		upstream http://%s
		tool get {
			description "Answer after 150ms."
			get /item
			arg id string required
		}
	}
	codemode /code {
		backend rest http://127.0.0.1:{$LIVE_PORT}/rest
		backend slow http://127.0.0.1:{$LIVE_PORT}/slow {
			timeout 5s
		}
		backend late http://%s/mcp
		timeout 2s
	}
}`, bin, apiLn.Addr(), lateAddr))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/code", era, nil)

			t.Run("one tool whose description declares the backends", func(t *testing.T) {
				res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Tools) != 1 || res.Tools[0].Name != "execute" {
					t.Fatalf("tools %+v", res.Tools)
				}
				d := res.Tools[0].Description
				for _, want := range []string{"declare const rest", "echo(input: {", "word: string", "declare const slow", "status(input: {", "declare const late", "unavailable"} {
					if !strings.Contains(d, want) {
						t.Errorf("description lacks %q:\n%s", want, d)
					}
				}
			})

			t.Run("chained calls across backends", func(t *testing.T) {
				res := execute(t, c, `
const first = await rest.echo({word: "caddy", n: 2});
const item = await slow.get({id: first.json.word + "-" + first.json.n});
console.log("got", item.id);
return {word: first.json.word, item: item.id}`)
				text := wantOK(t, res)
				if !strings.Contains(text, `{"word":"caddy","item":"caddy-2"}`) || !strings.Contains(text, "got caddy-2") {
					t.Fatalf("text %q", text)
				}
				sc, _ := json.Marshal(res.StructuredContent)
				if string(sc) != `{"logs":["got caddy-2"],"result":{"item":"caddy-2","word":"caddy"},"truncated":false}` {
					t.Errorf("structuredContent %s", sc)
				}
			})

			t.Run("calls started together overlap", func(t *testing.T) {
				api.maxSeen.Store(0)
				res := execute(t, c, `const ids = Array.from({length: 10}, (_, i) => "p" + i);
const items = await Promise.all(ids.map(id => slow.get({id})));
return items.map(i => i.id).join(",")`)
				if text := wantOK(t, res); text != `"p0,p1,p2,p3,p4,p5,p6,p7,p8,p9"` {
					t.Fatalf("text %q", text)
				}
				if got := api.maxSeen.Load(); got < 10 {
					t.Errorf("at most %d calls reached the REST API at once, want 10", got)
				}
			})

			t.Run("backend errors are thrown, with the backend's message", func(t *testing.T) {
				res := execute(t, c, `try { await rest.status({code: 503}); return "no error" } catch (e) { return e.message }`)
				if text := wantOK(t, res); !strings.Contains(text, "503 Service Unavailable") || !strings.Contains(text, "rest.status") {
					t.Fatalf("text %q", text)
				}
				res = execute(t, c, `await rest.status({code: "not a number"})`)
				wantToolError(t, res, "UncaughtError", "invalid arguments", "/code")
			})

			t.Run("TypeScript", func(t *testing.T) {
				res := execute(t, c, "interface Echo { json: { word: string } }\nconst r: Echo = await rest.echo({word: 'typed'});\nreturn r.json.word.toUpperCase()")
				if text := wantOK(t, res); text != `"TYPED"` {
					t.Fatalf("text %q", text)
				}
			})

			t.Run("errors in the code are tool errors with positions", func(t *testing.T) {
				wantToolError(t, execute(t, c, "const a = 1;\nconst b = ;"), "SyntaxError", "line 2")
				wantToolError(t, execute(t, c, "while (true) {}"), "TimeoutError")
				wantToolError(t, callTool(t, c, "execute", map[string]any{}), `"code" argument is required`)
				wantToolError(t, callTool(t, c, "execute", map[string]any{"code": "return 1", "timeout": 5}), `unknown argument "timeout"`)
			})
		})
	}

	t.Run("a backend that is down at start and comes up later", func(t *testing.T) {
		c := connect(t, "/code", eras[0], nil)
		wantToolError(t, execute(t, c, `return await late.ping_back({word: "a"})`), "late.ping_back", "unavailable")
		listenOn(t, lateAddr, false)
		res := execute(t, c, `return await late.ping_back({word: "b"})`)
		if text := wantOK(t, res); text != `"pong b"` {
			t.Fatalf("text %q", text)
		}
		// Its tools are listed once it is back.
		res2, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res2.Tools[0].Description, "ping_back(input") {
			t.Errorf("late's tools are not declared:\n%s", res2.Tools[0].Description)
		}
	})
}

// unreachableURL is a backend nobody listens on: port 1 on loopback
// refuses at once.
const unreachableURL = "http://127.0.0.1:1/mcp"

// poolRefs is how many loaded handlers hold the pooled backend under key.
func poolRefs(key string) int {
	n, _ := backendPool.References(key)
	return n
}

func TestCodeModeProvisionReportsConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		// Exactly one of json and caddyfile is set.
		json      string
		caddyfile string
		wantErr   []string
	}{
		{
			name:      "backend name that is not an identifier",
			caddyfile: "codemode {\n backend my-api " + unreachableURL + "\n}",
			wantErr:   []string{`backend "my-api"`, "is not a JavaScript identifier"},
		},
		{
			name:      "backend name starting with a digit",
			caddyfile: "codemode {\n backend 2fa " + unreachableURL + "\n}",
			wantErr:   []string{`backend "2fa"`, "is not a JavaScript identifier"},
		},
		{
			name:      "backend name with a dot",
			caddyfile: "codemode {\n backend api.v2 " + unreachableURL + "\n}",
			wantErr:   []string{`backend "api.v2"`, "is not a JavaScript identifier"},
		},
		{
			name:    "non-ASCII backend name",
			json:    `{"backends":[{"name":"météo","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`backend "météo"`, "is not a JavaScript identifier"},
		},
		{
			name:    "empty backend name",
			json:    `{"backends":[{"name":"","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`backend ""`, "is not a JavaScript identifier"},
		},
		{
			name:      "reserved word",
			caddyfile: "codemode {\n backend class " + unreachableURL + "\n}",
			wantErr:   []string{`backend "class"`, "is a reserved word"},
		},
		{
			name:      "strict-mode reserved word",
			caddyfile: "codemode {\n backend let " + unreachableURL + "\n}",
			wantErr:   []string{`backend "let"`, "is a reserved word"},
		},
		{
			name:      "backend named console",
			caddyfile: "codemode {\n backend console " + unreachableURL + "\n}",
			wantErr:   []string{`backend "console"`, "shadows the sandbox global console"},
		},
		{
			name:      "backend named JSON",
			caddyfile: "codemode {\n backend JSON " + unreachableURL + "\n}",
			wantErr:   []string{`backend "JSON"`, "shadows the sandbox global JSON"},
		},
		{
			name:      "backend named fetch",
			caddyfile: "codemode {\n backend fetch " + unreachableURL + "\n}",
			wantErr:   []string{`backend "fetch"`, "shadows the sandbox global fetch"},
		},
		{
			name:      "backend named setTimeout",
			caddyfile: "codemode {\n backend setTimeout " + unreachableURL + "\n}",
			wantErr:   []string{`backend "setTimeout"`, "shadows the sandbox global setTimeout"},
		},
		{
			name: "bad name after a good backend",
			caddyfile: "codemode {\n backend shop " + unreachableURL + "\n backend my-api " + unreachableURL +
				"\n}",
			wantErr: []string{`backend "my-api"`, "is not a JavaScript identifier"},
		},
		{
			name:      "duplicate backend names",
			caddyfile: "codemode {\n backend shop http://127.0.0.1:1/a\n backend shop http://127.0.0.1:1/b\n}",
			wantErr:   []string{`backend "shop" is defined twice`},
		},
		{
			name:      "duplicate backends with the same settings",
			caddyfile: "codemode {\n backend shop " + unreachableURL + "\n backend shop " + unreachableURL + "\n}",
			wantErr:   []string{`backend "shop" is defined twice`},
		},
		{
			name:    "ftp URL",
			json:    `{"backends":[{"name":"files","url":"ftp://files.example.com/mcp"}]}`,
			wantErr: []string{`backend "files"`, `url "ftp://files.example.com/mcp": want an http:// or https:// URL`},
		},
		{
			name:    "URL without a scheme",
			json:    `{"backends":[{"name":"shop","url":"127.0.0.1:8080/mcp"}]}`,
			wantErr: []string{`backend "shop"`, `url "127.0.0.1:8080/mcp"`, "want an http:// or https:// URL"},
		},
		{
			name:    "URL without a host",
			json:    `{"backends":[{"name":"shop","url":"http:///mcp"}]}`,
			wantErr: []string{`backend "shop"`, `url "http:///mcp"`, "want an http:// or https:// URL"},
		},
		{
			name:    "ws URL",
			json:    `{"backends":[{"name":"shop","url":"ws://127.0.0.1:8080/mcp"}]}`,
			wantErr: []string{`backend "shop"`, `url "ws://127.0.0.1:8080/mcp"`},
		},
		{
			name:    "missing URL in JSON config",
			json:    `{"backends":[{"name":"shop"}]}`,
			wantErr: []string{`backend "shop"`, `url ""`, "want an http:// or https:// URL"},
		},
		{
			name:    "unknown transport in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","transport":"websocket"}]}`,
			wantErr: []string{`backend "shop"`, `transport "websocket": want streamable_http or sse`},
		},
		{
			name:    "negative backend timeout in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","timeout":"-1s"}]}`,
			wantErr: []string{`backend "shop"`, "timeout must not be negative"},
		},
		{
			name:    "negative backend max_tools in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","max_tools":-1}]}`,
			wantErr: []string{`backend "shop"`, "max_tools must not be negative"},
		},
		{
			name:    "negative backend max_stream_size in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","max_stream_size":-5}]}`,
			wantErr: []string{`backend "shop"`, "max_stream_size must not be negative"},
		},
		{
			name:      "no backends",
			caddyfile: "codemode {\n name gateway\n}",
			wantErr:   []string{"codemode needs at least one backend"},
		},
		{
			name:    "empty backend list",
			json:    `{"backends":[]}`,
			wantErr: []string{"codemode needs at least one backend"},
		},
		{
			name:    "only null backends",
			json:    `{"backends":[null]}`,
			wantErr: []string{"codemode needs at least one backend"},
		},
		{
			name:      "tool_name with a space",
			caddyfile: "codemode {\n tool_name \"run code\"\n backend shop " + unreachableURL + "\n}",
			wantErr:   []string{`tool_name "run code"`, "letters, digits"},
		},
		{
			name:    "tool_name too long",
			json:    `{"tool_name":"` + strings.Repeat("x", 129) + `","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`tool_name "xxxx`, "1 to 128"},
		},
		{
			name:    "tool_name with a slash",
			json:    `{"tool_name":"run/code","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`tool_name "run/code"`},
		},
		{
			name:    "negative max_tool_calls",
			json:    `{"max_tool_calls":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_tool_calls must not be negative"},
		},
		{
			name:    "negative max_output",
			json:    `{"max_output":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_output must not be negative"},
		},
		{
			name:    "negative max_code_size",
			json:    `{"max_code_size":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_code_size must not be negative"},
		},
		{
			name:    "negative max_concurrent",
			json:    `{"max_concurrent":-2,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_concurrent must not be negative"},
		},
		{
			name:    "negative max_memory",
			json:    `{"max_memory":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_memory must not be negative"},
		},
		{
			name:    "max_memory too small for a worker",
			json:    `{"max_memory":1048576,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_memory 1 MiB: a worker process needs at least 64 MiB"},
		},
		{
			name:    "unknown isolation",
			json:    `{"isolation":"v8","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`isolation "v8": want process`},
		},
		{
			name:    "in_process",
			json:    `{"isolation":"in_process","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"isolation in_process is no longer offered: inside Caddy, a Go stack overflow or a fatal out of memory in one execution would end every site"},
		},
		{
			name:    "negative workers",
			json:    `{"workers":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"workers must not be negative"},
		},
		{
			name:    "negative timeout",
			json:    `{"timeout":"-5s","backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"timeout must not be negative"},
		},
		{
			name:    "negative max_request_size",
			json:    `{"max_request_size":-1,"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{"max_request_size must not be negative"},
		},
		{
			name:      "allow_origins entry that is not an origin",
			caddyfile: "codemode {\n backend shop " + unreachableURL + "\n allow_origins app.example.com\n}",
			wantErr:   []string{"allow_origins", "app.example.com"},
		},
		{
			name:    "allow_hosts entry that is not a host",
			json:    `{"allow_hosts":["gateway.lan/x"],"backends":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`allow_hosts: "gateway.lan/x" is not a host name`},
		},
		{
			name:    "unknown backend field in JSON config",
			json:    `{"backends":[{"name":"shop","url":"` + unreachableURL + `","header":{"X":["y"]}}]}`,
			wantErr: []string{`"header"`},
		},
		{
			name:    "unknown handler field in JSON config",
			json:    `{"backend":[{"name":"shop","url":"` + unreachableURL + `"}]}`,
			wantErr: []string{`"backend"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.caddyfile != "" {
				_, _, err = loadCodeModeCaddyfile(t, tc.caddyfile)
			} else {
				_, _, err = loadCodeMode(t, tc.json)
			}
			if err == nil {
				t.Fatalf("loaded without error, want one containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// Valid names just beside the refused ones load.
func TestCodeModeProvisionAcceptsIdentifierNames(t *testing.T) {
	for _, name := range []string{"api", "my_api", "$api", "_private", "api2", "Weather", "consoleApi", "classes", "json"} {
		t.Run(name, func(t *testing.T) {
			cm, _, err := loadCodeMode(t, `{"backends":[{"name":"`+name+`","url":"`+unreachableURL+`"}]}`)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if len(cm.backends) != 1 || cm.backends[0].name != name {
				t.Errorf("backends %v, want one named %s", cm.backends, name)
			}
		})
	}
}

// A config that sets nothing gets the documented defaults.
func TestCodeModeProvisionDefaults(t *testing.T) {
	cm, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend shop "+unreachableURL+"\n}")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if cm.Name != "caddy-mcp-codemode" {
		t.Errorf("name %q, want caddy-mcp-codemode", cm.Name)
	}
	if cm.ToolName != "execute" {
		t.Errorf("tool_name %q, want execute", cm.ToolName)
	}
	if cm.Timeout != caddy.Duration(30*time.Second) {
		t.Errorf("timeout %v, want 30s", time.Duration(cm.Timeout))
	}
	if cm.MaxRequestSize != 1<<20 {
		t.Errorf("max_request_size %d, want 1MiB", cm.MaxRequestSize)
	}
	want := codemode.Limits{
		Timeout:       30 * time.Second,
		MaxToolCalls:  100,
		MaxOutput:     24 << 10,
		MaxCodeSize:   64 << 10,
		MaxConcurrent: 2 * runtime.GOMAXPROCS(0),
		MaxMemory:     256 << 20, // one worker's, in process isolation
	}
	got := cm.runner.Limits()
	if got.Timeout != want.Timeout || got.MaxToolCalls != want.MaxToolCalls || got.MaxOutput != want.MaxOutput ||
		got.MaxCodeSize != want.MaxCodeSize || got.MaxConcurrent != want.MaxConcurrent || got.MaxMemory != want.MaxMemory {
		t.Errorf("runner limits\n%s\nwant\n%s", asJSON(got), asJSON(want))
	}
	if len(cm.backends) != 1 || cm.backends[0].name != "shop" {
		t.Fatalf("backends %v, want shop", cm.backends)
	}
	// Workers of the default pool: one per execution max_concurrent allows.
	if cm.poolKey != fmt.Sprintf("%d/%d", 256<<20, 2*runtime.GOMAXPROCS(0)) {
		t.Errorf("worker pool %q, want 256 MiB workers, max_concurrent of them", cm.poolKey)
	}
}

// Every subdirective reaches what it configures: the runner's limits, the
// endpoint, the backends in order.
func TestCodeModeProvisionAppliesSettings(t *testing.T) {
	cm, _, err := loadCodeModeCaddyfile(t, `codemode {
		name gateway
		instructions "Chain the calls in code."
		tool_name run_code
		backend shop http://127.0.0.1:1/shop {
			header Authorization "Bearer {env.API_TOKEN}"
			transport streamable_http
			tools list_* get_order
			timeout 5s
		}
		backend weather http://127.0.0.1:1/weather {
			transport sse
		}
		timeout 20s
		max_tool_calls 7
		max_output 8KiB
		max_code_size 4KiB
		max_concurrent 3
		max_memory 128MiB
		workers 2
		max_request_size 64KiB
		allow_origins https://app.example.com
		allow_hosts gateway.lan
	}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	l := cm.runner.Limits()
	if l.Timeout != 20*time.Second || l.MaxToolCalls != 7 || l.MaxOutput != 8<<10 || l.MaxCodeSize != 4<<10 ||
		l.MaxConcurrent != 3 || l.MaxMemory != 128<<20 {
		t.Errorf("runner limits %s", asJSON(l))
	}
	if cm.poolKey != fmt.Sprintf("%d/2", 128<<20) {
		t.Errorf("worker pool %q, want two workers of 128 MiB", cm.poolKey)
	}
	if cm.MaxRequestSize != 64<<10 || !cm.origins["https://app.example.com"] || !cm.hosts["gateway.lan"] {
		t.Errorf("endpoint: max_request_size %d, origins %v, hosts %v", cm.MaxRequestSize, cm.origins, cm.hosts)
	}
	if len(cm.backends) != 2 || cm.backends[0].name != "shop" || cm.backends[1].name != "weather" {
		t.Fatalf("backends %v, want shop then weather", cm.backends)
	}
	if cm.backends[0].key == cm.backends[1].key || cm.backends[0].backend == cm.backends[1].backend {
		t.Error("two different backends share one pooled client")
	}
	// The pool key is a hash of the settings: no header value in it.
	for _, ref := range cm.backends {
		if strings.Contains(ref.key, "API_TOKEN") || strings.Contains(ref.key, "Bearer") {
			t.Errorf("pool key %q carries a header value", ref.key)
		}
	}
	// The rules the description opens with, from these backends and limits.
	apis := make([]*codemode.BackendAPI, len(cm.backends))
	for i, ref := range cm.backends {
		apis[i] = codemode.NewBackendAPI(codemode.APIBackend{Name: ref.name})
	}
	rules := codemode.NewAPI(apis).Rules(cm.runner.Limits())
	for _, want := range []string{"(shop, weather)", "await shop.<tool>", "cut at 8192 bytes", "20s and 7 tool calls per run"} {
		if !strings.Contains(rules, want) {
			t.Errorf("sandbox rules do not mention %q:\n%s", want, rules)
		}
	}
}

// Provisioning never waits on a backend: one that never answers does not
// hold up the load, and one that refuses connections loads and is
// described as unavailable.
func TestCodeModeProvisionDoesNotBlockOnUnreachableBackend(t *testing.T) {
	// A backend that takes requests and answers none until the test ends.
	// Were the load waiting on it, it could return only once the client
	// gave up (the backend's timeout, a minute: a hang guard), and the
	// server would have seen a request end.
	release := make(chan struct{})
	var ended atomic.Int32
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			ended.Add(1)
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) }) // before hung.Close
	start := time.Now()
	if _, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend hung "+hung.URL+"/mcp {\n  timeout 1m\n }\n}"); err != nil {
		t.Fatalf("load with a backend that never answers: %v", err)
	}
	t.Logf("loaded in %s with a backend that never answers", time.Since(start).Round(time.Millisecond))
	if n := ended.Load(); n != 0 {
		t.Errorf("the load returned after %d request(s) to the backend gave up: Provision waited for it", n)
	}

	cm, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend down "+unreachableURL+" {\n  timeout 1m\n }\n}")
	if err != nil {
		t.Fatalf("load with an unreachable backend: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	text := cm.describe.current(ctx).text
	if !strings.Contains(text, "declare const down") || !strings.Contains(text, "unavailable right now") {
		t.Errorf("the tool description should declare the backend and call it unavailable:\n%s", text)
	}
	bindings := cm.bindings(ctx)
	if len(bindings) != 1 || bindings[0].Name != "down" || bindings[0].Unavailable == "" {
		t.Errorf("bindings %s, want down marked unavailable", asJSON(bindings))
	}
}

// Two handlers with the same backend settings (as during a config reload,
// when the new config is provisioned before the old one is cleaned up)
// share one pooled client, and the client closes only when the last of
// them is cleaned up.
func TestCodeModeBackendPoolSharesAndReleases(t *testing.T) {
	const config = `{"backends":[{"name":"pooled","url":"http://127.0.0.1:1/pool-test","headers":{"Authorization":["Bearer {env.API_TOKEN}"]}}]}`
	first, unloadFirst, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatalf("load the first handler: %v", err)
	}
	key := first.backends[0].key
	if n := poolRefs(key); n != 1 {
		t.Fatalf("after one handler: %d references, want 1", n)
	}

	second, unloadSecond, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatalf("load the second handler: %v", err)
	}
	if second.backends[0].key != key {
		t.Errorf("same settings, different pool keys: %q and %q", key, second.backends[0].key)
	}
	if second.backends[0].backend != first.backends[0].backend {
		t.Error("same settings, but the second handler got its own client")
	}
	if n := poolRefs(key); n != 2 {
		t.Fatalf("after two handlers: %d references, want 2", n)
	}

	// Any other setting makes another client.
	other, _, err := loadCodeMode(t, `{"backends":[{"name":"pooled","url":"http://127.0.0.1:1/pool-test","headers":{"Authorization":["Bearer {env.OTHER_TOKEN}"]}}]}`)
	if err != nil {
		t.Fatalf("load the handler with another header: %v", err)
	}
	if other.backends[0].key == key || other.backends[0].backend == first.backends[0].backend {
		t.Error("a backend with another header shares the client")
	}
	if n := poolRefs(key); n != 2 {
		t.Errorf("another backend changed the count to %d, want 2", n)
	}

	shared := first.backends[0].backend
	unloadFirst()
	if n := poolRefs(key); n != 1 {
		t.Fatalf("after cleaning up one handler: %d references, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := shared.Call(ctx, "anything", json.RawMessage(`{}`)); err == nil || strings.Contains(err.Error(), "shutting down") {
		t.Errorf("with a handler still using it, the client must stay open; call error: %v", err)
	}

	unloadSecond()
	if n, ok := backendPool.References(key); ok {
		t.Errorf("after cleaning up both handlers the pool still holds the client (%d references)", n)
	}
	if _, err := shared.Call(ctx, "anything", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("the released client should be closed; call error: %v", err)
	}

	// Loading the settings again starts a fresh client.
	again, _, err := loadCodeMode(t, config)
	if err != nil {
		t.Fatalf("load again: %v", err)
	}
	if again.backends[0].backend == shared {
		t.Error("a closed client was handed out again")
	}
	if n := poolRefs(key); n != 1 {
		t.Errorf("after loading again: %d references, want 1", n)
	}
}

// A config that fails to load gives back the clients it took before it
// failed (Caddy runs Cleanup after a failed Provision).
func TestCodeModeFailedProvisionReleasesBackends(t *testing.T) {
	const good = `{"name":"kept","url":"http://127.0.0.1:1/release-test"}`
	holder, _, err := loadCodeMode(t, `{"backends":[`+good+`]}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	key := holder.backends[0].key

	for name, bad := range map[string]string{
		"bad url":        `{"name":"broken","url":"ftp://127.0.0.1/mcp"}`,
		"bad name":       `{"name":"my-api","url":"http://127.0.0.1:1/mcp"}`,
		"duplicate name": good,
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := loadCodeMode(t, `{"backends":[`+good+`,`+bad+`]}`); err == nil {
				t.Fatal("loaded without error")
			}
			if n := poolRefs(key); n != 1 {
				t.Errorf("after the failed load: %d references, want 1 (the failed config kept its hold)", n)
			}
		})
	}

	_, _, err = loadCodeMode(t, `{"max_tool_calls":-1,"backends":[`+good+`]}`)
	if err == nil {
		t.Fatal("loaded a negative max_tool_calls without error")
	}
	if n := poolRefs(key); n != 1 {
		t.Errorf("after a failed load before the backends: %d references, want 1", n)
	}
}

// A backend header whose field name is not a valid HTTP field name can
// never be sent; like mcp's `header`, it should be refused at load time,
// naming the backend, instead of leaving the backend unavailable forever.
func TestCodeModeProvisionRejectsInvalidHeaderField(t *testing.T) {
	_, _, err := loadCodeModeCaddyfile(t, "codemode {\n backend shop "+unreachableURL+" {\n  header \"X Key\" v\n }\n}")
	if err == nil {
		t.Fatal("loaded without error, want one naming the backend and the header field")
	}
	for _, want := range []string{`backend "shop"`, `"X Key"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// Every codemode handler in the codemode_* golden files loads as Caddy
// would load it. (TestCaddyfileAdapt loads only the mcp handlers.)
func TestCodeModeAdaptGoldensLoad(t *testing.T) {
	for _, g := range adapttest.Goldens(t, filepath.Join("testdata", "adapt", "codemode_*.caddyfiletest")) {
		t.Run(filepath.Base(g.File), func(t *testing.T) {
			if !g.WantsJSON() {
				t.Skip("an error golden: nothing to load")
			}
			handlers := adaptCodeModeHandlers(t, g.Input)
			if len(handlers) == 0 {
				t.Fatal("the adapted config has no codemode handler")
			}
			for i, raw := range handlers {
				if _, _, err := loadCodeMode(t, string(raw)); err != nil {
					t.Errorf("codemode handler %d does not load: %v", i, err)
				}
			}
		})
	}
}

// echoMCPServer is a stateless mcp-go server whose tool echo answers with
// its text argument.
func echoMCPServer(b *testing.B) *httptest.Server {
	b.Helper()
	srv := server.NewMCPServer("echo", "1")
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(srv, server.WithStateLess(true), server.WithDisableLocalhostProtection(true)))
	b.Cleanup(hs.Close)
	return hs
}

// executeBody is a tools/call of execute, of the 2025-11-25 era without a
// session, whose code makes one backend call and returns its answer.
const executeBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute",` +
	`"arguments":{"code":"return await api.echo({text: \"pong\"})"}}}`

// executions posts executeBody to path n times from clients goroutines,
// each with a connection of its own kept alive, and returns how long they
// took. Every answer must be the execution's success.
func executions(b *testing.B, hc *http.Client, path string, clients, n int) time.Duration {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	failure := make(chan string, clients)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if msg := postExecute(hc, path); msg != "" {
					failure <- msg
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	select {
	case msg := <-failure:
		b.Fatalf("%s: %s", path, msg)
	default:
	}
	return took
}

// postExecute sends one execution and says what was wrong with its
// answer, if anything.
func postExecute(hc *http.Client, path string) string {
	req, err := http.NewRequest(http.MethodPost, "http://"+liveAddr+path, strings.NewReader(executeBody))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err.Error()
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"result":"pong"`)) || bytes.Contains(body, []byte(`"isError":true`)) {
		return fmt.Sprintf("status %d: %.300s", resp.StatusCode, body)
	}
	return ""
}

// quietCaddy, in the global options, keeps Caddy's logs off the lines
// where the benchmarks print their figures.
const quietCaddy = "log {\n\t\toutput discard\n\t}"

// keepAliveClient is an HTTP client that keeps a connection per client
// goroutine.
func keepAliveClient(b *testing.B, clients int) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// BenchmarkCodeModeOverHTTP: executions per second through a real Caddy,
// from 8 clients posting tools/call of execute over HTTP, each execution
// making one call of an mcp-go backend, run in 8 warm workers. Read it on
// an otherwise idle machine: the kernel shares a busy CPU per thread.
func BenchmarkCodeModeOverHTTP(b *testing.B) {
	const clients, perIteration = 8, 1000
	backend := echoMCPServer(b)
	loadCaddyfile(b, quietCaddy, fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend api %[1]s
		max_concurrent %[2]d
	}
}`, backend.URL, clients))
	hc := keepAliveClient(b, clients)
	executions(b, hc, "/code", clients, 4*clients) // warm up
	waitWorkers(b, clients)
	var took time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		took += executions(b, hc, "/code", clients, perIteration)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perIteration)/took.Seconds(), "exec/s")
}

// BenchmarkCodeModeMemory: the resident memory of this process (a real
// Caddy, its code mode handler and the backend) serving executions in a
// pool of 4 warm workers, and serving no code mode at all, and the
// workers' own memory, per worker: all of it (VmRSS) and its private part
// (RssAnon), which is what a worker adds to the machine (the rest is the
// program's file pages, shared). codemode-RssAnon-added is what code mode
// costs in all: Caddy's private memory and the workers'.
func BenchmarkCodeModeMemory(b *testing.B) {
	const workers = 4
	backend := echoMCPServer(b)
	site := fmt.Sprintf(`http://:{$LIVE_PORT} {
	codemode /code {
		backend api %s
		max_concurrent %d
	}
}`, backend.URL, workers)
	hc := keepAliveClient(b, workers)
	// Each reading follows the same executions, then a collection that
	// hands freed memory back.
	settled := func() {
		executions(b, hc, "/code", workers, 200)
		time.Sleep(100 * time.Millisecond)
		debug.FreeOSMemory()
	}
	var without, with, worker [2]int64 // VmRSS, RssAnon
	for i := 0; i < b.N; i++ {
		loadCaddyfile(b, quietCaddy, site)
		waitWorkers(b, workers)
		// Executions that come while the pool is still filling start
		// workers of their own, and the pool stops the extra ones after:
		// the workers read are those of a second round.
		settled()
		pids := waitWorkers(b, workers)
		settled()
		with = residentOf(b, os.Getpid())
		worker = [2]int64{}
		for _, pid := range pids {
			m := residentOf(b, pid)
			worker[0] += m[0] / workers
			worker[1] += m[1] / workers
		}
		loadCaddyfile(b, quietCaddy, `http://:{$LIVE_PORT} {
	respond "no code mode"
}`)
		waitWorkers(b, 0)
		time.Sleep(100 * time.Millisecond)
		debug.FreeOSMemory()
		without = residentOf(b, os.Getpid())
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mib(without[0]), "caddy-without-VmRSS-MiB")
	b.ReportMetric(mib(without[1]), "caddy-without-RssAnon-MiB")
	b.ReportMetric(mib(with[0]), "caddy-VmRSS-MiB")
	b.ReportMetric(mib(with[1]), "caddy-RssAnon-MiB")
	b.ReportMetric(mib(worker[0]), "worker-VmRSS-MiB")
	b.ReportMetric(mib(worker[1]), "worker-RssAnon-MiB")
	b.ReportMetric(mib(with[1]+workers*worker[1]-without[1]), "codemode-RssAnon-added-MiB")
}

// residentOf reads VmRSS and RssAnon of /proc/<pid>/status, in bytes.
func residentOf(b *testing.B, pid int) [2]int64 {
	b.Helper()
	text, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	var out [2]int64
	for _, line := range strings.Split(string(text), "\n") {
		for i, field := range []string{"VmRSS:", "RssAnon:"} {
			if v, ok := strings.CutPrefix(line, field); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					b.Fatalf("/proc/%d/status %s %v", pid, field, err)
				}
				out[i] = kb << 10
			}
		}
	}
	return out
}

// fuzzBackend is an in-process MCP server for FuzzCodeModeHandler, on
// 127.0.0.1, recording the headers and query of each request.
func fuzzBackend(rec *fuzzRecorded) *httptest.Server {
	srv := server.NewMCPServer("fuzz-backend", "1")
	srv.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the arguments."), mcp.WithString("text"), mcp.WithNumber("n")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			out, _ := json.Marshal(req.Params.Arguments)
			return mcp.NewToolResultText(string(out)), nil
		})
	srv.AddTool(mcp.NewTool("fail", mcp.WithDescription("Fail.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("the backend says no"), nil
		})
	srv.AddTool(mcp.NewTool("get-weather", mcp.WithDescription("*/ Weather. /*"), mcp.WithString("city", mcp.Required()),
		mcp.WithOutputSchema[struct {
			Temperature float64 `json:"temperature"`
		}]()),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"temperature": 21.5}, `{"temperature":21.5}`), nil
		})
	srv.AddTool(mcp.NewTool("slow", mcp.WithDescription("Wait.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			return mcp.NewToolResultText("late"), nil
		})
	srv.AddTool(mcp.NewTool("big", mcp.WithDescription("A large answer.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Repeat("y", 200<<10)), nil
		})
	h := server.NewStreamableHTTPServer(srv, server.WithStateLess(true), server.WithDisableLocalhostProtection(true))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		h.ServeHTTP(w, r)
	}))
}

// FuzzCodeModeHandler posts fuzzed JSON-RPC bodies, or tools/calls of
// fuzzed code, to a provisioned codemode handler whose backend is an
// in-process MCP server. Invariants: no panic, no hang; the status is one
// an MCP endpoint gives; a 200 is valid JSON (or an event stream of JSON);
// a tools/call is ended by the execution timeout, not by the request's
// own deadline; a result's text stays within max_output plus a
// small margin; the backend's secret header never reaches the client, and
// the backend never sees a value the client sent in a header or the query.
func FuzzCodeModeHandler(f *testing.F) {
	type seed struct {
		body, code, version, origin, host string
		flags                             byte
	}
	seeds := []seed{
		{code: `return 1 + 1`},
		{code: `const r = await api.echo({text: "hi", n: 1}); console.log(r.text); return r`},
		{code: `return await Promise.all([1, 2, 3].map(n => api.echo({n})))`},
		{code: `return await api.get_weather({city: "Paris"})`},
		{code: `try { await api.fail({}) } catch (e) { return [e.message, e.backend, e.tool] }`},
		{code: `await api.fail({})`},
		{code: `await api.slow({})`},
		{code: `return (await api.big({})).length`},
		{code: `return await api.nope({})`},
		{code: `for (let i = 0; i < 100; i++) await api.echo({n: i})`},
		{code: `while (true) {}`},
		{code: `for (let i = 0; ; i++) console.log("x".repeat(1000) + i)`},
		{code: `"x".repeat(2**40)`},
		{code: `/^(?=(a+)+b)/.test("a".repeat(40))`},
		{code: `let o = {}; for (let i = 0; i < 100000; i++) o = {o}; return o`},
		{code: "```ts\nconst n: number = 3;\nreturn n\n```"},
		{code: `async () => { return await api.echo({text: "{env.FUZZ_CM_SECRET}"}) }`},
		{code: `return [typeof fetch, typeof require, Object.keys(globalThis)]`},
		{code: `return Object.getOwnPropertyNames(api).concat(Object.getOwnPropertyNames(Object.getPrototypeOf(api)))`},
		{code: `return api.echo.toString() + api.constructor.toString()`},
		{code: `foo(;`},
		{code: "\x00"},
		{code: `return 1`, version: "2026-07-28", flags: 1},
		{code: `return 1`, flags: 2},
		{code: `return 1`, origin: "https://evil.example"},
		{code: `return 1`, host: "evil.com", origin: "http://evil.com", flags: 4},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":1}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute"}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"code":"return 1","extra":true}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"api.echo","arguments":{}}}`, version: "2025-11-25"},
		{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{body: `[]`},
		{body: `{`},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.code, s.version, s.origin, s.host, s.flags)
	}

	secret := "cm-secret-" + fuzzRandomHex(f)
	marker := "client-" + fuzzRandomHex(f)
	os.Setenv("FUZZ_CM_SECRET", secret)
	rec := &fuzzRecorded{}
	backend := fuzzBackend(rec)
	f.Cleanup(backend.Close)

	config, err := json.Marshal(&CodeMode{
		Backends: []*CodeModeBackend{{Name: "api", URL: backend.URL, Headers: http.Header{"Authorization": {"Bearer {env.FUZZ_CM_SECRET}"}},
			Timeout: caddy.Duration(time.Second)}},
		Timeout:       caddy.Duration(200 * time.Millisecond),
		MaxToolCalls:  20,
		MaxOutput:     4096,
		MaxConcurrent: 8,
		Endpoint:      Endpoint{MaxRequestSize: 128 << 10, AllowOrigins: []string{"https://app.example.com"}},
	})
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	f.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("http.handlers.codemode", config)
	if err != nil {
		f.Fatal(err)
	}
	cm := mod.(*CodeMode)
	cm.logger = zap.NewNop()
	fuzzQuiet(&cm.Endpoint)
	handle := func(w http.ResponseWriter, r *http.Request) error { return cm.ServeHTTP(w, r, nil) }

	// Wait for the backend's tools, so that executions call it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools, err := cm.backends[0].backend.Tools(context.Background(), time.Now().Add(time.Second))
		if err == nil && len(tools) > 0 {
			break
		}
		if time.Now().After(deadline) {
			f.Fatalf("the backend did not come up: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	limits := cm.runner.Limits()

	f.Fuzz(func(t *testing.T, body []byte, code, version, origin, host string, flags byte) {
		generated := len(body) == 0
		if generated {
			params := map[string]any{"name": cm.ToolName, "arguments": map[string]any{"code": code}}
			if flags&1 != 0 {
				params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
					"io.modelcontextprotocol/clientCapabilities": map[string]any{}, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "f", "version": "1"}}
			}
			body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		}
		mcpMethod, mcpName := "", ""
		if generated && flags&1 != 0 {
			mcpMethod, mcpName = "tools/call", cm.ToolName
		}
		header := fuzzHeaders(flags&^(3|16|32), version, mcpMethod, mcpName, origin)
		if flags&2 != 0 {
			header.Set("Accept", "application/json")
		}
		header.Set("Authorization", "Bearer "+marker)
		header.Set("Cookie", "session="+marker)
		header.Set("X-Forwarded-For", marker)
		rec.take()
		status, w, expired := fuzzServe(t, handle, fuzzRequest{
			method:   http.MethodPost,
			body:     body,
			header:   header,
			host:     host,
			loopback: flags&4 != 0,
			query:    "?token=" + marker,
		})
		msgs := fuzzCheckAnswer(t, status, w)
		// The execution timeout (200ms), not the request's own deadline
		// (fuzzRequestTimeout, a hang guard), ends a tools/call.
		if expired {
			t.Errorf("the request ran until its own deadline of %s; the execution timeout of %s did not end it", fuzzRequestTimeout, limits.Timeout)
		}
		if bytes.Contains(w.Body.Bytes(), []byte(secret)) {
			t.Fatalf("the answer shows the backend's secret: %.1000s", w.Body.Bytes())
		}
		for _, m := range msgs {
			var resp struct {
				Result *struct {
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(m, &resp) != nil || resp.Result == nil {
				continue
			}
			for _, c := range resp.Result.Content {
				if c.Type == "text" && len(c.Text) > limits.MaxOutput+512 {
					t.Errorf("a result text is %d bytes; max_output is %d", len(c.Text), limits.MaxOutput)
				}
			}
		}
		for _, line := range rec.take() {
			if strings.Contains(line, marker) {
				t.Fatalf("the backend saw a client value: %.300q", line)
			}
		}
	})
}
