// Package openapidocs gives tests the real OpenAPI documents that npm
// installs into openapi/testdata/node_modules from the lock file there
// (GitHub's published document, the Petstore, ...), installing them on
// first use. Tests of several packages share the one install.
package openapidocs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// GitHub is GitHub's published document (OpenAPI 3.0, about 1,200
// operations), by its path under node_modules.
const GitHub = "@octokit/openapi/generated/api.github.com.json"

// Read returns the bytes of the document at name, a path under
// node_modules, installing the documents first when needed.
func Read(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// Path returns the file of the document at name, installing the
// documents first when needed.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	dir := testdata(tb)
	install(tb, dir)
	return filepath.Join(dir, "node_modules", name)
}

// testdata is openapi/testdata of this module, found from this file.
func testdata(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("openapidocs: cannot tell where the module is")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "openapi", "testdata")
}

// install runs `npm ci` in dir when node_modules is missing or older
// than package-lock.json. A lock file keeps two test binaries from
// installing at the same time.
func install(tb testing.TB, dir string) {
	tb.Helper()
	if upToDate(dir) {
		return
	}
	sum := sha256.Sum256([]byte(dir))
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "caddy-mcp-npm-"+hex.EncodeToString(sum[:8])+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatalf("locking the npm install: %v", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if upToDate(dir) { // another test binary installed them meanwhile
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		tb.Skipf("npm not found on PATH (%v); it is needed once to install the test documents into openapi/testdata/node_modules", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	tb.Logf("npm ci in openapi/testdata took %s", time.Since(start).Round(time.Millisecond))
	if !upToDate(dir) {
		tb.Fatalf("npm ci in %s left node_modules older than package-lock.json, or without %s", dir, GitHub)
	}
}

// upToDate reports whether node_modules was installed from the current
// package-lock.json. npm writes node_modules/.package-lock.json last.
func upToDate(dir string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil || installed.ModTime().Before(lock.ModTime()) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "node_modules", GitHub))
	return err == nil
}
