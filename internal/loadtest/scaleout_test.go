//go:build linux

package loadtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/caddy-mcp/caddy-mcp/internal/mcptest"
)

// instanceSites is the config of both instances behind the front proxy:
// the same text, with the port and the instance's name from the
// environment. Every answer says which instance gave it.
const instanceSites = `http://:{$PORT} {
	header X-Instance {env.INSTANCE}
	mcp /mcp {
		name scale
		upstream http://{$UPSTREAM}` + orderTools + `
		tool slow {
			description "Answers after ms milliseconds."
			get /slow
			arg ms integer required "Milliseconds"
		}
	}
}
`

// frontSites is the round-robin proxy in front of the two instances.
// Passive health checks: one failure takes an instance out for 30 s, and
// a request whose instance cannot be reached is tried on the other one.
const frontSites = `http://:%d {
	reverse_proxy 127.0.0.1:%d 127.0.0.1:%d {
		lb_policy round_robin
		lb_try_duration 5s
		lb_try_interval 50ms
		fail_duration 30s
		max_fails 1
	}
}
`

// instanceRecorder notes which instance answered each request.
type instanceRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (r *instanceRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.seen = append(r.seen, "error")
	} else {
		r.seen = append(r.seen, resp.Header.Get("X-Instance"))
	}
	return resp, err
}

// since returns what was recorded after the first n requests.
func (r *instanceRecorder) since(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen[n:])
}

func (r *instanceRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// TestScaleOut runs two Caddy instances with the same config behind a
// third doing round-robin reverse_proxy. An mcp-go client in each
// protocol era initializes, lists the tools and calls them while its
// requests alternate between the instances; then one instance stops (with
// a call in flight on it) and the same clients keep working through the
// other.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy")
	}
	api := startREST(t)
	portA, portB, portFront := freePort(t), freePort(t), freePort(t)
	addrA, addrB := fmt.Sprintf("127.0.0.1:%d", portA), fmt.Sprintf("127.0.0.1:%d", portB)
	frontAddr := fmt.Sprintf("127.0.0.1:%d", portFront)
	upstreamEnv := "UPSTREAM=" + api.addr()
	startCaddy(t, "instance-a", instanceSites, []string{fmt.Sprintf("PORT=%d", portA), "INSTANCE=a", upstreamEnv}, addrA)
	b := startCaddy(t, "instance-b", instanceSites, []string{fmt.Sprintf("PORT=%d", portB), "INSTANCE=b", upstreamEnv}, addrB)
	startCaddy(t, "front", fmt.Sprintf(frontSites, portFront, portA, portB), nil, frontAddr)
	endpoint := "http://" + frontAddr + "/mcp"

	type eraClient struct {
		era string
		c   *client.Client
		rec *instanceRecorder
	}
	var clients []eraClient
	calls := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_order", map[string]any{"id": "S-1"}, "shipped"},
		{"get_customer", map[string]any{"id": "cus_7"}, customerName},
		{"get_order", map[string]any{"id": "S-2"}, "shipped"},
		{"get_customer", map[string]any{"id": "cus_8"}, customerName},
		{"get_order", map[string]any{"id": "S-3"}, "shipped"},
		{"get_customer", map[string]any{"id": "cus_9"}, customerName},
	}
	callAll := func(t *testing.T, ec eraClient) (failed int) {
		t.Helper()
		for _, k := range calls {
			res, err := mcptest.CallTool(ec.c, k.tool, k.args)
			switch {
			case err != nil:
				t.Errorf("%s %v (%s): %v", k.tool, k.args, ec.era, err)
				failed++
			case res.IsError || !strings.Contains(mcptest.ResultText(res), k.want):
				t.Errorf("%s %v (%s): %+v", k.tool, k.args, ec.era, res)
				failed++
			}
		}
		return failed
	}

	// Both instances up: the requests of each client alternate.
	for _, era := range eras {
		rec := &instanceRecorder{base: &http.Transport{}}
		c, _ := connect(t, endpoint, era, &http.Client{Transport: rec})
		ec := eraClient{era, c, rec}
		clients = append(clients, ec)
		if got, want := mcptest.ToolNames(t, c), []string{"get_customer", "get_order", "slow"}; !slices.Equal(got, want) {
			t.Errorf("tools (%s): %q, want %q", era, got, want)
		}
		callAll(t, ec)
		seen := rec.since(0)
		t.Logf("%s: %d requests, answered by %s", era, len(seen), strings.Join(seen, ""))
		for i, who := range seen {
			if who != "a" && who != "b" {
				t.Errorf("%s: request %d answered by %q", era, i, who)
			}
			if i > 0 && who == seen[i-1] {
				t.Errorf("%s: requests %d and %d both went to instance %s; want round robin", era, i-1, i, who)
			}
		}
		if !slices.Contains(seen, "a") || !slices.Contains(seen, "b") {
			t.Errorf("%s: not both instances answered: %q", era, seen)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Stop instance b with a call in flight on it. Requests of all clients
	// go through one round robin; after an answer from a, the next goes to b.
	inflight := clients[0]
	n := inflight.rec.count()
	if last := inflight.rec.since(n - 1)[0]; last != "a" {
		if _, err := mcptest.CallTool(inflight.c, "get_order", map[string]any{"id": "S-4"}); err != nil {
			t.Fatal(err)
		}
		n++
	}
	type result struct {
		err  error
		text string
	}
	slowDone := make(chan result, 1)
	go func() {
		res, err := mcptest.CallTool(inflight.c, "slow", map[string]any{"ms": 1000})
		if err == nil {
			slowDone <- result{text: mcptest.ResultText(res)}
			return
		}
		slowDone <- result{err: err}
	}()
	time.Sleep(300 * time.Millisecond)
	stopStart := time.Now()
	b.stop(t)
	t.Logf("instance b stopped in %s", time.Since(stopStart).Round(time.Millisecond))
	slow := <-slowDone
	t.Logf("the call in flight on b when it stopped (answered by %q): err=%v, result %q",
		inflight.rec.since(n)[0], slow.err, slow.text)

	// Every later request succeeds, answered by a.
	for _, ec := range clients {
		before := ec.rec.count()
		if got, want := mcptest.ToolNames(t, ec.c), []string{"get_customer", "get_order", "slow"}; !slices.Equal(got, want) {
			t.Errorf("tools after b stopped (%s): %q, want %q", ec.era, got, want)
		}
		callAll(t, ec)
		seen := ec.rec.since(before)
		t.Logf("%s after b stopped: %d requests, answered by %s", ec.era, len(seen), strings.Join(seen, ""))
		for i, who := range seen {
			if who != "a" {
				t.Errorf("%s: request %d after b stopped answered by %q, want a", ec.era, i, who)
			}
		}
	}
	// And a new client, from the start.
	for _, era := range eras {
		c, _ := connect(t, endpoint, era, nil)
		callAll(t, eraClient{era: era, c: c})
	}
}
