package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sstkit/sstable/filterblock"
)

// Limits on the bench filter flags. 10^8 keys at 32 bits per key make a
// 400 MB filter, below the 512 MB at which LevelDB's 32-bit bit index
// would wrap; beyond 23 bits per key Bloom's k stays at 16 anyway.
const (
	maxBenchKeys = 100_000_000
	maxBenchBits = 32
)

// benchBatch is how many keys are generated at a time into one flat
// buffer; only the filter calls on a whole batch are timed.
const benchBatch = 4096

// progressAfter is how long a run goes before it reports progress.
const progressAfter = time.Second

// runBench implements "sst bench": it dispatches to the named benchmark.
func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("bench: want a benchmark name (usage: sst bench filter [flags])")
	}
	switch args[0] {
	case "filter":
		return runBenchFilter(args[1:], stdout, stderr)
	case "-h", "-help", "--help":
		return flag.ErrHelp
	}
	return usagef("bench: unknown benchmark %q (want filter)", args[0])
}

// benchPolicy is a policy under test and the false positive rate theory
// predicts for it. A fixed policy's size is not set in bits per key: it is
// measured once per distribution, and its row shows the bits per key it
// took.
type benchPolicy struct {
	name   string
	new    func(bitsPerKey int) filterblock.Policy
	theory func(bitsPerKey float64, k int) float64
	fixed  bool
}

var benchPolicies = []benchPolicy{
	{"bloom", func(b int) filterblock.Policy { return filterblock.Bloom(float64(b)) }, filterblock.CacheLocalFPR, false},
	{"leveldb", filterblock.LevelDBBloom, filterblock.StandardFPR, false},
	// BinaryFuse8: 8-bit fingerprints, so 2^-8 false positives
	// whatever the size (Graf and Lemire, 2022); 3 fingerprints per probe.
	{"fuse8", func(int) filterblock.Policy { return filterblock.BinaryFuse8() }, func(float64, int) float64 { return 1.0 / 256 }, true},
}

// fuseProbes is the number of fingerprints a BinaryFuse8 probe reads,
// shown in the k column.
const fuseProbes = 3

// keyFunc appends key number i of a stream to dst. Streams are read in
// order from i = 0, which lets random streams ignore i.
type keyFunc func(dst []byte, i int) []byte

// keyDist is a key distribution: stream(false) yields the N keys of the
// set, stream(true) N keys absent from it.
type keyDist struct {
	name   string
	stream func(probe bool) keyFunc
}

var (
	prefix12  = []byte("tenant-0042/")
	prefix100 = []byte(strings.Repeat("/data/tenant-0042/events/", 4))
)

var benchDists = []keyDist{
	{"random16", func(probe bool) keyFunc {
		seed := uint64(1)
		if probe {
			seed = 2 // a different stream; a collision has odds ~N²/2^128
		}
		r := rand.NewPCG(seed, 0x5eed)
		return func(dst []byte, _ int) []byte {
			dst = binary.BigEndian.AppendUint64(dst, r.Uint64())
			return binary.BigEndian.AppendUint64(dst, r.Uint64())
		}
	}},
	{"decimal", func(probe bool) keyFunc {
		return func(dst []byte, i int) []byte {
			var digits [20]byte
			d := strconv.AppendInt(digits[:0], int64(2*i+b2i(probe)), 10)
			for range 16 - len(d) {
				dst = append(dst, '0')
			}
			return append(dst, d...)
		}
	}},
	{"prefix12", prefixed(prefix12)},
	{"prefix100", prefixed(prefix100)},
	{"seq64", func(probe bool) keyFunc {
		return func(dst []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(dst, uint64(2*i+b2i(probe)))
		}
	}},
}

