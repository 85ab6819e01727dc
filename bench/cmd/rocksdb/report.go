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
}

var figures = []figure{
	{id: "scan", label: "full forward scan, ns/entry", format: "%.1f"},
	// The scan's CPU time: the process's over the scan, every thread's
	// (the Go collector's; RocksDB's background threads').
	{id: "scan-cpu", label: "full forward scan, CPU time (all threads), ns/entry", format: "%.1f"},
	{id: "seek", label: "SeekGE to a present key, ns/op", format: "%.0f"},
	{id: "get", label: "Get of a present key, ns/op", format: "%.0f"},
	{id: "get-absent", label: "Get of an absent key, ns/op", format: "%.0f"},
}

var headers = map[string]string{
	"ours":    "ours (package rocksdb)",
	"rocksdb": "RocksDB 7.8.3 (C++)",
	"pebble":  "Pebble v2.1.7",
}

// targets are issue 47's, by table: the engine ours is set against and
// the speedup asked of ours on every figure.
var targets = map[string]struct {
	against string
	speedup float64
}{
	"fv5": {"rocksdb", 1},
	"fv2": {"pebble", 2},
}

var tableTitles = map[string]string{
	"fv5": "fv5: RocksDB 7.8.3's defaults (format_version 5, XXH3)",
	"fv2": "fv2: format_version 2, CRC-32C (readable by Pebble v2)",
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
	fmt.Fprintf(w, "Tables of %d entries (16-byte keys, 100-byte values: half random, half text) written by RocksDB 7.8.3's SstFileWriter (4 KiB blocks, snappy, full Bloom filter of 10 bits per key), %s. "+
		"Median of %d rounds [min–max]; each round opens every engine afresh on every table, the engines' order rotating; every engine reads through a new %d MiB block cache.\n\n",
		c.keys, r.built, c.rounds, c.cacheBytes>>20)
	pget := "SeekPrefixGE, which consults the filter"
	if c.pebbleGet == "seek" {
		pget = "SeekGE"
	}
	fmt.Fprintf(w, "- Scan: every entry, forward, one iterator (ours on one goroutine, no read-ahead); CPU time is the process's over the scan. SeekGE: %d random present keys, one reused iterator (RocksDB: SstFileReader's), after one untimed pass over them. "+
		"Gets: %d random present keys, then %d absent keys (odd numbers, between present keys), after one untimed pass over both; RocksDB: DB::Get in a database opened read-only over a copy of the table; ours: Table.Get(key, MaxSequence); Pebble: %s.\n",
		c.seeks, c.gets, c.gets, pget)
	for _, table := range c.tables {
		fmt.Fprintf(w, "- %s: %s.\n", table, r.info[table])
	}
	if r.pebbleFV5 != "" {
		fmt.Fprintf(w, "- Pebble v2.1.7 on fv5: %s.\n", r.pebbleFV5)
	}
	var passed, failed []string
	for _, table := range c.tables {
		var impls []string
		for _, name := range c.impls {
			if name != "pebble" || table == "fv2" {
				impls = append(impls, name)
			}
		}
		var others []string
		for _, name := range impls {
			if name != "ours" && slices.Contains(impls, "ours") {
				others = append(others, name)
			}
		}
		tg := targets[table]
		checked := slices.Contains(others, tg.against)
		fmt.Fprintf(w, "\n#### %s\n\n| figure |", tableTitles[table])
		cols := 0
		for _, name := range impls {
			fmt.Fprintf(w, " %s |", headers[name])
			cols++
		}
		for _, name := range others {
			fmt.Fprintf(w, " %s ÷ ours |", headers[name])
			cols++
		}
		if checked {
			fmt.Fprint(w, " target | check |")
			cols += 2
		}
		fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" ---: |", cols))
		for _, f := range figures {
			row := r.samples[table][f.id]
			fmt.Fprintf(w, "| %s |", f.label)
			for _, name := range impls {
				fmt.Fprintf(w, " %s |", cell(f.format, row[name]))
			}
			ratio := map[string]float64{}
			for _, name := range others {
				ratio[name] = median(row[name]) / median(row["ours"])
				fmt.Fprintf(w, " %.2f× |", ratio[name])
			}
			if checked {
				label := table + ": " + f.label
				check := "pass"
				if !(ratio[tg.against] >= tg.speedup) {
					check = "FAIL"
					failed = append(failed, label)
				} else {
					passed = append(passed, label)
				}
				fmt.Fprintf(w, " ≥ %.0f× %s | %s |", tg.speedup, headers[tg.against], check)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	if len(passed)+len(failed) > 0 {
		fmt.Fprintf(w, "Checks (issue 47: on fv5 at least as fast as RocksDB's own, on fv2 at least 2x Pebble v2): %d of %d pass.", len(passed), len(passed)+len(failed))
		if len(failed) > 0 {
			fmt.Fprintf(w, " Missed: %s.", strings.Join(failed, "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Correctness: every timed scan counted every entry, every seek landed on its key with its value, every Get of a present key returned its value, every Get of an absent key found none.")
	fmt.Fprintf(w, "\nMachine: %s. Run took %.0f s.\n", r.machine, r.elapsed)
	fmt.Fprintf(w, "Command: `cd bench && %s`\n", r.command)
	return len(failed)
}
