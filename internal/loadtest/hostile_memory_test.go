//go:build linux

package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// addressSpaceLimit is the RLIMIT_AS the Caddy of TestHostileMemory runs
// under: an allocation past it fails, and the Go runtime dies of it
// ("fatal error: out of memory"), so surviving the test means staying under.
const addressSpaceLimit = 6 << 30

// hostileBackends serves, on 127.0.0.1, the MCP backends and the REST
// upstream of TestHostileMemory. The hostile shapes are armed and
// disarmed together; disarmed, they are backends that are down.
type hostileBackends struct {
	srv *httptest.Server

	armed        atomic.Bool
	sseBytes     atomic.Int64 // written to SSE streams that carried no newline
	pagesServed  atomic.Int64 // tools/list pages of the pager
	upstreamHits atomic.Int64 // requests that reached the REST upstream

	pageOnce sync.Once
	page     []byte // one armed tools/list page, without its cursor
}

const (
	pagerTools = 800_000 // tools per armed tools/list page
	pagerPages = 100     // pages the armed pager offers
	sameTools  = 20_000  // tools all named t
)

func startHostileBackends(t *testing.T) *hostileBackends {
	h := &hostileBackends{}
	mux := http.NewServeMux()
	mux.HandleFunc("/flood", h.flood)
	mux.HandleFunc("/pager", func(w http.ResponseWriter, r *http.Request) {
		if !h.armed.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		h.mcp(h.pagerList)(w, r)
	})
	mux.HandleFunc("/same", h.mcp(func(cursor string) []byte { return sameList() }))
	mux.HandleFunc("/upstream/", func(w http.ResponseWriter, r *http.Request) {
		h.upstreamHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostileBackends) url(path string) string { return h.srv.URL + path }

// flood answers the SSE transport's GET with an event stream that is one
// line without an end, for as long as the client reads it (at most 60 s or
// 16 GiB, so that the test bounds itself), when armed; disarmed, it is a
// backend that is down.
func (h *hostileBackends) flood(w http.ResponseWriter, r *http.Request) {
	if !h.armed.Load() || r.Method != http.MethodGet {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	io.WriteString(w, "data: ")
	deadline := time.Now().Add(60 * time.Second)
	for n := int64(0); n < 16<<30 && time.Now().Before(deadline) && h.armed.Load(); n += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		h.sseBytes.Add(int64(len(chunk)))
	}
}

// mcp serves a 2025-11-25 MCP server over Streamable HTTP that answers
// tools/list with list(cursor), refuses server/discover (so clients fall
// back to initialize), and has no session.
func (h *hostileBackends) mcp(list func(cursor string) []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req mcptest.RPCRequest
		if r.Method != http.MethodPost || json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req) != nil {
			http.Error(w, "POST JSON-RPC only", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var result []byte
		switch req.Method {
		case "initialize":
			result = []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`)
		case "tools/list":
			result = list(req.Params.Cursor)
		case "ping":
			result = []byte(`{}`)
		case "tools/call":
			result = []byte(`{"content":[{"type":"text","text":"1"}]}`)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":`, req.ID)
		w.Write(result)
		io.WriteString(w, "}")
	}
}

// pagerList is a page of 800,000 tools with a cursor to the next, 100
// pages in all.
func (h *hostileBackends) pagerList(cursor string) []byte {
	h.pageOnce.Do(func() {
		var b bytes.Buffer
		b.WriteString(`{"tools":[`)
		for i := range pagerTools {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"p%d"}`, i)
		}
		b.WriteString(`]`)
		h.page = b.Bytes()
	})
	h.pagesServed.Add(1)
	n, _ := strconv.Atoi(strings.TrimPrefix(cursor, "c"))
	page := append([]byte(nil), h.page...)
	if n+1 < pagerPages {
		page = fmt.Appendf(page, `,"nextCursor":"c%d"`, n+1)
	}
	return append(page, '}')
}

var sameListOnce = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i := range sameTools {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"t","description":"The same name again.","inputSchema":{"type":"object"}}`)
	}
	b.WriteString(`]}`)
	return b.Bytes()
})

func sameList() []byte { return sameListOnce() }

// validationBomb is a tools/call whose tags argument, declared string[],
// holds 450,000 integers: a body of about 900 KB, under the default
// max_request_size of 1 MiB, every item of which breaks the schema.
func validationBomb() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tag","arguments":{"tags":[`)
	for i := range 450_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('1')
	}
	b.WriteString(`]}}}`)
	return b.Bytes()
}

