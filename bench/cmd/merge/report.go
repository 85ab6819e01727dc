package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// figure is one row of the report.
type figure struct {
	id, label string
	format    string
	higher    bool    // higher is better (throughput); else lower (time, allocations)
	target    float64 // the speedup over the Pebble DB issue 40 asks for; 0: none
	zero      bool    // the target is ours == 0
	noRatio   bool
}

var figures = []figure{
	{id: "fwd-rate", label: "forward scan of the live view, M entries/s", format: "%.2f", higher: true, target: 2},
	{id: "fwd-ns", label: "forward scan, ns/entry", format: "%.1f"},
	{id: "rev-rate", label: "reverse scan of the live view, M entries/s", format: "%.2f", higher: true, target: 2},
	{id: "rev-ns", label: "reverse scan, ns/entry", format: "%.1f"},
	{id: "seek", label: "SeekGE at a random key + 10 Next, ns/op", format: "%.0f", target: 2},
	{id: "get-old", label: "Get of a key only in the oldest table, ns/op", format: "%.0f", target: 3},
	{id: "get-absent", label: "Get of a key in no table, ns/op", format: "%.0f", target: 3},
	{id: "compact", label: "compaction into one level, MB/s of input table bytes", format: "%.1f", higher: true, target: 1.5},
	{id: "compact-rate", label: "compaction, M input entries/s", format: "%.2f", higher: true},
	{id: "compact-sec", label: "compaction, s", format: "%.2f"},
	{id: "fwd-allocs", label: "forward scan, allocs/entry", format: "%.4f", noRatio: true},
	{id: "rev-allocs", label: "reverse scan, allocs/entry", format: "%.4f", noRatio: true},
	{id: "seek-allocs", label: "SeekGE + 10 Next, allocs/op", format: "%.3f", noRatio: true},
	{id: "get-old-allocs", label: "Get (oldest table), allocs/op", format: "%.2f", noRatio: true},
	{id: "get-absent-allocs", label: "Get (no table), allocs/op", format: "%.2f", noRatio: true},
	{id: "allocs-next", label: "ours once warm: allocs per Next (testing.AllocsPerRun)", format: "%.3f", zero: true},
	{id: "allocs-seekge", label: "ours once warm: allocs per SeekGE (testing.AllocsPerRun)", format: "%.3f", zero: true},
}

