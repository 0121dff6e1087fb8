package main

import (
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// chartDir is where the test charts go: a temporary directory, or
// $BENCH_CHART_DIR to keep them and look at them.
func chartDir(t *testing.T) string {
	if d := os.Getenv("BENCH_CHART_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func fakeMeasurements() []Measurement {
	type cfg struct {
		config, protocol string
		tput             float64 // at c=16; c=64 is a little different
		p99              time.Duration
	}
	cfgs := []cfg{
		{"reverse_proxy", "REST", 4312, 12 * time.Millisecond},
		{"mcp upstream", "2025-11-25 session", 3105, 13*time.Millisecond + 400*time.Microsecond},
		{"mcp upstream", "2026-07-28 stateless", 2690, 13*time.Millisecond + 900*time.Microsecond},
		{"mcp route", "2025-11-25 session", 2850, 14 * time.Millisecond},
		{"mcp route", "2026-07-28 stateless", 2400, 15 * time.Millisecond},
		{"TypeScript SDK peer", "2025-11-25 session", 1290, 44 * time.Millisecond},
		{"TypeScript SDK peer", "2025-11-25 stateless", 840, 51 * time.Millisecond},
	}
	var ms []Measurement
	for _, c := range []int{16, 64} {
		for _, f := range cfgs {
			m := Measurement{Config: f.config, Protocol: f.protocol, Concurrency: c, Throughput: f.tput}
			if c == 16 {
				// The latency run is recorded on the first concurrency level only.
				m.P50, m.P99, m.FixedRate = f.p99/3, f.p99, 2156
			} else {
				m.Throughput *= 1.07
			}
			ms = append(ms, m)
		}
	}
	return ms
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if format != "png" || cfg.Width != chartWidth || cfg.Height != chartHeight {
		t.Errorf("%s: %s %dx%d, want png %dx%d", path, format, cfg.Width, cfg.Height, chartWidth, chartHeight)
	}
}

func TestWriteCharts(t *testing.T) {
	dir := chartDir(t)
	names, err := writeCharts(dir, fakeMeasurements())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"throughput.png", "p99.png"}; !slices.Equal(names, want) {
		t.Fatalf("writeCharts wrote %v, want %v", names, want)
	}
	for _, n := range names {
		checkPNG(t, filepath.Join(dir, n))
	}
}

func TestWriteChartsEmpty(t *testing.T) {
	names, err := writeCharts(t.TempDir(), nil)
	if err != nil || len(names) != 0 {
		t.Fatalf("writeCharts(nil) = %v, %v; want no files, no error", names, err)
	}
	// Throughput but no latency run: only the throughput chart.
	ms := fakeMeasurements()
	for i := range ms {
		ms[i].P99 = 0
	}
	dir := t.TempDir()
	names, err = writeCharts(dir, ms)
	if err != nil || !slices.Equal(names, []string{"throughput.png"}) {
		t.Fatalf("writeCharts without latency = %v, %v; want [throughput.png]", names, err)
	}
	checkPNG(t, filepath.Join(dir, "throughput.png"))
}

func TestWriteBarChart(t *testing.T) {
	dir := chartDir(t)
	path := filepath.Join(dir, "codemode-bytes.png")
	err := writeBarChart(path, "Tool-result bytes the model reads", "bytes",
		[]string{"tool calls (1 list + 3 customers)", "one code-mode execution"}, []float64{54321, 312})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path)

	if err := writeBarChart(filepath.Join(dir, "bad.png"), "t", "y", []string{"a"}, []float64{1, 2}); err == nil {
		t.Error("writeBarChart with 1 label for 2 values: no error")
	}
}

// Many long labels do not fit under their bars even wrapped; they are
// drawn rotated instead, and the chart is still written.
func TestWriteBarChartManyLabels(t *testing.T) {
	var labels []string
	var values []float64
	for i := range 30 {
		labels = append(labels, "a-rather-long-configuration-name-"+string(rune('a'+i%26)))
		values = append(values, float64(100+i*37))
	}
	path := filepath.Join(chartDir(t), "many.png")
	if err := writeBarChart(path, "many", "y", labels, values); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path)
}

func TestFormatValue(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0", 312: "312", 54321: "54,321", 4312.37: "4,312", 13.4: "13.4", 12: "12",
		51.04: "51.0", 0.5123: "0.512", 0.0123: "0.0123",
	} {
		if got := formatValue(in); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "999": "999", "1000": "1,000", "4312": "4,312", "1234567": "1,234,567",
		"12345.67": "12,345.67", "-12345": "-12,345", "0.25": "0.25", "1e+06": "1e+06",
	} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%q) = %q, want %q", in, got, want)
		}
	}
}

// Latency at every concurrency level: p99.png gets one series per level,
// with a legend.
func TestWriteChartsLatencyPerLevel(t *testing.T) {
	ms := fakeMeasurements()
	for i := range ms {
		if ms[i].P99 == 0 {
			ms[i].P99, ms[i].FixedRate = 20*time.Millisecond+time.Duration(i)*time.Millisecond, 3000
		}
	}
	dir := t.TempDir()
	names, err := writeCharts(dir, ms)
	if err != nil || !slices.Equal(names, []string{"throughput.png", "p99.png"}) {
		t.Fatalf("writeCharts = %v, %v", names, err)
	}
	checkPNG(t, filepath.Join(dir, "p99.png"))
}
