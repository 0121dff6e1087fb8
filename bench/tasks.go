package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/caddy-mcp/caddy-mcp/codemode"
	"github.com/caddy-mcp/caddy-mcp/codemode/worker"
)

// CodeModeTask is the fixed task done two ways: as tool calls by the
// client, and as one code-mode execution.
type CodeModeTask struct {
	Rounds, PerRound    int
	CallsWall, CodeWall time.Duration // medians of all the runs
	// Ratios is, per round, the execution's median wall time over the
	// direct calls' median.
	Ratios                   []float64
	CallsBytes, CodeBytes    int // tool-result text the model reads
	CallsAnswer, CodeAnswer  string
	CallsResults, CodeResult int // number of results read
}

// taskCode is the code the model would write for the task.
const taskCode = `const { orders } = await shop.list_orders();
const top = orders.sort((a, b) => b.total - a.total).slice(0, 3);
const customers = await Promise.all(top.map(o => shop.get_customer({ id: o.customer_id })));
return top.map((o, i) => ({ customer: customers[i].name, total: o.total }));`

// codeModeTask: list 50 orders, pick the 3 with the highest total, fetch
// each one's customer, and answer with names and totals; (a) as tools/calls
// by the client (1 list + 3 customer calls), (b) as one execution.
func codeModeTask(s *settings, r *report) error {
	log.Printf("code-mode task")
	srv, base, err := caddyConfig(s, "shop")()
	if err != nil {
		return err
	}
	defer srv.stop()
	ctx := context.Background()
	shop, err := newSession(ctx, Target{URL: base + "/shop", Protocol: "2025-11-25"})
	if err != nil {
		return err
	}
	code, err := newSession(ctx, Target{URL: base + "/code", Protocol: "2025-11-25"})
	if err != nil {
		return err
	}
	// Rounds of the two ways in turn, so that each round's ratio is of
	// the same minute of the machine.
	task := &CodeModeTask{Rounds: s.rounds, PerRound: 5}
	var callsWall, codeWall []float64
	for run := 0; run < task.Rounds*task.PerRound; run++ {
		if run%task.PerRound == 0 && run > 0 {
			task.addRound(callsWall[run-task.PerRound:], codeWall[run-task.PerRound:])
		}
		// (a) What a model does with the tools one by one: every result
		// passes through it.
		start := time.Now()
		list, err := toolText(ctx, shop, "list_orders", `{}`)
		if err != nil {
			return err
		}
		var orders struct {
			Orders []struct {
				CustomerID string  `json:"customer_id"`
				Total      float64 `json:"total"`
			} `json:"orders"`
		}
		if err := json.Unmarshal([]byte(list), &orders); err != nil {
			return fmt.Errorf("list_orders: %w", err)
		}
		sort.Slice(orders.Orders, func(i, j int) bool { return orders.Orders[i].Total > orders.Orders[j].Total })
		bytes := len(list)
		var answer []string
		for _, o := range orders.Orders[:3] {
			c, err := toolText(ctx, shop, "get_customer", fmt.Sprintf(`{"id":%q}`, o.CustomerID))
			if err != nil {
				return err
			}
			bytes += len(c)
			var cu struct{ Name string }
			json.Unmarshal([]byte(c), &cu)
			answer = append(answer, fmt.Sprintf("%s %.2f", cu.Name, o.Total))
		}
		callsWall = append(callsWall, float64(time.Since(start)))
		task.CallsBytes, task.CallsAnswer, task.CallsResults = bytes, strings.Join(answer, ", "), 4

		// (b) One execution: only its result reaches the model.
		start = time.Now()
		args, _ := json.Marshal(map[string]string{"code": taskCode})
		out, err := toolText(ctx, code, "execute", string(args))
		if err != nil {
			return err
		}
		codeWall = append(codeWall, float64(time.Since(start)))
		var got []struct {
			Customer string
			Total    float64
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			return fmt.Errorf("execute: %w: %s", err, out)
		}
		answer = answer[:0]
		for _, g := range got {
			answer = append(answer, fmt.Sprintf("%s %.2f", g.Customer, g.Total))
		}
		task.CodeBytes, task.CodeAnswer, task.CodeResult = len(out), strings.Join(answer, ", "), 1
	}
	task.addRound(callsWall[len(callsWall)-task.PerRound:], codeWall[len(codeWall)-task.PerRound:])
	task.CallsWall = time.Duration(median(callsWall))
	task.CodeWall = time.Duration(median(codeWall))
	if task.CallsAnswer != task.CodeAnswer {
		return fmt.Errorf("the two ways disagree: %q and %q", task.CallsAnswer, task.CodeAnswer)
	}
	r.task = task
	log.Printf("  calls: %s, %d bytes; code: %s, %d bytes; code / calls %s", task.CallsWall, task.CallsBytes, task.CodeWall, task.CodeBytes, task.ratio().ratio(""))
	return nil
}

