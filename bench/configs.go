package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// launcher starts a server and returns it and its base URL.
type launcher func() (*server, string, error)

// caddyGlobal leaves nothing behind in the home directory: no autosave,
// and no TLS storage check or clean (they write instance.uuid,
// last_clean.json and locks/ into ~/.local/share/caddy).
const caddyGlobal = `{
	admin off
	persist_config off
	storage_check off
	storage_clean_interval off
	default_bind 127.0.0.1
	auto_https off
	grace_period 1s
}
`

// orderTool is the tool every MCP configuration offers: the same call as
// the REST baseline.
const orderTool = `
		tool get_order {
			description "Get one order by id."
			get /orders/{id}
			arg id string required "Order id"
		}`

// caddyConfig returns a launcher for a Caddy in one configuration:
// rest (reverse_proxy only), mcp-upstream, mcp-upstream-authorization
// (the same, accepting s.issuer's tokens), mcp-upstream-openapi (the
// same, its tool imported from orderDocument), mcp-route, shop (the code-mode
// task), binding (codemode calling mcp-upstream's endpoint on the same
// Caddy) or tools-N (an mcp handler with N tools).
func caddyConfig(s *settings, kind string) launcher {
	return func() (*server, string, error) {
		addr := freeAddr()
		up := s.upstreamAddr
		var site string
		switch {
		case kind == "rest":
			site = fmt.Sprintf("reverse_proxy %s", up)
		case kind == "mcp-upstream":
			site = fmt.Sprintf("mcp /mcp {\n\t\tupstream http://%s%s\n\t}", up, orderTool)
		case kind == "mcp-upstream-authorization":
			site = fmt.Sprintf("mcp /mcp {\n\t\tupstream http://%s%s%s\n\t}", up, s.issuer.authorizationBlock("http://"+addr+"/mcp"), orderTool)
		case kind == "mcp-upstream-openapi":
			file, err := writeOrderDocument(s.work)
			if err != nil {
				return nil, "", err
			}
			site = fmt.Sprintf("mcp /mcp {\n\t\tupstream http://%s%s\n\t}", up, orderImport(file))
		case kind == "mcp-route":
			site = fmt.Sprintf("route {\n\t\tmcp /mcp {%s\n\t\t}\n\t\treverse_proxy %s\n\t}", orderTool, up)
		case kind == "shop":
			site = fmt.Sprintf(`mcp /shop {
		upstream http://%s/shop
		tool list_orders {
			description "List all orders, each with its items, totals and shipment."
			get /orders
		}
		tool get_customer {
			description "Get a customer by id."
			get /customers/{id}
			arg id string required "Customer id, such as cus_001"
		}
	}
	codemode /code {
		backend shop http://%s/shop
		max_concurrent 64
	}`, up, addr)
		case kind == "binding":
			// A codemode backend that is an mcp endpoint of the same
			// Caddy: same server, same path.
			site = fmt.Sprintf("mcp /mcp {\n\t\tupstream http://%s%s\n\t}\n\tcodemode /code {\n\t\tbackend orders http://%s/mcp\n\t}", up, orderTool, addr)
		case strings.HasPrefix(kind, "tools-"):
			var n int
			fmt.Sscanf(kind, "tools-%d", &n)
			var b strings.Builder
			fmt.Fprintf(&b, "mcp /mcp {\n\t\tupstream http://%s", up)
			for i := 0; i < n; i++ {
				fmt.Fprintf(&b, `
		tool get_order_%d {
			description "Get one order by id, from shard %d."
			get /orders/{id}
			arg id string required "Order id"
			arg expand string[] "Related records to include" {
				enum customer items shipment
			}
		}`, i, i)
			}
			b.WriteString("\n\t}")
			site = b.String()
		default:
			return nil, "", fmt.Errorf("unknown configuration %q", kind)
		}
		file := filepath.Join(s.work, kind+".Caddyfile")
		text := caddyGlobal + fmt.Sprintf("http://%s {\n\t%s\n}\n", addr, site)
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			return nil, "", err
		}
		srv, err := start("caddy "+kind, s.work, s.work, addr, nil, s.caddy, "run", "--config", file, "--adapter", "caddyfile")
		return srv, "http://" + addr, err
	}
}

// peerConfig returns a launcher for the TypeScript SDK peer on Node.
func peerConfig(s *settings, mode string) launcher {
	return func() (*server, string, error) {
		addr := freeAddr()
		port := addr[strings.LastIndexByte(addr, ':')+1:]
		dir := filepath.Join(s.repoRoot, "bench", "peer")
		srv, err := start("peer "+mode, dir, s.work, addr,
			[]string{"PORT=" + port, "UPSTREAM=http://" + s.upstreamAddr, "MODE=" + mode},
			"node", "server.mjs")
		return srv, "http://" + addr, err
	}
}

// candidate is a configuration to measure: the server, and where its
// clients send their tools/call (or GET).
type candidate struct {
	config, protocol string
	launch           launcher
	path             string
	tokens           *issuer // if set, each client carries a token of its own
}

// running is a candidate under measurement.
type running struct {
	candidate
	srv *server
	ss  []*session
	ms  []Measurement // one per concurrency level
	// the rounds at the current concurrency level
	done int
	cpu  time.Duration
	lat  latencyRounds
}

