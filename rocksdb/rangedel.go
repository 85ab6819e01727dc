package rocksdb

import (
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// RangeDeletion is one range deletion as a table stores it: the user keys
// in [Start, End) deleted as of Seq (in the table's order: for a reverse
// bytewise table, Start is the larger key).
type RangeDeletion struct {
	Start, End []byte
	Seq        uint64
}

// RangeDeletions returns the table's range deletions in the order of its
// range deletion block (start key, then sequence number descending), as
// stored: overlapping ones are not cut. The slices are the caller's. The
// block is read at open, so the error is that of a closed table only.
func (t *Table) RangeDeletions() ([]RangeDeletion, error) {
	if t.core.Closed() {
		return nil, t.core.Named(ErrClosed)
	}
	out := make([]RangeDeletion, len(t.rangeDels))
	for i, d := range t.rangeDels {
		out[i] = RangeDeletion{Start: append([]byte(nil), d.Start...), End: append([]byte(nil), d.End...), Seq: d.Seq}
	}
	return out, nil
}

// readRangeDels reads the rocksdb.range_del block: internal keys (start
// key, sequence number, kind 0xF) to end keys.
func (t *Table) readRangeDels(core *lsmtable.Table) error {
	h, ok := t.meta[metaRangeDel]
	if !ok {
		return nil
	}
	contents, _, err := core.ReadBlock(SectionRangeDel, h)
	if err != nil {
		return err
	}
	err = eachEntry(SectionRangeDel, int64(h.Offset), contents, func(k, v []byte) error {
		user, seq, _, ok := lsmtable.SplitKey(k, lsmtable.KindsMask(KindRangeDeletion))
		if !ok {
			return format.Corruptf(SectionRangeDel, int64(h.Offset), "key %q is not a range deletion's internal key (kind 0xF)", k)
		}
		if t.hasGlobal {
			if seq != 0 {
				return format.Corruptf(SectionRangeDel, int64(h.Offset), "range deletion at sequence number %d in a table whose global sequence number replaces stored zeros", seq)
			}
			seq = t.globalSeq
		}
		t.rangeDels = append(t.rangeDels, RangeDeletion{Start: append([]byte(nil), user...), End: append([]byte(nil), v...), Seq: seq})
		return nil
	})
	if err != nil {
		return err
	}
	if t.reverse || len(t.rangeDels) == 0 {
		return nil // a reverse table is not a merge level: its spans are not cut
	}
	dels := make([]lsmtable.RangeDel, len(t.rangeDels))
	for i, d := range t.rangeDels {
		dels[i] = lsmtable.RangeDel{Start: d.Start, End: d.End, Seq: d.Seq}
	}
	core.Spans = lsmtable.Fragment(dels)
	return nil
}
