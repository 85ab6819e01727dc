package rocksdb

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
	"github.com/sstkit/sstable/internal/lsmtable"
)

// maxLevels bounds a column family's levels (RocksDB's num_levels, 7 by
// default).
const maxLevels = 64

// family is one column family as the MANIFEST's edits build it up
// (RocksDB's db/version_set.cc, VersionSet::Recover).
type family struct {
	id         uint32
	name       string
	comparator string
	logNumber  uint64 // its data in logs below this number is in its tables
	files      [maxLevels]map[uint64]lsmdb.NewFile
	blobs      map[uint64]*blobFile
}

type blobFile struct {
	number       uint64
	count, bytes uint64
	garbageCount uint64
	garbageBytes uint64
}

// versionSet is the state of a RocksDB MANIFEST.
type versionSet struct {
	families   map[uint32]*family
	lastSeq    uint64
	nextFile   uint64
	minLogKeep uint64
	prevLog    uint64
	maxFamily  uint32
	dbID       string
	has        uint64
	group      []pendingEdit // an atomic group's edits, applied once whole
}

type pendingEdit struct {
	e   lsmdb.Edit
	off int64
}

func newVersionSet() *versionSet {
	return &versionSet{families: map[uint32]*family{0: {id: 0, name: DefaultColumnFamily, blobs: map[uint64]*blobFile{}}}}
}

// record applies one MANIFEST record. The edits of an atomic group are
// held until its last arrives: a MANIFEST that ends inside a group ends
// before it, as RocksDB's recovery reads it.
func (v *versionSet) record(rec []byte, off int64) error {
	e, err := lsmdb.DecodeEdit(rec, off)
	if err != nil {
		return err
	}
	if e.InAtomicGroup {
		if len(v.group) > 0 && uint64(v.group[len(v.group)-1].e.AtomicRemain) != uint64(e.AtomicRemain)+1 {
			return format.Corruptf(lsmdb.SectionManifest, off, "atomic group: %d edits remain after one that left %d", e.AtomicRemain, v.group[len(v.group)-1].e.AtomicRemain)
		}
		v.group = append(v.group, pendingEdit{e, off})
		if e.AtomicRemain > 0 {
			return nil
		}
		group := v.group
		v.group = nil
		for _, p := range group {
			if err := v.apply(&p.e, p.off); err != nil {
				return err
			}
		}
		return nil
	}
	if len(v.group) > 0 {
		return format.Corruptf(lsmdb.SectionManifest, off, "an edit outside an atomic group before the group's last (%d remain)", v.group[len(v.group)-1].e.AtomicRemain)
	}
	return v.apply(&e, off)
}

