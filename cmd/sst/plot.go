package main

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// A plot is a line chart with a linear x axis and a log-scale y axis,
// written as SVG by hand so that the module needs no plotting library.
type plot struct {
	title, xLabel, yLabel string
	xMin, xMax            float64
	yMin, yMax            float64 // extended to whole decades covering the data
	series                []series
}

// series is one line of a plot. Points with y <= 0 are left out: a log
// axis cannot show them.
type series struct {
	name   string
	color  string
	dash   string // SVG stroke-dasharray; "" for a solid line
	marker int    // -1: none, 0: filled circle, 1: hollow square
	points []point
}

type point struct{ x, y float64 }

// Canvas and plot-area geometry, in SVG user units.
const (
	svgW, svgH           = 900, 540
	areaL, areaT         = 80, 50
	areaR, areaB         = 650, 480
	legendX, legendDY    = 672, 19
	tickLen, labelOffset = 5, 8
)

// writeSVG writes p as a standalone SVG document.
func (p *plot) writeSVG(w io.Writer) error {
	lo, hi := math.Floor(math.Log10(p.yMin)), math.Ceil(math.Log10(p.yMax))
	for _, s := range p.series {
		for _, pt := range s.points {
			if pt.y > 0 {
				lo, hi = min(lo, math.Floor(math.Log10(pt.y))), max(hi, math.Ceil(math.Log10(pt.y)))
			}
		}
	}
	if p.xMax <= p.xMin {
		p.xMin, p.xMax = p.xMin-1, p.xMax+1
	}
	px := func(x float64) float64 { return areaL + (x-p.xMin)/(p.xMax-p.xMin)*(areaR-areaL) }
	py := func(y float64) float64 { return areaB - (math.Log10(y)-lo)/(hi-lo)*(areaB-areaT) }

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="white"/>
<text x="%d" y="28" text-anchor="middle" font-size="16" font-weight="bold">%s</text>
`, svgW, svgH, svgW, svgH, (areaL+areaR)/2, esc(p.title))

	// Gridlines and y labels at each decade, fainter minor gridlines at 2..9.
	for d := lo; d <= hi; d++ {
		y := py(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#bbbbbb"/>`+"\n", areaL, y, areaR, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s%%</text>`+"\n",
			areaL-labelOffset, y, strconv.FormatFloat(math.Pow(10, d), 'f', -1, 64))
		for m := 2; m <= 9 && d < hi; m++ {
			y := py(float64(m) * math.Pow(10, d))
			fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eeeeee"/>`+"\n", areaL, y, areaR, y)
		}
	}
	step := math.Max(1, math.Ceil((p.xMax-p.xMin)/16))
	for x := math.Ceil(p.xMin); x <= p.xMax; x += step {
		X := px(x)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>`+"\n", X, areaT, X, areaB)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", X, areaB, X, areaB+tickLen)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%g</text>`+"\n", X, areaB+tickLen+14, x)
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>`+"\n",
		areaL, areaT, areaR-areaL, areaB-areaT)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="14">%s</text>`+"\n",
		(areaL+areaR)/2, areaB+45, esc(p.xLabel))
	fmt.Fprintf(b, `<text transform="translate(22 %d) rotate(-90)" text-anchor="middle" font-size="14">%s</text>`+"\n",
		(areaT+areaB)/2, esc(p.yLabel))

	// Series, then the legend.
	for i, s := range p.series {
		var pts []string
		var xy [][2]float64
		for _, pt := range s.points {
			if pt.y > 0 {
				X, Y := px(pt.x), py(pt.y)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", X, Y))
				xy = append(xy, [2]float64{X, Y})
			}
		}
		fmt.Fprintf(b, `<g><title>%s</title>`+"\n", esc(s.name))
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"%s/>`+"\n",
			strings.Join(pts, " "), s.color, dashAttr(s.dash))
		for _, c := range xy {
			marker(b, s, c[0], c[1])
		}
		io.WriteString(b, "</g>\n")
		ly := float64(areaT + 8 + i*legendDY)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1.8"%s/>`+"\n",
			legendX, ly, legendX+28, ly, s.color, dashAttr(s.dash))
		marker(b, s, legendX+14, ly)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", legendX+36, ly, esc(s.name))
	}
	io.WriteString(b, "</svg>\n")
	return b.Flush()
}

// marker draws the series' point marker centred at x, y.
func marker(w io.Writer, s series, x, y float64) {
	switch s.marker {
	case 0:
		fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x, y, s.color)
	case 1:
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="7" height="7" fill="white" stroke="%s" stroke-width="1.5"/>`+"\n",
			x-3.5, y-3.5, s.color)
	}
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, dash)
}

// esc escapes s for SVG text content.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// savePlot writes p to path: SVG, or PNG through an external converter
// when path ends in .png.
func savePlot(path string, p *plot) error {
	var svg bytes.Buffer
	if err := p.writeSVG(&svg); err != nil {
		return err
	}
	if strings.ToLower(filepath.Ext(path)) == ".png" {
		return svgToPNG(svg.Bytes(), path)
	}
	return os.WriteFile(path, svg.Bytes(), 0o644)
}

// checkPNG converts a tiny SVG document, so that a missing or broken
// converter shows up before a long benchmark rather than after it.
func checkPNG() error {
	dir, err := os.MkdirTemp("", "sst-plot-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	const tiny = `<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"><rect width="2" height="2" fill="white"/></svg>`
	return svgToPNG([]byte(tiny), filepath.Join(dir, "check.png"))
}

// svgToPNG writes the SVG document svg as a PNG file at out, with
// rsvg-convert or else ImageMagick's convert.
func svgToPNG(svg []byte, out string) error {
	var name string
	var args []string
	dir, err := os.MkdirTemp("", "sst-plot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "plot.svg")
	if err := os.WriteFile(in, svg, 0o644); err != nil {
		return err
	}
	if path, err := exec.LookPath("rsvg-convert"); err == nil {
		name, args = path, []string{"-f", "png", "-o", out, in}
	} else if path, err := exec.LookPath("convert"); err == nil {
		name, args = path, []string{in, out}
	} else {
		return errors.New("PNG output needs rsvg-convert (librsvg) or ImageMagick convert in PATH; use a .svg file instead")
	}
	if msg, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(msg)), "\n")
		return fmt.Errorf("%s cannot make PNG (%v: %s); use a .svg file instead", name, err, line)
	}
	return nil
}
