package main

// The report: how cells print, the table of a size, and the checks of
// ours against the read caps and Pebble v2.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

func (c count) String() string {
	s := fmt.Sprintf("%d / %s", c.calls, size(c.bytes))
	if latency > 0 {
		s += ", " + wall(c.wall)
	}
	return s
}

func wall(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func size(b int64) string {
	switch {
	case b >= 10<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	case b >= 10<<10:
		return fmt.Sprintf("%.0f KB", float64(b)/1e3)
	}
	return fmt.Sprintf("%d B", b)
}

// printTable prints the table of every implementation's figures on a
// table of n entries: its file size, then a line per row.
func printTable(w io.Writer, n int, fileSizes []int64, results []*result) {
	fmt.Fprintf(w, "\n%d entries\n", n)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "|")
	for _, im := range impls {
		fmt.Fprintf(tw, "\t| %s", im.name)
	}
	fmt.Fprintln(tw, "\t|")
	fmt.Fprint(tw, "| file size")
	for i := range impls {
		fmt.Fprintf(tw, "\t| %s", size(fileSizes[i]))
	}
	fmt.Fprintln(tw, "\t|")
	for _, row := range rows {
		fmt.Fprintf(tw, "| %s", row)
		for i := range impls {
			fmt.Fprintf(tw, "\t| %s", results[i].cells[row])
		}
		fmt.Fprintln(tw, "\t|")
	}
	tw.Flush()
}

// check returns the caps' verdicts for ours on a table of n entries: a
// cold Get of a present key in at most 3 reads counting open's, of an
// absent key in at most 2; from 1M entries up, at most 64 KiB read
// beyond the tail and the data block; and no more reads than Pebble v2
// (the fewer of its two layouts) on any row but the concurrent one, whose
// reads depend on which lookups miss at the same time (shown as info).
func check(n int, results []*result) []string {
	var out []string
	verdict := func(ok bool, format string, args ...any) {
		s := "ok: "
		if !ok {
			s = "NOT MET: "
		}
		out = append(out, s+fmt.Sprintf("%d entries, ", n)+fmt.Sprintf(format, args...))
	}
	v2 := map[string]int64{}
	for i, im := range impls {
		if !im.v2 {
			continue
		}
		for row, r := range results[i].reads {
			if old, ok := v2[row]; !ok || r < old {
				v2[row] = r
			}
		}
	}
	for i, im := range impls {
		if !im.ours {
			continue
		}
		r := results[i]
		verdict(r.presentReads <= 3 && r.absentReads <= 2, "%s: cold Get present %d reads, absent %d, counting open (caps 3 and 2)", im.name, r.presentReads, r.absentReads)
		if n >= 1_000_000 {
			ok := r.presentBeyond <= 64<<10 && r.absentBeyond <= 64<<10
			if im.oneLevel && !ok {
				out = append(out, fmt.Sprintf("info: %d entries, %s: beyond the tail and data block, present %d bytes, absent %d: the whole index and filter, as the one-level layout forced past the default threshold must read", n, im.name, r.presentBeyond, r.absentBeyond))
			} else {
				verdict(ok, "%s: beyond the tail and data block, present %d bytes, absent %d (cap 65536)", im.name, r.presentBeyond, r.absentBeyond)
			}
		}
		var worse []string
		for _, row := range rows {
			if row == concurrentRow {
				// Timing decides which concurrent lookups miss
				// together; reported below, not compared.
				continue
			}
			if theirs, ok := v2[row]; ok && r.reads[row] > theirs {
				worse = append(worse, fmt.Sprintf("%s %d > %d", row, r.reads[row], theirs))
			}
		}
		verdict(len(worse) == 0, "%s: no more reads than Pebble v2 on any row but the concurrent one%s", im.name, strings.TrimSuffix(" ("+strings.Join(worse, "; ")+")", " ()"))
		out = append(out, fmt.Sprintf("info: %d entries, %s: %s, %d reads (Pebble v2: %d)", n, im.name, concurrentRow, r.reads[concurrentRow], v2[concurrentRow]))
	}
	return out
}
