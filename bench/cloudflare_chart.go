package main

import (
	"path/filepath"
)

// Charts of the comparison with Cloudflare's sandbox, in bench/charts.
const (
	cloudflareSpeedChart  = "cloudflare.png"
	cloudflareMemoryChart = "cloudflare-memory.png"
)

// writeCloudflareCharts draws executions per second at c=1 and c=2, and
// memory per live sandbox, one bar group per sandbox.
func writeCloudflareCharts(dir string, c *cloudflareResult) error {
	var labels []string
	c1 := series{name: "c=1"}
	c2 := series{name: "c=2"}
	var mem []float64
	for _, side := range c.Sides {
		labels = append(labels, side.Name)
		c1.values = append(c1.values, side.C1)
		c2.values = append(c2.values, side.C2)
		mem = append(mem, float64(side.PerSandbox())/(1<<10))
	}
	if err := writeGroupedBars(filepath.Join(dir, cloudflareSpeedChart),
		"The 3-call script over HTTP: executions per second", "executions/s", labels, []series{c1, c2}); err != nil {
		return err
	}
	return writeBarChart(filepath.Join(dir, cloudflareMemoryChart),
		"Memory per live sandbox (PSS, 32 executions held open)", "KiB", labels, mem)
}
