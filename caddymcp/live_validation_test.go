package caddymcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

// TestLiveHugeInvalidArguments calls a tool whose string[] argument is
// given 450,000 integers, a 900 KB body under the default
// max_request_size: the answer is a tool error listing the first 20
// violations and the count of the others, a few hundred bytes, not one
// line per violation, and nothing reaches the upstream.
func TestLiveHugeInvalidArguments(t *testing.T) {
	var hits atomic.Int64
	bin := httpbin.New()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		bin.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool tag {
			description "Tag things."
			post /anything/tags
			arg tags string[] required
		}
	}
}`, api.URL))

	tags := make([]int, 450_000)
	for i := range tags {
		tags[i] = 1
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)
			before := hits.Load()
			res := callTool(t, c, "tag", map[string]any{"tags": tags})
			text := resultText(res)
			// Not wantToolError: a failure must not print megabytes.
			if !res.IsError || len(text) > 2048 || strings.Count(text, "\n- ") != 21 ||
				!strings.HasPrefix(text, "invalid arguments for tool tag:\n- /tags/0: expected string, but got number\n- /tags/1: ") ||
				!strings.HasSuffix(text, "\n- /tags/19: expected string, but got number\n- and 449,980 more") {
				t.Fatalf("isError %v, %d bytes: %.300s", res.IsError, len(text), text)
			}
			if hits.Load() != before {
				t.Fatalf("the upstream was called for invalid arguments")
			}
			// The same tool with strings reaches the upstream: the count
			// above would have seen a request.
			wantOK(t, callTool(t, c, "tag", map[string]any{"tags": []string{"a"}}))
			if hits.Load() != before+1 {
				t.Fatalf("%d upstream requests for one valid call", hits.Load()-before)
			}
		})
	}
}
