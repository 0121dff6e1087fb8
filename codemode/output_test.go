package codemode_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/internal/codemodetest"
)

// lines100 is console.log of n lines of exactly 100 bytes: "line 7....".
func lines100(n int) string {
	return fmt.Sprintf(`for (let i = 0; i < %d; i++) console.log(("line " + i).padEnd(100, "."));`, n)
}

func line100(i int) string {
	l := fmt.Sprintf("line %d", i)
	return l + strings.Repeat(".", 100-len(l))
}

func consoleCut(n, maxOutput int) string {
	return fmt.Sprintf("[%d more console line(s) cut: the output is limited to %d bytes (max_output)]", n, maxOutput)
}

func TestOutputCounts(t *testing.T) {
	const bigValue = `return Array(300).fill({pad: "x".repeat(100)})` // 33,301 bytes of JSON
	tests := []struct {
		name      string
		limits    codemode.Limits
		code      string
		wantLogs  []string // exactly
		wantText  string   // exactly, "" to skip
		wantShown int      // bytes of the value shown, -1 if it is whole
	}{
		{
			name:     "short lines beside a big result",
			code:     `console.log("one"); console.log("two"); console.log("three");` + bigValue,
			wantLogs: []string{"one", "two", "three"},
			// 24,576 - 320 bytes, less the 14 the lines take.
			wantShown: 24242,
		},
		{
			name:      "every line cut beside a big result",
			limits:    codemode.Limits{MaxOutput: 4096},
			code:      `for (let i = 0; i < 3; i++) console.log("x".repeat(1000));` + bigValue,
			wantLogs:  []string{consoleCut(3, 4096)},
			wantShown: 2832, // 4,096 - 320, less the quarter kept for lines
		},
		{
			name: "lines cut by the console buffer and then beside the result",
			code: lines100(400) + bigValue,
			wantLogs: func() []string {
				// A quarter of 24,256 bytes holds 60 lines of 101.
				var l []string
				for i := 0; i < 60; i++ {
					l = append(l, line100(i))
				}
				return append(l, consoleCut(340, codemode.DefaultMaxOutput))
			}(),
			wantShown: 24256 - 6064,
		},
		{
			name:   "a line counted after the buffer is full",
			limits: codemode.Limits{MaxOutput: 4096},
			// The buffer keeps 40 lines and counts 1; the text has room for 37.
			code: lines100(41) + `console.log("short"); return 1`,
			wantLogs: func() []string {
				var l []string
				for i := 0; i < 37; i++ {
					l = append(l, line100(i))
				}
				return append(l, consoleCut(5, 4096))
			}(),
			wantShown: -1,
		},
		{
			name:      "nothing cut",
			code:      `console.log("a", 1, {b: 2}); return {ok: true}`,
			wantLogs:  []string{`a 1 {"b":2}`},
			wantText:  "Console output:\na 1 {\"b\":2}\n\nResult:\n{\"ok\":true}",
			wantShown: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := codemodetest.Run(t, tt.limits, tt.code)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			maxOutput := codemodetest.Runner(tt.limits).Limits().MaxOutput
			if len(res.Text) > maxOutput {
				t.Errorf("the text is %d bytes, over max_output (%d)", len(res.Text), maxOutput)
			}
			if !reflect.DeepEqual(res.Logs, tt.wantLogs) {
				t.Errorf("logs:\n%q\nwant:\n%q", res.Logs, tt.wantLogs)
			}
			wantCut := tt.wantShown >= 0 || strings.HasSuffix(tt.wantLogs[len(tt.wantLogs)-1], "(max_output)]")
			if res.Cut != wantCut || res.ValueCut != (tt.wantShown >= 0) {
				t.Errorf("Cut %v, ValueCut %v; want %v, %v", res.Cut, res.ValueCut, wantCut, tt.wantShown >= 0)
			}
			text := "Console output:\n" + strings.Join(tt.wantLogs, "\n") + "\n\nResult:\n"
			if tt.wantShown >= 0 {
				if len(res.ValueShown) != tt.wantShown || !strings.HasPrefix(string(res.Value), res.ValueShown) {
					t.Errorf("%d bytes of the value shown, want the first %d", len(res.ValueShown), tt.wantShown)
				}
				text += res.ValueShown + fmt.Sprintf("\n[cut: %d of %d bytes shown; the output is limited to %d bytes (max_output). Return less: filter, slice or pick fields in the code.]",
					tt.wantShown, len(res.Value), maxOutput)
			} else {
				text += string(res.Value)
			}
			if tt.wantText != "" && tt.wantText != text {
				t.Fatalf("test table: wantText %q does not match the text built from wantLogs %q", tt.wantText, text)
			}
			if res.Text != text {
				t.Errorf("text:\n%s\nwant:\n%s", codemodetest.Shorten(res.Text, 600), codemodetest.Shorten(text, 600))
			}
		})
	}
}

// TestOutputLimitHolds: whatever the mix of lines, result and error, the
// text fits in max_output and the lines shown plus the lines counted as
// cut are the lines printed.
func TestOutputLimitHolds(t *testing.T) {
	for _, maxOutput := range []int{1024, 4096, codemode.DefaultMaxOutput} {
		for _, lines := range []int{0, 1, 30, 500} {
			for _, tail := range []string{`return 1`, `return "é".repeat(20000)`, `throw new Error("e".repeat(50000))`} {
				code := lines100(lines) + tail
				res := codemodetest.Run(t, codemode.Limits{MaxOutput: maxOutput}, code)
				if len(res.Text) > maxOutput {
					t.Errorf("max_output %d, %d lines, %s: the text is %d bytes", maxOutput, lines, tail, len(res.Text))
				}
				shown, cut := 0, 0
				for _, l := range res.Logs {
					if n, err := fmt.Sscanf(l, "[%d more console line(s) cut", &cut); n == 1 && err == nil {
						continue
					}
					shown++
				}
				if shown+cut != lines {
					t.Errorf("max_output %d, %d lines, %s: %d lines shown and %d cut", maxOutput, lines, tail, shown, cut)
				}
			}
		}
	}
}