// apply applies one version edit.
func (v *versionSet) apply(e *lsmdb.Edit, off int64) error {
	bad := func(f string, args ...any) error { return format.Corruptf(lsmdb.SectionManifest, off, f, args...) }
	v.has |= e.Has
	if e.Has&(1<<lsmdb.TagLastSequence) != 0 {
		v.lastSeq = e.LastSequence
	}
	if e.Has&(1<<lsmdb.TagNextFileNumber) != 0 {
		v.nextFile = e.NextFileNumber
	}
	if e.Has&(1<<lsmdb.TagMinLogNumberKeep) != 0 {
		v.minLogKeep = e.MinLogNumber
	}
	if e.Has&(1<<lsmdb.TagPrevLogNumber) != 0 {
		v.prevLog = e.PrevLogNumber
	}
	if e.Has&lsmdb.HasMaxCF != 0 {
		v.maxFamily = e.MaxColumnFamily
	}
	if e.DBID != "" {
		v.dbID = e.DBID
	}
	switch {
	case e.IsAddFamily:
		if _, ok := v.families[e.ColumnFamily]; ok {
			return bad("column family %d (%q) added twice", e.ColumnFamily, e.AddFamily)
		}
		v.families[e.ColumnFamily] = &family{id: e.ColumnFamily, name: e.AddFamily, blobs: map[uint64]*blobFile{}}
	case e.IsDropFamily:
		if _, ok := v.families[e.ColumnFamily]; !ok {
			return bad("column family %d dropped but never added", e.ColumnFamily)
		}
		delete(v.families, e.ColumnFamily)
		return nil
	}
	cf, ok := v.families[e.ColumnFamily]
	if !ok {
		// RocksDB skips the edits of a column family dropped before them.
		return nil
	}
	if e.Has&(1<<lsmdb.TagComparator) != 0 {
		cf.comparator = e.Comparator
	}
	if e.Has&(1<<lsmdb.TagLogNumber) != 0 {
		cf.logNumber = e.LogNumber
	}
	for _, d := range e.DeletedFiles {
		delete(cf.files[d.Level], d.Number)
	}
	for _, f := range e.NewFiles {
		if lsmtable.CompareKeys(f.Smallest, f.Largest, false) > 0 && cf.comparator != ReverseBytewiseComparator {
			return bad("table %d's smallest key sorts after its largest", f.Number)
		}
		f.Smallest = bytes.Clone(f.Smallest)
		f.Largest = bytes.Clone(f.Largest)
		if cf.files[f.Level] == nil {
			cf.files[f.Level] = map[uint64]lsmdb.NewFile{}
		}
		cf.files[f.Level][f.Number] = f
	}
	for _, b := range e.BlobAdditions {
		cf.blobs[b.Number] = &blobFile{number: b.Number, count: b.Count, bytes: b.Bytes}
	}
	for _, g := range e.BlobGarbage {
		b, ok := cf.blobs[g.Number]
		if !ok {
			return bad("garbage in blob file %d, which no edit added", g.Number)
		}
		b.garbageCount += g.Count
		b.garbageBytes += g.Bytes
	}
	return nil
}

// complete checks what recovery needs, as RocksDB's does: the next file
// number, the last sequence number and the log number.
func (v *versionSet) complete() error {
	for _, need := range []struct {
		tag  uint
		what string
	}{{lsmdb.TagNextFileNumber, "next file number"}, {lsmdb.TagLogNumber, "log number"}, {lsmdb.TagLastSequence, "last sequence number"}} {
		if v.has&(1<<need.tag) == 0 {
			return format.Corruptf(lsmdb.SectionManifest, 0, "no version edit gives the %s", need.what)
		}
	}
	return nil
}

// levels returns a family's live tables by level: level 0 newest first
// (RocksDB's order: epoch number, then largest and smallest sequence
// numbers, then file number, each descending), the others by smallest
// key, checked not to overlap.
func (cf *family) levels() ([][]lsmdb.NewFile, error) {
	var out [][]lsmdb.NewFile
	for level := range cf.files {
		if len(cf.files[level]) == 0 {
			continue
		}
		for len(out) < level {
			out = append(out, nil)
		}
		fs := make([]lsmdb.NewFile, 0, len(cf.files[level]))
		for _, f := range cf.files[level] {
			fs = append(fs, f)
		}
		if level == 0 {
			sort.Slice(fs, func(i, j int) bool {
				a, b := fs[i], fs[j]
				switch {
				case a.EpochNumber != b.EpochNumber && a.EpochNumber != 0 && b.EpochNumber != 0:
					return a.EpochNumber > b.EpochNumber
				case a.LargestSeq != b.LargestSeq:
					return a.LargestSeq > b.LargestSeq
				case a.SmallestSeq != b.SmallestSeq:
					return a.SmallestSeq > b.SmallestSeq
				}
				return a.Number > b.Number
			})
		} else {
			reverse := cf.comparator == ReverseBytewiseComparator
			sort.Slice(fs, func(i, j int) bool { return lsmtable.CompareKeys(fs[i].Smallest, fs[j].Smallest, reverse) < 0 })
			for i := 1; i < len(fs); i++ {
				if lsmtable.CompareKeys(fs[i-1].Largest, fs[i].Smallest, reverse) >= 0 {
					return nil, fmt.Errorf("%w: column family %q, level %d: tables %d and %d overlap", format.ErrCorrupt, cf.name, level, fs[i-1].Number, fs[i].Number)
				}
			}
		}
		out = append(out, fs)
	}
	return out, nil
}

// hasFiles reports whether the family has live tables.
func (cf *family) hasFiles() bool {
	for _, l := range cf.files {
		if len(l) > 0 {
			return true
		}
	}
	return false
}
