// Package tscheck type-checks TypeScript for the tests: code mode's
// declarations, and code a model would write against them, with the
// TypeScript compiler pinned in this folder's package-lock.json (installed
// with npm ci on first use, see internal/npmtest), loaded once per test
// binary by check.mjs. Without node or npm the test is skipped and says
// why.
package tscheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
	"github.com/caddy-mcp/caddy-mcp/internal/proctest"
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
	c, err := shared(tb)
	if err != nil {
		tb.Fatal(err)
	}
	main := "async function main() {\n" + code + "\n}\nvoid main;\n"
	a, err := c.check(declarations, main)
	if err != nil {
		tb.Fatal(err)
	}
	return a.Output, a.OK
}

// checker is check.mjs running: the compiler loaded once for every check
// of this test binary. It ends when the binary does (its stdin closes).
type checker struct {
	mu     sync.Mutex
	in     io.Writer
	out    *bufio.Reader
	stderr *proctest.Output
	kill   func() error
}

type answer struct {
	OK     bool   `json:"ok"`
	Output string `json:"output"`
}

var (
	sharedOnce    sync.Once
	sharedChecker *checker
	sharedErr     error
)

// shared starts the checker on first use. Without node the test is
// skipped; npm installs the compiler once (internal/npmtest).
func shared(tb testing.TB) (*checker, error) {
	tb.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Skipf("node not found on PATH (%v); it runs the TypeScript compiler from internal/tscheck", err)
	}
	dir := folder(tb)
	npmtest.Install(tb, dir, tscPath)
	sharedOnce.Do(func() {
		cmd := exec.Command(node, filepath.Join(dir, "check.mjs"))
		cmd.Dir = dir
		stderr := &proctest.Output{}
		cmd.Stderr = stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			sharedErr = err
			return
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			sharedErr = err
			return
		}
		if err := cmd.Start(); err != nil {
			sharedErr = fmt.Errorf("starting check.mjs: %w", err)
			return
		}
		go cmd.Wait() // reaps it once the binary's end closes its stdin
		sharedChecker = &checker{in: in, out: bufio.NewReader(out), stderr: stderr, kill: cmd.Process.Kill}
	})
	return sharedChecker, sharedErr
}

// check sends one request and reads its answer; a check that takes two
// minutes is a hang, and ends the checker.
func (c *checker) check(declarations, main string) (answer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	req, err := json.Marshal(map[string]string{"declarations": declarations, "main": main})
	if err != nil {
		return answer{}, err
	}
	hang := time.AfterFunc(2*time.Minute, func() { _ = c.kill() })
	defer hang.Stop()
	if _, err := c.in.Write(append(req, '\n')); err != nil {
		return answer{}, fmt.Errorf("check.mjs: %v\n%s", err, c.stderr)
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return answer{}, fmt.Errorf("check.mjs ended (%v); a check that takes two minutes is taken for a hang\n%s", err, c.stderr)
	}
	var a answer
	if err := json.Unmarshal(line, &a); err != nil {
		return answer{}, fmt.Errorf("check.mjs answered %q: %v", line, err)
	}
	return a, nil
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
