//go:build linux

package loadtest

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// soakEnv switches the load test to its long form: 60 s per endpoint
// instead of shortLoad. For example:
//
//	CADDY_MCP_SOAK=1 go test ./internal/loadtest -run TestLoad -v -timeout 10m
const soakEnv = "CADDY_MCP_SOAK"

const (
	shortLoad = 4 * time.Second
	soakLoad  = 60 * time.Second
)

func loadDuration() time.Duration {
	if os.Getenv(soakEnv) != "" {
		return soakLoad
	}
	return shortLoad
}

// loadClients is how many clients the load runs on each endpoint. The
// race detector slows the clients and the REST upstream in this process,
// not Caddy, and the package still finishes in about a minute with it, so
// the load keeps its full size under -race too.
const loadClients = 64

// busyBackoff is how long a client waits after codemode's busy error
// before it tries again, as the error asks ("try again in a moment").
const busyBackoff = 10 * time.Millisecond

// requestTimeout bounds every request of the load.
const requestTimeout = 30 * time.Second

// call is one prepared request and what its answer must hold.
type call struct {
	name string
	req  []byte
	want string
}

// loadClient is one client: it sends its calls in turn, each as soon as
// the previous one is answered.
type loadClient struct {
	s     *mcpSession
	calls []call
}

type loadResult struct {
	elapsed                   time.Duration
	ok, busy, failed, retried int64
	byEra                     map[string]int64 // successes
	errs                      []string         // the failures, the first maxErrs of them
}

const maxErrs = 1000

func (r loadResult) String() string {
	return fmt.Sprintf("%d ok (%.0f/s; %s %d, %s %d), %d busy, %d errors, %d keep-alive retries, in %s",
		r.ok, float64(r.ok)/r.elapsed.Seconds(), eraLegacy, r.byEra[eraLegacy], eraModern, r.byEra[eraModern],
		r.busy, r.failed, r.retried, r.elapsed.Round(time.Millisecond))
}

// runLoad runs the clients for d: closed loop, every client sending its
// next call as soon as the last one is answered. Calls in flight at the
// end are finished, not cut off, and count like any other.
func runLoad(clients []*loadClient, d time.Duration) loadResult {
	end := time.Now().Add(d)
	return runLoadWhile(clients, func() bool { return time.Now().Before(end) })
}

