package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// The same script runs on both sides: three dependent tool calls whose
// tools answer small JSON from memory (Caddy's respond behind an mcp
// handler in route mode; functions of workerd's parent worker).
const cloudflareScript = `const order = await shop.get_order({ id: "1001" });
const customer = await shop.get_customer({ id: order.customer_id });
const shipment = await shop.get_shipment({ id: order.shipment_id });
return { order: order.id, customer: customer.name, carrier: shipment.carrier };`

// cloudflareAnswer is what the script returns, as JSON.
const cloudflareAnswer = `{"order":"1001","customer":"Mateo García","carrier":"DHL"}`

// The records both sides answer with (bench/workerd/parent.js holds the
// same three).
const (
	cfOrder    = `{"id":"1001","customer_id":"cus_001","shipment_id":"shp_001","total":164.56,"currency":"EUR","status":"delivered"}`
	cfCustomer = `{"id":"cus_001","name":"Mateo García","email":"mateo@example.com"}`
	cfShipment = `{"id":"shp_001","carrier":"DHL","status":"delivered"}`
)

// cloudflareHeld is how many executions are held open at once to count
// memory per live sandbox.
const cloudflareHeld = 32

// holdScript keeps an execution alive in a tool call answered by the
// bench's holder, then runs the script.
func holdScript() string {
	return "await slow.hold({ ms: \"30000\" });\n" + cloudflareScript
}

// sandboxSide is one sandbox measured: caddy-mcp in one isolation mode,
// or workerd.
type sandboxSide struct {
	Name     string
	P50, P99 time.Duration // per execution at c=1, over HTTP
	C1, C2   float64       // executions per second, median of rounds
	IdleMem  int64         // PSS of the server and its children, idle
	HeldMem  int64         // the same with cloudflareHeld executions open
	lat      []time.Duration
	c1s, c2s []float64
	launch   func() (*server, string, error)
	client   func(base, code string) (caller, error) // one client of the server at base
	base     string                                  // of the server of the speed rounds
	pid      int                                     // of the server of the speed rounds
	workerd  bool
	CPU      time.Duration // of the server and its children per execution, every round
	cpu      time.Duration
	done     int
}

// PerSandbox is the memory one live sandbox adds.
func (s *sandboxSide) PerSandbox() int64 { return (s.HeldMem - s.IdleMem) / cloudflareHeld }

// cloudflareResult is caddy-mcp's sandbox beside Cloudflare's.
type cloudflareResult struct {
	Skipped  string // why workerd's side was not measured
	Workerd  string // workerd's version
	Rounds   int
	Round    time.Duration
	Sides    []*sandboxSide // caddy-mcp, then workerd
	previous string         // the section of the last run, kept when workerd cannot run
	Alone    *sandboxAlone
}

// caller is one client that runs an execution and checks its answer.
type caller interface {
	call(ctx context.Context) error
}

