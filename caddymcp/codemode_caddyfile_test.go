package caddymcp

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unmarshalCodeMode runs the codemode parser on a Caddyfile snippet that
// starts with the directive name, as httpcaddyfile hands it over.
func unmarshalCodeMode(input string) (*CodeMode, error) {
	cm := new(CodeMode)
	err := cm.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
	return cm, err
}

// backendSnippet wraps the lines of one backend block in a codemode
// directive; the backend is called api.
func backendSnippet(lines string) string {
	return "codemode {\n\tbackend api http://127.0.0.1:8080/mcp {\n" + lines + "\n\t}\n}"
}

func TestCodeModeUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  *CodeMode
	}{
		{
			name:  "bare directive",
			input: `codemode`,
			want:  &CodeMode{},
		},
		{
			name:  "empty block",
			input: "codemode {\n}",
			want:  &CodeMode{},
		},
		{
			name: "every handler subdirective",
			input: `codemode {
				name         gateway
				instructions "Chain the calls in code; return only what is needed."
				tool_name    run_code
				backend shop http://127.0.0.1:8080/mcp
				timeout         90s
				max_tool_calls  50
				max_output      32KiB
				max_code_size   16KB
				max_concurrent  8
				isolation       process
				max_memory      512MiB
				workers         2
				max_request_size 2MiB
				allow_origins   https://app.example.com http://localhost:3000
				allow_hosts     gateway.lan mcp.internal
			}`,
			want: &CodeMode{
				Name:          "gateway",
				Instructions:  "Chain the calls in code; return only what is needed.",
				ToolName:      "run_code",
				Backends:      []*CodeModeBackend{{Name: "shop", URL: "http://127.0.0.1:8080/mcp"}},
				Timeout:       caddy.Duration(90 * time.Second),
				MaxToolCalls:  50,
				MaxOutput:     32 << 10,
				MaxCodeSize:   16000,
				MaxConcurrent: 8,
				Isolation:     "process",
				MaxMemory:     512 << 20,
				Workers:       2,
				Endpoint: Endpoint{
					MaxRequestSize: 2 << 20,
					AllowOrigins:   []string{"https://app.example.com", "http://localhost:3000"},
					AllowHosts:     []string{"gateway.lan", "mcp.internal"},
				},
			},
		},
		{
			name: "every backend subdirective",
			input: `codemode {
				backend github https://api.githubcopilot.com/mcp/ {
					header    Authorization "Bearer {env.API_TOKEN}"
					header    x-tag a
					header    X-Tag b
					transport sse
					tools     get_* list_issues search_?
					timeout   5s
					max_tools         1500
					max_tools_size    8MiB
					max_response_size 32MiB
					max_stream_size   2GiB
				}
			}`,
			want: &CodeMode{Backends: []*CodeModeBackend{{
				Name: "github",
				URL:  "https://api.githubcopilot.com/mcp/",
				Headers: http.Header{
					"Authorization": {"Bearer {env.API_TOKEN}"},
					"X-Tag":         {"a", "b"},
				},
				Transport: "sse",
				Tools:     []string{"get_*", "list_issues", "search_?"},
				Timeout:   caddy.Duration(5 * time.Second),

				MaxTools:        1500,
				MaxToolsSize:    8 << 20,
				MaxResponseSize: 32 << 20,
				MaxStreamSize:   2 << 30,
			}}},
		},
		{
			name:  "transport streamable_http",
			input: backendSnippet("transport streamable_http"),
			want: &CodeMode{Backends: []*CodeModeBackend{{
				Name: "api", URL: "http://127.0.0.1:8080/mcp", Transport: "streamable_http",
			}}},
		},
		{
			name:  "one tools glob",
			input: backendSnippet("tools *"),
			want: &CodeMode{Backends: []*CodeModeBackend{{
				Name: "api", URL: "http://127.0.0.1:8080/mcp", Tools: []string{"*"},
			}}},
		},
		{
			name:  "empty backend block",
			input: "codemode {\n\tbackend api http://127.0.0.1:8080/mcp {\n\t}\n}",
			want:  &CodeMode{Backends: []*CodeModeBackend{{Name: "api", URL: "http://127.0.0.1:8080/mcp"}}},
		},
		{
			// backend is the one repeatable handler line; names are checked
			// at load time, so the parser keeps even duplicates, in order.
			name: "backends keep their order",
			input: `codemode {
				backend weather http://127.0.0.1:8081/mcp
				backend shop http://127.0.0.1:8080/mcp {
					timeout 2s
				}
				backend weather http://127.0.0.1:8082/mcp
			}`,
			want: &CodeMode{Backends: []*CodeModeBackend{
				{Name: "weather", URL: "http://127.0.0.1:8081/mcp"},
				{Name: "shop", URL: "http://127.0.0.1:8080/mcp", Timeout: caddy.Duration(2 * time.Second)},
				{Name: "weather", URL: "http://127.0.0.1:8082/mcp"},
			}},
		},
		{
			name: "a second backend's lines do not count as duplicates of the first's",
			input: `codemode {
				backend a http://127.0.0.1:8081/mcp {
					transport sse
					tools x
					timeout 1s
				}
				backend b http://127.0.0.1:8082/mcp {
					transport sse
					tools y
					timeout 2s
				}
			}`,
			want: &CodeMode{Backends: []*CodeModeBackend{
				{Name: "a", URL: "http://127.0.0.1:8081/mcp", Transport: "sse", Tools: []string{"x"}, Timeout: caddy.Duration(time.Second)},
				{Name: "b", URL: "http://127.0.0.1:8082/mcp", Transport: "sse", Tools: []string{"y"}, Timeout: caddy.Duration(2 * time.Second)},
			}},
		},
		{
			name: "backend timeout does not set the handler timeout",
			input: `codemode {
				backend api http://127.0.0.1:8080/mcp {
					timeout 3s
				}
				timeout 1m
			}`,
			want: &CodeMode{
				Backends: []*CodeModeBackend{{Name: "api", URL: "http://127.0.0.1:8080/mcp", Timeout: caddy.Duration(3 * time.Second)}},
				Timeout:  caddy.Duration(time.Minute),
			},
		},
		{
			name: "caddy durations and fractional sizes",
			input: `codemode {
				timeout 1d
				max_output 1.5KiB
				max_code_size 1MB
				max_memory 1TiB
				max_request_size 100
			}`,
			want: &CodeMode{
				Timeout:     caddy.Duration(24 * time.Hour),
				MaxOutput:   1536,
				MaxCodeSize: 1000000,
				MaxMemory:   1 << 40,
				Endpoint:    Endpoint{MaxRequestSize: 100},
			},
		},
		{
			name:  "counts of one",
			input: "codemode {\n max_tool_calls 1\n max_concurrent 1\n}",
			want:  &CodeMode{MaxToolCalls: 1, MaxConcurrent: 1},
		},
		{
			name:  "quoted instructions keep their spaces and placeholders",
			input: "codemode {\n instructions `Use {env.NOT_RESOLVED} as is.`\n}",
			want:  &CodeMode{Instructions: "Use {env.NOT_RESOLVED} as is."},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := unmarshalCodeMode(tc.input)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", asJSON(got), asJSON(tc.want))
			}
		})
	}
}

func TestCodeModeUnmarshalCaddyfileErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr []string // each must appear in the error
	}{
		// Argument counts, handler level.
		{name: "argument on the codemode line", input: "codemode /code extra {\n}", wantErr: []string{"wrong argument count", "'/code'"}},
		{name: "name without value", input: "codemode {\n name\n}", wantErr: []string{"Testfile:2", "wrong argument count", "'name'"}},
		{name: "name with two values", input: "codemode {\n name a b\n}", wantErr: []string{"wrong argument count", "'b'"}},
		{name: "instructions without value", input: "codemode {\n instructions\n}", wantErr: []string{"wrong argument count", "'instructions'"}},
		{name: "unquoted multi-word instructions", input: "codemode {\n instructions use it well\n}", wantErr: []string{"wrong argument count", "'it'"}},
		{name: "tool_name without value", input: "codemode {\n tool_name\n}", wantErr: []string{"wrong argument count", "'tool_name'"}},
		{name: "tool_name with two values", input: "codemode {\n tool_name run code\n}", wantErr: []string{"wrong argument count", "'code'"}},
		{name: "timeout without value", input: "codemode {\n timeout\n}", wantErr: []string{"wrong argument count", "'timeout'"}},
		{name: "timeout with two values", input: "codemode {\n timeout 1s 2s\n}", wantErr: []string{"wrong argument count", "'2s'"}},
		{name: "max_tool_calls without value", input: "codemode {\n max_tool_calls\n}", wantErr: []string{"wrong argument count", "'max_tool_calls'"}},
		{name: "max_tool_calls with two values", input: "codemode {\n max_tool_calls 1 2\n}", wantErr: []string{"wrong argument count", "'2'"}},
		{name: "max_output without value", input: "codemode {\n max_output\n}", wantErr: []string{"wrong argument count", "'max_output'"}},
		{name: "max_output with two values", input: "codemode {\n max_output 1KiB 2KiB\n}", wantErr: []string{"wrong argument count", "'2KiB'"}},
		{name: "max_code_size without value", input: "codemode {\n max_code_size\n}", wantErr: []string{"wrong argument count", "'max_code_size'"}},
		{name: "max_code_size with two values", input: "codemode {\n max_code_size 1KiB 2KiB\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_concurrent without value", input: "codemode {\n max_concurrent\n}", wantErr: []string{"wrong argument count", "'max_concurrent'"}},
		{name: "max_concurrent with two values", input: "codemode {\n max_concurrent 1 2\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_memory without value", input: "codemode {\n max_memory\n}", wantErr: []string{"wrong argument count", "'max_memory'"}},
		{name: "max_memory with two values", input: "codemode {\n max_memory 1GiB 2GiB\n}", wantErr: []string{"wrong argument count"}},
		{name: "max_request_size without value", input: "codemode {\n max_request_size\n}", wantErr: []string{"wrong argument count", "'max_request_size'"}},
		{name: "max_request_size with two values", input: "codemode {\n max_request_size 1MiB 2MiB\n}", wantErr: []string{"wrong argument count"}},
		{name: "allow_origins without value", input: "codemode {\n allow_origins\n}", wantErr: []string{"wrong argument count", "'allow_origins'"}},
		{name: "allow_hosts without value", input: "codemode {\n allow_hosts\n}", wantErr: []string{"wrong argument count", "'allow_hosts'"}},

		// Argument counts, backend level.
		{name: "backend without name and url", input: "codemode {\n backend\n}", wantErr: []string{"Testfile:2", "wrong argument count", "'backend'"}},
		{name: "backend without url", input: "codemode {\n backend api\n}", wantErr: []string{"wrong argument count", "'api'"}},
		{name: "backend without url, with a block", input: "codemode {\n backend api {\n  timeout 1s\n }\n}", wantErr: []string{"wrong argument count"}},
		{name: "backend with three arguments", input: "codemode {\n backend api http://a/mcp http://b/mcp\n}", wantErr: []string{"wrong argument count", "'http://b/mcp'"}},
		{name: "header with one value", input: backendSnippet("header X-Key"), wantErr: []string{"Testfile:3", "wrong argument count", "'X-Key'"}},
		{name: "header without values", input: backendSnippet("header"), wantErr: []string{"wrong argument count", "'header'"}},
		{name: "header with three values", input: backendSnippet("header X-Key a b"), wantErr: []string{"wrong argument count", "'b'"}},
		{name: "transport without value", input: backendSnippet("transport"), wantErr: []string{"wrong argument count", "'transport'"}},
		{name: "transport with two values", input: backendSnippet("transport sse streamable_http"), wantErr: []string{"wrong argument count", "'streamable_http'"}},
		{name: "tools without globs", input: backendSnippet("tools"), wantErr: []string{"wrong argument count", "'tools'"}},
		{name: "backend timeout without value", input: backendSnippet("timeout"), wantErr: []string{"wrong argument count", "'timeout'"}},
		{name: "backend timeout with two values", input: backendSnippet("timeout 1s 2s"), wantErr: []string{"wrong argument count", "'2s'"}},
		{name: "max_tools without value", input: backendSnippet("max_tools"), wantErr: []string{"Testfile:3", "wrong argument count", "'max_tools'"}},
		{name: "max_tools with two values", input: backendSnippet("max_tools 1 2"), wantErr: []string{"wrong argument count", "'2'"}},
		{name: "max_tools_size without value", input: backendSnippet("max_tools_size"), wantErr: []string{"wrong argument count", "'max_tools_size'"}},
		{name: "max_tools_size with two values", input: backendSnippet("max_tools_size 1MiB 2MiB"), wantErr: []string{"wrong argument count", "'2MiB'"}},
		{name: "backend max_response_size without value", input: backendSnippet("max_response_size"), wantErr: []string{"wrong argument count", "'max_response_size'"}},
		{name: "backend max_response_size with two values", input: backendSnippet("max_response_size 1MiB 2MiB"), wantErr: []string{"wrong argument count", "'2MiB'"}},
		{name: "max_stream_size without value", input: backendSnippet("max_stream_size"), wantErr: []string{"wrong argument count", "'max_stream_size'"}},
		{name: "max_stream_size with two values", input: backendSnippet("max_stream_size 1GiB 2GiB"), wantErr: []string{"wrong argument count", "'2GiB'"}},

		// Duplicates, handler level.
		{name: "name twice", input: "codemode {\n name a\n name b\n}", wantErr: []string{"Testfile:3", "name is set twice"}},
		{name: "name twice, second without value", input: "codemode {\n name a\n name\n}", wantErr: []string{"name is set twice"}},
		{name: "instructions twice", input: "codemode {\n instructions a\n instructions b\n}", wantErr: []string{"instructions is set twice"}},
		{name: "tool_name twice", input: "codemode {\n tool_name a\n tool_name b\n}", wantErr: []string{"tool_name is set twice"}},
		{name: "timeout twice", input: "codemode {\n timeout 1s\n timeout 2s\n}", wantErr: []string{"timeout is set twice"}},
		{name: "max_tool_calls twice", input: "codemode {\n max_tool_calls 1\n max_tool_calls 2\n}", wantErr: []string{"max_tool_calls is set twice"}},
		{name: "max_output twice", input: "codemode {\n max_output 1KiB\n max_output 2KiB\n}", wantErr: []string{"max_output is set twice"}},
		{name: "max_code_size twice", input: "codemode {\n max_code_size 1KiB\n max_code_size 2KiB\n}", wantErr: []string{"max_code_size is set twice"}},
		{name: "max_concurrent twice", input: "codemode {\n max_concurrent 1\n max_concurrent 2\n}", wantErr: []string{"max_concurrent is set twice"}},
		{name: "isolation without value", input: "codemode {\n isolation\n}", wantErr: []string{"wrong argument count", "'isolation'"}},
		{name: "unknown isolation", input: "codemode {\n isolation v8\n}", wantErr: []string{`isolation "v8": want process`}},
		{name: "in_process", input: "codemode {\n isolation in_process\n}", wantErr: []string{"isolation in_process is no longer offered", "every execution runs in a worker process"}},
		{name: "isolation twice", input: "codemode {\n isolation process\n isolation process\n}", wantErr: []string{"isolation is set twice"}},
		{name: "workers without value", input: "codemode {\n workers\n}", wantErr: []string{"wrong argument count", "'workers'"}},
		{name: "workers not a number", input: "codemode {\n workers many\n}", wantErr: []string{"workers"}},
		{name: "max_memory twice", input: "codemode {\n max_memory 1GiB\n max_memory 2GiB\n}", wantErr: []string{"max_memory is set twice"}},
		{name: "max_request_size twice", input: "codemode {\n max_request_size 1MiB\n max_request_size 2MiB\n}", wantErr: []string{"max_request_size is set twice"}},
		{name: "allow_origins twice", input: "codemode {\n allow_origins https://a\n allow_origins https://b\n}", wantErr: []string{"allow_origins is set twice"}},
		{name: "allow_hosts twice", input: "codemode {\n allow_hosts a\n allow_hosts b\n}", wantErr: []string{"allow_hosts is set twice"}},

		// Duplicates, backend level (header is the repeatable one).
		{name: "transport twice", input: backendSnippet("transport sse\ntransport sse"), wantErr: []string{"Testfile:4", "backend api: transport is set twice"}},
		{name: "tools twice", input: backendSnippet("tools a\ntools b"), wantErr: []string{"backend api: tools is set twice"}},
		{name: "backend timeout twice", input: backendSnippet("timeout 1s\ntimeout 2s"), wantErr: []string{"backend api: timeout is set twice"}},
		{name: "max_tools twice", input: backendSnippet("max_tools 1\nmax_tools 2"), wantErr: []string{"Testfile:4", "backend api: max_tools is set twice"}},
		{name: "max_tools_size twice", input: backendSnippet("max_tools_size 1MiB\nmax_tools_size 2MiB"), wantErr: []string{"backend api: max_tools_size is set twice"}},
		{name: "backend max_response_size twice", input: backendSnippet("max_response_size 1MiB\nmax_response_size 2MiB"), wantErr: []string{"backend api: max_response_size is set twice"}},
		{name: "max_stream_size twice", input: backendSnippet("max_stream_size 1GiB\nmax_stream_size 2GiB"), wantErr: []string{"backend api: max_stream_size is set twice"}},

		// Unknown subdirectives at each level.
		{name: "unknown handler subdirective", input: "codemode {\n backends api http://a/mcp\n}", wantErr: []string{"Testfile:2", `unknown subdirective "backends"`}},
		{name: "mcp's upstream at codemode level", input: "codemode {\n upstream http://a\n}", wantErr: []string{`unknown subdirective "upstream"`}},
		{name: "mcp's tool at codemode level", input: "codemode {\n tool t {\n }\n}", wantErr: []string{`unknown subdirective "tool"`}},
		{name: "backend header at handler level", input: "codemode {\n header X-Key v\n}", wantErr: []string{`unknown subdirective "header"`}},
		{name: "backend transport at handler level", input: "codemode {\n transport sse\n}", wantErr: []string{`unknown subdirective "transport"`}},
		{name: "backend tools at handler level", input: "codemode {\n tools a\n}", wantErr: []string{`unknown subdirective "tools"`}},
		{name: "backend max_tools at handler level", input: "codemode {\n max_tools 5\n}", wantErr: []string{`unknown subdirective "max_tools"`}},
		{name: "backend max_stream_size at handler level", input: "codemode {\n max_stream_size 1GiB\n}", wantErr: []string{`unknown subdirective "max_stream_size"`}},
		{name: "max_response_size at handler level", input: "codemode {\n max_response_size 1MiB\n}", wantErr: []string{`unknown subdirective "max_response_size"`}},
		{name: "unknown backend subdirective", input: backendSnippet("url http://a/mcp"), wantErr: []string{"Testfile:3", `backend api: unknown subdirective "url"`}},
		{name: "handler-level word in a backend", input: backendSnippet("max_tool_calls 5"), wantErr: []string{`backend api: unknown subdirective "max_tool_calls"`}},
		{name: "name in a backend", input: backendSnippet("name other"), wantErr: []string{`backend api: unknown subdirective "name"`}},
		{name: "nested backend", input: backendSnippet("backend b http://b/mcp"), wantErr: []string{`backend api: unknown subdirective "backend"`}},

		// Bad values.
		{name: "unknown transport", input: backendSnippet("transport websocket"), wantErr: []string{"Testfile:3", `backend api: transport "websocket": want streamable_http or sse`}},
		{name: "transport with a dash", input: backendSnippet("transport streamable-http"), wantErr: []string{`transport "streamable-http"`}},
		{name: "transport in upper case", input: backendSnippet("transport SSE"), wantErr: []string{`transport "SSE"`}},
		{name: "bad duration", input: "codemode {\n timeout soon\n}", wantErr: []string{"Testfile:2", `timeout "soon"`}},
		{name: "duration without a unit", input: "codemode {\n timeout 30\n}", wantErr: []string{`timeout "30"`}},
		{name: "zero duration", input: "codemode {\n timeout 0s\n}", wantErr: []string{"timeout must be positive", `"0s"`}},
		{name: "negative duration", input: "codemode {\n timeout -5s\n}", wantErr: []string{"timeout must be positive", `"-5s"`}},
		{name: "bad backend duration", input: backendSnippet("timeout later"), wantErr: []string{"Testfile:3", `timeout "later"`}},
		{name: "zero backend duration", input: backendSnippet("timeout 0s"), wantErr: []string{"timeout must be positive", `"0s"`}},
		{name: "negative backend duration", input: backendSnippet("timeout -1s"), wantErr: []string{"timeout must be positive", `"-1s"`}},
		{name: "bad max_output", input: "codemode {\n max_output lots\n}", wantErr: []string{"Testfile:2", `max_output "lots": want a size`}},
		{name: "zero max_output", input: "codemode {\n max_output 0\n}", wantErr: []string{`max_output "0": want a size`}},
		{name: "negative max_output", input: "codemode {\n max_output -1\n}", wantErr: []string{`max_output "-1": want a size`}},
		{name: "bad max_code_size", input: "codemode {\n max_code_size x\n}", wantErr: []string{`max_code_size "x": want a size`}},
		{name: "zero max_code_size", input: "codemode {\n max_code_size 0KiB\n}", wantErr: []string{`max_code_size "0KiB": want a size`}},
		{name: "huge max_code_size", input: "codemode {\n max_code_size 2TiB\n}", wantErr: []string{`max_code_size "2TiB": want a size`}},
		{name: "bad max_memory", input: "codemode {\n max_memory plenty\n}", wantErr: []string{`max_memory "plenty": want a size`}},
		{name: "zero max_memory", input: "codemode {\n max_memory 0\n}", wantErr: []string{`max_memory "0": want a size`}},
		{name: "huge max_memory", input: "codemode {\n max_memory 2TiB\n}", wantErr: []string{`max_memory "2TiB": want a size`}},
		{name: "bad max_request_size", input: "codemode {\n max_request_size big\n}", wantErr: []string{`max_request_size "big": want a size`}},
		{name: "negative max_request_size", input: "codemode {\n max_request_size -1\n}", wantErr: []string{`max_request_size "-1"`}},
		{name: "zero max_tool_calls", input: "codemode {\n max_tool_calls 0\n}", wantErr: []string{"Testfile:2", `max_tool_calls "0": want a positive whole number`}},
		{name: "negative max_tool_calls", input: "codemode {\n max_tool_calls -1\n}", wantErr: []string{`max_tool_calls "-1": want a positive whole number`}},
		{name: "word max_tool_calls", input: "codemode {\n max_tool_calls x\n}", wantErr: []string{`max_tool_calls "x": want a positive whole number`}},
		{name: "fractional max_tool_calls", input: "codemode {\n max_tool_calls 1.5\n}", wantErr: []string{`max_tool_calls "1.5": want a positive whole number`}},
		{name: "max_tool_calls with a unit", input: "codemode {\n max_tool_calls 10k\n}", wantErr: []string{`max_tool_calls "10k"`}},
		{name: "max_tool_calls past int", input: "codemode {\n max_tool_calls 99999999999999999999\n}", wantErr: []string{`max_tool_calls "99999999999999999999"`}},
		{name: "zero max_concurrent", input: "codemode {\n max_concurrent 0\n}", wantErr: []string{`max_concurrent "0": want a positive whole number`}},
		{name: "negative max_concurrent", input: "codemode {\n max_concurrent -1\n}", wantErr: []string{`max_concurrent "-1": want a positive whole number`}},
		{name: "word max_concurrent", input: "codemode {\n max_concurrent x\n}", wantErr: []string{`max_concurrent "x": want a positive whole number`}},
		{name: "zero max_tools", input: backendSnippet("max_tools 0"), wantErr: []string{"Testfile:3", `max_tools "0": want a positive whole number`}},
		{name: "negative max_tools", input: backendSnippet("max_tools -5"), wantErr: []string{`max_tools "-5": want a positive whole number`}},
		{name: "max_tools with a unit", input: backendSnippet("max_tools 2k"), wantErr: []string{`max_tools "2k": want a positive whole number`}},
		{name: "bad max_tools_size", input: backendSnippet("max_tools_size lots"), wantErr: []string{"Testfile:3", `max_tools_size "lots": want a size`}},
		{name: "zero max_tools_size", input: backendSnippet("max_tools_size 0"), wantErr: []string{`max_tools_size "0": want a size`}},
		{name: "huge max_tools_size", input: backendSnippet("max_tools_size 2TiB"), wantErr: []string{`max_tools_size "2TiB": want a size`}},
		{name: "bad backend max_response_size", input: backendSnippet("max_response_size big"), wantErr: []string{`max_response_size "big": want a size`}},
		{name: "zero backend max_response_size", input: backendSnippet("max_response_size 0KiB"), wantErr: []string{`max_response_size "0KiB": want a size`}},
		{name: "negative backend max_response_size", input: backendSnippet("max_response_size -1"), wantErr: []string{`max_response_size "-1": want a size`}},
		{name: "bad max_stream_size", input: backendSnippet("max_stream_size endless"), wantErr: []string{`max_stream_size "endless": want a size`}},
		{name: "zero max_stream_size", input: backendSnippet("max_stream_size 0"), wantErr: []string{`max_stream_size "0": want a size`}},
		{name: "huge max_stream_size", input: backendSnippet("max_stream_size 2TiB"), wantErr: []string{`max_stream_size "2TiB": want a size`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := unmarshalCodeMode(tc.input)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// An error in one backend names that backend, not another one.
func TestCodeModeUnmarshalCaddyfileNamesTheFailingBackend(t *testing.T) {
	_, err := unmarshalCodeMode(`codemode {
		backend shop http://127.0.0.1:8080/mcp {
			transport sse
		}
		backend weather http://127.0.0.1:8081/mcp {
			transport ws
		}
	}`)
	if err == nil {
		t.Fatal("no error, want one for the weather backend's transport")
	}
	if !strings.Contains(err.Error(), `backend weather: transport "ws"`) || strings.Contains(err.Error(), "shop") {
		t.Errorf("error %q should name the weather backend and only it", err)
	}
}

// FuzzCodeModeCaddyfile parses fuzzed Caddyfile text with the codemode
// directive's parser; what parses is turned into JSON and loaded
// (Provision, Validate, Cleanup). Backend hosts are pointed at a closed
// port on 127.0.0.1 first, so that the background connections reach no
// network. Invariants: no panic and no hang; errors are fine.
func FuzzCodeModeCaddyfile(f *testing.F) {
	for _, s := range append(fuzzCaddyfileSeeds("codemode"), fuzzAdaptSeeds(f, "codemode")...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cm := new(CodeMode)
		if fuzzParse(t, text, cm.UnmarshalCaddyfile) != nil {
			return
		}
		for _, b := range cm.Backends {
			if u, err := url.Parse(b.URL); err == nil && u.Host != "" {
				u.Host = "127.0.0.1:1"
				b.URL = u.String()
			}
		}
		fuzzLoadParsed(t, "http.handlers.codemode", cm)
	})
}
