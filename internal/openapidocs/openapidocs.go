// Package openapidocs gives tests the real OpenAPI documents that npm
// installs into openapi/testdata/node_modules from the lock file there
// (GitHub's published document, the Petstore, ...), installing them on
// first use. Tests of several packages share the one install.
package openapidocs

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/caddy-mcp/caddy-mcp/internal/npmtest"
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
	npmtest.Install(tb, dir, GitHub)
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