// cloudflareRun measures the 3-call script on workerd (a fresh dynamic
// worker per execution, @cloudflare/codemode's executor) and on caddy-mcp
// (codemode over HTTP through Caddy), round-robin in one run.
func cloudflareRun(s *settings) (*cloudflareResult, error) {
	log.Printf("Cloudflare's sandbox: workerd beside codemode")
	res := &cloudflareResult{Rounds: s.rounds, Round: s.round, previous: previousCloudflareSection(s.out)}
	h, err := startHolder()
	if err != nil {
		return nil, err
	}
	defer h.close()
	dir := filepath.Join(s.repoRoot, "bench", "workerd")
	bin, version, reason := installWorkerd(dir)
	res.Workerd = version

	caddy := func() (*server, string, error) { return cloudflareCaddy(s, h.addr) }
	ours := func(endpoint string) func(base, code string) (caller, error) {
		return func(base, code string) (caller, error) { return codeSession(base+endpoint, code) }
	}
	sides := []*sandboxSide{
		{Name: "caddy-mcp codemode", launch: caddy, client: ours("/code")},
	}
	var wd *sandboxSide
	if reason == "" {
		wd = &sandboxSide{Name: "workerd dynamic worker, @cloudflare/codemode 0.5.6", workerd: true,
			launch: func() (*server, string, error) { return startWorkerd(s, dir, bin, h.addr) },
			client: func(base, code string) (caller, error) { return newWorkerdClient(base, code) }}
		sides = append(sides, wd)
	}
	res.Sides = sides

	// Speed: one server per side, kept for every round.
	var servers []*server
	defer func() {
		for _, srv := range servers {
			srv.stop()
		}
	}()
	for _, side := range sides {
		srv, base, err := side.launch()
		if err != nil {
			if side == wd {
				res.Skipped = "workerd did not start: " + err.Error()
				res.Sides = sides[:2]
				log.Printf("  %s", res.Skipped)
				continue
			}
			return nil, err
		}
		servers = append(servers, srv)
		side.base, side.pid = base, srv.cmd.Process.Pid
		if err := side.checkAnswer(); err != nil {
			return nil, err
		}
	}
	if reason != "" {
		res.Skipped = reason
	}
	sides = res.Sides
	if res.Alone, err = measureSandboxAlone(); err != nil {
		return nil, err
	}
	log.Printf("  the script in process, bindings answering from memory: %s median, %d KiB allocated", res.Alone.Median, res.Alone.Bytes>>10)
	for _, side := range sides {
		if err := side.warm(s.warmup); err != nil {
			return nil, err
		}
	}
	for round := 0; round < s.rounds; round++ {
		for _, side := range sides {
			if err := side.speedRound(s.round); err != nil {
				return nil, err
			}
		}
	}
	for _, side := range sides {
		side.finish()
		log.Printf("  %s: p50 %s, p99 %s, %.0f/s at c=1, %.0f/s at c=2, %s CPU per execution", side.Name, side.P50, side.P99, side.C1, side.C2, side.CPU)
	}
	for _, srv := range servers {
		srv.stop()
	}
	servers = nil

	// Memory: a fresh server per side, warmed, then cloudflareHeld
	// executions held open in the holder's tool.
	for _, side := range sides {
		if err := side.measureHeld(h); err != nil {
			return nil, fmt.Errorf("%s: %w", side.Name, err)
		}
		log.Printf("  %s: %d KiB idle, %d KiB with %d held: %d KiB per live sandbox",
			side.Name, side.IdleMem>>10, side.HeldMem>>10, cloudflareHeld, side.PerSandbox()>>10)
	}
	if res.workerdSide() != nil {
		if err := writeCloudflareCharts(s.charts, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkAnswer runs the script once and compares what it returned.
func (side *sandboxSide) checkAnswer() error {
	c, err := side.client(side.base, cloudflareScript)
	if err != nil {
		return fmt.Errorf("%s: %w", side.Name, err)
	}
	got, err := resultOf(c)
	if err != nil {
		return fmt.Errorf("%s: %w", side.Name, err)
	}
	if want, _ := compactJSON(cloudflareAnswer); got != want {
		return fmt.Errorf("%s returned %s, want %s", side.Name, got, cloudflareAnswer)
	}
	return nil
}

// warm runs executions on two clients for d.
func (side *sandboxSide) warm(d time.Duration) error {
	cs, err := side.callers(2)
	if err != nil {
		return err
	}
	_, err = closedLoop(cs, d, nil)
	return err
}

func (side *sandboxSide) callers(n int) ([]caller, error) {
	var cs []caller
	for i := 0; i < n; i++ {
		c, err := side.client(side.base, cloudflareScript)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", side.Name, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// speedRound is one round: d of executions one at a time, each timed,
// then d of two at a time.
func (side *sandboxSide) speedRound(d time.Duration) error {
	for _, c := range []int{1, 2} {
		cs, err := side.callers(c)
		if err != nil {
			return err
		}
		var lat *[]time.Duration
		if c == 1 {
			lat = &side.lat
		}
		cpu0 := treeCPU(side.pid)
		done, err := closedLoop(cs, d, lat)
		if err != nil {
			return fmt.Errorf("%s at c=%d: %w", side.Name, c, err)
		}
		side.cpu += treeCPU(side.pid) - cpu0
		side.done += done
		rate := float64(done) / d.Seconds()
		if c == 1 {
			side.c1s = append(side.c1s, rate)
		} else {
			side.c2s = append(side.c2s, rate)
		}
	}
	return nil
}

func (side *sandboxSide) finish() {
	sortDurations(side.lat)
	side.P50, side.P99 = percentile(side.lat, 50), percentile(side.lat, 99)
	side.C1, side.C2 = median(side.c1s), median(side.c2s)
	if side.done > 0 {
		side.CPU = side.cpu / time.Duration(side.done)
	}
}

// closedLoop runs each caller's executions back to back for d and
// returns how many were answered; with lat, it records each one's time.
// Any failed execution fails the run: both sides must do the same work.
func closedLoop(cs []caller, d time.Duration, lat *[]time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var done atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func(c caller) {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				err := c.call(ctx)
				took := time.Since(start)
				if errors.Is(err, context.DeadlineExceeded) {
					return
				}
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if err == nil && lat != nil {
					*lat = append(*lat, took)
				}
				mu.Unlock()
				if err != nil {
					return
				}
				done.Add(1)
			}
		}(c)
	}
	wg.Wait()
	return int(done.Load()), first
}

// measureHeld starts a fresh server, warms it, and reads its memory idle
// and with cloudflareHeld executions waiting in the holder's tool.
func (side *sandboxSide) measureHeld(h *holder) error {
	srv, base, err := side.launch()
	if err != nil {
		return err
	}
	defer srv.stop()
	warm, err := side.client(base, cloudflareScript)
	if err != nil {
		return err
	}
	for i := 0; i < 20; i++ {
		if err := warm.call(context.Background()); err != nil {
			return err
		}
	}
	time.Sleep(500 * time.Millisecond)
	side.IdleMem = treePSS(srv.cmd.Process.Pid)

	release := h.arm()
	cs := make([]caller, cloudflareHeld)
	for i := range cs {
		if cs[i], err = side.client(base, holdScript()); err != nil {
			return err
		}
	}
	errs := make(chan error, len(cs))
	for _, c := range cs {
		go func(c caller) { errs <- c.call(context.Background()) }(c)
	}
	deadline := time.Now().Add(30 * time.Second)
	for h.arrived() < cloudflareHeld {
		if time.Now().After(deadline) {
			release()
			return fmt.Errorf("only %d of %d executions reached the held tool in 30 s", h.arrived(), cloudflareHeld)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	side.HeldMem = treePSS(srv.cmd.Process.Pid)
	release()
	for range cs {
		if err := <-errs; err != nil {
			return fmt.Errorf("a held execution: %w", err)
		}
	}
	return nil
}

// codeSession is an MCP session calling execute with code.
func codeSession(endpoint, code string) (caller, error) {
	args, _ := json.Marshal(map[string]string{"code": code})
	return newSession(context.Background(), Target{URL: endpoint, Protocol: "2025-11-25", Tool: "execute", Args: string(args)})
}

// resultOf runs one execution and returns the JSON value the script
// returned.
func resultOf(c caller) (string, error) {
	switch c := c.(type) {
	case *session:
		text, err := toolText(context.Background(), c, "execute", c.t.Args)
		if err != nil {
			return "", err
		}
		return compactJSON(text)
	case *workerdClient:
		status, body, err := c.raw.do(c.req, time.Now().Add(30*time.Second))
		if err != nil {
			return "", err
		}
		var out struct {
			Result json.RawMessage `json:"result"`
			Error  string          `json:"error"`
		}
		if err := json.Unmarshal(body, &out); err != nil || status != http.StatusOK || out.Error != "" {
			return "", fmt.Errorf("workerd answered %d: %.300s", status, body)
		}
		return compactJSON(string(out.Result))
	}
	return "", fmt.Errorf("unknown client %T", c)
}

func compactJSON(text string) (string, error) {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "", fmt.Errorf("not JSON: %.300s", text)
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// cloudflareCaddy starts a Caddy whose shop tools answer from memory
// (respond behind an mcp handler in route mode), whose slow tool waits in
// the holder, and a codemode endpoint over them, /code, with a warm pool
// of two workers for the c=2 rounds.
func cloudflareCaddy(s *settings, holdAddr string) (*server, string, error) {
	addr := freeAddr()
	codemode := fmt.Sprintf(`	codemode /code {
		backend shop http://%s/shop
		backend slow http://%s/slow
		workers 2
		max_concurrent 64
	}
`, addr, addr)
	site := fmt.Sprintf(`	route /shop* {
		mcp /shop {
			tool get_order {
				description "Get one order by id."
				get /orders/{id}
				arg id string required "Order id"
			}
			tool get_customer {
				description "Get a customer by id."
				get /customers/{id}
				arg id string required "Customer id"
			}
			tool get_shipment {
				description "Get a shipment by id."
				get /shipments/{id}
				arg id string required "Shipment id"
			}
		}
		header Content-Type application/json
		respond /orders/* %s 200
		respond /customers/* %s 200
		respond /shipments/* %s 200
	}
	mcp /slow {
		upstream http://%s
		tool hold {
			description "Answer after ms milliseconds, or when the bench releases it."
			get /hold/{ms}
			arg ms string required "Milliseconds"
		}
	}
%s`, "`"+cfOrder+"`", "`"+cfCustomer+"`", "`"+cfShipment+"`", holdAddr, codemode)
	file := filepath.Join(s.work, "cloudflare.Caddyfile")
	text := caddyGlobal + fmt.Sprintf("http://%s {\n%s}\n", addr, site)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return nil, "", err
	}
	srv, err := start("caddy cloudflare", s.work, s.work, addr, nil, s.caddy, "run", "--config", file, "--adapter", "caddyfile")
	if err != nil {
		return nil, "", err
	}
	return srv, "http://" + addr, nil
}

var cloudflareOnly = flag.Bool("cloudflare", false, "only caddy-mcp's sandbox beside Cloudflare's (workerd), in short rounds, printed")

// cloudflareMain is the -cloudflare run: three rounds of 2 s, the
// section and the targets printed, the chart written.
func cloudflareMain(s *settings) error {
	s.rounds, s.round, s.warmup = 3, 2*time.Second, time.Second
	c, err := cloudflareRun(s)
	if err != nil {
		return err
	}
	fmt.Println(c.markdown())
	for _, t := range c.targets() {
		mark := "MET    "
		if !t.met {
			mark = "NOT MET"
		}
		fmt.Printf("%s  %s: %s\n", mark, t.name, t.measured)
	}
	return nil
}