// measure measures configurations at every concurrency level: a warm-up,
// then rounds of closed-loop load, the median kept; and, with a rate, the
// latency at the fixed rate it gives for the first configuration's
// measurement at the first concurrency level. Configurations measured
// together run at the same time and take their rounds in turn (round 1 of
// each, then round 2, ...), so that what else the machine does during the
// run falls on each alike and each round of one can be set beside the same
// round of another: the ones compared with each other are measured
// together, as one pass. It returns the measurements at the first
// concurrency level.
func measure(s *settings, r *report, rate func(first Measurement) float64, cs ...candidate) ([]Measurement, error) {
	r.passes++
	var rs []*running
	defer func() {
		for _, x := range rs {
			x.srv.stop()
		}
	}()
	for _, c := range cs {
		log.Printf("%s (%s)", c.config, c.protocol)
		srv, base, err := c.launch()
		if err != nil {
			return nil, err
		}
		x := &running{candidate: c, srv: srv}
		rs = append(rs, x)
		t := Target{URL: base + c.path, Protocol: strings.Fields(c.protocol)[0], Tool: "get_order", Args: `{"id":"1001"}`, Tokens: c.tokens}
		if x.ss, err = sessions(t, s.concurrency[len(s.concurrency)-1]); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", c.config, c.protocol, err)
		}
		if _, failed, ferr := saturate(x.ss[:s.concurrency[0]], s.warmup); failed > 0 {
			return nil, fmt.Errorf("%s (%s): warm-up failed: %v", c.config, c.protocol, ferr)
		}
	}
	for _, c := range s.concurrency {
		for _, x := range rs {
			x.ms = append(x.ms, Measurement{Config: x.config, Protocol: x.protocol, Concurrency: c, Pass: r.passes})
			x.done, x.cpu = 0, 0
		}
		for i := 0; i < s.rounds; i++ {
			for _, x := range rs {
				m := &x.ms[len(x.ms)-1]
				cpu0 := x.srv.cpu()
				done, failed, ferr := saturate(x.ss[:c], s.round)
				cpu := x.srv.cpu() - cpu0
				x.cpu += cpu
				// Every round gets a figure, so that rounds pair by index
				// with the other configurations': one that served nothing
				// counts its CPU as if it had served one.
				m.CPURounds = append(m.CPURounds, cpu/time.Duration(max(done, 1)))
				if ferr != nil {
					log.Printf("  %s c=%d: %d errors, first: %v", m.Label(), c, failed, ferr)
				}
				m.Errors += failed
				x.done += done
				m.RateRounds = append(m.RateRounds, float64(done)/s.round.Seconds())
			}
		}
		for _, x := range rs {
			m := &x.ms[len(x.ms)-1]
			if x.done > 0 {
				m.CPUPerRequest = x.cpu / time.Duration(x.done)
			}
			m.Throughput = median(m.RateRounds)
			log.Printf("  %s c=%d: %.0f req/s, %s CPU/req", m.Label(), c, m.Throughput, m.CPUPerRequest)
		}
	}
	if rate != nil && len(rs) > 0 {
		at := rate(rs[0].ms[0])
		for i := 0; i < s.fixedRounds; i++ {
			for _, x := range rs {
				if i < latencyRoundsFor(s, &x.ms[0], at) {
					x.lat.run(x.ms[0].Label(), x.ss, at, s.fixed)
				}
			}
		}
		for _, x := range rs {
			x.lat.record(&x.ms[0], at)
		}
	}
	var first []Measurement
	for _, x := range rs {
		for i := range x.ms {
			x.ms[i].PeakRSS = x.srv.peakRSS()
		}
		r.ms = append(r.ms, x.ms...)
		first = append(first, x.ms[0])
	}
	return first, nil
}

// latencyRoundsFor is how many fixed-rate rounds the configuration
// measured as m gets. One that cannot keep up with the rate (slower than
// it at c=16) only queues requests: one round shows that.
func latencyRoundsFor(s *settings, m *Measurement, rate float64) int {
	if m.Throughput > 0 && m.Throughput < rate {
		return 1
	}
	return s.fixedRounds
}

// latencyRounds are the fixed-rate rounds of one configuration.
type latencyRounds struct {
	p50s, p99s []float64
	errors     int
}

func (l *latencyRounds) run(name string, ss []*session, rate float64, d time.Duration) {
	lat, failed, ferr := fixedRate(ss, rate, d)
	if ferr != nil {
		log.Printf("  %s at %.0f req/s: %d errors, first: %v", name, rate, failed, ferr)
	}
	l.errors += failed
	sortDurations(lat)
	l.p50s = append(l.p50s, float64(percentile(lat, 50)))
	l.p99s = append(l.p99s, float64(percentile(lat, 99)))
	log.Printf("  %s at %.0f req/s: p50 %s, p99 %s", name, rate, percentile(lat, 50), percentile(lat, 99))
}

// record puts the median round's p50 and p99 on m.
func (l *latencyRounds) record(m *Measurement, rate float64) {
	m.Errors += l.errors
	m.P50, m.P99, m.FixedRate = time.Duration(median(l.p50s)), time.Duration(median(l.p99s)), rate
	m.LatencyRounds = len(l.p50s)
	m.P99Rounds = nil
	for _, p := range l.p99s {
		m.P99Rounds = append(m.P99Rounds, time.Duration(p))
	}
}
