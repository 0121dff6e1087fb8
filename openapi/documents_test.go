package openapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The real documents the tests load, installed by npm from
// testdata/package-lock.json.
const (
	githubDocument  = "@octokit/openapi/generated/api.github.com.json"
	petstore30      = "@readme/oas-examples/3.0/json/petstore.json"
	petstore31      = "@readme/oas-examples/3.1/json/petstore.json"
	petstore31YAML  = "@readme/oas-examples/3.1/yaml/petstore.yaml"
	swaggerPetstore = "@readme/oas-examples/2.0/json/petstore.json"
	swaggerYAML     = "@readme/oas-examples/2.0/yaml/petstore.yaml"
	trainTravel31   = "@readme/oas-examples/3.1/json/train-travel.json"
	circular30      = "@readme/oas-examples/3.0/json/schema-circular.json"
	parameterStyles = "@readme/oas-examples/3.0/json/parameters-style.json"
)

// document returns the bytes of one of the documents above, installing
// them first when needed.
func document(tb testing.TB, name string) []byte {
	tb.Helper()
	installDocuments(tb)
	data, err := os.ReadFile(filepath.Join("testdata", "node_modules", name))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// installDocuments runs `npm ci` in testdata/ when node_modules is missing
// or older than package-lock.json. A lock file keeps two test binaries
// from installing at the same time.
func installDocuments(tb testing.TB) {
	tb.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		tb.Fatal(err)
	}
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
		tb.Fatalf("npm ci in %s left node_modules older than package-lock.json, or without %s", dir, githubDocument)
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
	_, err = os.Stat(filepath.Join(dir, "node_modules", githubDocument))
	return err == nil
}

// githubDocument31 is GitHub's document in its OpenAPI 3.1 form, as
// GitHub publishes it beside the 3.0 one (descriptions-next): nullable
// becomes a type union with "null" (or anyOf with a null schema where
// there is no type), boolean exclusive bounds become numbers, and the
// version says 3.1.0. npm ships only the 3.0 form.
func githubDocument31(tb testing.TB) []byte {
	tb.Helper()
	var doc map[string]any
	if err := json.Unmarshal(document(tb, githubDocument), &doc); err != nil {
		tb.Fatal(err)
	}
	doc["openapi"] = "3.1.0"
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if k == "example" || k == "examples" {
					continue
				}
				v[k] = walk(child)
			}
			if n, _ := v["nullable"].(bool); n {
				delete(v, "nullable")
				switch t := v["type"].(type) {
				case string:
					v["type"] = []any{t, "null"}
				case nil:
					inner := make(map[string]any, len(v))
					for k, child := range v {
						inner[k] = child
						delete(v, k)
					}
					v["anyOf"] = []any{inner, map[string]any{"type": "null"}}
				}
			}
			for _, bound := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
				if b, ok := v[bound[0]].(bool); ok {
					delete(v, bound[0])
					if b {
						v[bound[0]] = v[bound[1]]
						delete(v, bound[1])
					}
				}
			}
			return v
		case []any:
			for i, child := range v {
				v[i] = walk(child)
			}
		}
		return v
	}
	walk(doc)
	data, err := json.Marshal(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
