//go:build linux

package loadtest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// reloadLimit bounds `caddy reload`: no GET stream, no session, nothing
// that could hold the old server open, which would hold the reload for
// good. A hang guard, not a figure (the tests log how long it took): a
// reload takes well under a second on an idle machine, and a code mode
// reload under load about 5 s on a busy one.
const reloadLimit = time.Minute

// Around the reload, the load runs this long before and after it.
const reloadMargin = 2 * time.Second

// The tool blocks of the reload test's mcp endpoint besides orderTools,
// which both configs have: get_legacy_order only in the first, get_stock
// only in the second.
const (
	removedTool = `
		tool get_legacy_order {
			description "Get one order by id (the old way)."
			get /orders/{id}
			arg id string required "Order id"
		}`
	addedTool = `
		tool get_stock {
			description "Whether a product is in stock."
			get /stock/{sku}
			arg sku string required "Product SKU"
		}`
)

func reloadMCPSites(port int, upstream, extraTool string) string {
	return fmt.Sprintf(`http://:%d {
	mcp /mcp {
		name reload
		upstream http://%s%s%s
	}
}
`, port, upstream, orderTools, extraTool)
}

// probeCall is one call of a probe client: when its (last) attempt
// started, when the answer came, and what it was.
type probeCall struct {
	start, end time.Time
	outcome    string // "ok", "unknown tool", or an error
}

const (
	outcomeOK      = "ok"
	outcomeUnknown = "unknown tool"
)

// classify reads the answer to a tools/call that either succeeds or is
// refused as a call to an unknown tool: JSON-RPC error -32602, with HTTP
// status 200 in the 2025-11-25 era and 400 in the 2026-07-28 era.
func classify(a answer, err error, want string) string {
	if err != nil {
		return err.Error()
	}
	if (a.status == 200 || a.status == 400) && bytes.Contains(a.body, []byte(`"error"`)) && bytes.Contains(a.body, []byte(`"code":-32602`)) &&
		!bytes.Contains(a.body, resultMark) {
		return outcomeUnknown
	}
	if err := check(a, want); err != nil {
		return err.Error()
	}
	return outcomeOK
}

// probe calls one tool over and over until stop, and records every call.
func probe(s *mcpSession, req []byte, want string, stop <-chan struct{}) []probeCall {
	var calls []probeCall
	for {
		select {
		case <-stop:
			return calls
		default:
		}
		a, err := s.conn.do(req, time.Now().Add(requestTimeout))
		calls = append(calls, probeCall{start: a.start, end: time.Now(), outcome: classify(a, err, want)})
		time.Sleep(2 * time.Millisecond)
	}
}

// reloadRun is what reloadUnderLoad saw.
type reloadRun struct {
	load       loadResult
	start, end time.Time // of the `caddy reload` command
	err        error     // the reload's, or holding calls'
	held       []heldResult
}

// heldResult is the answer to a call held across the reload.
type heldResult struct {
	name string
	a    answer
	err  error
}

// reloadUnderLoad runs the clients; after reloadMargin it holds the calls
// hold makes (their requests sent but for the last bytes), reloads with
// sites, then finishes the held calls, and keeps the load on until
// reloadMargin after the reload returned.
func reloadUnderLoad(p *caddyProc, dir string, clients []*loadClient, hold func() ([]*heldCall, error), sites string) reloadRun {
	var r reloadRun
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(reloadMargin)
		held, err := hold()
		if err != nil {
			r.err = err
			return
		}
		// Give the server time to accept the connections, read the
		// headers and enter the handler, where it waits for the body.
		time.Sleep(500 * time.Millisecond)
		r.start, r.end, r.err = p.reload(dir, sites, reloadLimit)
		for _, h := range held {
			a, err := h.finish()
			a.body = bytes.Clone(a.body)
			r.held = append(r.held, heldResult{h.name, a, err})
		}
	}()
	r.load = runLoadWhile(clients, func() bool {
		select {
		case <-done:
			return r.err == nil && time.Since(r.end) < reloadMargin
		default:
			return true
		}
	})
	<-done
	for _, c := range clients {
		c.s.conn.close()
	}
	return r
}

