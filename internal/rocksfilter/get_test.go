package rocksfilter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// prefixFn is a table's prefix extractor: the prefix of a key and
// whether the key is in the extractor's domain (RocksDB's
// SliceTransform::Transform and InDomain).
type prefixFn func(k []byte) ([]byte, bool)

// prefixOf returns the extractor spec names: fixed:N (keys of N bytes or
// more, their first N) and capped:N (every key, its first N bytes or
// fewer).
func prefixOf(t *testing.T, spec string) prefixFn {
	kind, n, ok := strings.Cut(spec, ":")
	if spec == "" || spec == "none" {
		return nil
	}
	size, err := strconv.Atoi(n)
	if !ok || err != nil {
		t.Fatalf("bad prefix spec %q", spec)
	}
	switch kind {
	case "fixed":
		return func(k []byte) ([]byte, bool) {
			if len(k) < size {
				return nil, false
			}
			return k[:size], true
		}
	case "capped":
		return func(k []byte) ([]byte, bool) { return k[:min(len(k), size)], true }
	}
	t.Fatalf("bad prefix spec %q", spec)
	return nil
}

// tableFilter is a table's filter as a reader would use it: one full
// filter, or the partitions and the top-level index that locates them.
type tableFilter struct {
	full      Filter
	parts     []partition
	partF     []Filter
	userKeys  bool // partition separators are user keys, else internal keys
	partition func(u []byte) int
}

// loadFilter parses the table's filter (failing t on any error or
// unknown variant).
func loadFilter(t *testing.T, tb *table) *tableFilter {
	t.Helper()
	if !tb.filterOK {
		t.Fatalf("no filter in the metaindex: %v", tb.meta)
	}
	tf := &tableFilter{}
	if !tb.part {
		f, known, err := Parse(tb.raw(t, tb.filter), int64(tb.filter.off))
		if err != nil || !known {
			t.Fatalf("Parse: known %v, %v", known, err)
		}
		tf.full = f
		return tf
	}
	tf.parts = tb.partitions(t)
	tf.userKeys = tb.propUint(t, "rocksdb.index.key.is.user.key") != 0
	for i, p := range tf.parts {
		f, known, err := Parse(tb.raw(t, p.handle), int64(p.handle.off))
		if err != nil || !known {
			t.Fatalf("partition %d: Parse: known %v, %v", i, known, err)
		}
		tf.partF = append(tf.partF, f)
	}
	return tf
}

// partitionOf returns the partition whose filter RocksDB asks for user
// key u (PartitionedFilterBlockReader::GetFilterPartitionHandle): the
// first whose separator is at or after the lookup key, else the last.
// With internal-key separators, the lookup key (u, sequence number of the
// read) sorts after a separator of user key u only when the separator
// has the largest sequence number, as shortened separators do.
func (tf *tableFilter) partitionOf(u []byte) int {
	i, _ := slices.BinarySearchFunc(tf.parts, u, func(p partition, u []byte) int {
		if tf.userKeys {
			return bytes.Compare(p.key, u)
		}
		c := bytes.Compare(p.key[:len(p.key)-8], u)
		if c == 0 && binary.LittleEndian.Uint64(p.key[len(p.key)-8:])>>8 == 1<<56-1 {
			return -1
		}
		return c
	})
	return min(i, len(tf.parts)-1)
}

// mayContain asks the filter RocksDB would ask for user key u about q (u
// itself or its prefix).
func (tf *tableFilter) mayContain(u, q []byte) bool {
	if tf.parts == nil {
		return tf.full.MayContain(q)
	}
	return tf.partF[tf.partitionOf(u)].MayContain(q)
}

func (tf *tableFilter) name() string {
	if tf.parts == nil {
		return tf.full.Name()
	}
	names := map[string]int{}
	for _, f := range tf.partF {
		names[f.Name()]++
	}
	return fmt.Sprintf("%d partitions %v", len(tf.parts), names)
}

func getCases() []filterCase {
	wk := func(fv int, policy string, bpk float64, prefix string, wkf bool, mbs int) tableSpec {
		return tableSpec{fv: fv, policy: policy, bpk: bpk, prefix: prefix, wkf: wkf, part: mbs > 0, mbs: mbs}
	}
	return []filterCase{
		{wk(5, "bloom", 9.9, "", true, 0), 10000, ""},
		{wk(5, "ribbon", 9.9, "", true, 0), 10000, ""},
		{wk(4, "bloom", 10, "", true, 0), 10000, ""},
		{wk(5, "bloom", 9.9, "fixed:3", true, 0), 10000, ""},
		{wk(5, "bloom", 9.9, "fixed:3", false, 0), 10000, ""},
		{wk(5, "bloom", 9.9, "capped:3", true, 0), 10000, ""},
		{wk(5, "ribbon", 9.9, "capped:3", false, 0), 10000, ""},
		{wk(4, "bloom", 10, "fixed:3", false, 0), 10000, ""},
		{wk(5, "bloom", 9.9, "", true, 256), 30000, ""},
		{wk(5, "ribbon", 9.9, "", true, 1024), 30000, ""},
		{wk(4, "bloom", 10, "", true, 256), 30000, ""},
		{wk(3, "bloom", 10, "", true, 256), 30000, ""},
		{wk(2, "bloom", 10, "", true, 256), 30000, ""},
		{wk(5, "bloom", 9.9, "fixed:3", false, 256), 30000, ""},
		{wk(5, "ribbon", 9.9, "capped:3", true, 512), 30000, ""},
		{wk(4, "bloom", 10, "capped:3", false, 256), 30000, ""},
	}
}

