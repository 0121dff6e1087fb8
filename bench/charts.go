package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Chart geometry: PNGs of chartWidth x chartHeight pixels at chartDPI.
const (
	chartWidth  = 1200
	chartHeight = 700
	chartDPI    = 96
)

// chartColors is the Tableau 10 palette, one color per series.
var chartColors = []color.Color{
	color.RGBA{0x4e, 0x79, 0xa7, 0xff}, // blue
	color.RGBA{0xf2, 0x8e, 0x2b, 0xff}, // orange
	color.RGBA{0x59, 0xa1, 0x4f, 0xff}, // green
	color.RGBA{0xe1, 0x57, 0x59, 0xff}, // red
	color.RGBA{0x76, 0xb7, 0xb2, 0xff}, // teal
	color.RGBA{0xed, 0xc9, 0x48, 0xff}, // yellow
	color.RGBA{0xb0, 0x7a, 0xa1, 0xff}, // purple
	color.RGBA{0xff, 0x9d, 0xa7, 0xff}, // pink
	color.RGBA{0x9c, 0x75, 0x5f, 0xff}, // brown
	color.RGBA{0xba, 0xb0, 0xac, 0xff}, // grey
}

// series is one bar series of a grouped bar chart: one value per category.
type series struct {
	name   string
	values []float64
}

// writeCharts writes throughput.png (requests/s at saturation by
// configuration, one bar per concurrency level) and p99.png (p99 latency
// at the fixed request rate by configuration) into dir, and returns the
// names of the files written. A chart with nothing to show (no throughput,
// or no latency measured) is not written.
func writeCharts(dir string, ms []Measurement) ([]string, error) {
	var written []string

	// Throughput: configurations in the order first measured, one series
	// per concurrency level, ascending.
	labels, levels := chartAxes(ms, func(m Measurement) bool { return m.Throughput > 0 })
	if len(labels) > 0 {
		ss := make([]series, len(levels))
		for i, c := range levels {
			ss[i] = series{name: fmt.Sprintf("%d concurrent clients", c), values: make([]float64, len(labels))}
			for _, m := range ms {
				if m.Concurrency == c && m.Throughput > 0 {
					ss[i].values[slices.Index(labels, m.Label())] = m.Throughput
				}
			}
		}
		const name = "throughput.png"
		if err := writeGroupedBars(filepath.Join(dir, name), "Throughput at saturation, by configuration",
			"requests/s (median of rounds)", labels, ss); err != nil {
			return written, err
		}
		written = append(written, name)
	}

	// p99 at the fixed rate: only measurements that had a latency run.
	hasLatency := func(m Measurement) bool { return m.P99 > 0 }
	labels, levels = chartAxes(ms, hasLatency)
	if len(labels) > 0 {
		ss := make([]series, len(levels))
		rates := make([]float64, len(levels))
		for i, c := range levels {
			ss[i].values = make([]float64, len(labels))
			for _, m := range ms {
				if m.Concurrency == c && hasLatency(m) {
					ss[i].values[slices.Index(labels, m.Label())] = float64(m.P99) / 1e6
					rates[i] = m.FixedRate
				}
			}
			ss[i].name = fmt.Sprintf("%d clients", c)
			if rates[i] > 0 {
				ss[i].name += fmt.Sprintf(" at %.0f requests/s", rates[i])
			}
		}
		title := "p99 latency at a fixed request rate, by configuration"
		if len(ss) == 1 {
			// One latency run per configuration: say the rate in the title
			// and leave the legend out.
			if rates[0] > 0 {
				title = fmt.Sprintf("p99 latency at a fixed %.0f requests/s (%d clients), by configuration", rates[0], levels[0])
			}
			ss[0].name = ""
		}
		const name = "p99.png"
		if err := writeGroupedBars(filepath.Join(dir, name), title, "p99 latency (ms)", labels, ss); err != nil {
			return written, err
		}
		written = append(written, name)
	}
	return written, nil
}

