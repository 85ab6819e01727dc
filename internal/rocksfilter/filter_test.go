package rocksfilter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sstkit/sstable/format"
)

// genKeys returns n distinct keys, sorted: first the empty key, 0x00,
// 0xff and other edge keys, then a mix of 12-digit decimal keys, short
// random keys heavy in 0x00, 0x80 and 0xff bytes, and a few long keys
// (hashed by XXPH3's longer paths).
func genKeys(n int, seed uint64) [][]byte {
	special := [][]byte{
		{}, {0x00}, {0xff}, {0x00, 0x00}, {0xff, 0xff, 0xff},
		bytes.Repeat([]byte{0x00}, 9), bytes.Repeat([]byte{0xff}, 9),
		[]byte("abc"), []byte("abcdefgh12345678"), {0x80, 0x81, 0xfe},
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	seen := map[string]bool{}
	var keys [][]byte
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	for _, k := range special {
		if len(keys) == n {
			break
		}
		add(k)
	}
	for len(keys) < n {
		add(randKey(r))
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

func randKey(r *rand.Rand) []byte {
	switch v := r.IntN(100); {
	case v < 45:
		return fmt.Appendf(nil, "%012d", r.Int64N(1e12))
	case v < 98:
		k := make([]byte, 1+r.IntN(24))
		for i := range k {
			switch r.IntN(4) {
			case 0:
				k[i] = 0x00
			case 1:
				k[i] = 0xff
			case 2:
				k[i] = 0x80 + byte(r.IntN(3))
			default:
				k[i] = byte(r.Uint32())
			}
		}
		return k
	default:
		k := make([]byte, 100+r.IntN(1200))
		for i := range k {
			k[i] = byte(r.Uint32())
		}
		return k
	}
}

// genAbsent returns at least n keys not in keys (which is sorted):
// neighbours of the keys (a 0x00 appended, the last byte changed, the
// last byte dropped) and fresh random keys, so that most lie within the
// table's key range.
func genAbsent(keys [][]byte, n int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0xab5e))
	present := map[string]bool{}
	for _, k := range keys {
		present[string(k)] = true
	}
	seen := map[string]bool{}
	var out [][]byte
	add := func(k []byte) {
		if !present[string(k)] && !seen[string(k)] {
			seen[string(k)] = true
			out = append(out, k)
		}
	}
	for len(out) < n {
		if len(keys) > 0 && r.IntN(2) == 0 {
			k := keys[r.IntN(len(keys))]
			switch r.IntN(3) {
			case 0:
				add(append(slices.Clip(k), 0))
			case 1:
				if len(k) > 0 {
					c := slices.Clone(k)
					c[len(c)-1] += byte(1 + r.IntN(255))
					add(c)
				}
			default:
				if len(k) > 0 {
					add(slices.Clone(k[:len(k)-1]))
				}
			}
			continue
		}
		add(randKey(r))
	}
	return out
}

// filterCase is one table of the matrix.
type filterCase struct {
	spec tableSpec
	n    int    // keys
	want string // expected variant name; "" when it depends on the key count
}

func fullFilterCases() []filterCase {
	var cs []filterCase
	add := func(fv int, policy string, want string, bpks []float64, ns []int) {
		for _, bpk := range bpks {
			for _, n := range ns {
				cs = append(cs, filterCase{tableSpec{fv: fv, policy: policy, bpk: bpk, wkf: true}, n, want})
			}
		}
	}
	small := []int{1, 2, 100, 10000}
	add(5, "bloom", "FastLocalBloom", []float64{1, 4.4, 9.9, 16, 24.5}, small)
	add(5, "bloom", "FastLocalBloom", []float64{9.9}, []int{100000})
	add(4, "bloom", "LegacyBloom", []float64{1, 9.9, 16}, small)
	add(4, "bloom", "LegacyBloom", []float64{10}, []int{100000})
	add(3, "bloom", "LegacyBloom", []float64{9.9}, []int{2, 10000})
	add(2, "bloom", "LegacyBloom", []float64{7}, []int{2, 10000})
	add(5, "ribbon", "", []float64{1, 6.5, 9.9, 20}, []int{1, 2, 100})
	add(5, "ribbon", "Ribbon", []float64{1, 6.5, 9.9, 20}, []int{10000})
	add(5, "ribbon", "Ribbon", []float64{9.9}, []int{100000})
	add(4, "ribbon", "", []float64{9.9}, []int{100, 10000})
	return cs
}

// minAbsent is the number of absent keys each table is probed with.
const minAbsent = 10000

// TestFullFiltersAgainstRocksDB writes tables with RocksDB's
// SstFileWriter over the matrix of filter policies, format versions, bits
// per key and key counts, reads their full filter blocks, and requires
// every added key to match and every answer, for the added keys and for
// at least 10,000 absent ones, to equal RocksDB's own filter reader's
// over the same bytes.
func TestFullFiltersAgainstRocksDB(t *testing.T) {
	o := newOracle(t)
	for i, c := range fullFilterCases() {
		t.Run(fmt.Sprintf("%s/%dkeys", c.spec, c.n), func(t *testing.T) {
			keys := genKeys(c.n, uint64(i))
			tb := readTable(t, o.write(t, c.spec, keys))
			if !tb.filterOK || tb.part {
				t.Fatalf("no full filter block in the metaindex: %v", tb.meta)
			}
			contents := tb.raw(t, tb.filter)
			f, known, err := Parse(contents, int64(tb.filter.off))
			if err != nil || !known {
				t.Fatalf("Parse: known %v, %v", known, err)
			}
			if c.want != "" && f.Name() != c.want {
				t.Fatalf("variant %s, want %s", f.Name(), c.want)
			}
			absent := genAbsent(keys, minAbsent, uint64(i))
			probes := append(slices.Clip(keys), absent...)
			ans := o.readerAnswers(t, contents, probes)
			fp := 0
			for j, k := range probes {
				got := f.MayContain(k)
				if j < len(keys) && !got {
					t.Fatalf("added key %x: MayContain false", k)
				}
				if got != ans[j] {
					t.Fatalf("key %x (added %v): MayContain %v, RocksDB's reader %v", k, j < len(keys), got, ans[j])
				}
				if j >= len(keys) && got {
					fp++
				}
			}
			t.Logf("%s, %d probes, %d bytes: %d added keys match; %d absent, %.3f%% false positives; all equal to RocksDB's reader",
				f.Name(), f.Probes(), len(contents), len(keys), len(absent), 100*float64(fp)/float64(len(absent)))
		})
	}
}

// TestEdgeEncodingsAgainstRocksDB feeds RocksDB's reader and Parse the
// encodings that are not built filters: empty and short filters, the
// always-true marker, reserved markers and metadata fields, a legacy
// Bloom filter with 128-byte lines (as RocksDB on POWER writes), Ribbon
// filters of too few blocks or columns, and requires equal answers.
func TestEdgeEncodingsAgainstRocksDB(t *testing.T) {
	o := newOracle(t)
	probes := genAbsent(nil, 2000, 7)
	bits := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + i>>3)
		}
		return b
	}
	meta := func(data []byte, m ...byte) []byte { return append(slices.Clip(data), m...) }
	cases := []struct {
		name     string
		contents []byte
		want     string
		known    bool
	}{
		{"empty", nil, "AlwaysFalse", true},
		{"one byte", []byte{0xff}, "AlwaysFalse", true},
		{"five bytes", []byte{0xff, 0, 6, 0, 0}, "AlwaysFalse", true},
		{"always true", make([]byte, 6), "AlwaysTrue", true},
		{"zero marker", meta(bits(64), 0, 1, 2, 3, 4), "AlwaysTrue", true},
		{"marker -3", meta(bits(64), 0xfd, 0, 6, 0, 0), "AlwaysTrue", false},
		{"marker -128", meta(bits(64), 0x80, 0, 6, 0, 0), "AlwaysTrue", false},
		{"bloom sub-implementation 1", meta(bits(64), 0xff, 1, 6, 0, 0), "AlwaysTrue", false},
		{"bloom 128-byte blocks", meta(bits(128), 0xff, 0, 0x20|6, 0, 0), "AlwaysTrue", false},
		{"bloom 0 probes", meta(bits(64), 0xff, 0, 0, 0, 0), "AlwaysTrue", false},
		{"bloom 31 probes", meta(bits(64), 0xff, 0, 31, 0, 0), "AlwaysTrue", false},
		{"bloom reserved bytes", meta(bits(64), 0xff, 0, 6, 1, 0), "AlwaysTrue", false},
		{"bloom 30 probes", meta(bits(192), 0xff, 0, 30, 0, 0), "FastLocalBloom", true},
		{"bloom 1 probe", meta(bits(192), 0xff, 0, 1, 0, 0), "FastLocalBloom", true},
		{"ribbon 0 blocks", meta(bits(64), 0xfe, 3, 0, 0, 0), "AlwaysTrue", false},
		{"ribbon 1 block", meta(bits(64), 0xfe, 3, 1, 0, 0), "AlwaysTrue", false},
		{"ribbon 2 blocks 1 segment", meta(bits(16), 0xfe, 3, 2, 0, 0), "Ribbon", true},
		{"ribbon 3 blocks 7 segments", meta(bits(112), 0xfe, 200, 3, 0, 0), "Ribbon", true},
		{"ribbon 2 blocks 80 segments", meta(bits(1280), 0xfe, 255, 2, 0, 0), "Ribbon", true},
		{"ribbon 300 blocks", meta(bits(16*1000), 0xfe, 1, 0x2c, 1, 0), "Ribbon", true},
		{"legacy 128-byte lines", meta(bits(3*128), 6, 3, 0, 0, 0), "LegacyBloom", true},
		{"legacy 1-byte lines", meta(bits(5), 2, 5, 0, 0, 0), "LegacyBloom", true},
		{"legacy 127 probes", meta(bits(64), 127, 1, 0, 0, 0), "LegacyBloom", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, known, err := Parse(c.contents, 100)
			if err != nil {
				t.Fatal(err)
			}
			if known != c.known || f.Name() != c.want {
				t.Fatalf("Parse: %s known %v, want %s known %v", f.Name(), known, c.want, c.known)
			}
			ans := o.readerAnswers(t, c.contents, probes)
			yes := 0
			for j, k := range probes {
				if got := f.MayContain(k); got != ans[j] {
					t.Fatalf("probe %x: MayContain %v, RocksDB's reader %v", k, got, ans[j])
				} else if got {
					yes++
				}
			}
			t.Logf("%d of %d probes match, as RocksDB", yes, len(probes))
		})
	}
}

