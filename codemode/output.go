package codemode

import (
	"fmt"
	"strings"
)

// outputRoom is the part of max_output kept for the headers and the cut
// markers around the result and the console lines.
const outputRoom = 320

// Output is what an execution printed: the console lines kept, how many
// more were cut, and the sandbox's own notes.
type Output struct {
	Lines []string
	Cut   int
	Notes []string
}

// Format writes what the model reads into res.Text: the error or the
// result, and the console output con, within maxOutput bytes, and fills
// in res.Logs, res.Cut and res.ValueCut to match. What does not fit is
// cut with a marker that says exactly what was cut.
func (res *Result) Format(con Output, maxOutput int) {
	var head string
	switch {
	case res.Err != nil:
		head = res.Err.Error()
	case res.Value != nil:
		head = string(res.Value)
	}
	budget := max(maxOutput-outputRoom, 0)
	notesSize := linesSize(con.Notes)
	logsSize := linesSize(con.Lines)

	// The result (or error) comes first in the budget: it is the answer.
	// A quarter of it is kept for console lines, if there are any, so a
	// few short lines stay beside a big result.
	headBudget := max(budget-notesSize-min(logsSize, budget/4), 0)
	headCut := len(head) > headBudget
	shown := len(head)
	if headCut {
		keep := CutUTF8(head, headBudget)
		shown = len(keep)
		if res.Err == nil {
			res.ValueCut, res.ValueShown = true, keep
		}
		head = keep + fmt.Sprintf("\n[cut: %d of %d bytes shown; the output is limited to %d bytes (max_output). Return less: filter, slice or pick fields in the code.]",
			len(keep), len(head), maxOutput)
	}

	// Then as many whole console lines as fit, in order; a marker counts
	// every line left out, here or by the console buffer. (The markers
	// and headers fit in outputRoom.)
	room := budget - notesSize - shown
	kept := 0
	for _, l := range con.Lines {
		if room < len(l)+1 {
			break
		}
		room -= len(l) + 1
		kept++
	}
	lines := append([]string(nil), con.Lines[:kept]...)
	cut := con.Cut + len(con.Lines) - kept
	if cut > 0 {
		lines = append(lines, fmt.Sprintf("[%d more console line(s) cut: the output is limited to %d bytes (max_output)]", cut, maxOutput))
	}
	lines = append(lines, con.Notes...)
	res.Logs = lines
	res.Cut = headCut || cut > 0
	logs := strings.Join(lines, "\n")

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
	res.Text = b.String()
}

// linesSize is the bytes lines take, one newline each.
func linesSize(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// CutUTF8 returns at most n bytes of s, not splitting a character.
func CutUTF8(s string, n int) string {
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