// TestReloadMCP reloads an mcp endpoint with a changed tool list (one
// tool removed, one added) while loadClients clients call the tools both
// configs have. None of their calls may fail.
//
// The timing of the removed and added tools is checked two ways. Calls
// held across the reload (the request sent before it, its last bytes after
// it returned) are served whole by the old config: the removed tool
// succeeds, the added one is unknown. And probe clients call both tools
// throughout: the removed tool may be unknown only to a call that started
// after the reload began, and must be unknown to one that started after it
// returned; the added tool the other way round.
//
// `caddy reload` must finish within reloadLimit, and tools/list must
// serve the new list afterwards.
func TestReloadMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy under load")
	}
	api := startREST(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	endpoint := "http://" + addr + "/mcp"
	p := startCaddy(t, "reload-mcp", reloadMCPSites(port, api.addr(), removedTool), nil, addr)

	for _, era := range eras {
		c, _ := connect(t, endpoint, era, nil)
		if got, want := mcptest.ToolNames(t, c), []string{"get_customer", "get_legacy_order", "get_order"}; !slices.Equal(got, want) {
			t.Fatalf("tools before the reload (%s): %q, want %q", era, got, want)
		}
	}
	// No GET stream that could hold up the reload.
	req, _ := http.NewRequest(http.MethodGet, endpoint, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET %s: %s, want 405 (no standalone stream)", endpoint, resp.Status)
	}

	clients := make([]*loadClient, loadClients)
	for i := range clients {
		s, err := newMCPSession(endpoint, eras[i%len(eras)])
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = &loadClient{s: s, calls: []call{
			{"get_order", s.toolCall("get_order", map[string]string{"id": "R-1"}, false), "shipped"},
			{"get_customer", s.toolCall("get_customer", map[string]string{"id": "cus_7"}, false), customerName},
			{"get_order+progress", s.toolCall("get_order", map[string]string{"id": "R-2"}, true), "shipped"},
		}}
	}
	type probeSpec struct {
		tool, era string
		args      map[string]string
		want      string
	}
	var specs []probeSpec
	for _, era := range eras {
		specs = append(specs,
			probeSpec{"get_legacy_order", era, map[string]string{"id": "R-3"}, "shipped"},
			probeSpec{"get_stock", era, map[string]string{"sku": "TEA-1"}, stockMarker})
	}
	stop := make(chan struct{})
	probes := make([][]probeCall, len(specs))
	var wg sync.WaitGroup
	for i, sp := range specs {
		s, err := newMCPSession(endpoint, sp.era)
		if err != nil {
			t.Fatal(err)
		}
		req := s.toolCall(sp.tool, sp.args, false)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.conn.close()
			probes[i] = probe(s, req, sp.want, stop)
		}()
	}

	// Calls held across the reload, and what the old config answers.
	heldWant := map[string]string{}
	holdCalls := func() ([]*heldCall, error) {
		var held []*heldCall
		for _, era := range eras {
			s, err := newMCPSession(endpoint, era)
			if err != nil {
				return nil, err
			}
			s.conn.close()
			for _, k := range []struct {
				tool string
				args map[string]string
				want string
			}{
				{"get_legacy_order", map[string]string{"id": "H-1"}, outcomeOK},
				{"get_order", map[string]string{"id": "H-2"}, outcomeOK},
				{"get_stock", map[string]string{"sku": "H-3"}, outcomeUnknown},
			} {
				name := k.tool + " (" + era + ")"
				h, err := hold(addr, name, s.toolCall(k.tool, k.args, false))
				if err != nil {
					return nil, err
				}
				heldWant[name] = k.want
				held = append(held, h)
			}
		}
		return held, nil
	}
	r := reloadUnderLoad(p, t.TempDir(), clients, holdCalls, reloadMCPSites(port, api.addr(), addedTool))
	close(stop)
	wg.Wait()
	if r.err != nil {
		t.Fatal(r.err)
	}
	reloadStart, reloadEnd := r.start, r.end
	res := r.load
	t.Logf("caddy reload took %s", reloadEnd.Sub(reloadStart).Round(time.Millisecond))
	t.Logf("%d clients on the tools both configs have: %s", len(clients), res)
	for _, e := range first(res.errs, 5) {
		t.Errorf("error: %s", e)
	}
	if res.failed > 0 || res.busy > 0 {
		t.Errorf("%d calls failed across the reload", res.failed+res.busy)
	}

	for _, h := range r.held {
		want := heldWant[h.name]
		if got := classify(h.a, h.err, `"result"`); got != want {
			t.Errorf("held across the reload, %s: %s, want %s (the config that took the request answers it)", h.name, got, want)
		}
	}
	t.Logf("%d calls held across the reload, each answered as the old config would", len(r.held))

	for i, sp := range specs {
		var before, during, after [2]int // ok, unknown
		for _, c := range probes[i] {
			idx := 0
			switch c.outcome {
			case outcomeOK:
			case outcomeUnknown:
				idx = 1
			default:
				t.Errorf("%s (%s) at %s: %s", sp.tool, sp.era, c.start.Sub(reloadStart), c.outcome)
				continue
			}
			switch {
			case c.end.Before(reloadStart):
				before[idx]++
			case c.start.After(reloadEnd):
				after[idx]++
			default:
				during[idx]++
			}
			removed := sp.tool == "get_legacy_order"
			switch {
			// The old config answered: the call started before it was gone.
			case removed && c.outcome == outcomeOK && !c.start.Before(reloadEnd):
				t.Errorf("%s (%s) started %s after the reload had returned, and the old config answered it",
					sp.tool, sp.era, c.start.Sub(reloadEnd))
			case !removed && c.outcome == outcomeUnknown && !c.start.Before(reloadEnd):
				t.Errorf("%s (%s) started %s after the reload had returned, and was refused as unknown",
					sp.tool, sp.era, c.start.Sub(reloadEnd))
			// The new config answered: the call ended after it came.
			case removed && c.outcome == outcomeUnknown && c.start.Before(reloadStart):
				t.Errorf("%s (%s) started %s before the reload began, and was refused as unknown",
					sp.tool, sp.era, reloadStart.Sub(c.start))
			case !removed && c.outcome == outcomeOK && c.end.Before(reloadStart):
				t.Errorf("%s (%s) was answered %s before the reload began, by a config without it",
					sp.tool, sp.era, reloadStart.Sub(c.end))
			}
		}
		t.Logf("probe %s (%s): before the reload %d ok/%d unknown, during %d/%d, after %d/%d",
			sp.tool, sp.era, before[0], before[1], during[0], during[1], after[0], after[1])
		if sp.tool == "get_legacy_order" && (before[0] == 0 || after[1] == 0) {
			t.Errorf("probe %s (%s): want successes before the reload and refusals after it", sp.tool, sp.era)
		}
		if sp.tool == "get_stock" && (before[1] == 0 || after[0] == 0) {
			t.Errorf("probe %s (%s): want refusals before the reload and successes after it", sp.tool, sp.era)
		}
	}

	// The new tool list, from new clients.
	for _, era := range eras {
		c, _ := connect(t, endpoint, era, nil)
		if got, want := mcptest.ToolNames(t, c), []string{"get_customer", "get_order", "get_stock"}; !slices.Equal(got, want) {
			t.Errorf("tools after the reload (%s): %q, want %q", era, got, want)
		}
		res, err := mcptest.CallTool(c, "get_stock", map[string]any{"sku": "TEA-2"})
		if err != nil || res.IsError || !strings.Contains(mcptest.ResultText(res), stockMarker) {
			t.Errorf("get_stock after the reload (%s): %v %+v", era, err, res)
		}
		if _, err := mcptest.CallTool(c, "get_legacy_order", map[string]any{"id": "R-4"}); err == nil {
			t.Errorf("get_legacy_order after the reload (%s): no error", era)
		}
	}
}

