package caddymcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
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
				t.Fatal(resultText(res))
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
				if !strings.HasPrefix(shown, `[{"pad":"xxx`) || !strings.Contains(resultText(res), shown+"\n[cut: ") {
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
		{"code": `"x".repeat(2 ** 30)`},
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