// TestGetAgainstRocksDB ingests tables into a RocksDB database and Gets
// present keys and at least 10,000 absent ones; RocksDB's filter tickers
// say for each Get whether the table's filter was asked and whether it
// excluded the key. The query this package's reader is to make, the whole
// user key when whole_key_filtering is set, else the prefix when the key
// is in the extractor's domain, asked of the full filter or of the
// partition the top-level index gives, must give the same answer on
// every probe within the table's key range.
func TestGetAgainstRocksDB(t *testing.T) {
	o := newOracle(t)
	for i, c := range getCases() {
		t.Run(fmt.Sprintf("%s/%dkeys", c.spec, c.n), func(t *testing.T) {
			keys := genKeys(c.n, uint64(100+i))
			path := o.write(t, c.spec, keys)
			tb := readTable(t, path)
			tf := loadFilter(t, tb)
			pfx := prefixOf(t, c.spec.prefix)
			absent := genAbsent(keys, minAbsent, uint64(100+i))
			present := keys[:min(len(keys), 2000)]
			probes := append(slices.Clip(present), absent...)
			ans := o.getAnswers(t, path, c.spec, probes)
			first, last := keys[0], keys[len(keys)-1]
			asked, excluded := 0, 0
			for j, u := range probes {
				a := ans[j]
				if a.found != (j < len(present)) {
					t.Fatalf("key %x: found %v by RocksDB", u, a.found)
				}
				// RocksDB 7.8.3 ticks BLOOM_FILTER_USEFUL when the filter
				// excluded the key, else BLOOM_FILTER_FULL_POSITIVE, for
				// every Get that reaches the table (in its key range), the
				// prefix filter's answers included; newer versions tick
				// the BLOOM_FILTER_PREFIX_* pair for those.
				rCalled := a.useful+a.positive+a.prefixChecked > 0
				rMay := a.useful == 0 && a.prefixUseful == 0
				q, inDomain := u, true
				if pfx != nil && !c.spec.wkf {
					q, inDomain = pfx(u)
				}
				inRange := bytes.Compare(u, first) >= 0 && bytes.Compare(u, last) <= 0
				if rCalled != inRange && (c.spec.wkf || inDomain) {
					t.Fatalf("key %x: RocksDB's table reader called: %v (tickers %+v), want %v", u, rCalled, a, inRange)
				}
				if !inRange || !c.spec.wkf && !inDomain {
					if !rMay {
						t.Fatalf("key %x: excluded by RocksDB without a filter query (tickers %+v)", u, a)
					}
					continue
				}
				asked++
				if got := tf.mayContain(u, q); got != rMay {
					t.Fatalf("key %x (query %x, present %v): MayContain %v, RocksDB's Get %v", u, q, j < len(present), got, rMay)
				}
				if !rMay {
					excluded++
				}
			}
			if asked-len(present) < minAbsent*7/10 {
				t.Fatalf("only %d absent probes reached the filter", asked-len(present))
			}
			t.Logf("%s: %d Gets asked the filter (%d present keys, %d absent), %d excluded; every answer equal to RocksDB's",
				tf.name(), asked, len(present), asked-len(present), excluded)
		})
	}
}

// TestPrefixFilterContents establishes what RocksDB adds to a filter with
// a prefix extractor: with whole_key_filtering, each key and each prefix
// of a key in the domain; without, only the prefixes. Every such string
// must match; whole keys that are nobody's prefix must, without
// whole_key_filtering, match no more often than absent strings do (the
// false positive rate), so they were not added.
func TestPrefixFilterContents(t *testing.T) {
	o := newOracle(t)
	for i, c := range getCases() {
		if c.spec.prefix == "" {
			continue
		}
		t.Run(fmt.Sprintf("%s/%dkeys", c.spec, c.n), func(t *testing.T) {
			keys := genKeys(c.n, uint64(200+i))
			tb := readTable(t, o.write(t, c.spec, keys))
			tf := loadFilter(t, tb)
			pfx := prefixOf(t, c.spec.prefix)
			prefixes := map[string]bool{}
			for _, k := range keys {
				if p, ok := pfx(k); ok {
					prefixes[string(p)] = true
				}
			}
			var wholeOnly, wholeOnlyMatch, outside, outsideMatch int
			for _, k := range keys {
				p, ok := pfx(k)
				if ok && !tf.mayContain(k, p) {
					t.Fatalf("key %x: its prefix %x does not match", k, p)
				}
				if c.spec.wkf {
					if !tf.mayContain(k, k) {
						t.Fatalf("key %x does not match with whole_key_filtering", k)
					}
					continue
				}
				if !prefixes[string(k)] {
					wholeOnly++
					if tf.mayContain(k, k) {
						wholeOnlyMatch++
					}
				}
			}
			// Strings never added: absent keys that are nobody's prefix.
			for _, k := range genAbsent(keys, minAbsent, uint64(300+i)) {
				if !prefixes[string(k)] && (tf.parts == nil || len(k) > 0) {
					outside++
					if tf.mayContain(k, k) {
						outsideMatch++
					}
				}
			}
			fpr := float64(outsideMatch) / float64(outside)
			t.Logf("%s: %d distinct prefixes match; strings never added match at %.2f%% (%d)", tf.name(), len(prefixes), 100*fpr, outside)
			if !c.spec.wkf {
				rate := float64(wholeOnlyMatch) / float64(wholeOnly)
				t.Logf("without whole_key_filtering, %d of %d whole keys (%.2f%%) match", wholeOnlyMatch, wholeOnly, 100*rate)
				if rate > 2*fpr+0.01 {
					t.Errorf("whole keys match at %.2f%%, absent strings at %.2f%%: whole keys were added", 100*rate, 100*fpr)
				}
			}
		})
	}
}

