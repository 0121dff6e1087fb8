package caddymcp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestLiveProgressFlushes checks that a notification sent during a call
// reaches the client while the call is still running: the upstream answers
// only once the client has seen the progress notification, so a response
// that is not flushed through Caddy's writer would never complete.
func TestLiveProgressFlushes(t *testing.T) {
	var mu sync.Mutex
	seen := make(map[string]chan struct{})
	waitFor := func(key string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if seen[key] == nil {
			seen[key] = make(chan struct{})
		}
		return seen[key]
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-waitFor(r.URL.Query().Get("era")):
			io.WriteString(w, "answered after the progress notification")
		case <-time.After(5 * time.Second):
			w.WriteHeader(http.StatusGatewayTimeout)
			io.WriteString(w, "the progress notification never reached the client")
		}
	}))
	defer api.Close()
	loadCaddyfile(t, "", fmt.Sprintf(`http://:{$LIVE_PORT} {
	mcp /mcp {
		upstream %s
		tool wait {
			description "Answers once the client saw progress."
			get /wait
			arg era
		}
	}
}`, api.URL))

	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, "/mcp", era, nil)
			var once sync.Once
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationProgress) {
					once.Do(func() { close(waitFor(era)) })
				}
			})
			req := mcp.CallToolRequest{}
			req.Params.Name = "wait"
			req.Params.Arguments = map[string]any{"era": era}
			req.Params.Meta = &mcp.Meta{ProgressToken: "p-" + era}
			res, err := c.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if text := wantOK(t, res); text != "answered after the progress notification" {
				t.Fatalf("result %q", text)
			}
		})
	}
}