// chartAxes returns the labels of the measurements that keep passes, in the
// order first seen, and their concurrency levels, ascending.
func chartAxes(ms []Measurement, keep func(Measurement) bool) (labels []string, levels []int) {
	for _, m := range ms {
		if !keep(m) {
			continue
		}
		if l := m.Label(); !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
		if !slices.Contains(levels, m.Concurrency) {
			levels = append(levels, m.Concurrency)
		}
	}
	slices.Sort(levels)
	return labels, levels
}

// writeBarChart writes a single-series bar chart as a PNG to path.
func writeBarChart(path, title, ylabel string, labels []string, values []float64) error {
	if len(labels) != len(values) {
		return fmt.Errorf("chart %s: %d labels for %d values", path, len(labels), len(values))
	}
	return writeGroupedBars(path, title, ylabel, labels, []series{{values: values}})
}

// writeGroupedBars draws one group of bars per label, one bar per series,
// each bar with its value above it, and saves the chart as a PNG. Series
// with a name get a legend entry.
func writeGroupedBars(path, title, ylabel string, labels []string, ss []series) error {
	if len(labels) == 0 || len(ss) == 0 {
		return fmt.Errorf("chart %s: nothing to draw", path)
	}
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(16)
	p.Title.Padding = vg.Points(8)
	p.Y.Label.Text = ylabel
	p.Y.Label.TextStyle.Font.Size = vg.Points(13)
	p.Y.Tick.Label.Font.Size = vg.Points(11)
	p.Y.Tick.Marker = thousandsTicks{}
	p.X.Tick.Label.Font.Size = vg.Points(11)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil // horizontal lines only
	p.Add(grid)

	width, height := pxToLength(chartWidth), pxToLength(chartHeight)

	// Bars: a group is about 75% of a category's width (the data area is
	// about 88% of the chart's).
	n := len(labels)
	groupWidth := (width * 0.88) / vg.Length(n) * 0.75
	barWidth := groupWidth / vg.Length(len(ss))
	if maxBar := vg.Points(90); barWidth > maxBar {
		barWidth = maxBar
	}
	maxValue, legend := 0.0, 0
	for i, s := range ss {
		if len(s.values) != n {
			return fmt.Errorf("chart %s: series %q has %d values for %d labels", path, s.name, len(s.values), n)
		}
		vals := make(plotter.Values, n)
		copy(vals, s.values)
		for _, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("chart %s: value %v out of range", path, v)
			}
			maxValue = math.Max(maxValue, v)
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return fmt.Errorf("chart %s: %w", path, err)
		}
		bars.LineStyle.Width = 0
		bars.Color = chartColors[i%len(chartColors)]
		bars.Offset = (vg.Length(i) - vg.Length(len(ss)-1)/2) * barWidth
		p.Add(bars)
		if s.name != "" {
			p.Legend.Add(s.name, bars)
			legend++
		}

		// The value above each bar.
		xys := make(plotter.XYs, 0, n)
		texts := make([]string, 0, n)
		for j, v := range vals {
			if v == 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(j), Y: v})
			texts = append(texts, formatValue(v))
		}
		if len(xys) > 0 {
			lbls, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
			if err != nil {
				return fmt.Errorf("chart %s: %w", path, err)
			}
			for k := range lbls.TextStyle {
				lbls.TextStyle[k].Font.Size = vg.Points(10)
				lbls.TextStyle[k].XAlign = draw.XCenter
				lbls.TextStyle[k].YAlign = draw.YBottom
			}
			lbls.Offset = vg.Point{X: bars.Offset, Y: vg.Points(2)}
			p.Add(lbls)
		}
	}
	p.Y.Min = 0
	// Headroom for the value labels and the legend.
	headroom := 1.12
	if legend > 0 {
		headroom = 1.25
	}
	if maxValue == 0 {
		maxValue = 1
	}
	p.Y.Max = maxValue * headroom
	// Half a category of margin on each side; this also keeps the bars'
	// glyph boxes inside the data area, so the grid spans all of it.
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(11)
	p.Legend.Padding = vg.Points(4)
	p.Legend.XOffs = -vg.Points(6)

	// Category labels: wrapped to fit their slot, or rotated if they can't.
	slot := width * 0.86 / vg.Length(n)
	ticks, rotate := fitLabels(p.X.Tick.Label, labels, slot)
	if rotate {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	p.NominalX(ticks...)
	if !rotate {
		// NominalX pads the Y axis by half the first label's width; the
		// half category of margin left of the first bar already holds it.
		p.Y.Padding = vg.Points(4)
	}
	p.X.Padding = vg.Points(4)

	c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(chartDPI))
	// A margin on the right and at the top and bottom: the plot would
	// otherwise draw up to the image's edges.
	p.Draw(draw.Crop(draw.New(c), 0, -pxToLength(16), pxToLength(4), -pxToLength(8)))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return f.Close()
}