// TestPartitionLayout checks the partitions of partitioned filters: each
// parses, each key matches in the partition the top-level index gives
// for it, and, with a prefix extractor, which partitions hold the
// prefixes of the keys on either side of a partition boundary. Three
// partitions of each table are also compared with RocksDB's reader.
func TestPartitionLayout(t *testing.T) {
	o := newOracle(t)
	for i, c := range getCases() {
		if !c.spec.part {
			continue
		}
		t.Run(fmt.Sprintf("%s/%dkeys", c.spec, c.n), func(t *testing.T) {
			keys := genKeys(c.n, uint64(400+i))
			tb := readTable(t, o.write(t, c.spec, keys))
			if !tb.part {
				t.Fatalf("no partitioned filter in the metaindex: %v", tb.meta)
			}
			tf := loadFilter(t, tb)
			pfx := prefixOf(t, c.spec.prefix)
			// first[i] is the first key whose partition is i.
			firstIdx := make([]int, len(tf.parts))
			for j := range firstIdx {
				firstIdx[j] = -1
			}
			for j, k := range keys {
				p := tf.partitionOf(k)
				if firstIdx[p] < 0 {
					firstIdx[p] = j
				}
				if c.spec.wkf && !tf.partF[p].MayContain(k) {
					t.Fatalf("key %x does not match in its partition %d", k, p)
				}
				if pk, ok := pfxOK(pfx, k); ok && !tf.partF[p].MayContain(pk) {
					t.Fatalf("key %x: prefix %x does not match in its partition %d", k, pk, p)
				}
			}
			var nextIn, prevIn, boundaries int
			for p := 1; p < len(tf.parts); p++ {
				j := firstIdx[p]
				if j <= 0 || pfx == nil {
					continue
				}
				next, ok1 := pfx(keys[j])
				prev, ok2 := pfx(keys[j-1])
				if !ok1 || !ok2 || bytes.Equal(next, prev) {
					continue
				}
				boundaries++
				if tf.partF[p-1].MayContain(next) {
					nextIn++
				}
				if tf.partF[p].MayContain(prev) {
					prevIn++
				}
			}
			sep := "user keys"
			if !tf.userKeys {
				sep = "internal keys"
			}
			t.Logf("%s, separators %s", tf.name(), sep)
			if boundaries > 0 {
				t.Logf("at %d boundaries between different prefixes: the next partition's first prefix matches in the partition before at %d, the partition before's last prefix in the next at %d",
					boundaries, nextIn, prevIn)
				if nextIn != boundaries {
					t.Errorf("the next partition's first prefix is missing from %d partitions", boundaries-nextIn)
				}
			}
			if pfx != nil && !c.spec.wkf {
				// RocksDB 7.8.3 adds, at the start of each partition but
				// the first, the last prefix it recorded, which without
				// whole_key_filtering it never records: the empty string.
				empty := 0
				for p := 1; p < len(tf.partF); p++ {
					if tf.partF[p].MayContain(nil) {
						empty++
					}
				}
				t.Logf("the empty string matches in %d of the %d partitions after the first", empty, len(tf.partF)-1)
			}
			probes := append(slices.Clip(keys[:min(len(keys), 3000)]), genAbsent(keys, 3000, uint64(500+i))...)
			for _, p := range []int{0, len(tf.parts) / 2, len(tf.parts) - 1} {
				ans := o.readerAnswers(t, tb.raw(t, tf.parts[p].handle), probes)
				for j, k := range probes {
					if got := tf.partF[p].MayContain(k); got != ans[j] {
						t.Fatalf("partition %d, probe %x: MayContain %v, RocksDB's reader %v", p, k, got, ans[j])
					}
				}
			}
		})
	}
}

func pfxOK(pfx prefixFn, k []byte) ([]byte, bool) {
	if pfx == nil {
		return nil, false
	}
	return pfx(k)
}