// prefixed returns the distribution prefix + big-endian uint32 2i, probed
// at 2i+1.
func prefixed(prefix []byte) func(probe bool) keyFunc {
	return func(probe bool) keyFunc {
		return func(dst []byte, i int) []byte {
			dst = append(dst, prefix...)
			return binary.BigEndian.AppendUint32(dst, uint32(2*i+b2i(probe)))
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyBatch holds consecutive keys of a stream in one flat buffer.
type keyBatch struct {
	buf  []byte
	ends []int // key j is buf[ends[j-1]:ends[j]], with ends[-1] = 0
}

// fill replaces the batch with keys from..from+n-1 of next.
func (b *keyBatch) fill(next keyFunc, from, n int) {
	b.buf, b.ends = b.buf[:0], b.ends[:0]
	for i := from; i < from+n; i++ {
		b.buf = next(b.buf, i)
		b.ends = append(b.ends, len(b.buf))
	}
}

// probeBatch returns how many keys of b the filter may contain. It
// allocates nothing.
func probeBatch(p filterblock.Policy, filter []byte, b *keyBatch) int {
	hits, start := 0, 0
	for _, end := range b.ends {
		if p.MayContain(filter, b.buf[start:end]) {
			hits++
		}
		start = end
	}
	return hits
}

// filterResult is one row of the table.
type filterResult struct {
	policy   string
	bits     float64 // configured, or measured for a fixed policy
	fixed    bool
	k        int
	dist     string
	fpr      float64 // measured, as a fraction
	theory   float64
	bytesKey float64
	nsProbe  float64
	nsBuild  float64
}

// benchPasses is how many times each filter is built and probed; the
// fastest pass gives the timings, which makes them less sensitive to
// other load on the machine.
const benchPasses = 3

// measureFilter builds a filter with p over n keys of d and probes n
// absent keys, benchPasses times, and returns the filter, the number of
// false positives, and the fastest build and probe times.
func measureFilter(p filterblock.Policy, d keyDist, n int, b *keyBatch) (filter []byte, fp int, build, probe time.Duration) {
	build, probe = math.MaxInt64, math.MaxInt64
	for range benchPasses {
		runtime.GC() // keep earlier garbage out of the timing
		var t time.Duration
		filter, t = buildFilter(p, d, n, b)
		build = min(build, t)
	}
	for range benchPasses {
		var t time.Duration
		fp, t = probeFilter(p, filter, d, n, b)
		probe = min(probe, t)
	}
	return filter, fp, build, probe
}

// buildFilter builds a filter with p over n keys of d and returns it with
// the time spent in Add and Generate.
func buildFilter(p filterblock.Policy, d keyDist, n int, b *keyBatch) (filter []byte, elapsed time.Duration) {
	g := p.NewGenerator()
	next := d.stream(false)
	for i := 0; i < n; i += benchBatch {
		b.fill(next, i, min(benchBatch, n-i))
		start, s := time.Now(), 0
		for _, e := range b.ends {
			g.Add(b.buf[s:e])
			s = e
		}
		elapsed += time.Since(start)
	}
	start := time.Now()
	filter = g.Generate(nil)
	return filter, elapsed + time.Since(start)
}

// probeFilter probes filter with the n absent keys of d and returns the
// number of false positives and the time spent in MayContain.
func probeFilter(p filterblock.Policy, filter []byte, d keyDist, n int, b *keyBatch) (fp int, elapsed time.Duration) {
	next := d.stream(true)
	for i := 0; i < n; i += benchBatch {
		b.fill(next, i, min(benchBatch, n-i))
		start := time.Now()
		fp += probeBatch(p, filter, b)
		elapsed += time.Since(start)
	}
	return fp, elapsed
}

// runBenchFilter implements "sst bench filter": it measures the false
// positive rate, size and speed of each policy at each bits per key on
// each key distribution, and prints a markdown table.
func runBenchFilter(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("bench filter", flag.ContinueOnError)
	n := fset.Int("keys", 1_000_000, "keys per filter")
	bitsFlag := fset.String("bits", "6,8,10,12,16,20", "bits per key")
	policyFlag := fset.String("policy", "bloom,leveldb,fuse8", "policies")
	distFlag := fset.String("dist", "random16,decimal,prefix12,prefix100,seq64", "key distributions")
	plotPath := fset.String("plot", "", "plot file, .svg or .png")
	pos, err := parseArgs(fset, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("bench filter: unexpected argument %q (usage: sst bench filter [flags])", pos[0])
	}
	if *n < 1 || *n > maxBenchKeys {
		return usagef("bench filter: -keys %d out of range [1, %d]", *n, maxBenchKeys)
	}
	var bits []int
	for _, s := range strings.Split(*bitsFlag, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || b < 1 || b > maxBenchBits {
			return usagef("bench filter: -bits: bad value %q (want a comma-separated list of integers in [1, %d])", s, maxBenchBits)
		}
		if slices.Contains(bits, b) {
			return usagef("bench filter: -bits: duplicate value %d", b)
		}
		bits = append(bits, b)
	}
	slices.Sort(bits)
	policies, err := pickList("-policy", *policyFlag, benchPolicies, func(p benchPolicy) string { return p.name })
	if err != nil {
		return err
	}
	dists, err := pickList("-dist", *distFlag, benchDists, func(d keyDist) string { return d.name })
	if err != nil {
		return err
	}
	if *plotPath != "" {
		switch strings.ToLower(filepath.Ext(*plotPath)) {
		case ".svg":
		case ".png":
			if err := checkPNG(); err != nil {
				return fmt.Errorf("bench filter: -plot: %w", err)
			}
		default:
			return usagef("bench filter: -plot %q: unknown extension (want .svg or .png)", *plotPath)
		}
	}

	started := time.Now()
	total := 0
	for _, bp := range policies {
		if bp.fixed {
			total += len(dists)
		} else {
			total += len(bits) * len(dists)
		}
	}
	var results []filterResult
	var batch keyBatch
	for _, bp := range policies {
		for bi, b := range bits {
			if bp.fixed && bi > 0 {
				break
			}
			p := bp.new(b)
			k := fuseProbes
			if pp, ok := p.(filterblock.Probed); ok {
				k = pp.Probes()
			}
			for _, d := range dists {
				if el := time.Since(started); el >= progressAfter {
					what := fmt.Sprintf("%d bits/key", b)
					if bp.fixed {
						what = "(own size)"
					}
					fmt.Fprintf(stderr, "bench filter: %d/%d %s %s %s (%s elapsed)\n",
						len(results)+1, total, bp.name, what, d.name, el.Round(time.Second))
				}
				filter, fp, build, probe := measureFilter(p, d, *n, &batch)
				bpk := float64(b)
				if bp.fixed {
					bpk = float64(8*len(filter)) / float64(*n)
				}
				results = append(results, filterResult{
					policy:   bp.name,
					bits:     bpk,
					fixed:    bp.fixed,
					k:        k,
					dist:     d.name,
					fpr:      float64(fp) / float64(*n),
					theory:   bp.theory(float64(b), k),
					bytesKey: float64(len(filter)) / float64(*n),
					nsProbe:  float64(probe.Nanoseconds()) / float64(*n),
					nsBuild:  float64(build.Nanoseconds()) / float64(*n),
				})
			}
		}
	}

	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "Filter false positive rates: %d keys per filter, %d absent keys probed; times are the best of %d passes (%s, %s/%s, %d CPUs).\n\n",
		*n, *n, benchPasses, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	writeFilterTable(w, results)
	if err := w.Flush(); err != nil {
		return fmt.Errorf("bench filter: write: %w", err)
	}
	if *plotPath != "" {
		if err := savePlot(*plotPath, filterPlot(results, policies, *n)); err != nil {
			return fmt.Errorf("bench filter: -plot: %w", err)
		}
	}
	if el := time.Since(started); el >= progressAfter {
		fmt.Fprintf(stderr, "bench filter: done in %s\n", el.Round(100*time.Millisecond))
	}
	return nil
}

// pickList returns the items of all named by the comma-separated list s,
// in the list's order.
func pickList[T any](flagName, s string, all []T, name func(T) string) ([]T, error) {
	var names []string
	for _, it := range all {
		names = append(names, name(it))
	}
	var picked []T
	var seen []string
	for _, s := range strings.Split(s, ",") {
		s = strings.TrimSpace(s)
		i := slices.Index(names, s)
		switch {
		case i < 0:
			return nil, usagef("bench filter: %s: unknown value %q (want a comma-separated list of %s)", flagName, s, strings.Join(names, ", "))
		case slices.Contains(seen, s):
			return nil, usagef("bench filter: %s: duplicate value %q", flagName, s)
		}
		seen = append(seen, s)
		picked = append(picked, all[i])
	}
	return picked, nil
}

// writeFilterTable writes results as a markdown table with aligned
// columns.
func writeFilterTable(w io.Writer, results []filterResult) {
	head := []string{"policy", "bits/key", "k", "distribution", "FPR %", "theory %", "measured/theory", "bytes/key", "ns/probe", "ns/key build"}
	rows := [][]string{head}
	for _, r := range results {
		ratio := "-"
		if r.theory > 0 {
			ratio = fmt.Sprintf("%.2f", r.fpr/r.theory)
		}
		bits := strconv.FormatFloat(r.bits, 'f', -1, 64)
		if r.fixed {
			bits = fmt.Sprintf("%.2f", r.bits)
		}
		rows = append(rows, []string{
			r.policy, bits, strconv.Itoa(r.k), r.dist,
			fmt.Sprintf("%.4f", 100*r.fpr), fmt.Sprintf("%.4f", 100*r.theory), ratio,
			fmt.Sprintf("%.3f", r.bytesKey), fmt.Sprintf("%.1f", r.nsProbe), fmt.Sprintf("%.1f", r.nsBuild),
		})
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c), 3)
		}
	}
	left := func(i int) bool { return i == 0 || i == 3 } // text columns
	line := func(row []string) {
		for i, c := range row {
			if left(i) {
				fmt.Fprintf(w, "| %-*s ", width[i], c)
			} else {
				fmt.Fprintf(w, "| %*s ", width[i], c)
			}
		}
		io.WriteString(w, "|\n")
	}
	line(head)
	for i := range head {
		if left(i) {
			fmt.Fprintf(w, "|:%s", strings.Repeat("-", width[i]+1))
		} else {
			fmt.Fprintf(w, "|%s:", strings.Repeat("-", width[i]+1))
		}
	}
	io.WriteString(w, "|\n")
	for _, row := range rows[1:] {
		line(row)
	}
}

