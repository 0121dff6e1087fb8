package mcptest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func TestConnectCallAndText(t *testing.T) {
	s := server.NewMCPServer("echo", "1")
	for _, name := range []string{"echo", "another"} {
		s.AddTool(mcp.NewTool(name, mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent(req.GetString("text", "")),
				mcp.NewImageContent("AA==", "image/png"),
				mcp.NewTextContent("second"),
			}}, nil
		})
	}
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	for _, era := range []string{"", "2025-06-18"} {
		c, init := Connect(t, srv.URL+"/mcp", Options{Era: era, Headers: map[string]string{"X-Test": "1"}})
		if init.ServerInfo.Name != "echo" {
			t.Fatalf("server %q", init.ServerInfo.Name)
		}
		if got := ToolNames(t, c); !slices.Equal(got, []string{"another", "echo"}) {
			t.Fatalf("tools %v", got)
		}
		res, err := CallTool(c, "echo", map[string]any{"text": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if got := ResultText(res); got != "hi\nsecond" {
			t.Fatalf("text %q, want the two text parts joined", got)
		}
	}
}

func TestStartHTTPBin(t *testing.T) {
	base := StartHTTPBin(t)
	res, err := httptestGet(base + "/status/418")
	if err != nil || res != 418 {
		t.Fatalf("go-httpbin /status/418: %d %v", res, err)
	}
}

func httptestGet(url string) (int, error) {
	res, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

func TestClosedAddrRefuses(t *testing.T) {
	addr := ClosedAddr(t)
	c, err := net.DialTimeout("tcp", addr, Timeout)
	if err == nil {
		c.Close()
		t.Fatalf("%s accepted a connection", addr)
	}
}