// TestArbitraryBitsAgainstRocksDB queries filters whose bits are random
// (not built from keys, so that about half of each probe's bits are set)
// with well-formed metadata of each variant, against RocksDB's reader.
func TestArbitraryBitsAgainstRocksDB(t *testing.T) {
	o := newOracle(t)
	r := rand.New(rand.NewPCG(3, 4))
	probes := genAbsent(nil, 4000, 9)
	for i := 0; i < 24; i++ {
		var contents []byte
		switch i % 3 {
		case 0: // FastLocalBloom, 1 to 4 probes so that some keys pass
			contents = make([]byte, 64*(1+r.IntN(40)))
			contents = append(contents, 0xff, 0, byte(1+r.IntN(4)), 0, 0)
		case 1: // Ribbon over 2 to 60 blocks, 0 to 4 columns (some to 40)
			blocks := 2 + r.IntN(59)
			cols := 4
			if i%4 == 1 {
				cols = 40
			}
			contents = make([]byte, 16*(1+r.IntN(blocks*cols)))
			contents = append(contents, 0xfe, byte(r.IntN(256)), byte(blocks), 0, 0)
		case 2: // legacy Bloom, 64-byte lines, 1 to 4 probes
			lines := 1 + r.IntN(40)
			contents = make([]byte, 64*lines)
			contents = append(contents, byte(1+r.IntN(4)), byte(lines), 0, 0, 0)
		}
		for j := range len(contents) - metaLen {
			contents[j] = byte(r.Uint32())
		}
		f, known, err := Parse(contents, 0)
		if err != nil || !known {
			t.Fatalf("case %d: Parse: known %v, %v", i, known, err)
		}
		ans := o.readerAnswers(t, contents, probes)
		yes := 0
		for j, k := range probes {
			if got := f.MayContain(k); got != ans[j] {
				t.Fatalf("case %d (%s, %d bytes): probe %x: MayContain %v, RocksDB's reader %v", i, f.Name(), len(contents), k, got, ans[j])
			} else if got {
				yes++
			}
		}
		t.Logf("case %d: %s, %d bytes: %d of %d probes match, as RocksDB", i, f.Name(), len(contents), yes, len(probes))
	}
}

