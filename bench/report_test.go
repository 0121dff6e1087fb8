package main

import (
	"strings"
	"testing"
	"time"
)

// TestAuthorizationTarget: the target compares the authorization row
// with mcp upstream at c=16, and is met only under the CPU budget.
func TestAuthorizationTarget(t *testing.T) {
	for _, c := range []struct {
		added    time.Duration
		met      bool
		measured string
	}{
		{3 * time.Microsecond, true, "+3 µs (151 vs 148 µs); throughput 0.95x (7220 vs 7600 req/s)"},
		{authorizedCPUBudget, false, "+50 µs (198 vs 148 µs); throughput 0.95x (7220 vs 7600 req/s)"},
	} {
		r := &report{ms: []Measurement{
			{Config: "reverse_proxy", Protocol: "REST", Concurrency: 16, Throughput: 8000, CPUPerRequest: 150 * time.Microsecond},
			{Config: "mcp upstream", Protocol: "2025-11-25", Concurrency: 16, Throughput: 7600, CPUPerRequest: 148 * time.Microsecond},
			{Config: authorizedConfig, Protocol: "2025-11-25", Concurrency: 64, Throughput: 1, CPUPerRequest: time.Second},
			{Config: authorizedConfig, Protocol: "2025-11-25", Concurrency: 16, Throughput: 7220, CPUPerRequest: 148*time.Microsecond + c.added},
		}}
		var found []target
		for _, tg := range r.targets() {
			if strings.HasPrefix(tg.name, "authorization") {
				found = append(found, tg)
			}
		}
		if len(found) != 1 {
			t.Fatalf("added %s: %d authorization targets, want 1 (c=16 only): %+v", c.added, len(found), found)
		}
		if found[0].met != c.met || found[0].measured != c.measured {
			t.Errorf("added %s: %q met=%v, want %q met=%v", c.added, found[0].measured, found[0].met, c.measured, c.met)
		}
	}
}