// column headers, by engine.
var headers = map[string]string{
	"ours":      "ours (merge)",
	"pebble":    "Pebble DB",
	"external":  "Pebble NewExternalIter",
	"goleveldb": "goleveldb merged iterator (every duplicate)",
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

// cell renders the median of xs and, with more than one round, their
// range.
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

// speedup is how many times faster ours is than theirs, by medians.
func speedup(f figure, ours, theirs []float64) float64 {
	if len(ours) == 0 || len(theirs) == 0 {
		return math.NaN()
	}
	o, t := median(ours), median(theirs)
	if f.higher {
		return o / t
	}
	return t / o
}

// writeReport prints the report and returns how many targets were
// missed.
func writeReport(w io.Writer, r *results) (missed int) {
	c := r.cfg
	fmt.Fprintf(w, "%d tables of %d entries (16-byte keys, 100-byte values, snappy) drawn from %d keys, %d range deletions per table over %.1f%% of the keys: "+
		"%d entries, %d live keys in the view. Median of %d rounds [min–max], each library in turn, the order rotating.\n\n",
		c.tables, c.entries, c.keySpace, c.rangeDels, 100*c.delFrac, r.entries, r.nlive, c.rounds)
	var sizes []string
	for _, name := range []string{"ours", "pebble", "goleveldb"} {
		if s, ok := r.sizes[name]; ok {
			sizes = append(sizes, fmt.Sprintf("%s %.1f MB", name, float64(s)/1e6))
		}
	}
	fmt.Fprintf(w, "- Tables: %s. Block caches: %d MiB each (ours one cache.Cache shared by the tables; the Pebble DB's; goleveldb's LRU); NewExternalIter reads without a cache or filters.\n", strings.Join(sizes, ", "), c.cacheBytes>>20)
	if r.shape != "" {
		fmt.Fprintf(w, "- Pebble DB (the tables ingested oldest first, automatic compactions off): %s.\n", r.shape)
	}
	fmt.Fprintf(w, "- Gets: %d per pass; seeks: %d per pass, each SeekGE then %d Next. goleveldb's merged iterator returns every table's entry of a key (%d entries) and has no range deletions: its figures are per merged entry, not per live key, and it has no Get over a stack.\n", c.lookups, c.seeks, c.nexts, r.entries)
	if len(r.compact) > 0 {
		var parts []string
		for _, name := range []string{"ours", "pebble"} {
			if s, ok := r.compact[name]; ok {
				parts = append(parts, name+": "+s)
			}
		}
		cc := "a new block cache of the same size each time"
		if c.keptCompactCache {
			cc = "one block cache per library of the same size, kept from round to round (-kept-compact-cache; none of the new readers' or DB's blocks in it)"
		}
		fmt.Fprintf(w, "- Compaction (%d MiB target, to the bottom: range deletions and shadowed entries dropped; new readers, or a new DB with the tables ingested, every round, after one untimed compaction of each; %s): %s. MB/s counts each library's own input table bytes.\n", c.target>>20, cc, strings.Join(parts, "; "))
	}
	fmt.Fprintln(w)

	var impls []string
	for _, name := range allImpls {
		if slices.Contains(c.impls, name) {
			impls = append(impls, name)
		}
	}
	hasOurs := slices.Contains(impls, "ours")
	hasPebble := hasOurs && slices.Contains(impls, "pebble")
	hasExt := hasOurs && slices.Contains(impls, "external")
	fmt.Fprint(w, "| figure |")
	cols := 0
	for _, name := range impls {
		fmt.Fprintf(w, " %s |", headers[name])
		cols++
	}
	if hasPebble {
		fmt.Fprint(w, " ours vs Pebble DB | target | check |")
		cols += 3
	}
	if hasExt {
		fmt.Fprint(w, " ours vs NewExternalIter |")
		cols++
	}
	fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" ---: |", cols))

	var passed, failed []string
	for _, f := range figures {
		row := r.samples[f.id]
		if len(row) == 0 {
			continue
		}
		fmt.Fprintf(w, "| %s |", f.label)
		for _, name := range impls {
			fmt.Fprintf(w, " %s |", cell(f.format, row[name]))
		}
		ratio := func(theirs string) string {
			s := speedup(f, row["ours"], row[theirs])
			if f.noRatio || f.zero || math.IsNaN(s) || math.IsInf(s, 0) {
				return "–"
			}
			return fmt.Sprintf("%.2f×", s)
		}
		if hasPebble {
			target, check := "", ""
			switch {
			case f.zero:
				target = "0"
				if median(row["ours"]) == 0 {
					check = "pass"
				} else {
					check = "FAIL"
				}
			case f.target > 0:
				target = fmt.Sprintf("≥ %.1f×", f.target)
				if s := speedup(f, row["ours"], row["pebble"]); s >= f.target {
					check = "pass"
				} else {
					check = "FAIL"
				}
			}
			switch check {
			case "pass":
				passed = append(passed, f.label)
			case "FAIL":
				failed = append(failed, f.label)
			}
			fmt.Fprintf(w, " %s | %s | %s |", ratio("pebble"), target, check)
		} else if hasOurs {
			// The allocation targets need no Pebble.
			if f.zero && median(row["ours"]) != 0 {
				failed = append(failed, f.label)
			}
		}
		if hasExt {
			fmt.Fprintf(w, " %s |", ratio("external"))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if hasPebble {
		fmt.Fprintf(w, "Checks: %d of %d pass.", len(passed), len(passed)+len(failed))
		if len(failed) > 0 {
			fmt.Fprintf(w, " Missed: %s.", strings.Join(failed, "; "))
		}
		fmt.Fprintln(w)
	}
	var views []string
	for _, name := range impls {
		if name != "goleveldb" {
			views = append(views, headers[name])
		}
	}
	fmt.Fprintf(w, "Correctness: checked before timing that each view (%s) holds exactly the %d live keys of the model with their newest values, forward and backward, and that Gets find them (and not the absent or range-deleted keys); every timed pass's counts matched.\n", strings.Join(views, ", "), r.nlive)
	for _, s := range r.warnings {
		fmt.Fprintf(w, "Warning: %s\n", s)
	}
	fmt.Fprintf(w, "\nMachine: %s. Run took %.0f s.\n", r.machine, r.elapsed)
	fmt.Fprintf(w, "Command: `cd bench && %s`\n", r.command)
	return len(failed)
}
