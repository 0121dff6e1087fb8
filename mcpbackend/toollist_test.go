package mcpbackend

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// pagedTools answers tools/list with pages of perPage tools, page after
// page, offering a next page up to pages; each tool's description is
// pad bytes long.
func pagedTools(perPage, pages, pad int) func(http.ResponseWriter, mcptest.RPCRequest) {
	desc := strings.Repeat("d", pad)
	return func(w http.ResponseWriter, msg mcptest.RPCRequest) {
		page, _ := strconv.Atoi(msg.Params.Cursor)
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`, msg.ID)
		for i := 0; i < perPage; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"name":"t%d_%d","description":"%s","inputSchema":{"type":"object"}}`, page, i, desc)
		}
		sb.WriteString("]")
		if page+1 < pages {
			fmt.Fprintf(&sb, `,"nextCursor":"%d"`, page+1)
		}
		sb.WriteString("}}")
		w.Write([]byte(sb.String()))
	}
}

// TestToolListBounds: a backend that lists more tools, or more bytes of
// tools, than the bounds keeps its first tools; the rest are refused as
// they are read, the pages after are not asked for, and one warning says
// so, once for as long as the listings refuse the same.
func TestToolListBounds(t *testing.T) {
	tests := []struct {
		name                string
		perPage, pages, pad int
		cfg                 Config
		wantKept, wantPages int
		wantRefused         int
		wantReason          string
	}{
		{name: "hundreds of thousands of tools", perPage: 25000, pages: 20,
			wantKept: 2000, wantPages: 1, wantRefused: 23000, wantReason: "the backend lists more than max_tools (2000) tools"},
		{name: "a few tools on many pages", perPage: 10, pages: 30, wantKept: 300, wantPages: 30},
		{name: "max_tools set", perPage: 10, pages: 30, cfg: Config{MaxTools: 25},
			wantKept: 25, wantPages: 3, wantRefused: 5, wantReason: "more than max_tools (25) tools"},
		{name: "large tools", perPage: 100, pages: 20, pad: 10 << 10, cfg: Config{MaxToolsSize: 2 << 20},
			wantKept: 203, wantPages: 3, wantRefused: 97, wantReason: "the tool list is larger than max_tools_size (2MiB)"},
		{name: "unexposed tools count toward the size", perPage: 100, pages: 20, pad: 10 << 10, cfg: Config{MaxToolsSize: 2 << 20, Tools: []string{"t0_*"}},
			wantKept: 100, wantPages: 3, wantRefused: 97, wantReason: "larger than max_tools_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := startRawBackend(t, &rawBackend{list: pagedTools(tt.perPage, tt.pages, tt.pad)})
			core, logs := observer.New(zapcore.WarnLevel)
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)

			cfg := tt.cfg
			cfg.Name, cfg.URL, cfg.Logger = "many", rb.url(), zap.New(core)
			b := connectedBackend(t, cfg)
			tools, _ := b.Tools(context.Background(), time.Time{})
			if len(tools) != tt.wantKept {
				t.Errorf("kept %d tools, want %d", len(tools), tt.wantKept)
			}
			if len(tools) > 0 && tools[0].Name != "t0_0" {
				t.Errorf("the first tool kept is %s, want the first listed", tools[0].Name)
			}
			rb.mu.Lock()
			pages := rb.lists
			rb.mu.Unlock()
			if pages != tt.wantPages {
				t.Errorf("asked for %d pages, want %d", pages, tt.wantPages)
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("%d tools kept of %d listed on %d pages; the heap grew %d KiB", len(tools), tt.perPage*pages, pages,
				(int64(after.HeapAlloc)-int64(before.HeapAlloc))>>10)
			if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > int64(max(b.cfg.MaxToolsSize, 16<<20)) {
				t.Errorf("the backend keeps %d MiB", grown>>20)
			}

			b.Relist(context.Background())
			warnings := logs.FilterMessage("backend tools refused").All()
			if tt.wantReason == "" {
				if len(warnings) != 0 {
					t.Errorf("warnings: %v", warnings)
				}
				return
			}
			if len(warnings) != 1 {
				t.Fatalf("%d warnings after two listings, want one", len(warnings))
			}
			fields := warnings[0].ContextMap()
			if fields["backend"] != "many" || !strings.Contains(fmt.Sprint(fields["reason"]), tt.wantReason) ||
				fields["kept"] != int64(tt.wantKept) || fields["refused"] != int64(tt.wantRefused) {
				t.Errorf("warning fields %v", fields)
			}
		})
	}
}

// TestRelist: listing again keeps the new list and changes Version when
// anything the code is shown of a tool changed, and only then; a listing
// refused for a session the backend forgot makes the backend connect
// again.
func TestRelist(t *testing.T) {
	t.Parallel()
	var listed atomic.Pointer[string]
	rb := startRawBackend(t, &rawBackend{list: func(w http.ResponseWriter, msg mcptest.RPCRequest) {
		io.WriteString(w, rpcResult(msg.ID, `{"tools":[`+*listed.Load()+`]}`))
	}})
	const a = `{"name":"a","inputSchema":{"type":"object"}}`
	list := func(tools string) { listed.Store(&tools) }
	list(a)
	b := connectedBackend(t, Config{URL: rb.url()})
	ctx := context.Background()
	for _, step := range []struct {
		name, tools string
		wantChange  bool
		wantNames   string
	}{
		{"the same list", a, false, "a"},
		{"a description", `{"name":"a","description":"A.","inputSchema":{"type":"object"}}`, true, "a"},
		{"the same again", `{"name":"a","description":"A.","inputSchema":{"type":"object"}}`, false, "a"},
		{"read-only", `{"name":"a","description":"A.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, true, "a"},
		{"another input schema", `{"name":"a","description":"A.","inputSchema":{"type":"object","properties":{}},"annotations":{"readOnlyHint":true}}`, true, "a"},
		{"an output schema", `{"name":"a","description":"A.","inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, true, "a"},
		{"another tool", a + `,{"name":"b","inputSchema":{"type":"object"}}`, true, "a b"},
		{"renamed", `{"name":"c","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}`, true, "c b"},
	} {
		list(step.tools)
		before := b.Version()
		b.Relist(ctx)
		if changed := b.Version() != before; changed != step.wantChange {
			t.Errorf("%s: Version changed: %v, want %v", step.name, changed, step.wantChange)
		}
		tools, err := b.Tools(ctx, time.Time{})
		var names []string
		for _, tool := range tools {
			names = append(names, tool.Name)
		}
		if got := strings.Join(names, " "); err != nil || got != step.wantNames {
			t.Errorf("%s: tools %q, %v; want %q", step.name, got, err, step.wantNames)
		}
	}

	rb.forget()
	b.Relist(ctx)
	waitFor(t, "new session", func() bool {
		rb.mu.Lock()
		defer rb.mu.Unlock()
		return rb.issued == 2
	})
}
