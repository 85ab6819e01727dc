package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// figure is one row of the report; all are times, lower is better.
type figure struct {
	id, label, format string
	target            float64 // the speedup over goleveldb issue 42 asks for; 0: none (not checked)
}

var figures = []figure{
	{id: "open", label: "open, ms", format: "%.2f", target: 2},
	{id: "scan", label: "full forward scan, ns/entry", format: "%.1f", target: 2},
	// The scan's CPU time: the process's user and system time over the
	// scan, every goroutine's (ours-ra's read-ahead worker's, the
	// collector's).
	{id: "scan-cpu", label: "full forward scan, CPU time (user+sys, all threads), ns/entry", format: "%.1f", target: 2},
	{id: "get", label: "Get of a present key, ns/op", format: "%.0f", target: 2},
	{id: "get-absent", label: "Get of an absent key, ns/op", format: "%.0f", target: 2},
}

// unchecked are the engines reported beside goleveldb but left out of
// the checks: the read-ahead is an option, bought with a second core.
var unchecked = map[string]bool{"ours-ra": true}

var headers = map[string]string{
	"ours":      "ours (64 MiB cache)",
	"ours-8m":   "ours (8 MiB cache)",
	"ours-ra":   "ours, read-ahead on (64 MiB cache)",
	"goleveldb": "goleveldb (ReadOnly, 8 MiB cache)",
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

// cell renders the median of xs and, with more than one round, their range.
func cell(format string, xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	s := fmt.Sprintf(format, median(xs))
	if len(xs) > 1 {
		s += fmt.Sprintf(" ["+format+"–"+format+"]", slices.Min(xs), slices.Max(xs))
	}
	return s
}

// writeReport prints the report and returns how many targets were missed.
func writeReport(w io.Writer, r *results) (missed int) {
	c := r.cfg
	filt := "no bloom filter"
	if c.filterBits > 0 {
		filt = fmt.Sprintf("a bloom filter of %d bits per key", c.filterBits)
	}
	wb := "goleveldb's default write buffer (4 MiB)"
	if c.writeBuf > 0 {
		wb = fmt.Sprintf("a %d KiB write buffer", c.writeBuf>>10)
	}
	fmt.Fprintf(w, "A goleveldb database of %d live keys (16-byte keys, 100-byte values, snappy, %s, %s, its default 2 MiB tables, level 1 of %d MiB, level 2 of %d MiB), %s: %s, %.1f MB of tables; %d keys left in the journal. "+
		"Median of %d rounds [min–max], each engine opened afresh every round, the order rotating.\n\n",
		c.keys, filt, wb, c.level1>>20, 10*c.level1>>20, r.built, r.levels, float64(r.dbBytes)/1e6, r.logKeys, c.rounds)
	fmt.Fprintf(w, "- Open: median of %d opens per round (reading the MANIFEST and replaying the journal). Scan: every live key, forward. Gets: %d present keys in random order, then %d absent keys (odd numbers, between present keys).\n\n", c.opens, c.gets, c.gets)

	theirs := slices.Contains(c.impls, "goleveldb")
	var ourCols []string
	fmt.Fprint(w, "| figure |")
	cols := 0
	for _, name := range c.impls {
		fmt.Fprintf(w, " %s |", headers[name])
		cols++
		if name != "goleveldb" {
			ourCols = append(ourCols, name)
		}
	}
	if theirs {
		for _, name := range ourCols {
			fmt.Fprintf(w, " %s vs goleveldb |", headers[name])
			cols++
		}
		fmt.Fprint(w, " target | check |")
		cols += 2
	}
	fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" ---: |", cols))
	var passed, failed []string
	for _, f := range figures {
		row := r.samples[f.id]
		fmt.Fprintf(w, "| %s |", f.label)
		for _, name := range c.impls {
			fmt.Fprintf(w, " %s |", cell(f.format, row[name]))
		}
		if theirs {
			ok, checked := true, 0
			for _, name := range ourCols {
				s := median(row["goleveldb"]) / median(row[name])
				fmt.Fprintf(w, " %.2f× |", s)
				if !unchecked[name] {
					checked++
					ok = ok && s >= f.target
				}
			}
			ok = ok && checked > 0
			if f.target == 0 {
				fmt.Fprintln(w, " – | – |")
				continue
			}
			check := "pass"
			if !ok {
				check = "FAIL"
				failed = append(failed, f.label)
			} else {
				passed = append(passed, f.label)
			}
			fmt.Fprintf(w, " ≥ %.0f× | %s |", f.target, check)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if theirs && len(ourCols) > 0 {
		fmt.Fprintf(w, "Checks (every column of ours against goleveldb, but ours-ra's): %d of %d pass.", len(passed), len(passed)+len(failed))
		if len(failed) > 0 {
			fmt.Fprintf(w, " Missed: %s.", strings.Join(failed, "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Correctness: every timed scan counted every live key, every Get of a present key returned its value, every Get of an absent key found none.")
	for _, s := range r.warnings {
		fmt.Fprintf(w, "Warning: %s\n", s)
	}
	fmt.Fprintf(w, "\nMachine: %s. Run took %.0f s.\n", r.machine, r.elapsed)
	fmt.Fprintf(w, "Command: `cd bench && %s`\n", r.command)
	return len(failed)
}