// reloadCodeSites is the codemode reload test's Caddyfile: a codemode
// endpoint on one site, and the mcp endpoint it uses as its backend on
// another, whose access log records each request's JSON-RPC method.
func reloadCodeSites(port, backendPort int, upstream, accessLog, instructions string) string {
	return fmt.Sprintf(`http://:%[1]d {
	codemode /code {
		name reload-code
		instructions %[5]q
		backend shop http://127.0.0.1:%[2]d/mcp
		# Room for every client and the held calls: the reload is under
		# test here, not the busy error.
		max_concurrent 128
		# Not a worker process per slot: most executions here are quick.
		workers 8
	}
}

http://:%[2]d {
	log {
		output file %[4]s
		format json
	}
	log_append mcp_method {http.mcp.method}
	mcp /mcp {
		name reload-backend
		upstream http://%[3]s
		tool get_order {
			description "Get one order by id."
			get /orders/{id}
			arg id string required "Order id"
			annotations read_only
		}
		tool get_customer {
			description "Get one customer by id."
			get /customers/{id}
			arg id string required "Customer id"
			annotations read_only
		}
	}
}
`, port, backendPort, upstream, accessLog, instructions)
}

// countMethods counts the requests of each JSON-RPC method in an access
// log written with log_append mcp_method.
func countMethods(t *testing.T, path string) map[string]int {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for line := range strings.Lines(string(body)) {
		_, after, ok := strings.Cut(line, `"mcp_method":"`)
		if !ok {
			continue
		}
		method, _, _ := strings.Cut(after, `"`)
		counts[method]++
	}
	return counts
}

