package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// chartPanel is one panel of the chart: one figure, grouped by
// compression, one bar per implementation.
type chartPanel struct {
	title string
	get   func(*sample) float64
	unit  string
}

var chartPanels = []chartPanel{
	{"Get, present key", func(s *sample) float64 { return s.GetHitNs }, "ns/op, lower is better"},
	{"Get, absent key", func(s *sample) float64 { return s.GetMissNs }, "ns/op, lower is better"},
	{"Build", func(s *sample) float64 { return s.BuildMBps }, "MB/s, higher is better"},
}

var chartColors = map[string]string{"ours": "#1b9e77", "ours-v1": "#66c2a5", "pebble": "#7570b3", "pebble2": "#e7298a", "goleveldb": "#d95f02"}

// renderSVG draws the medians of the chart panels as grouped bars, each
// panel on its own linear scale from zero.
func renderSVG(r *results) string {
	const (
		panelW, panelH = 300, 300
		top, bottom    = 70, 50 // room for titles and group labels
		left           = 20
		width          = left + 3*panelW + 10
		height         = top + panelH + bottom
	)
	impls, comps := r.impls(), r.compressions()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="15" font-weight="bold">SSTable implementations side by side: %d entries, 16-byte keys, 100-byte values (median of %d)</text>`+"\n",
		left, r.Entries, r.Reps)
	// Legend.
	x := left
	for _, im := range impls {
		fmt.Fprintf(&b, `<rect x="%d" y="30" width="12" height="12" fill="%s"/><text x="%d" y="41">%s</text>`+"\n", x, color(im), x+16, html.EscapeString(im))
		x += 30 + 8*len(im)
	}
	for p, panel := range chartPanels {
		x0 := float64(left + p*panelW)
		plotTop, plotBottom := float64(top+25), float64(top+panelH)
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-weight="bold">%s</text>`+"\n", x0+10, top, html.EscapeString(panel.title))
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" fill="#555">%s</text>`+"\n", x0+10, top+15, html.EscapeString(panel.unit))
		maxV := 0.0
		for _, run := range r.Runs {
			if v := panel.get(&run.Median); !math.IsNaN(v) {
				maxV = max(maxV, v)
			}
		}
		if maxV == 0 {
			maxV = 1
		}
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`+"\n", x0+10, plotBottom, x0+panelW-20, plotBottom)
		groupW := float64(panelW-30) / float64(len(comps))
		barW := (groupW - 20) / float64(len(impls))
		for g, c := range comps {
			gx := x0 + 10 + float64(g)*groupW + 10
			for i, im := range impls {
				run := r.find(im, c)
				if run == nil {
					continue
				}
				v := panel.get(&run.Median)
				h := (plotBottom - plotTop - 15) * v / maxV
				bx := gx + float64(i)*barW
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
					bx, plotBottom-h, barW-2, h, color(im), html.EscapeString(im), html.EscapeString(c), short(v))
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", bx+(barW-2)/2, plotBottom-h-3, short(v))
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", gx+(groupW-20)/2, plotBottom+18, html.EscapeString(c))
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555" font-size="10">%s, %d cores, %s. Shared, noisy machine: compare ratios, not absolutes.</text>`+"\n",
		left, height-8, html.EscapeString(r.Machine.CPU), r.Machine.Cores, html.EscapeString(r.Machine.GoVersion))
	b.WriteString("</svg>\n")
	return b.String()
}

func color(im string) string {
	if c, ok := chartColors[im]; ok {
		return c
	}
	return "#888"
}

// short formats a bar label with three significant digits at most.
func short(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
