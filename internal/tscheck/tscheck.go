// Package tscheck type-checks TypeScript for the tests: code mode's
// declarations, and code a model would write against them, with the
// TypeScript compiler pinned in this folder's package-lock.json (installed
// with npm ci on first use, see internal/npmtest). Without node or npm the
// test is skipped and says why.
package tscheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
)

// tscPath is the compiler's entry point under node_modules.
const tscPath = "typescript/bin/tsc"

// Check fails the test, with the compiler's output, unless code, run as
// the sandbox runs it (the body of an async function), type-checks with
// `tsc --strict` against declarations, written to a .d.ts file of its own.
func Check(tb testing.TB, declarations, code string) {
	tb.Helper()
	if out, ok := Run(tb, declarations, code); !ok {
		tb.Errorf("tsc --strict finds errors:\n%s\ncode:\n%s", out, numbered(code))
	}
}

// Run type-checks as Check does and returns tsc's output, with the file
// names relative ("declarations.d.ts", "main.ts"), and whether it found no
// error. A test that expects an error uses it.
func Run(tb testing.TB, declarations, code string) (output string, ok bool) {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Skipf("node not found on PATH (%v); it runs the TypeScript compiler from internal/tscheck", err)
	}
	dir := folder(tb)
	npmtest.Install(tb, dir, tscPath)

	tmp := tb.TempDir()
	main := "async function main() {\n" + code + "\n}\nvoid main;\n"
	for name, text := range map[string]string{"declarations.d.ts": declarations, "main.ts": main} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "node_modules", tscPath),
		"--strict", "--noEmit", "--pretty", "false", "--target", "es2022", "--lib", "es2022",
		"declarations.d.ts", "main.ts")
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		tb.Fatalf("tsc did not finish in time: %s", out)
	}
	if err != nil {
		if _, exit := err.(*exec.ExitError); !exit {
			tb.Fatalf("running tsc: %v", err)
		}
	}
	return strings.TrimSpace(string(out)), err == nil
}

// folder is internal/tscheck, found from this file.
func folder(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("tscheck: cannot tell where the module is")
	}
	return filepath.Dir(file)
}

// numbered prefixes the lines of code with their line numbers in main.ts,
// where the code starts on line 2.
func numbered(code string) string {
	var b strings.Builder
	for i, l := range strings.Split(code, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+2, l)
	}
	return b.String()
}
