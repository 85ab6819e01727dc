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

// dbFigures are the database's rows (-tables db).
var dbFigures = []figure{
	{id: "open", label: "open, ms", format: "%.2f"},
	figures[0], figures[1], figures[3], figures[4],
}

// figuresOf returns table's rows.
func figuresOf(table string) []figure {
	if table == "db" {
		return dbFigures
	}
	return figures
}

var headers = map[string]string{
	"ours":    "ours (package rocksdb)",
	"rocksdb": "RocksDB 7.8.3 (C++)",
	"pebble":  "Pebble v2.1.7",
}

// targets are issue 47's and 48's, by table: the engine ours is set against and
// the speedup asked of ours on every figure.
var targets = map[string]struct {
	against string
	speedup float64
}{
	"fv5": {"rocksdb", 1},
	"fv2": {"pebble", 2},
	"db":  {"rocksdb", 1},
}

var tableTitles = map[string]string{
	"fv5": "fv5: RocksDB 7.8.3's defaults (format_version 5, XXH3)",
	"fv2": "fv2: format_version 2, CRC-32C (readable by Pebble v2)",
	"db":  "db: a whole database, rocksdb.OpenDB beside RocksDB's DB::OpenForReadOnly",
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
	hasTables := slices.ContainsFunc(c.tables, func(t string) bool { return t != "db" })
	if hasTables {
		fmt.Fprintf(w, "Tables of %d entries (16-byte keys, 100-byte values: half random, half text) written by RocksDB 7.8.3's SstFileWriter (4 KiB blocks, snappy, full Bloom filter of 10 bits per key), %s. "+
			"Median of %d rounds [min–max]; each round opens every engine afresh on every table, the engines' order rotating; every engine reads through a new %d MiB block cache.\n\n",
			c.keys, r.built, c.rounds, c.cacheBytes>>20)
		pget := "SeekPrefixGE, which consults the filter"
		if c.pebbleGet == "seek" {
			pget = "SeekGE"
		}
		fmt.Fprintf(w, "- Scan: every entry, forward, one iterator (ours on one goroutine, no read-ahead); CPU time is the process's over the scan. SeekGE: %d random present keys, one reused iterator (RocksDB: SstFileReader's), after one untimed pass over them. "+
			"Gets: %d random present keys, then %d absent keys (odd numbers, between present keys), after one untimed pass over both; RocksDB: DB::Get in a database opened read-only over a copy of the table; ours: Table.GetAppend(buf[:0], key, MaxSequence), the value into one reused buffer (Table.Get copies it into a new allocation); Pebble: %s.\n",
			c.seeks, c.gets, c.gets, pget)
		for _, table := range c.tables {
			if table != "db" {
				fmt.Fprintf(w, "- %s: %s.\n", table, r.info[table])
			}
		}
		if r.pebbleFV5 != "" {
			fmt.Fprintf(w, "- Pebble v2.1.7 on fv5: %s.\n", r.pebbleFV5)
		}
	}
	if slices.Contains(c.tables, "db") {
		if hasTables {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "A database of %d live keys (the tables' keys and values) written by RocksDB 7.8.3 (DB::Write, batches; snappy, full Bloom filter of 10 bits per key, 4 MiB write buffer, 2 MiB tables, 4 MiB level 1; "+
			"writes in a random order, with overwrites and deletes, the compactions settled, two flushes more into level 0, then writes left in the write-ahead log: avoid_flush_during_shutdown), %s. "+
			"Median of %d rounds [min–max]; each round opens both engines afresh, the order rotating, each through a new %d MiB block cache.\n\n",
			c.keys, r.built, c.rounds, c.cacheBytes>>20)
		fmt.Fprintf(w, "- db: %s.\n", r.info["db"])
		fmt.Fprintf(w, "- Open: the median of %d opens per round (ours: rocksdb.OpenDB on the directory; RocksDB: DB::OpenForReadOnly on a copy made for the round, as its open may write). "+
			"Scan: every live key of the default column family, forward, on the last open (ours: DB.NewIterator on one goroutine; RocksDB: DB::NewIterator); CPU time is the process's over the scan. "+
			"Gets: %d random present keys, then %d absent keys (odd numbers, between present keys; some deleted), after one untimed pass over both (ours: DB.Get, a copy; RocksDB: DB::Get into a PinnableSlice).\n",
			c.opens, c.gets, c.gets)
	}
	var passed, failed []string
	for _, table := range c.tables {
		impls := implsOf(c, table)
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
		for _, f := range figuresOf(table) {
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
		var asked []string
		for _, table := range c.tables {
			switch table {
			case "fv5":
				asked = append(asked, "issue 47: on fv5 at least as fast as RocksDB's own")
			case "fv2":
				asked = append(asked, "issue 47: on fv2 at least 2x Pebble v2")
			case "db":
				asked = append(asked, "issue 48: on the database at least as fast as RocksDB's own")
			}
		}
		fmt.Fprintf(w, "Checks (%s): %d of %d pass.", strings.Join(asked, "; "), len(passed), len(passed)+len(failed))
		if len(failed) > 0 {
			fmt.Fprintf(w, " Missed: %s.", strings.Join(failed, "; "))
		}
		fmt.Fprintln(w)
	}
	if hasTables {
		fmt.Fprintln(w, "Correctness: every timed scan counted every entry, every seek landed on its key with its value, every Get of a present key returned its value, every Get of an absent key found none.")
	}
	if slices.Contains(c.tables, "db") {
		fmt.Fprintln(w, "Correctness (db): before the rounds, ours read the whole view entry by entry equal to what was written (and left the directory's files as they were), RocksDB's view (a copy) gave the same count and FNV-1a hash; every timed scan counted every key and byte, every Get of a present key returned its value, every Get of an absent key found none.")
	}
	fmt.Fprintf(w, "\nMachine: %s. Run took %.0f s.\n", r.machine, r.elapsed)
	fmt.Fprintf(w, "Command: `cd bench && %s`\n", r.command)
	return len(failed)
}