// runLoadWhile runs the clients as runLoad does, as long as more()
// holds; every client asks it before each call.
func runLoadWhile(clients []*loadClient, more func() bool) loadResult {
	var ok, busy, failed, retried atomic.Int64
	var legacy, modern atomic.Int64
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	start := time.Now()
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			byEra := &legacy
			if c.s.era == eraModern {
				byEra = &modern
			}
			for i := 0; more(); i++ {
				k := c.calls[i%len(c.calls)]
				a, err := c.s.conn.do(k.req, time.Now().Add(requestTimeout))
				if a.retried {
					retried.Add(1)
				}
				if err == nil {
					err = check(a, k.want)
				}
				switch {
				case err == nil:
					ok.Add(1)
					byEra.Add(1)
				case errors.Is(err, errBusy):
					busy.Add(1)
					time.Sleep(busyBackoff)
				default:
					failed.Add(1)
					mu.Lock()
					if len(errs) < maxErrs {
						errs = append(errs, fmt.Sprintf("%s (%s): %v", k.name, c.s.era, err))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return loadResult{
		elapsed: time.Since(start),
		ok:      ok.Load(), busy: busy.Load(), failed: failed.Load(), retried: retried.Load(),
		byEra: map[string]int64{eraLegacy: legacy.Load(), eraModern: modern.Load()},
		errs:  errs,
	}
}

// first returns the first n of xs.
func first(xs []string, n int) []string { return xs[:min(n, len(xs))] }

// endpoint is one endpoint under load and the calls its clients make.
type endpoint struct {
	name   string
	path   string
	busyOK bool // codemode's busy error is documented, not a failure
	calls  func(s *mcpSession) []call
}

// The code the codemode clients run: one or two tool calls.
const (
	codeOneCall = `const o = await shop.get_order({ id: "A-1" });
return { order: o.id, status: o.status };`
	codeTwoCalls = `const o = await shop.get_order({ id: "A-2" });
const c = await shop.get_customer({ id: o.customer_id });
return { order: o.id, customer: c.name };`
)

// mcpCalls are the calls of an mcp endpoint's clients: tools/calls on
// the endpoint's fast path (plain JSON), one asking for progress (an SSE
// answer written by mcp-go), and tools/list.
func mcpCalls(s *mcpSession) []call {
	return []call{
		{"get_order", s.toolCall("get_order", map[string]string{"id": "A-1"}, false), "shipped"},
		{"get_customer", s.toolCall("get_customer", map[string]string{"id": "cus_7"}, false), customerName},
		{"get_order+progress", s.toolCall("get_order", map[string]string{"id": "A-2"}, true), "shipped"},
		{"tools/list", s.toolsList(), `"get_customer"`},
	}
}

func codeCalls(s *mcpSession) []call {
	return []call{
		{"execute (one call)", s.toolCall("execute", map[string]string{"code": codeOneCall}, false), "shipped"},
		{"execute (two calls)", s.toolCall("execute", map[string]string{"code": codeTwoCalls}, false), customerName},
	}
}

// orderTools are the tool blocks of the REST API that every config of
// these tests offers over its mcp endpoint.
const orderTools = `
		tool get_order {
			description "Get one order by id."
			get /orders/{id}
			arg id string required "Order id"
		}
		tool get_customer {
			description "Get one customer by id."
			get /customers/{id}
			arg id string required "Customer id"
		}`

// loadSites is the Caddyfile of the load test: one site with an `mcp`
// endpoint with `upstream`, an `mcp` endpoint in route mode through
// reverse_proxy, and a `codemode` endpoint over the first one.
// Arguments: port, upstream address, upstream address, port.
const loadSites = `http://:%[1]d {
	mcp /mcp {
		name load
		upstream http://%[2]s` + orderTools + `
	}
	route /route-mcp {
		mcp {
			name load-route` + orderTools + `
		}
		reverse_proxy %[2]s
	}
	codemode /code {
		name load-code
		backend shop http://127.0.0.1:%[1]d/mcp
		max_concurrent 16
	}
}
`

// TestLoad puts loadClients concurrent MCP clients on each endpoint in
// turn for loadDuration(), half of them in each protocol era: no errors
// but codemode's documented busy error, and Caddy's goroutines and live
// heap back within tolerance of where they started once the clients are
// gone and idle connections have closed.
func TestLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy under load")
	}
	api := startREST(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startCaddy(t, "load", fmt.Sprintf(loadSites, port, api.addr()), nil, addr)
	base := "http://" + addr

	endpoints := []endpoint{
		{name: "mcp upstream", path: "/mcp", calls: mcpCalls},
		{name: "mcp route", path: "/route-mcp", calls: mcpCalls},
		{name: "codemode", path: "/code", busyOK: true, calls: codeCalls},
	}

	// Warm up: every call of every endpoint once in each era, so that
	// connection pools, the codemode backend client and lazily built state
	// exist before the baseline. The codemode backend connects in the
	// background; its first executions may wait for it.
	for _, ep := range endpoints {
		for _, era := range eras {
			s, err := newMCPSession(base+ep.path, era)
			if err != nil {
				t.Fatalf("%s (%s): %v", ep.name, era, err)
			}
			for _, k := range ep.calls(s) {
				deadline := time.Now().Add(15 * time.Second)
				for {
					a, err := s.conn.do(k.req, time.Now().Add(requestTimeout))
					if err == nil {
						err = check(a, k.want)
					}
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("warm-up %s %s (%s): %v", ep.name, k.name, era, err)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			s.conn.close()
		}
	}
	api.closeConnections()
	// The codemode endpoint keeps max_concurrent (16) worker processes,
	// started in the background, each with a few goroutines in Caddy: on
	// a busy machine they are not all up after the warm-up. The baseline
	// counts them all, or the first endpoint's check finds them new.
	for deadline := time.Now().Add(time.Minute); p.workers() < 16; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) { // a hang guard
			t.Fatalf("%d code mode workers after a minute, want 16\n%s", p.workers(), p.goroutineDump())
		}
	}
	time.Sleep(idleWait)
	start, err := p.stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Caddy at the start: %s", start)

	d := loadDuration()
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			clients := make([]*loadClient, loadClients)
			for i := range clients {
				era := eras[i%len(eras)]
				s, err := newMCPSession(base+ep.path, era)
				if err != nil {
					t.Fatalf("client %d (%s): %v", i, era, err)
				}
				clients[i] = &loadClient{s: s, calls: ep.calls(s)}
			}
			upstreamBefore := api.requests.Load()
			res := runLoad(clients, d)
			for _, c := range clients {
				c.s.conn.close()
			}
			api.closeConnections()
			t.Logf("%s, %d clients: %s; the REST upstream served %d requests",
				ep.name, len(clients), res, api.requests.Load()-upstreamBefore)
			for i, e := range res.errs {
				if i < 5 {
					t.Errorf("error: %s", e)
				}
			}
			if res.failed > 0 {
				t.Errorf("%d errors under load", res.failed)
			}
			if res.busy > 0 && !ep.busyOK {
				t.Errorf("%d busy answers from an endpoint that has no busy state", res.busy)
			}
			// Throughput is logged, not required (the machine may be busy),
			// but every client must have got through.
			if res.ok < int64(len(clients)) {
				t.Errorf("only %d successful calls in %s from %d clients", res.ok, d, len(clients))
			}
			for _, era := range eras {
				if res.byEra[era] == 0 {
					t.Errorf("no successful calls in the %s era", era)
				}
			}

			after, err := p.settle(start, 20*time.Second)
			t.Logf("Caddy after %s and idle: %s (at the start: %s)", ep.name, after, start)
			if err != nil {
				t.Errorf("Caddy did not return to its starting level: %v\n%s", err, p.goroutineDump())
			}
		})
	}
}
