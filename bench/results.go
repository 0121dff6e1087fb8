package main

import "time"

// Measurement is one configuration measured at one concurrency level.
type Measurement struct {
	// Config names the configuration, e.g. "reverse_proxy", "mcp upstream".
	Config string
	// Protocol is "REST" for plain HTTP, else the MCP protocol revision and
	// mode, e.g. "2025-11-25 session", "2026-07-28 stateless".
	Protocol    string
	Concurrency int
	// Throughput is requests per second at saturation, the median of the
	// rounds.
	Throughput float64
	// P50 and P99 are latencies at the fixed request rate.
	P50, P99 time.Duration
	// FixedRate is the request rate of the latency run.
	FixedRate float64
	// LatencyRounds is how many fixed-rate rounds the median is of.
	LatencyRounds int
	// CPUPerRequest is the Caddy (or peer) process's CPU time per request
	// during the saturation rounds.
	CPUPerRequest time.Duration
	// CPURounds is the CPU per request of each saturation round.
	CPURounds []time.Duration
	// RateRounds is the requests per second of each saturation round.
	RateRounds []float64
	// P99Rounds is the p99 of each fixed-rate round.
	P99Rounds []time.Duration
	// Pass numbers the measurements taken together (round-robin): only
	// those of one pass are compared round by round.
	Pass int
	// PeakRSS is the serving process's peak resident memory, in bytes.
	PeakRSS int64
	// Errors counts failed requests across all runs.
	Errors int
	// Ratio is Throughput over the baseline's at the same concurrency:
	// the median of the per-round ratios when both were measured in one
	// pass.
	Ratio float64
}

// Label is how the measurement is named in tables and charts.
func (m Measurement) Label() string {
	if m.Protocol == "REST" {
		return m.Config
	}
	return m.Config + " (" + m.Protocol + ")"
}
