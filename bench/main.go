// Command bench measures caddy-mcp side by side with its limit and its
// peers on one machine, and writes BENCHMARKS.md and PNG charts:
//
//	cd bench && go run .            # the full run, about 15 minutes
//	cd bench && go run . -quick     # a short run, to try the harness
//	cd bench && go run . -discovery # only the discovery bytes, in seconds
//	cd bench && go run . -cloudflare # only the sandbox beside workerd's, in a minute or two
//
// Everything runs on 127.0.0.1: a Go REST upstream, Caddy (built from this
// checkout) in each configuration, and the official TypeScript SDK wrapping
// the same API on Node, each as a process of its own so that its CPU time
// and peak memory are its own. The load comes from this process.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type settings struct {
	rounds       int
	fixedRounds  int // rounds of the fixed-rate latency runs
	round        time.Duration
	warmup       time.Duration
	fixed        time.Duration
	concurrency  []int
	repoRoot     string
	work         string // temporary files and logs
	out          string // where BENCHMARKS.md goes
	charts       string // where the PNG charts go
	caddy        string // the Caddy binary
	upstreamAddr string
	issuer       *issuer // the authorization server of the authorization row
}

func main() {
	quick := flag.Bool("quick", false, "a short run: two rounds of 1 s per measurement")
	discoveryOnly := flag.Bool("discovery", false, "only the bytes of GitHub's tools/list with discovery all and search, printed")
	flag.Parse()
	log.SetFlags(log.Ltime)

	root, err := filepath.Abs("..")
	if err != nil {
		log.Fatal(err)
	}
	// More, shorter rounds: seven configurations take them in turn, and
	// seven rounds give each ratio a median and a spread.
	s := &settings{rounds: 7, fixedRounds: 7, round: 3 * time.Second, warmup: 2 * time.Second, fixed: 4 * time.Second,
		concurrency: []int{16, 64}, repoRoot: root,
		out: filepath.Join(root, "BENCHMARKS.md"), charts: filepath.Join(root, "bench", "charts")}
	if *quick {
		s.rounds, s.fixedRounds, s.round, s.warmup, s.fixed = 2, 2, time.Second, time.Second, 2*time.Second
	}
	if s.work, err = os.MkdirTemp("", "caddy-mcp-bench-"); err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(s.work)
	if err := os.MkdirAll(s.charts, 0o755); err != nil {
		log.Fatal(err)
	}

	log.Printf("building Caddy from %s", root)
	s.caddy = filepath.Join(s.work, "caddy")
	if out, err := exec.Command("go", "build", "-C", root, "-o", s.caddy, "./cmd/caddy").CombinedOutput(); err != nil {
		log.Fatalf("go build: %v\n%s", err, out)
	}
	if *discoveryOnly {
		d, err := discoveryBytes(s)
		if err != nil {
			log.Fatal(err)
		}
		t := discoveryTarget(d)
		fmt.Printf("%s: %s\n", t.name, t.measured)
		return
	}
	if *cloudflareOnly {
		if err := cloudflareMain(s); err != nil {
			log.Fatal(err)
		}
		return
	}
	log.Printf("installing the Node peer (npm ci in bench/peer)")
	if out, err := exec.Command("npm", "ci", "--prefix", filepath.Join(root, "bench", "peer"), "--no-audit", "--no-fund").CombinedOutput(); err != nil {
		log.Fatalf("npm ci: %v\n%s", err, out)
	}

	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	s.upstreamAddr = freeAddr()
	up, err := start("upstream", s.work, s.work, s.upstreamAddr, nil, self, "upstream", s.upstreamAddr)
	if err != nil {
		log.Fatal(err)
	}
	defer up.stop()
	if s.issuer, err = startIssuer(); err != nil {
		log.Fatal(err)
	}
	defer s.issuer.stop()

	report := &report{started: time.Now(), settings: s}
	if err := runAll(s, report); err != nil {
		log.Printf("stopped early: %v", err)
		report.notes = append(report.notes, "The run stopped early: "+err.Error())
	}
	report.upstreamCPU = up.cpu()
	if err := report.write(); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s and %s", s.out, s.charts)
	printTargets(report)
}

func runAll(s *settings, r *report) error {
	if err := checkImported(s, "2025-11-25"); err != nil {
		return err
	}
	mcp := func(config, kind, protocol string) candidate {
		return candidate{config, protocol, caddyConfig(s, kind), "/mcp", nil}
	}
	authorized := mcp(authorizedConfig, "mcp-upstream-authorization", "2025-11-25")
	authorized.tokens = s.issuer
	// (1) the limit, plain reverse_proxy, and everything set beside it are
	// one pass: all their Caddys run at once and take their rounds in
	// turn, so that each ratio to (1) is taken round by round. (1)'s rate
	// at c=16 sets the fixed rate of every latency run.
	first, err := measure(s, r, func(rp Measurement) float64 { return rp.Throughput / 2 },
		candidate{"reverse_proxy", "REST", caddyConfig(s, "rest"), "/orders/1001", nil},
		mcp("mcp upstream", "mcp-upstream", "2025-11-25"),
		mcp("mcp upstream", "mcp-upstream", "2026-07-28"),
		mcp("mcp route", "mcp-route", "2025-11-25"),
		mcp("mcp route", "mcp-route", "2026-07-28"),
		authorized,
		mcp(importedConfig, "mcp-upstream-openapi", "2025-11-25"),
	)
	if err != nil {
		return err
	}
	rate := first[0].Throughput / 2
	peer := func(mode string) candidate {
		return candidate{"TypeScript SDK peer", "2025-11-25 " + mode, peerConfig(s, mode), "/mcp", nil}
	}
	for _, mode := range []string{"session", "stateless"} {
		if _, err := measure(s, r, func(Measurement) float64 { return rate }, peer(mode)); err != nil {
			return err
		}
	}
	if err := codeModeTask(s, r); err != nil {
		return err
	}
	if err := bindingOverhead(s, r); err != nil {
		return err
	}
	if err := sandboxCost(s, r); err != nil {
		return err
	}
	if r.cloudflare, err = cloudflareRun(s); err != nil {
		return err
	}
	if r.discovery, err = discoveryBytes(s); err != nil {
		return err
	}
	return toolCountRSS(s, r)
}

// printTargets prints each target and whether it was met.
func printTargets(r *report) {
	fmt.Println()
	for _, t := range r.targets() {
		mark := "MET    "
		if !t.met {
			mark = "NOT MET"
		}
		fmt.Printf("%s  %s: %s\n", mark, t.name, t.measured)
	}
	fmt.Printf("\n%d cores, GOMAXPROCS %d, %s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), strings.TrimSpace(runtime.Version()))
}