// addRound records one round's ratio of the execution's median over the
// direct calls' median.
func (t *CodeModeTask) addRound(calls, code []float64) {
	if c := median(calls); c > 0 {
		t.Ratios = append(t.Ratios, median(code)/c)
		log.Printf("  round %d: calls %s, code %s, %.2fx", len(t.Ratios), time.Duration(c), time.Duration(median(code)), median(code)/c)
	}
}

// ratio is the execution's wall time over the direct calls', round by
// round.
func (t *CodeModeTask) ratio() spread { return spreadOf(t.Ratios) }

// toolText calls a tool and returns its text content.
func toolText(ctx context.Context, s *session, tool, args string) (string, error) {
	id := s.seq.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
	resp, b, err := s.post(ctx, body, nil)
	if err != nil {
		return "", err
	}
	var out struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: %d %.300s", tool, resp.StatusCode, b)
	}
	if out.Result.IsError || len(out.Result.Content) == 0 {
		return "", fmt.Errorf("%s: tool error: %.300s", tool, b)
	}
	return out.Result.Content[0].Text, nil
}

// SandboxCost is what one execution costs.
type SandboxCost struct {
	JSPerSecond, TSPerSecond          float64 // over HTTP, through Caddy
	JSMedian, TSMedian                time.Duration
	JSBytes, TSBytes                  int64 // allocated per execution, on Caddy's side
	RSSBefore, RSSAfter               int64 // Caddy, around the HTTP runs
	HeapBefore, HeapAfter             uint64
	GoroutinesBefore, GoroutinesAfter int
	Executions                        int
}

// sandboxCost measures empty executions, JavaScript and TypeScript: in a
// worker (median time, bytes allocated on this side; 10,000 in a row for
// heap and goroutines) and through Caddy over HTTP (executions per
// second, RSS).
func sandboxCost(s *settings, r *report) error {
	log.Printf("sandbox cost")
	c := &SandboxCost{Executions: 10000}
	// Executions run in a worker, a process of Caddy's own binary, as in
	// Caddy: the heap and goroutines measured are this side's.
	pool, err := worker.NewPool(worker.PoolConfig{Command: []string{s.caddy, worker.Command}})
	if err != nil {
		return err
	}
	defer pool.Close()
	runner := worker.NewRunner(codemode.Limits{}, pool)
	ctx := context.Background()
	js, ts := `return 1`, `const x: number = 1; return x`
	medianOf := func(code string) (time.Duration, int64) {
		res := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				runner.Run(ctx, code, nil)
			}
		})
		var times []float64
		for i := 0; i < 200; i++ {
			start := time.Now()
			runner.Run(ctx, code, nil)
			times = append(times, float64(time.Since(start)))
		}
		return time.Duration(median(times)), res.AllocedBytesPerOp()
	}
	c.JSMedian, c.JSBytes = medianOf(js)
	c.TSMedian, c.TSBytes = medianOf(ts)

	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	c.GoroutinesBefore, c.HeapBefore = runtime.NumGoroutine(), heap()
	for i := 0; i < c.Executions; i++ {
		runner.Run(ctx, js, nil)
	}
	time.Sleep(100 * time.Millisecond)
	c.GoroutinesAfter, c.HeapAfter = runtime.NumGoroutine(), heap()

	srv, base, err := caddyConfig(s, "shop")()
	if err != nil {
		return err
	}
	defer srv.stop()
	c.RSSBefore = srv.rss()
	for _, v := range []struct {
		code string
		rate *float64
	}{{js, &c.JSPerSecond}, {ts, &c.TSPerSecond}} {
		args, _ := json.Marshal(map[string]string{"code": v.code})
		t := Target{URL: base + "/code", Protocol: "2025-11-25", Tool: "execute", Args: string(args)}
		ss, err := sessions(t, 8)
		if err != nil {
			return err
		}
		saturate(ss, s.warmup)
		done, failed, ferr := saturate(ss, s.round)
		if failed > 0 {
			log.Printf("  %d errors, first: %v", failed, ferr)
		}
		*v.rate = float64(done) / s.round.Seconds()
	}
	c.RSSAfter = srv.rss()
	r.sandbox = c
	log.Printf("  JS %s median, %.0f/s over HTTP; TS %s, %.0f/s", c.JSMedian, c.JSPerSecond, c.TSMedian, c.TSPerSecond)
	return nil
}

// toolCountRSS is Caddy's memory with 10 and with 500 tools configured.
func toolCountRSS(s *settings, r *report) error {
	log.Printf("RSS by tool count")
	r.toolRSS = make(map[int]int64)
	for _, n := range []int{10, 500} {
		srv, base, err := caddyConfig(s, fmt.Sprintf("tools-%d", n))()
		if err != nil {
			return err
		}
		sess, err := newSession(context.Background(), Target{URL: base + "/mcp", Protocol: "2025-11-25"})
		if err == nil {
			_, _, err = sess.post(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil)
		}
		r.toolRSS[n] = srv.rss()
		srv.stop()
		if err != nil {
			return err
		}
		log.Printf("  %d tools: %d MiB", n, r.toolRSS[n]>>20)
	}
	return nil
}