// TestReloadCodeMode reloads a codemode endpoint while loadClients
// clients run code on it. Its backend is an mcp endpoint of the same
// Caddy, on a site of its own whose access log records each request's
// JSON-RPC method. The new config changes the codemode endpoint's
// instructions and keeps its backend's settings, so the pooled backend
// client must survive: no new initialize or server/discover reaches the
// backend. No execution may fail, other than with the busy error; neither
// may executions held across the reload (the request sent before it, its
// last bytes after it returned).
//
// Two things keep executions whole across the reload: CodeMode.Cleanup
// keeps cm.backends (Caddy cleans up the old config without waiting for its
// requests, so executions still start on it), and the backend client sends
// a call lost on a connection the reload closed once more, on a new
// connection, since these tools are read-only.
func TestReloadCodeMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy under load")
	}
	api := startREST(t)
	port, backendPort := freePort(t), freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	endpoint := "http://" + addr + "/code"
	accessLog := filepath.Join(t.TempDir(), "backend-access.log")
	p := startCaddy(t, "reload-code", reloadCodeSites(port, backendPort, api.addr(), accessLog, "first config"), nil,
		addr, fmt.Sprintf("127.0.0.1:%d", backendPort))

	// Warm up until the backend is connected and code runs.
	for _, era := range eras {
		c, res := connect(t, endpoint, era, nil)
		if era == eraLegacy && res.Instructions != "first config" {
			t.Errorf("instructions %q, want %q", res.Instructions, "first config")
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			res, err := mcptest.CallTool(c, "execute", map[string]any{"code": codeTwoCalls})
			if err == nil && !res.IsError && strings.Contains(mcptest.ResultText(res), customerName) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("code does not run (%s): %v %+v", era, err, res)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	connects := func(m map[string]int) int { return m["initialize"] + m["server/discover"] }
	firstCounts := countMethods(t, accessLog)
	if connects(firstCounts) == 0 {
		t.Fatalf("the backend's access log shows no initialize or server/discover: %v", firstCounts)
	}

	clients := make([]*loadClient, loadClients)
	for i := range clients {
		s, err := newMCPSession(endpoint, eras[i%len(eras)])
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = &loadClient{s: s, calls: codeCalls(s)}
	}
	holdCalls := func() ([]*heldCall, error) {
		var held []*heldCall
		for _, era := range eras {
			s, err := newMCPSession(endpoint, era)
			if err != nil {
				return nil, err
			}
			s.conn.close()
			for i, code := range []string{codeOneCall, codeTwoCalls} {
				h, err := hold(addr, fmt.Sprintf("execute %d (%s)", i+1, era), s.toolCall("execute", map[string]string{"code": code}, false))
				if err != nil {
					return nil, err
				}
				held = append(held, h)
			}
		}
		return held, nil
	}
	r := reloadUnderLoad(p, t.TempDir(), clients, holdCalls, reloadCodeSites(port, backendPort, api.addr(), accessLog, "second config"))
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.load
	t.Logf("caddy reload took %s", r.end.Sub(r.start).Round(time.Millisecond))
	t.Logf("%d clients running code: %s", len(clients), res)
	if res.ok == 0 {
		t.Errorf("no execution succeeded")
	}

	if res.failed > int64(len(res.errs)) {
		t.Errorf("%d executions failed, too many to tell why", res.failed)
	}
	for _, e := range res.errs {
		t.Errorf("under load: %s", e)
	}
	for _, h := range r.held {
		err := h.err
		if err == nil {
			err = check(h.a, `"result"`)
		}
		switch {
		case errors.Is(err, errBusy):
			t.Logf("held across the reload, %s: busy (max_concurrent), which is allowed", h.name)
		case err != nil:
			t.Errorf("held across the reload, %s: %v", h.name, err)
		}
	}

	for _, era := range eras {
		c, info := connect(t, endpoint, era, nil)
		if era == eraLegacy && info.Instructions != "second config" {
			t.Errorf("instructions after the reload: %q, want %q", info.Instructions, "second config")
		}
		res, err := mcptest.CallTool(c, "execute", map[string]any{"code": codeTwoCalls})
		if err != nil || res.IsError || !strings.Contains(mcptest.ResultText(res), customerName) {
			t.Errorf("code after the reload (%s): %v %+v", era, err, res)
		}
	}
	last := countMethods(t, accessLog)
	t.Logf("backend requests by method: before the load %v, at the end %v", firstCounts, last)
	if connects(last) != connects(firstCounts) {
		t.Errorf("the backend was connected again across the reload: initialize+server/discover %d -> %d; the pooled client did not survive",
			connects(firstCounts), connects(last))
	}
}
