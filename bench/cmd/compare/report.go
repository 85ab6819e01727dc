package main

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
)

// results is everything one run measured.
type results struct {
	Machine    machine     `json:"machine"`
	Command    string      `json:"command"`
	Entries    int         `json:"entries"`
	Lookups    int         `json:"lookups"`
	Reps       int         `json:"reps"`
	ElapsedSec float64     `json:"elapsed_sec"`
	Runs       []runResult `json:"runs"`
}

// runResult holds one implementation × compression: every repetition's
// sample and their field-by-field median.
type runResult struct {
	Impl        string   `json:"impl"`
	Compression string   `json:"compression"`
	Median      sample   `json:"median"`
	Samples     []sample `json:"samples"`
}

func (r *results) find(im, c string) *runResult {
	for i := range r.Runs {
		if r.Runs[i].Impl == im && r.Runs[i].Compression == c {
			return &r.Runs[i]
		}
	}
	return nil
}

func (r *results) compressions() []string {
	var cs []string
	for _, run := range r.Runs {
		if !slices.Contains(cs, run.Compression) {
			cs = append(cs, run.Compression)
		}
	}
	return cs
}

func (r *results) impls() []string {
	var is []string
	for _, run := range r.Runs {
		if !slices.Contains(is, run.Impl) {
			is = append(is, run.Impl)
		}
	}
	return is
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianSample returns the median of every field of samples (all fields
// of sample are float64).
func medianSample(samples []sample) sample {
	var m sample
	mv := reflect.ValueOf(&m).Elem()
	for f := 0; f < mv.NumField(); f++ {
		xs := make([]float64, len(samples))
		for i := range samples {
			xs[i] = reflect.ValueOf(samples[i]).Field(f).Float()
		}
		mv.Field(f).SetFloat(median(xs))
	}
	return m
}

// metric is one row of the report.
type metric struct {
	label   string
	get     func(*sample) float64
	format  string // for the value columns
	noRatio bool   // ratios of near-zero counts or of unlike memory mean nothing
	// theirs, if set, marks a row only ours has; ratios compare it with
	// this figure of the others.
	theirs func(*sample) float64
}

var metrics = []metric{
	{label: "build, MB/s of raw key+value", get: func(s *sample) float64 { return s.BuildMBps }, format: "%.1f"},
	{label: "file size, MiB", get: func(s *sample) float64 { return s.FileBytes / (1 << 20) }, format: "%.2f"},
	{label: "open, µs", get: func(s *sample) float64 { return s.OpenUs }, format: "%.1f"},
	{label: "Go heap after open (HeapInuse Δ), KiB", get: func(s *sample) float64 { return s.HeapAfterOpen / 1024 }, format: "%.0f", noRatio: true},
	{label: "Go heap live after open (HeapAlloc Δ), KiB", get: func(s *sample) float64 { return s.LiveAfterOpen / 1024 }, format: "%.1f"},
	{label: "Get hit, ns/op", get: func(s *sample) float64 { return s.GetHitNs }, format: "%.0f"},
	{label: "Get hit, allocs/op", get: func(s *sample) float64 { return s.GetHitAllocs }, format: "%.2f", noRatio: true},
	{label: "Get hit, copying Reader.Get, ns/op", get: func(s *sample) float64 { return s.GetCopyNs }, format: "%.0f", theirs: func(s *sample) float64 { return s.GetHitNs }},
	{label: "Get hit, copying Reader.Get, allocs/op", get: func(s *sample) float64 { return s.GetCopyAllocs }, format: "%.2f", theirs: func(s *sample) float64 { return s.GetHitAllocs }, noRatio: true},
	{label: "Get miss, ns/op", get: func(s *sample) float64 { return s.GetMissNs }, format: "%.0f"},
	{label: "Get miss, allocs/op", get: func(s *sample) float64 { return s.GetMissAllocs }, format: "%.2f", noRatio: true},
	{label: "first pass of Gets after open (every lookup key once, caches cold), ns/op", get: func(s *sample) float64 { return s.FirstGetNs }, format: "%.0f"},
	{label: "first scan after open, ns/entry", get: func(s *sample) float64 { return s.FirstScanNs }, format: "%.1f"},
	{label: "scan (caches warm), ns/entry", get: func(s *sample) float64 { return s.ScanNs }, format: "%.1f"},
	{label: "scan, allocs/entry", get: func(s *sample) float64 { return s.ScanAllocs }, format: "%.4f", noRatio: true},
	{label: "memory held after reads (HeapAlloc Δ + Pebble's C cache + our cache), MiB", get: func(s *sample) float64 { return s.MemAfterReads / (1 << 20) }, format: "%.1f", noRatio: true},
	{label: "mapped file pages after reads (RssFile Δ), MiB", get: func(s *sample) float64 { return s.RssFileGrowth / (1 << 20) }, format: "%.1f", noRatio: true},
}

func ratio(ours, theirs float64) string {
	if math.IsNaN(ours) || math.IsNaN(theirs) {
		return "–"
	}
	if theirs == 0 {
		if ours == 0 {
			return "="
		}
		return "–"
	}
	return fmt.Sprintf("%.2f", ours/theirs)
}

// writeMarkdown prints one table per compression: medians, and ours/theirs
// ratios.
func writeMarkdown(w io.Writer, r *results) {
	fmt.Fprintf(w, "%d entries (%d-byte keys, %d-byte values), %d lookups, median of %d repetitions.\n",
		r.Entries, keyLen, valueLen, r.Lookups, r.Reps)
	fmt.Fprintf(w, "Ratios are ours/theirs: below 1 means ours is smaller or faster, except for build MB/s, where above 1 means ours is faster.\n")
	writeTables(w, []*results{r}, nil)
	fmt.Fprintf(w, "\nMachine: %s, %d cores, %s %s/%s, cgo %v. Run took %.0f s.\n",
		r.Machine.CPU, r.Machine.Cores, r.Machine.GoVersion, r.Machine.GOOS, r.Machine.GOARCH, r.Machine.Cgo, r.ElapsedSec)
	fmt.Fprintf(w, "Command: `cd bench && %s`\n", r.Command)
}

// writeTables prints one table per compression of the runs rs (all with
// the same implementations and compressions): each figure is the
// median of one run's repetitions, or with several runs the median
// [min–max] of the runs' medians, and the ratios are taken run by run.
// after, if set, is called after each compression's table.
func writeTables(w io.Writer, rs []*results, after func(c string)) {
	r := rs[0]
	// values returns every run's median of m for im with c.
	values := func(im, c string, get func(*sample) float64) []float64 {
		xs := make([]float64, len(rs))
		for i, x := range rs {
			xs[i] = get(&x.find(im, c).Median)
		}
		return xs
	}
	for _, c := range r.compressions() {
		// The implementations run with c (goleveldb has no zstd).
		var impls, others []string
		for _, im := range r.impls() {
			if r.find(im, c) == nil {
				continue
			}
			impls = append(impls, im)
			if im != "ours" {
				others = append(others, im)
			}
		}
		hasOurs := slices.Contains(impls, "ours")
		fmt.Fprintf(w, "\n### %s\n\n", c)
		fmt.Fprintf(w, "| metric |")
		for _, im := range impls {
			fmt.Fprintf(w, " %s |", im)
		}
		if hasOurs {
			for _, o := range others {
				fmt.Fprintf(w, " ours/%s |", o)
			}
		}
		fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" ---: |", len(impls)+boolInt(hasOurs)*len(others)))
		for _, m := range metrics {
			if m.theirs != nil && !hasOurs {
				continue
			}
			fmt.Fprintf(w, "| %s |", m.label)
			for _, im := range impls {
				if m.theirs != nil && im != "ours" {
					fmt.Fprintf(w, " – |")
					continue
				}
				fmt.Fprintf(w, " %s |", spread(m.format, values(im, c, m.get)))
			}
			if hasOurs && m.noRatio {
				fmt.Fprint(w, strings.Repeat(" – |", len(others)))
			} else if hasOurs {
				ov := values("ours", c, m.get)
				for _, o := range others {
					theirs := m.get
					if m.theirs != nil {
						theirs = m.theirs
					}
					fmt.Fprintf(w, " %s |", ratioSpread(ov, values(o, c, theirs)))
				}
			}
			fmt.Fprintln(w)
		}
		if after != nil {
			after(c)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
