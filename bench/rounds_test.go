package main

import (
	"strings"
	"testing"
	"time"
)

const us = time.Microsecond

// roundRobin is a pass in which reverse_proxy and mcp route 2025-11-25
// took their rounds in turn: the machine was slower in round 2 for both.
func roundRobin(route []float64, routeCPU []time.Duration) *report {
	return &report{ms: []Measurement{
		{Config: "reverse_proxy", Protocol: "REST", Concurrency: 16, Pass: 1, Throughput: 8000, CPUPerRequest: 150 * us,
			RateRounds: []float64{8000, 5000, 9000}, CPURounds: []time.Duration{150 * us, 200 * us, 140 * us}},
		{Config: "mcp route", Protocol: "2025-11-25", Concurrency: 16, Pass: 1, Throughput: median(route), CPUPerRequest: 160 * us,
			RateRounds: route, CPURounds: routeCPU},
	}}
}

func findTarget(t *testing.T, r *report, prefix string) target {
	t.Helper()
	for _, tg := range r.targets() {
		if strings.HasPrefix(tg.name, prefix) {
			return tg
		}
	}
	t.Fatalf("no target %q in %+v", prefix, r.targets())
	return target{}
}

// TestRatiosPerRound: each round is set beside reverse_proxy's round of
// the same pass, so that a slow minute for both leaves the ratio alone,
// where the ratio of the medians would move.
func TestRatiosPerRound(t *testing.T) {
	r := roundRobin([]float64{7800, 4900, 8900}, []time.Duration{160 * us, 210 * us, 150 * us})
	tg := findTarget(t, r, "mcp route 2025-11-25 throughput")
	if want := "0.98x (0.97-0.99x, 3 rounds; 7800 vs 8000 req/s)"; tg.measured != want || !tg.met {
		t.Errorf("%q met=%v, want %q met=true", tg.measured, tg.met, want)
	}
	cpu := findTarget(t, r, "mcp route 2025-11-25 adds")
	if want := "+10 µs (+10..+10 µs, 3 rounds; 160 vs 150 µs)"; cpu.measured != want || !cpu.met {
		t.Errorf("%q met=%v, want %q met=true", cpu.measured, cpu.met, want)
	}
}

// TestTargetMetOnlyWhenSpreadClear: a median on the right side of a
// target does not meet it when one round is on the wrong side.
func TestTargetMetOnlyWhenSpreadClear(t *testing.T) {
	r := roundRobin([]float64{7800, 4700, 8900}, []time.Duration{160 * us, 216 * us, 150 * us})
	if tg := findTarget(t, r, "mcp route 2025-11-25 throughput"); tg.met {
		t.Errorf("throughput %q met, though round 2 is 0.94x", tg.measured)
	}
	if tg := findTarget(t, r, "mcp route 2025-11-25 adds"); tg.met {
		t.Errorf("CPU %q met, though round 2 adds 16 µs", tg.measured)
	}
}

// TestPassesApart: measurements of different passes give one figure, of
// their medians, with no spread to show.
func TestPassesApart(t *testing.T) {
	a := Measurement{Pass: 1, Throughput: 100, RateRounds: []float64{100, 50}}
	b := Measurement{Pass: 2, Throughput: 200, RateRounds: []float64{400, 100}}
	s := throughputRatio(&a, &b)
	if !s.whole || s.med != 0.5 || s.ratio("x") != "0.50x (x)" {
		t.Errorf("%+v %q, want one figure 0.50x", s, s.ratio("x"))
	}
	if (spread{}).atLeast(0) || (spread{}).atMost(1) {
		t.Error("no rounds met a target")
	}
}

// TestP99PerRound: a configuration measured in fewer fixed-rate rounds
// (it could not keep up) is compared over the rounds both have.
func TestP99PerRound(t *testing.T) {
	ms := time.Millisecond
	base := Measurement{Pass: 3, P99Rounds: []time.Duration{2 * ms, 3 * ms, 2 * ms}}
	m := Measurement{Pass: 3, P99Rounds: []time.Duration{2500 * us}}
	s := p99Difference(&m, &base)
	if got, want := s.duration(""), "+500 µs (+500 µs..+500 µs, 1 round)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestCodeModeAndBindingTargets: the code-mode ratio and the binding
// overhead are judged by their whole spread.
func TestCodeModeAndBindingTargets(t *testing.T) {
	r := &report{ms: []Measurement{{Config: "reverse_proxy", Protocol: "REST", Concurrency: 16}}}
	r.task = &CodeModeTask{CodeWall: 5 * time.Millisecond, CallsWall: 5200 * us}
	r.task.addRound([]float64{5, 6, 7}, []float64{5, 5, 6})
	r.task.addRound([]float64{5, 5, 5}, []float64{5.5, 5, 5.5})
	tg := findTarget(t, r, "code-mode task")
	if want := "1.10x (0.83-1.10x, 2 rounds; 5.00 ms vs 5.20 ms)"; tg.measured != want || tg.met {
		t.Errorf("%q met=%v, want %q met=false", tg.measured, tg.met, want)
	}
	r.binding = &BindingOverhead{BindingCall: 300 * us, DirectCall: 290 * us, Overheads: []float64{float64(12 * us), float64(-3 * us), float64(20 * us)}}
	tg = findTarget(t, r, "a binding call")
	if want := "+12 µs (-3..+20 µs, 3 rounds; 300 µs vs 290 µs a call)"; tg.measured != want || !tg.met {
		t.Errorf("%q met=%v, want %q met=true", tg.measured, tg.met, want)
	}
	r.binding.Overheads = append(r.binding.Overheads, float64(21*us))
	if tg = findTarget(t, r, "a binding call"); tg.met {
		t.Errorf("%q met, though one round is over 20 µs", tg.measured)
	}
}
