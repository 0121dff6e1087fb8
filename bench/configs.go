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
// (the same, accepting s.issuer's tokens), mcp-route, shop (the code-mode
// task), or tools-N (an mcp handler with N tools).
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

// measure measures one configuration at every concurrency level: a
// warm-up, then rounds of closed-loop load, the median kept; and, with a
// rate, the latency at that fixed rate. With tokens, each client carries a
// bearer token of its own. It returns the c=16 measurement.
func measure(s *settings, r *report, config, protocol string, launch launcher, path string, tokens *issuer, rate float64) (Measurement, error) {
	log.Printf("%s (%s)", config, protocol)
	srv, base, err := launch()
	if err != nil {
		return Measurement{}, err
	}
	defer srv.stop()
	t := Target{URL: base + path, Protocol: strings.Fields(protocol)[0], Tool: "get_order", Args: `{"id":"1001"}`, Tokens: tokens}
	maxC := s.concurrency[len(s.concurrency)-1]
	ss, err := sessions(t, maxC)
	if err != nil {
		return Measurement{}, fmt.Errorf("%s (%s): %w", config, protocol, err)
	}
	if _, failed, ferr := saturate(ss[:s.concurrency[0]], s.warmup); failed > 0 {
		return Measurement{}, fmt.Errorf("%s (%s): warm-up failed: %v", config, protocol, ferr)
	}
	var first Measurement
	for _, c := range s.concurrency {
		m := Measurement{Config: config, Protocol: protocol, Concurrency: c}
		var rates []float64
		var total int
		cpu0 := srv.cpu()
		for i := 0; i < s.rounds; i++ {
			done, failed, ferr := saturate(ss[:c], s.round)
			if ferr != nil {
				log.Printf("  c=%d: %d errors, first: %v", c, failed, ferr)
			}
			m.Errors += failed
			total += done
			rates = append(rates, float64(done)/s.round.Seconds())
		}
		if total > 0 {
			m.CPUPerRequest = (srv.cpu() - cpu0) / time.Duration(total)
		}
		m.Throughput = median(rates)
		m.PeakRSS = srv.peakRSS()
		log.Printf("  c=%d: %.0f req/s, %s CPU/req", c, m.Throughput, m.CPUPerRequest)
		r.ms = append(r.ms, m)
		if c == s.concurrency[0] {
			first = m
		}
	}
	if rate > 0 {
		if err := fixedRunOn(s, r, config, protocol, ss, rate); err != nil {
			return first, err
		}
	}
	for i := range r.ms {
		if r.ms[i].Config == config && r.ms[i].Protocol == protocol {
			r.ms[i].PeakRSS = srv.peakRSS()
		}
	}
	return first, nil
}

// fixedRun measures latency at a fixed rate on a fresh server.
func fixedRun(s *settings, r *report, m *Measurement, launch launcher, path string, rate float64) error {
	srv, base, err := launch()
	if err != nil {
		return err
	}
	defer srv.stop()
	t := Target{URL: base + path, Protocol: strings.Fields(m.Protocol)[0], Tool: "get_order", Args: `{"id":"1001"}`}
	ss, err := sessions(t, s.concurrency[len(s.concurrency)-1])
	if err != nil {
		return err
	}
	saturate(ss[:s.concurrency[0]], s.warmup)
	return fixedRunOn(s, r, m.Config, m.Protocol, ss, rate)
}

// fixedRunOn runs the fixed-rate load in rounds and records the median
// round's p50 and p99 on the configuration's measurement at the first
// concurrency level. A configuration that cannot keep up with the rate
// (slower than it at c=16) only queues requests: one round shows that.
func fixedRunOn(s *settings, r *report, config, protocol string, ss []*session, rate float64) error {
	m := r.find(config, protocol, s.concurrency[0])
	if m == nil {
		return fmt.Errorf("%s (%s): no measurement at c=%d", config, protocol, s.concurrency[0])
	}
	rounds := s.fixedRounds
	if m.Throughput > 0 && m.Throughput < rate {
		rounds = 1
	}
	var p50s, p99s []float64
	for i := 0; i < rounds; i++ {
		lat, failed, ferr := fixedRate(ss, rate, s.fixed)
		if ferr != nil {
			log.Printf("  fixed rate: %d errors, first: %v", failed, ferr)
		}
		m.Errors += failed
		sortDurations(lat)
		p50s = append(p50s, float64(percentile(lat, 50)))
		p99s = append(p99s, float64(percentile(lat, 99)))
		log.Printf("  at %.0f req/s: p50 %s, p99 %s", rate, percentile(lat, 50), percentile(lat, 99))
	}
	m.P50, m.P99, m.FixedRate = time.Duration(median(p50s)), time.Duration(median(p99s)), rate
	m.LatencyRounds = rounds
	return nil
}
