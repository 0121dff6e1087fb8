package caddymcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveFileSecretRotates shows what the README promises for secrets
// that rotate: a {file./path} placeholder in a header is read per call, so
// a new token written to the file is sent from the next call on, without a
// reload, and a trailing newline in the file is not sent.
func TestLiveFileSecretRotates(t *testing.T) {
	bin := startHTTPBin(t)
	secret := filepath.Join(t.TempDir(), "api_token")
	if err := os.WriteFile(secret, []byte("token-one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		header Authorization "Bearer {file.%s}"
		tool headers {
			description "Echo the request headers."
			get /headers
		}
	}
}
`, bin, secret))
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)
			for _, token := range []string{"token-one", "token-two"} {
				if err := os.WriteFile(secret, []byte(token+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				text := resultText(callTool(t, c, "headers", nil))
				if want := `"Bearer ` + token + `"`; !strings.Contains(text, want) {
					t.Errorf("upstream saw headers %s, want Authorization %s", text, want)
				}
			}
		})
	}
}
