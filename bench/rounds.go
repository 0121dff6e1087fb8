package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// spread is a figure taken round by round: the median of the rounds and
// their lowest and highest. A target counts as met only when the whole
// range is on the right side of it, so that one lucky minute cannot meet
// it.
type spread struct {
	med, min, max float64
	n             int // rounds
	// whole is set for one figure of two measurements not taken side by
	// side: no spread to show.
	whole bool
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	return spread{med: median(xs), min: slices.Min(xs), max: slices.Max(xs), n: len(xs)}
}

// atLeast reports whether every round is at least x.
func (s spread) atLeast(x float64) bool { return s.n > 0 && s.min >= x }

// atMost reports whether every round is at most x.
func (s spread) atMost(x float64) bool { return s.n > 0 && s.max <= x }

// ratio formats a spread of ratios, with detail beside the spread:
// "0.97x (0.94-1.01x, 7 rounds; detail)".
func (s spread) ratio(detail string) string {
	f := func(x float64) string { return fmt.Sprintf("%.2fx", x) }
	return s.format(f, "-", "x", detail)
}

// micros formats a spread of differences in nanoseconds as µs:
// "+12 µs (+4..+19 µs, 7 rounds; detail)".
func (s spread) micros(detail string) string {
	f := func(x float64) string { return fmt.Sprintf("%+d µs", time.Duration(x).Microseconds()) }
	return s.format(f, "..", " µs", detail)
}

// duration formats a spread of differences in nanoseconds as time:
// "+0.80 ms (+0.20 ms..+1.40 ms, 7 rounds; detail)".
func (s spread) duration(detail string) string {
	f := func(x float64) string { return signed(time.Duration(x)) }
	return s.format(f, "..", "", detail)
}

// format writes the median, then in brackets the spread and detail; the
// low end of the spread drops unit when both ends have it ("0.94-1.01x").
func (s spread) format(f func(float64) string, to, unit, detail string) string {
	var in []string
	if !s.whole {
		lo, hi := f(s.min), f(s.max)
		if unit != "" && strings.HasSuffix(lo, unit) && strings.HasSuffix(hi, unit) {
			lo = strings.TrimSuffix(lo, unit)
		}
		rounds := fmt.Sprintf("%d rounds", s.n)
		if s.n == 1 {
			rounds = "1 round"
		}
		in = append(in, lo+to+hi+", "+rounds)
	}
	if detail != "" {
		in = append(in, detail)
	}
	if len(in) == 0 {
		return f(s.med)
	}
	return f(s.med) + " (" + strings.Join(in, "; ") + ")"
}

// perRound pairs the rounds of m with those of base, taken in the same
// pass, and applies f to each pair. Measurements of different passes
// were not taken side by side: they give one figure, of their medians.
func perRound[T any](m, base *Measurement, rounds func(*Measurement) []T, whole func(*Measurement) T, f func(x, b T) float64) spread {
	a, b := rounds(m), rounds(base)
	if m.Pass != base.Pass || m.Pass == 0 || len(a) == 0 || len(b) == 0 {
		x := spreadOf([]float64{f(whole(m), whole(base))})
		x.whole = true
		return x
	}
	n := min(len(a), len(b))
	xs := make([]float64, n)
	for i := range n {
		xs[i] = f(a[i], b[i])
	}
	return spreadOf(xs)
}

// throughputRatio is m's throughput over base's, round by round.
func throughputRatio(m, base *Measurement) spread {
	return perRound(m, base, func(m *Measurement) []float64 { return m.RateRounds },
		func(m *Measurement) float64 { return m.Throughput },
		func(x, b float64) float64 {
			if b == 0 {
				return 0
			}
			return x / b
		})
}

// cpuDifference is the CPU per call m adds over base, round by round, in
// nanoseconds.
func cpuDifference(m, base *Measurement) spread {
	return perRound(m, base, func(m *Measurement) []time.Duration { return m.CPURounds },
		func(m *Measurement) time.Duration { return m.CPUPerRequest },
		func(x, b time.Duration) float64 { return float64(x - b) })
}

// p99Difference is what m adds to base's p99 at the fixed rate, round by
// round, in nanoseconds.
func p99Difference(m, base *Measurement) spread {
	return perRound(m, base, func(m *Measurement) []time.Duration { return m.P99Rounds },
		func(m *Measurement) time.Duration { return m.P99 },
		func(x, b time.Duration) float64 { return float64(x - b) })
}