// Plot colours, one per key distribution, and the theory dash patterns,
// one per policy.
var (
	distColors  = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"}
	theoryDash  = []string{"8 4", "2 3"}
	theoryColor = "#444444"
)

// filterPlot turns results into a plot of FPR against bits per key: a
// line per policy and distribution, and a dashed theory line per policy
// evaluated at every whole bits per key along the x axis.
func filterPlot(results []filterResult, policies []benchPolicy, n int) *plot {
	pl := &plot{
		title:  fmt.Sprintf("Filter false positive rate, %d keys", n),
		xLabel: "bits per key",
		yLabel: "false positive rate (%)",
		xMin:   6, xMax: 20,
		yMin: 0.01, yMax: 100,
	}
	var dists []string
	for _, r := range results {
		pl.xMin, pl.xMax = min(pl.xMin, math.Floor(r.bits)), max(pl.xMax, math.Ceil(r.bits))
		if !slices.Contains(dists, r.dist) {
			dists = append(dists, r.dist)
		}
	}
	for pi, bp := range policies {
		for di, d := range dists {
			s := series{name: bp.name + " " + d, color: distColors[di%len(distColors)], marker: pi}
			for _, r := range results {
				if r.policy == bp.name && r.dist == d {
					s.points = append(s.points, point{r.bits, 100 * r.fpr})
				}
			}
			pl.series = append(pl.series, s)
		}
	}
	for pi, bp := range policies {
		s := series{name: bp.name + " theory", color: theoryColor, dash: theoryDash[pi%len(theoryDash)], marker: -1}
		for b := int(pl.xMin); b <= int(pl.xMax); b++ {
			k := fuseProbes
			if pp, ok := bp.new(b).(filterblock.Probed); ok {
				k = pp.Probes()
			}
			s.points = append(s.points, point{float64(b), 100 * bp.theory(float64(b), k)})
		}
		pl.series = append(pl.series, s)
	}
	return pl
}
