package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Targets for ours, from the shared-cache issue, tightened by issue 49
// (at most 80 MiB of anonymous memory with a 64 MiB cache, the heap not
// above 11 MiB) and issue 27 (Gets/s against Pebble v2).
const (
	rssSlackBytes   = 16 << 20 // peak RssAnon ≤ cache + 16 MiB
	heapTargetBytes = 11 << 20 // peak HeapInuse ≤ 11 MiB
	speedupTarget   = 2.0      // Gets/s ≥ 2× Pebble's at the same compression
	// Gets/s against Pebble v2's (pebble2) at the same compression.
	speedupV2Snappy = 3.0
	speedupV2None   = 5.0
	// allocsTolerance is what "0 allocs/Get" allows: the timed run's
	// few incidental allocations (its goroutines' starts, the runtime's
	// own) spread over millions of Gets; an allocation on any path taken
	// by one Get in a thousand would exceed it.
	allocsTolerance = 0.001
)

func isOurs(impl string) bool { return impl == "ours" || strings.HasPrefix(impl, "ours-") }

func writeMarkdown(w io.Writer, r *report) {
	fmt.Fprintf(w, "## manytables: %d tables × %d entries, %d goroutines × %s in %d interleaved rounds (each after %s of warm-up), one shared cache of %s per process\n\n",
		r.Tables, r.Entries, r.Goroutines, r.Duration, r.Rounds, r.Warmup, formatSize(r.CacheBytes))
	fmt.Fprintf(w, "`%s` on %s (%d cores), %s, cgo %v; %.0fs in all.\n\n", r.Command, r.CPU, r.Cores, r.GoVersion, r.Cgo, r.ElapsedSec)

	fmt.Fprintln(w, "| impl | compression | Gets/s | vs pebble | peak RssAnon MiB | peak HeapInuse MiB | allocs/Get | cache hit rate | errors | wrong values |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i := range r.Rows {
		x := &r.Rows[i]
		vs := "–"
		if p := r.find("pebble", x.Compression); p != nil && p.GetsPerSec > 0 {
			vs = fmt.Sprintf("%.2f×", x.GetsPerSec/p.GetsPerSec)
		}
		hr := "–"
		if h := x.hitRate(); h >= 0 {
			hr = fmt.Sprintf("%.1f%%", 100*h)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f%s | %s | %.1f | %.1f | %.4f | %s | %d | %d |\n",
			x.Impl, x.Compression, x.GetsPerSec, x.roundRange(), vs, mib(x.RssAnonPeak), mib(x.HeapInusePeak), x.AllocsPer, hr, x.Errors, x.Wrong)
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "Gets/s: all goroutines together over a timed run, the median of the rounds (their range in brackets), "+strconv.Itoa(r.PresentPct)+"% present keys and the others absent, every value checked (in the warm-up too: errors and wrong values count both). vs pebble: Gets/s over Pebble v1.1.5's (pebble) at the same compression. "+
		"RssAnon: resident memory minus file-mapped pages (Go heap, stacks, C malloc, our cache's anonymous mapping; Pebble's caches, v1 and v2, are C malloc with cgo, Go heap without); peaks sampled every 50 ms over the child's life. "+
		"allocs/Get: MemStats.Mallocs over the timed run / Gets (the warm-up takes the readers' one-time allocations: lazy per-table setup on the first Get, scratch pools filling, Pebble's iterators). "+
		"Cache hit rate: hits / (hits + misses) of the shared cache over the timed run. Ours caches decoded data blocks only (index, filter and hash index are read in place from the mapping); "+
		"Pebble (v1 and v2) and goleveldb also count their index and filter block lookups, two or more per Get, so their rates are not comparable with ours. "+
		"–: no cache lookups (ours reads uncompressed blocks in place from the mapping).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Details: build (wall time, all tables, fsync included; not a measurement), files, open (all tables, in the child), memory at the child's start and with the tables open, resident file-mapped pages, the cache over the timed run.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| impl | compression | build s | files MiB | open s | warm-up Gets | Gets | RssAnon start / open MiB | HeapInuse open MiB | peak RssFile MiB | cache peak / cap MiB | hits | misses | evictions |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i := range r.Rows {
		x := &r.Rows[i]
		ev := "–"
		if x.HasCache && x.Cache.Evictions >= 0 {
			ev = fmt.Sprint(x.Cache.Evictions)
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %.1f | %.2f | %d | %d | %.1f / %.1f | %.1f | %.1f | %.1f / %.1f | %d | %d | %s |\n",
			x.Impl, x.Compression, x.BuildSec, mib(x.FileBytes), x.OpenSec, x.WarmupGets, x.Gets,
			mib(x.RssAnonStart), mib(x.RssAnonOpen), mib(x.HeapInuseOpen), mib(x.RssFilePeak),
			mib(x.CacheSizePeak), mib(x.Cache.Capacity), x.Cache.Hits, x.Cache.Misses, ev)
	}
	for i := range r.Rows {
		x := &r.Rows[i]
		if x.FirstError != "" {
			fmt.Fprintf(w, "\n%s/%s first error: %s\n", x.Impl, x.Compression, x.FirstError)
		}
		if x.FirstWrong != "" {
			fmt.Fprintf(w, "\n%s/%s first wrong value: %s\n", x.Impl, x.Compression, x.FirstWrong)
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Target checks (ours)")
	fmt.Fprintln(w)
	held, total := 0, 0
	check := func(ok bool, format string, args ...any) {
		total++
		verdict := "FAIL"
		if ok {
			held++
			verdict = "ok"
		}
		fmt.Fprintf(w, "- %s: %s\n", verdict, fmt.Sprintf(format, args...))
	}
	for i := range r.Rows {
		x := &r.Rows[i]
		if !isOurs(x.Impl) {
			continue
		}
		name := x.Impl + "/" + x.Compression
		check(x.RssAnonPeak <= r.CacheBytes+rssSlackBytes, "%s peak RssAnon %.1f MiB ≤ cache + %d = %.0f MiB",
			name, mib(x.RssAnonPeak), rssSlackBytes>>20, mib(r.CacheBytes+rssSlackBytes))
		check(x.HeapInusePeak <= heapTargetBytes, "%s peak HeapInuse %.1f MiB ≤ %d MiB", name, mib(x.HeapInusePeak), heapTargetBytes>>20)
		check(x.AllocsPer < allocsTolerance, "%s allocs/Get %.5f (%d mallocs in %d Gets) is 0 (< %g)",
			name, x.AllocsPer, x.Mallocs, x.Gets, allocsTolerance)
		if p := r.find("pebble", x.Compression); p != nil && p.GetsPerSec > 0 {
			check(x.GetsPerSec >= speedupTarget*p.GetsPerSec, "%s Gets/s %.0f ≥ 2 × Pebble's %.0f (%.2f×)",
				name, x.GetsPerSec, p.GetsPerSec, x.GetsPerSec/p.GetsPerSec)
		}
		if p := r.find("pebble2", x.Compression); p != nil && p.GetsPerSec > 0 && x.Impl == "ours" {
			want := speedupV2Snappy
			if x.Compression == "none" {
				want = speedupV2None
			}
			check(x.GetsPerSec >= want*p.GetsPerSec, "%s Gets/s %.0f ≥ %g × Pebble v2's %.0f (%.2f×)",
				name, x.GetsPerSec, want, p.GetsPerSec, x.GetsPerSec/p.GetsPerSec)
		}
		check(x.Errors == 0 && x.Wrong == 0, "%s no errors, no wrong values (%d, %d)", name, x.Errors, x.Wrong)
	}
	fmt.Fprintf(w, "\n%d of %d checks hold.\n", held, total)

	// Thrashing: the workload is meant to read far more decoded data than
	// the cache holds.
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Thrashing check")
	fmt.Fprintln(w)
	raw := int64(r.Tables) * newWorkload(max(r.Tables, 1), max(r.Entries, 1)).rawBytes()
	fmt.Fprintf(w, "Keys and values: %.0f MiB, %.1f× the %s cache.\n", mib(raw), float64(raw)/float64(r.CacheBytes), formatSize(r.CacheBytes))
	for i := range r.Rows {
		x := &r.Rows[i]
		name := x.Impl + "/" + x.Compression
		switch {
		case !x.HasCache || x.Cache.Hits+x.Cache.Misses == 0:
			fmt.Fprintf(w, "- %s: the cache saw no lookups (raw blocks read in place from the file mapping)\n", name)
		case x.Cache.Misses == 0:
			fmt.Fprintf(w, "- %s: NOT thrashing: no misses in the timed run\n", name)
		default:
			ev := ""
			if x.Cache.Evictions >= 0 {
				ev = fmt.Sprintf(", %d evictions", x.Cache.Evictions)
			}
			state := "thrashing"
			if raw <= r.CacheBytes {
				state = "not thrashing (the data fits)"
			}
			fmt.Fprintf(w, "- %s: %s: hit rate %.1f%%, %d misses%s\n", name, state, 100*x.hitRate(), x.Cache.Misses, ev)
		}
	}
}

// roundRange is " [min-max]" of the rounds' Gets/s, or "" for one round.
func (x *row) roundRange() string {
	if len(x.RoundGets) < 2 {
		return ""
	}
	lo, hi := x.RoundGets[0], x.RoundGets[0]
	for _, g := range x.RoundGets {
		lo, hi = min(lo, g), max(hi, g)
	}
	return fmt.Sprintf(" [%.0f-%.0f]", lo, hi)
}