// TestParseCorrupt checks the encodings Parse refuses: errors that wrap
// format.ErrCorrupt and point at the metadata.
func TestParseCorrupt(t *testing.T) {
	meta := func(n int, m ...byte) []byte { return append(make([]byte, n), m...) }
	cases := []struct {
		name     string
		contents []byte
	}{
		{"bloom under one line", meta(63, 0xff, 0, 6, 0, 0)},
		{"bloom partial line", meta(100, 0xff, 0, 6, 0, 0)},
		{"ribbon partial segment", meta(40, 0xfe, 0, 2, 0, 0)},
		{"ribbon under one segment", meta(8, 0xfe, 0, 2, 0, 0)},
		{"legacy 0 lines", meta(64, 6, 0, 0, 0, 0)},
		{"legacy lines do not divide", meta(100, 6, 3, 0, 0, 0)},
		{"legacy line not a power of two", meta(3*96, 6, 3, 0, 0, 0)},
		{"legacy more lines than bytes", meta(64, 6, 65, 0, 0, 0)},
		{"legacy lines wrap 32 bits", meta(64, 6, 1, 0, 0, 4)},
	}
	for _, c := range cases {
		f, known, err := Parse(c.contents, 1000)
		var ce *format.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, format.ErrCorrupt) {
			t.Errorf("%s: Parse = %s known %v, err %v; want a CorruptError", c.name, f.Name(), known, err)
			continue
		}
		if want := int64(1000 + len(c.contents) - metaLen); ce.Offset < want || ce.Section != Section {
			t.Errorf("%s: error at %s offset %d, want %s at or after %d (the metadata)", c.name, ce.Section, ce.Offset, Section, want)
		}
	}
}

// TestNoKeysNoFilter: a table with no point keys (SstFileWriter refuses
// to finish one with nothing in it; here a range deletion alone) has no
// filter block at all, for every policy, full or partitioned.
func TestNoKeysNoFilter(t *testing.T) {
	o := newOracle(t)
	for _, spec := range []tableSpec{
		{fv: 5, policy: "bloom", bpk: 10, wkf: true},
		{fv: 4, policy: "bloom", bpk: 10, wkf: true},
		{fv: 5, policy: "ribbon", bpk: 10, wkf: true},
		{fv: 5, policy: "bloom", bpk: 10, wkf: true, part: true, mbs: 4096},
	} {
		tb := readTable(t, o.write(t, spec, nil))
		if tb.filterOK {
			t.Errorf("%s: a table of no keys has a filter block at %+v", spec, tb.filter)
		}
		if _, ok := tb.meta["rocksdb.range_del"]; !ok {
			t.Errorf("%s: no range deletion block: %v", spec, tb.meta)
		}
	}
}
