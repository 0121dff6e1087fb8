// Package npmtest installs a folder's pinned npm packages for the tests
// that need them, once for every test binary running at the same time.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Install runs `npm ci` in dir when its node_modules is missing, older
// than package-lock.json, or lacks want (a path inside node_modules). A
// lock file per folder makes test binaries running at once install it
// once. Without npm the test is skipped and says so.
func Install(tb testing.TB, dir, want string) {
	tb.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if installed(dir, want) {
		return
	}
	sum := sha256.Sum256([]byte(dir))
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "caddy-mcp-npm-"+hex.EncodeToString(sum[:8])+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatalf("locking the npm install in %s: %v", dir, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if installed(dir, want) { // another test binary installed it meanwhile
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		tb.Skipf("npm not found on PATH (%v); it is needed once to install %s/node_modules from its package-lock.json", err, dir)
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
	tb.Logf("npm ci in %s took %s", dir, time.Since(start).Round(time.Millisecond))
	if !installed(dir, want) {
		tb.Fatalf("npm ci in %s left node_modules older than package-lock.json, or without %s", dir, want)
	}
}

// installed reports whether node_modules was installed from the current
// package-lock.json and holds want. npm writes node_modules/.package-lock.json
// last.
func installed(dir, want string) bool {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false
	}
	done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil || done.ModTime().Before(lock.ModTime()) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "node_modules", want))
	return err == nil
}