// rss reads a process's resident set (VmRSS) and its peak (VmHWM), in bytes.
func rss(pid int) (now, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		switch key {
		case "VmRSS":
			now = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return now, peak, sc.Err()
}

// TestHostileMemory runs Caddy under a 6 GiB address-space limit, with
// code-mode backends that attack it (an SSE stream that is one endless
// line, a tool list of 100 pages of 800,000 tools, 20,000 tools of one
// name, all kept) and 16 clients at once sending tool calls whose 900 KB of
// arguments break the schema 450,000 times each. Caddy must stay up, answer
// everything with a bounded, clear result, never call the REST upstream for
// an invalid call, and come back to the live heap it started with.
func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	h := startHostileBackends(t)
	port := freePort(t)
	sites := fmt.Sprintf(`http://127.0.0.1:%d {
	mcp /mcp {
		upstream %s
		tool tag {
			description "Tag things."
			post /tags
			arg tags string[] required "The tags"
		}
	}
	codemode /code {
		timeout 10s
		# The 20,000 tools are declared, not searched: their declarations
		# are what this measures.
		discovery all
		backend flood %s {
			transport sse
			timeout 5s
		}
		backend pager %s {
			timeout 5s
		}
		backend same %s {
			timeout 5s
			max_tools 20000
		}
	}
}
`, port, h.url("/upstream"), h.url("/flood"), h.url("/pager"), h.url("/same"))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startCaddyLimited(t, "hostile", sites, addressSpaceLimit, addr)
	pid := p.cmd.Process.Pid
	code, _ := connect(t, "http://"+addr+"/code", eraLegacy, nil)

	// Warm up disarmed: the same-name backend's 20,000 tools are listed and
	// declared, then the baseline is read.
	list := func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := code.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return "", err
		}
		if len(res.Tools) != 1 {
			return "", fmt.Errorf("%d tools, want 1", len(res.Tools))
		}
		return res.Tools[0].Description, nil
	}
	execute := func() error {
		res, err := mcptest.CallTool(code, "execute", map[string]any{"code": "return 1"})
		if err != nil {
			return err
		}
		if text := mcptest.ResultText(res); res.IsError || !strings.Contains(text, "1") {
			return fmt.Errorf("execute of `return 1`: isError %v: %.300s", res.IsError, text)
		}
		return nil
	}
	for range 2 {
		if _, err := list(); err != nil {
			t.Fatalf("tools/list before the attack: %v", err)
		}
		if err := execute(); err != nil {
			t.Fatal(err)
		}
	}
	before, err := p.stats()
	if err != nil {
		t.Fatal(err)
	}
	rssBefore, _, _ := rss(pid)
	t.Logf("before the attack: %s, RSS %.0f MiB", before, float64(rssBefore)/(1<<20))

	// The attack: armed backends (an execution that calls each one that is
	// down wakes its connection loop), and 16 clients at once sending the
	// validation bomb, twice each, while tools/list and executions go on.
	h.armed.Store(true)
	var peakRSS atomic.Int64
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if now, _, err := rss(pid); err == nil && now > peakRSS.Load() {
				peakRSS.Store(now)
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	_, _ = mcptest.CallTool(code, "execute", map[string]any{"code": `for (const f of [() => flood.x({}), () => pager.p0({}), () => same.t({})]) { try { await f() } catch {} } return 1`})

	bomb := validationBomb()
	var wg sync.WaitGroup
	bombErrs := make(chan error, 16*2)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				bombErrs <- sendBomb(addr, bomb)
			}
		}()
	}
	var codeErrs []error
	for range 4 {
		if _, err := list(); err != nil {
			codeErrs = append(codeErrs, fmt.Errorf("tools/list: %v", err))
		}
		if err := execute(); err != nil {
			codeErrs = append(codeErrs, err)
		}
	}
	wg.Wait()
	close(bombErrs)
	for err := range bombErrs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, err := range codeErrs {
		t.Error(err)
	}
	select {
	case <-p.done:
		t.Fatalf("Caddy died under the attack (%v):\n%s", p.waitErr, tail(p.logPath, 30))
	default:
	}
	if n := h.upstreamHits.Load(); n != 0 {
		t.Errorf("invalid calls reached the REST upstream %d times", n)
	}
	close(stopWatch)
	<-watched
	_, hwm, _ := rss(pid)
	t.Logf("during the attack: peak RSS %.0f MiB (VmHWM %.0f MiB); %d MiB of endless SSE line written, %d armed tool-list pages served",
		float64(peakRSS.Load())/(1<<20), float64(hwm)/(1<<20), h.sseBytes.Load()>>20, h.pagesServed.Load())

	if h.pagesServed.Load() == 0 {
		t.Error("the pager was never listed: the test did not attack")
	}
	if h.sseBytes.Load() == 0 {
		t.Error("the SSE stream was never read: the test did not attack")
	}

	// Disarmed again, the live heap comes back to where it was (the pager's
	// kept tools aside, which the tolerance covers).
	h.armed.Store(false)
	after, err := p.settle(before, 20*time.Second)
	rssAfter, _, _ := rss(pid)
	t.Logf("after: %s, RSS %.0f MiB", after, float64(rssAfter)/(1<<20))
	if err != nil {
		t.Errorf("Caddy's memory did not come back: %v", err)
	}
	if _, err := list(); err != nil {
		t.Errorf("tools/list after the attack: %v", err)
	}
	if err := execute(); err != nil {
		t.Errorf("after the attack: %v", err)
	}
}

// sendBomb sends one validation bomb and checks the answer: a tool error
// that lists a bounded number of violations.
func sendBomb(addr string, bomb []byte) error {
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", bytes.NewReader(bomb))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", eraLegacy)
	resp, err := bombClient.Do(req)
	if err != nil {
		return fmt.Errorf("validation bomb: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("validation bomb: reading the answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("validation bomb: status %d: %.200s", resp.StatusCode, body)
	}
	var msg struct {
		Result mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return fmt.Errorf("validation bomb: answer of %d bytes is not a whole JSON-RPC result: %v", len(body), err)
	}
	if !msg.Result.IsError || len(body) > 16<<10 {
		return fmt.Errorf("validation bomb: isError %v, %d bytes (want a tool error of at most 16 KiB)", msg.Result.IsError, len(body))
	}
	return nil
}

var bombClient = &http.Client{Timeout: 60 * time.Second}