// pxToLength converts pixels at chartDPI to a vg length.
func pxToLength(px int) vg.Length { return vg.Length(px) * vg.Inch / chartDPI }

// fitLabels word-wraps each label to lines no wider than slot, at most 3
// lines. If some label cannot fit that way, it returns the labels as they
// are and rotate set, for the caller to draw them rotated.
func fitLabels(sty text.Style, labels []string, slot vg.Length) (out []string, rotate bool) {
	out = make([]string, len(labels))
	for i, l := range labels {
		lines := wrapWords(sty, l, slot)
		if len(lines) > 3 {
			return labels, true
		}
		for _, line := range lines {
			if sty.Width(line) > slot {
				return labels, true
			}
		}
		out[i] = strings.Join(lines, "\n")
	}
	return out, false
}

// wrapWords breaks s into lines at spaces, greedily, each at most width
// wide where the words allow. A parenthesized part starts a line of its
// own, so that "mcp upstream (2025-11-25 session)" reads as configuration
// over protocol.
func wrapWords(sty text.Style, s string, width vg.Length) []string {
	var lines []string
	for _, part := range splitParen(s) {
		line := ""
		for _, w := range strings.Fields(part) {
			switch {
			case line == "":
				line = w
			case sty.Width(line+" "+w) <= width:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// splitParen splits "a b (c d)" into "a b" and "(c d)".
func splitParen(s string) []string {
	if i := strings.Index(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		return []string{s[:i], s[i+1:]}
	}
	return []string{s}
}

// thousandsTicks marks about six round values (1, 2, 2.5 or 5 times a
// power of ten apart) labeled with thousands separators, and no minor ticks.
type thousandsTicks struct{}

func (thousandsTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: thousands(strconv.FormatFloat(min, 'f', -1, 64))}}
	}
	raw := (max - min) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	// Decimals enough to tell the steps apart.
	prec := 0
	for d := step; d != math.Trunc(d) && prec < 6; d *= 10 {
		prec++
	}
	var ts []plot.Tick
	for i := math.Ceil(min / step); i*step <= max*(1+1e-9); i++ {
		v := i * step
		ts = append(ts, plot.Tick{Value: v, Label: thousands(strconv.FormatFloat(v, 'f', prec, 64))})
	}
	return ts
}

// formatValue formats a bar's value: whole numbers as they are, others to
// three significant digits (4,312; 13.4; 0.512), with thousands separators.
func formatValue(v float64) string {
	prec := 0
	if v != math.Trunc(v) && v > 0 {
		prec = max(0, min(4, 2-int(math.Floor(math.Log10(v)))))
	}
	return thousands(strconv.FormatFloat(v, 'f', prec, 64))
}

// thousands puts commas between the thousands of the integer part of a
// formatted number: "12345.6" becomes "12,345.6". Other text is returned as
// it is.
func thousands(num string) string {
	intPart, frac, _ := strings.Cut(num, ".")
	sign := ""
	if strings.HasPrefix(intPart, "-") {
		sign, intPart = "-", intPart[1:]
	}
	if len(intPart) <= 3 || strings.TrimLeft(intPart, "0123456789") != "" {
		return num
	}
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := sign + b.String()
	if frac != "" || strings.Contains(num, ".") {
		out += "." + frac
	}
	return out
}
