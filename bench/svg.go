package main

import (
	"fmt"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// svgPanels are the distributions drawn, one box-plot panel each, one box per
// arm, samples pooled over the rounds.
// Panels marked budget draw the threshold their over_ rows count against.
var svgPanels = []struct {
	series, title string
	budget        bool
}{
	{"frame.late", "frame: wake lateness", false},
	{"burst", "burst: wall time of 5 ms CPU", false},
	{"read", "read: 4 KiB uncached", false},
	{"fsync", "fsync: 4 KiB write + fsync", false},
	{"save-sync", "save-sync: 64 KiB renameio save", true},
	{"save-statefile", "save-statefile: caller's time", true},
	{uiSync, "ui with sync saves: frame time, stall off", true},
	{uiStatefile, "ui with statefile: frame time, stall off", true},
}

// minLogMs floors samples for the log axis, which cannot show zero: 1 µs.
const minLogMs = 1e-3

// writeSVG draws every panel of svgPanels into one SVG file.
func writeSVG(path string, res *results) error {
	const cols = 2
	rows := (len(svgPanels) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i, s := range svgPanels {
		p, err := boxPanel(res, s.series, s.title)
		if err == nil && s.budget {
			err = addBudget(p, len(res.arms))
		}
		if err != nil {
			return fmt.Errorf("svg: %s: %w", s.series, err)
		}
		plots[i/cols] = append(plots[i/cols], p)
	}
	c := vgsvg.New(vg.Points(cols*440), vg.Points(float64(rows)*300))
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 6 * vg.Millimeter, PadY: 6 * vg.Millimeter,
		PadTop: 3 * vg.Millimeter, PadBottom: 3 * vg.Millimeter,
		PadLeft: 3 * vg.Millimeter, PadRight: 3 * vg.Millimeter}
	canvases := plot.Align(plots, tiles, draw.New(c))
	for j := range plots {
		for i, p := range plots[j] {
			p.Draw(canvases[j][i])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("svg: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("svg: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("svg: %w", err)
	}
	return nil
}

// boxPanel draws one series as a box plot per arm on a log axis in ms.
func boxPanel(res *results, series, title string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "ms (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var names []string
	for _, a := range res.arms {
		xs := res.pooled(a, series)
		if len(xs) == 0 {
			continue
		}
		vals := make(plotter.Values, len(xs))
		for i, x := range xs {
			vals[i] = math.Max(x, minLogMs)
		}
		b, err := plotter.NewBoxPlot(vg.Points(18), float64(len(names)), vals)
		if err != nil {
			return nil, err
		}
		b.GlyphStyle.Radius = vg.Points(1)
		p.Add(b)
		names = append(names, a)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no samples in any arm")
	}
	p.NominalX(names...)
	return p, nil
}

// addBudget draws the overMs threshold across a panel of n boxes.
func addBudget(p *plot.Plot, n int) error {
	l, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: overMs}, {X: float64(n) - 0.5, Y: overMs}})
	if err != nil {
		return err
	}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("%.1f ms: two 120 Hz ticks", overMs), l)
	p.Legend.Top = true
	return nil
}
