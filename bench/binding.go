package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// BindingOverhead is what a binding call to an mcp endpoint of the same
// Caddy costs beyond the same tools/call made by a client directly.
type BindingOverhead struct {
	Calls, Rounds, PerRound int
	ArgBytes, ResultBytes   int
	// BindingCall is the median of (execution with Calls calls -
	// execution with none) / Calls; DirectCall the median of one direct
	// tools/call. Over all the runs.
	BindingCall, DirectCall time.Duration
	// Overheads is, per round, BindingCall - DirectCall of that round, in
	// nanoseconds.
	Overheads []float64
	// CPUOverheads is, per round, the same difference in Caddy's CPU time
	// (nanoseconds, from the scheduler's per-thread accounting): what
	// Caddy spends on a binding call beyond what it spends serving the
	// client's call. The wall time waits for the cores as well; this does
	// not. Empty where the kernel does not account it.
	CPUOverheads []float64
}

// bindingBudget is the most a binding call to an mcp endpoint of the same
// Caddy may cost beyond a client's own call of the tool.
const bindingBudget = 20 * time.Microsecond

// bindingOverhead measures, through Caddy over HTTP, executions making
// Calls binding calls one after another of get_order with an id of 1,000
// characters (about 1 KB of arguments and of result: the upstream echoes
// the id) to the mcp endpoint of the same Caddy, the same executions
// making none, and the same tools/call sent Calls times by a client on a
// kept-alive connection, interleaved. Per round:
//
//	overhead = (median(with calls) - median(without)) / Calls - median(direct) / Calls
//
// so that the execution's own cost and the tool's work (the mcp handler
// and its upstream) cancel out, and what is left is what the sandbox and
// the way it reaches the endpoint (loopback HTTP or in process) add to a
// call. It is the same definition whichever way the backend is reached.
func bindingOverhead(s *settings, r *report) error {
	log.Printf("binding-call overhead")
	srv, base, err := caddyConfig(s, "binding")()
	if err != nil {
		return err
	}
	defer srv.stop()
	ctx := context.Background()
	b := &BindingOverhead{Calls: 20, Rounds: s.rounds, PerRound: 10}
	id := strings.Repeat("x", 1000)
	args, _ := json.Marshal(map[string]string{"id": id})
	b.ArgBytes = len(args)
	direct, err := newSession(ctx, Target{URL: base + "/mcp", Protocol: "2025-11-25", Tool: "get_order", Args: string(args)})
	if err != nil {
		return err
	}
	code, err := newSession(ctx, Target{URL: base + "/code", Protocol: "2025-11-25"})
	if err != nil {
		return err
	}
	text, err := toolText(ctx, direct, "get_order", string(args))
	if err != nil {
		return err
	}
	b.ResultBytes = len(text)
	script := func(call string) string {
		return fmt.Sprintf("const id = %q; let n = 0;\nfor (let i = 0; i < %d; i++) { const r = %s; n += r.id.length }\nreturn n", id, b.Calls, call)
	}
	withCalls, without := script("await orders.get_order({ id })"), script("{ id }")
	want := fmt.Sprint(b.Calls * len(id))
	var cpuWith, cpuNone, cpuDirect time.Duration
	execute := func(code string, sess *session) (time.Duration, error) {
		a, _ := json.Marshal(map[string]string{"code": code})
		start := time.Now()
		out, err := toolText(ctx, sess, "execute", string(a))
		took := time.Since(start)
		if err == nil && out != want {
			err = fmt.Errorf("execute: %.300s, want %s", out, want)
		}
		return took, err
	}
	calls := func() (time.Duration, error) {
		start := time.Now()
		for range b.Calls {
			if err := direct.call(ctx); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	// Warm up each of the three.
	for range 3 {
		if _, err := execute(withCalls, code); err != nil {
			return err
		}
		if _, err := execute(without, code); err != nil {
			return err
		}
		if _, err := calls(); err != nil {
			return err
		}
	}
	var allBinding, allDirect []float64
	for range b.Rounds {
		var with, none, dir []float64
		cpuWith, cpuNone, cpuDirect = 0, 0, 0
		for i := range b.PerRound {
			// The three in turn, their order rotated.
			for k := range 3 {
				var took time.Duration
				var err error
				cpu0 := threadsCPU(srv)
				switch (i + k) % 3 {
				case 0:
					took, err = execute(withCalls, code)
					with = append(with, float64(took))
					cpuWith += threadsCPU(srv) - cpu0
				case 1:
					took, err = execute(without, code)
					none = append(none, float64(took))
					cpuNone += threadsCPU(srv) - cpu0
				case 2:
					took, err = calls()
					dir = append(dir, float64(took))
					cpuDirect += threadsCPU(srv) - cpu0
				}
				if err != nil {
					return err
				}
			}
		}
		n := float64(b.Calls)
		binding, one := (median(with)-median(none))/n, median(dir)/n
		allBinding, allDirect = append(allBinding, binding), append(allDirect, one)
		b.Overheads = append(b.Overheads, binding-one)
		if cpuDirect > 0 {
			runs := float64(b.PerRound) * n
			b.CPUOverheads = append(b.CPUOverheads, float64(cpuWith-cpuNone)/runs-float64(cpuDirect)/runs)
		}
		log.Printf("  round %d: binding call %s, client's call %s; Caddy's CPU %s vs %s a call", len(b.Overheads), time.Duration(binding), time.Duration(one),
			time.Duration(float64(cpuWith-cpuNone)/float64(b.PerRound)/n), time.Duration(float64(cpuDirect)/float64(b.PerRound)/n))
	}
	b.BindingCall, b.DirectCall = time.Duration(median(allBinding)), time.Duration(median(allDirect))
	r.binding = b
	log.Printf("  binding call %s, direct call %s, overhead %s", b.BindingCall, b.DirectCall, b.overhead().micros(""))
	return nil
}

// overhead is the binding call's overhead, round by round.
func (b *BindingOverhead) overhead() spread { return spreadOf(b.Overheads) }

// cpuOverhead is the binding call's overhead in Caddy's CPU, round by
// round.
func (b *BindingOverhead) cpuOverhead() spread { return spreadOf(b.CPUOverheads) }

// threadsCPU is the time the process's threads have run, in nanoseconds,
// from /proc/<pid>/task/*/schedstat: finer than the 10 ms ticks of
// server.cpu, which a run of a few milliseconds needs. 0 where the kernel
// does not account it.
func threadsCPU(s *server) time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", s.cmd.Process.Pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// measured is the target's text: the overhead in wall time, and in
// Caddy's CPU where it was measured.
func (b *BindingOverhead) measured() string {
	out := b.overhead().micros(fmtDur(b.BindingCall) + " vs " + fmtDur(b.DirectCall) + " a call")
	if c := b.cpuOverhead(); c.n > 0 {
		out += "; Caddy's CPU " + c.micros("")
	}
	return out
}
