package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
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
		for i := range b.PerRound {
			// The three in turn, their order rotated.
			for k := range 3 {
				var took time.Duration
				var err error
				switch (i + k) % 3 {
				case 0:
					took, err = execute(withCalls, code)
					with = append(with, float64(took))
				case 1:
					took, err = execute(without, code)
					none = append(none, float64(took))
				case 2:
					took, err = calls()
					dir = append(dir, float64(took))
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
		log.Printf("  round %d: binding call %s, client's call %s", len(b.Overheads), time.Duration(binding), time.Duration(one))
	}
	b.BindingCall, b.DirectCall = time.Duration(median(allBinding)), time.Duration(median(allDirect))
	r.binding = b
	log.Printf("  binding call %s, direct call %s, overhead %s", b.BindingCall, b.DirectCall, b.overhead().micros(""))
	return nil
}

// overhead is the binding call's overhead, round by round.
func (b *BindingOverhead) overhead() spread { return spreadOf(b.Overheads) }
