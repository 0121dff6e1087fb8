package codemode

import (
	"fmt"
	"strings"
)

// format writes what the model reads: the error or the result, and the
// console output, within maxOutput bytes. What does not fit is cut with a
// marker that says what was cut.
func format(res *Result, maxOutput int) string {
	var head string
	switch {
	case res.Err != nil:
		head = res.Err.Error()
	case res.Value != nil:
		head = string(res.Value)
	}
	logs := strings.Join(res.Logs, "\n")

	// The result (or error) comes first in the budget: it is the answer.
	const room = 256 // for the headers and markers
	if len(head) > maxOutput-room {
		keep := cutUTF8(head, maxOutput-room)
		head = keep + fmt.Sprintf("\n[cut: %d of %d bytes shown; the output is limited to %d bytes (max_output). Return less: filter, slice or pick fields in the code.]",
			len(keep), len(head), maxOutput)
	}
	if budget := maxOutput - len(head) - room; len(logs) > budget {
		if budget < 0 {
			budget = 0
		}
		keep := cutUTF8(logs, budget)
		if i := strings.LastIndexByte(keep, '\n'); i >= 0 {
			keep = keep[:i]
		}
		cut := strings.Count(logs[len(keep):], "\n")
		logs = keep + fmt.Sprintf("\n[%d more console line(s) cut: the output is limited to %d bytes (max_output)]", cut, maxOutput)
	}

	var b strings.Builder
	switch {
	case res.Err != nil:
		b.WriteString(head)
		if logs != "" {
			b.WriteString("\n\nConsole output before the error:\n")
			b.WriteString(logs)
		}
	case logs == "" && res.Value == nil:
		b.WriteString("The code finished without returning a value or printing anything.")
	case logs == "":
		b.WriteString(head)
	case res.Value == nil:
		b.WriteString("Console output:\n")
		b.WriteString(logs)
	default:
		b.WriteString("Console output:\n")
		b.WriteString(logs)
		b.WriteString("\n\nResult:\n")
		b.WriteString(head)
	}
	return b.String()
}

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
