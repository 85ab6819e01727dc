package rocksdb

import (
	"strconv"
	"strings"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
	"github.com/sstkit/sstable/internal/rocksfilter"
)

// Filter properties (table/block_based/block_based_table_factory.cc,
// table/table_properties.cc).
const (
	propWholeKeyFiltering = "rocksdb.block.based.table.whole.key.filtering"
	propPrefixFiltering   = "rocksdb.block.based.table.prefix.filtering"
	propPrefixExtractor   = "rocksdb.prefix.extractor.name"
	propFilterPolicy      = "rocksdb.filter.policy"
)

// tableFilter is a table's full or partitioned filter, with what RocksDB
// added to it: whole user keys, or the prefixes the table's prefix
// extractor took from them, or both.
type tableFilter struct {
	name     string // the metaindex key
	full     rocksfilter.Filter
	parts    []rocksfilter.Filter // a partitioned filter's partitions
	seps     lsmtable.Index       // their separators (handles unused)
	wholeKey bool
	prefix   func([]byte) ([]byte, bool) // nil: no prefix filtering
	reverse  bool
}

// mayContainKey reports whether a table may hold user key key: false only
// when the filter certainly excludes what RocksDB would have added for
// it (table/block_based/full_filter_block.cc, KeyMayMatch): the whole key
// when whole-key filtering is on, else its prefix when the key is in the
// prefix extractor's domain. Anything else may match.
func (f *tableFilter) mayContainKey(key []byte) bool {
	probe := key
	if !f.wholeKey {
		if f.prefix == nil {
			return true
		}
		p, ok := f.prefix(key)
		if !ok {
			return true
		}
		probe = p
	}
	if f.parts == nil {
		return f.full.MayContain(probe)
	}
	var buf [64]byte
	seek := lsmtable.AppendSeekKey(buf[:0], key, lsmtable.MaxSequence)
	i := f.seps.Search(seek)
	if i >= len(f.parts) {
		return true
	}
	return f.parts[i].MayContain(probe)
}

// prefixExtractor returns the prefix function RocksDB's built-in
// extractor named name takes (util/slice.cc): "rocksdb.FixedPrefix.N"
// (the first N bytes of keys of at least N bytes; shorter keys are out
// of its domain) or "rocksdb.CappedPrefix.N" (at most the first N
// bytes). nil for any other.
func prefixExtractor(name string) func([]byte) ([]byte, bool) {
	for _, p := range []struct {
		prefix string
		capped bool
	}{{"rocksdb.FixedPrefix.", false}, {"rocksdb.CappedPrefix.", true}} {
		rest, ok := strings.CutPrefix(name, p.prefix)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil
		}
		if p.capped {
			return func(k []byte) ([]byte, bool) { return k[:min(n, len(k))], true }
		}
		return func(k []byte) ([]byte, bool) {
			if len(k) < n {
				return nil, false
			}
			return k[:n], true
		}
	}
	return nil
}

// readFilter reads the table's filter, when it has one this package
// knows: a full filter, or a partitioned one (every partition read at
// open). An unknown filter is skipped: the table is read without one.
func (t *Table) readFilter(core *lsmtable.Table) error {
	var name string
	var h format.BlockHandle
	partitioned := false
	for _, n := range t.metaNames {
		switch {
		case strings.HasPrefix(n, filterFull):
			name, h = n, t.meta[n]
		case strings.HasPrefix(n, filterPartition):
			name, h, partitioned = n, t.meta[n], true
		}
		if name != "" {
			break
		}
	}
	if name == "" {
		return nil
	}
	f := &tableFilter{name: name, wholeKey: true, reverse: t.reverse}
	if v, ok := t.propMap[propWholeKeyFiltering]; ok {
		f.wholeKey = string(v) != "0"
	}
	prefixOn := true
	if v, ok := t.propMap[propPrefixFiltering]; ok {
		prefixOn = string(v) != "0"
	}
	if prefixOn {
		f.prefix = prefixExtractor(string(t.propMap[propPrefixExtractor]))
	}
	if !f.wholeKey && f.prefix == nil {
		return nil // what was added cannot be derived from a key here
	}
	if !partitioned {
		contents, _, err := core.ReadBlock(SectionFilter, h)
		if err != nil {
			return err
		}
		flt, known, err := rocksfilter.Parse(contents, int64(h.Offset))
		if err != nil {
			return err
		}
		if !known {
			return nil
		}
		f.full = flt
	} else {
		top, _, err := core.ReadBlock(SectionFilterIndex, h)
		if err != nil {
			return err
		}
		var fmtIdx indexFormat
		userKeys, _ := t.NumericProperty(propIndexKeyIsUserKey)
		delta, _ := t.NumericProperty(propIndexValueDeltaEncoded)
		fmtIdx.userKeys, fmtIdx.delta = userKeys != 0, delta != 0
		f.seps.SetReverse(t.reverse)
		var handles []format.BlockHandle
		limit := uint64(t.footer.offset)
		err = decodeIndex(SectionFilterIndex, int64(h.Offset), top, fmtIdx, func(sep []byte, ph format.BlockHandle) error {
			// The index keeps only the separators (their order checked);
			// the partitions' handles are kept beside it.
			if err := f.seps.Append(sep, format.BlockHandle{Offset: uint64(len(handles)) * format.BlockTrailerLen}, limit); err != nil {
				return format.Corruptf(SectionFilterIndex, int64(h.Offset), "%v", err)
			}
			handles = append(handles, ph)
			return nil
		})
		if err != nil {
			return err
		}
		f.seps.Finish()
		for _, ph := range handles {
			contents, _, err := core.ReadBlock(SectionFilter, ph)
			if err != nil {
				return err
			}
			flt, known, err := rocksfilter.Parse(contents, int64(ph.Offset))
			if err != nil {
				return err
			}
			if !known {
				return nil
			}
			f.parts = append(f.parts, flt)
		}
		if f.parts == nil {
			f.parts = []rocksfilter.Filter{}
		}
	}
	t.filter = f
	core.KeyFilter = f.mayContainKey
	return nil
}
