package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// cloudflareHeading starts the section in BENCHMARKS.md.
const cloudflareHeading = "## The sandbox beside Cloudflare's (workerd)"

// previousCloudflareSection is the section as the last run wrote it in
// the file at path, or "".
func previousCloudflareSection(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	text := string(b)
	i := strings.Index(text, cloudflareHeading)
	if i < 0 {
		return ""
	}
	rest := text[i+len(cloudflareHeading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return strings.TrimSpace(rest)
}

// workerdSide is the side the others are compared with, or nil.
func (c *cloudflareResult) workerdSide() *sandboxSide {
	for _, side := range c.Sides {
		if side.workerd {
			return side
		}
	}
	return nil
}

// markdown is the section of BENCHMARKS.md.
func (c *cloudflareResult) markdown() string {
	var b strings.Builder
	b.WriteString(cloudflareHeading + "\n\n")
	wd := c.workerdSide()
	if wd == nil {
		fmt.Fprintf(&b, "Not measured in this run: %s.\n", c.Skipped)
		if c.previous != "" {
			b.WriteString("The figures of the last run that measured it follow.\n\n" + c.previous + "\n")
		}
		return b.String()
	}
	fmt.Fprintf(&b, `The same script runs in a fresh sandbox per execution on both sides, sent over HTTP
from this process on one connection per client: three dependent tool calls
(an order, its customer, its shipment) whose tools answer small JSON from
memory, so that what is compared is the sandboxes and not the tools'
transport. On Cloudflare's side, %s (run with `+"`--experimental`"+`) serves a
parent worker (bench/workerd/parent.js) that runs each POSTed script through
`+"`@cloudflare/codemode`"+` 0.5.6's `+"`DynamicWorkerExecutor`"+`: a new dynamic worker from
the worker loader per execution, its tools functions of the parent called
over Workers RPC. On this side, a `+"`codemode`"+` endpoint of Caddy answers the MCP
`+"`tools/call execute`"+`, and its binding calls go to an `+"`mcp`"+` endpoint of the same
Caddy whose tools, in route mode, are answered by `+"`respond`"+`. This side carries
more: MCP's JSON-RPC on the way in and a binding call that is itself an MCP
request; workerd's side is a plain POST and RPC inside one process.

Script:

`+"```js\n%s\n```"+`

Latency is per execution at c=1 (median and p99 of every execution of
%d rounds of %s); executions per second are the median of the rounds, at
c=1 and c=2; the sandboxes take their rounds in turn. Memory per live
sandbox: a fresh server, warmed with 20 executions, then %d executions held
open at once in a tool that waits in this process (the slow tool, the same
on both sides); (PSS of the server and its child processes held - idle) / %d.

CPU per execution is the server's and its child processes' (worker
processes, for isolation process) over every round: the machine is shared,
and CPU time moves less with what else runs on it than wall time does.

| sandbox | p50 | p99 | exec/s c=1 | exec/s c=2 | CPU per execution | idle | held (%d) | per live sandbox |
|---|---|---|---|---|---|---|---|---|
`, c.Workerd, cloudflareScript, c.Rounds, c.Round, cloudflareHeld, cloudflareHeld, cloudflareHeld)
	for _, side := range c.Sides {
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f | %.0f | %s | %s | %s | %s |\n", side.Name, fmtDur(side.P50), fmtDur(side.P99),
			side.C1, side.C2, fmtDur(side.CPU), mib(side.IdleMem), mib(side.HeldMem), kib(side.PerSandbox()))
	}
	if c.Alone != nil {
		fmt.Fprintf(&b, "\nThe same script in this sandbox alone, in process (goja, bindings that are Go functions answering from memory, no HTTP or MCP): %s median, %s allocated per execution.\n",
			fmtDur(c.Alone.Median), kib(c.Alone.Bytes))
	}
	b.WriteString("\n")
	for _, side := range c.Sides {
		if side == wd {
			continue
		}
		fmt.Fprintf(&b, "- %s: %.1fx faster per execution (median), %.1fx the executions per second at c=1 and %.1fx at c=2, %.1fx less CPU per execution, %.1fx smaller per live sandbox.\n",
			side.Name, ratio(wd.P50, side.P50), side.C1/wd.C1, side.C2/wd.C2, ratio(wd.CPU, side.CPU), memRatio(wd, side))
	}
	fmt.Fprintf(&b, "\n![executions per second](bench/charts/%s)\n![memory per live sandbox](bench/charts/%s)\n", cloudflareSpeedChart, cloudflareMemoryChart)
	return b.String()
}

// targets are the sandbox's two targets against workerd's dynamic
// worker: at least 5x faster per execution, and at most 8 MiB of memory
// per live sandbox, workerd's printed beside it.
func (c *cloudflareResult) targets() []target {
	wd := c.workerdSide()
	var out []target
	for _, side := range c.Sides {
		if side == wd {
			continue
		}
		speed := fmt.Sprintf("per execution of the 3-call script, %s >= 5x faster than workerd's dynamic worker (median)", side.Name)
		mem := fmt.Sprintf("memory per live sandbox, %s <= 8 MiB", side.Name)
		if wd == nil {
			out = append(out, target{speed, "not measured: " + c.Skipped, false}, target{mem, "not measured: " + c.Skipped, false})
			continue
		}
		r := ratio(wd.P50, side.P50)
		out = append(out,
			target{speed, fmt.Sprintf("%.1fx (%s vs %s; exec/s at c=2 %.0f vs %.0f; CPU per execution %s vs %s, %.1fx)", r, fmtDur(side.P50), fmtDur(wd.P50),
				side.C2, wd.C2, fmtDur(side.CPU), fmtDur(wd.CPU), ratio(wd.CPU, side.CPU)), r >= 5},
			target{mem, fmt.Sprintf("%s (workerd's dynamic worker: %s)", kib(side.PerSandbox()), kib(wd.PerSandbox())), side.PerSandbox() <= 8<<20})
	}
	return out
}

func ratio(slow, fast time.Duration) float64 {
	if fast <= 0 {
		return 0
	}
	return float64(slow) / float64(fast)
}

// memRatio is how many times smaller side's sandbox is than wd's; a side
// whose held executions added nothing measurable counts as one KiB.
func memRatio(wd, side *sandboxSide) float64 {
	per := side.PerSandbox()
	if per < 1024 {
		per = 1024
	}
	return float64(wd.PerSandbox()) / float64(per)
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func kib(n int64) string { return fmt.Sprintf("%d KiB", n>>10) }
