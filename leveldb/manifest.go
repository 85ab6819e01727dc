package leveldb

import (
	"errors"
	"fmt"
	"sort"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/lsmdb"
)

// NumLevels is the number of levels in a LevelDB database (config::
// kNumLevels).
const NumLevels = 7

// BytewiseComparator is the name of LevelDB's default comparator, which
// orders user keys as bytes.Compare; the only one this package reads.
const BytewiseComparator = "leveldb.BytewiseComparator"

// SectionManifest names a MANIFEST's version edits in corruption errors.
const SectionManifest = lsmdb.SectionManifest

// ErrRocksDB is wrapped by the error OpenDB returns for a RocksDB
// database directory (its MANIFEST holds edits LevelDB never writes):
// package rocksdb reads it. The error wraps format.ErrCorrupt too, as
// ErrNotTable's does: to LevelDB, such a MANIFEST is not its own.
var ErrRocksDB = errors.New("leveldb: a RocksDB database, not LevelDB's")

// FileInfo describes one live table of a database.
type FileInfo struct {
	Level    int    // 0 to 6
	Number   uint64 // the file number: the table is NNNNNN.ldb (or .sst)
	Size     int64  // the file's size, in bytes, as the MANIFEST records it
	Smallest []byte // the smallest internal key, user key then 8-byte trailer
	Largest  []byte // the largest internal key
}

// version is the state a MANIFEST's edits build up.
type version struct {
	comparator    string
	logNumber     uint64
	prevLogNumber uint64
	nextFile      uint64
	lastSeq       uint64
	files         [NumLevels]map[uint64]FileInfo
	has           uint // 1<<tag for each of the tags a version needs, once read
}

// complete reports, as LevelDB's VersionSet::Recover does, a MANIFEST
// whose edits never give the next file number, the log number or the
// last sequence number (such as one cut short after its first record):
// without them, which logs to replay is unknown.
func (v *version) complete() error {
	for _, need := range []struct {
		tag  uint
		what string
	}{{lsmdb.TagNextFileNumber, "next file number"}, {lsmdb.TagLogNumber, "log number"}, {lsmdb.TagLastSequence, "last sequence number"}} {
		if v.has&(1<<need.tag) == 0 {
			return format.Corruptf(SectionManifest, 0, "no version edit gives the %s", need.what)
		}
	}
	return nil
}

// apply applies one version edit (a MANIFEST record at off) to v. An
// edit with a tag only RocksDB writes says the directory is a RocksDB
// database.
func (v *version) apply(rec []byte, off int64) error {
	e, err := lsmdb.DecodeEdit(rec, off)
	if err != nil {
		return err
	}
	if e.RocksDBTag != 0 {
		return fmt.Errorf("%w: version edit tag %d at offset %d is RocksDB's: this is a RocksDB database (package rocksdb reads it; sst ... -rocksdb DIR) (%w)", ErrRocksDB, e.RocksDBTag, off, format.ErrCorrupt)
	}
	if e.Has&(1<<lsmdb.TagComparator) != 0 {
		v.comparator = e.Comparator
	}
	v.has |= uint(e.Has)
	if e.Has&(1<<lsmdb.TagLogNumber) != 0 {
		v.logNumber = e.LogNumber
	}
	if e.Has&(1<<lsmdb.TagNextFileNumber) != 0 {
		v.nextFile = e.NextFileNumber
	}
	if e.Has&(1<<lsmdb.TagLastSequence) != 0 {
		v.lastSeq = e.LastSequence
	}
	if e.Has&(1<<lsmdb.TagPrevLogNumber) != 0 {
		v.prevLogNumber = e.PrevLogNumber
	}
	for _, d := range e.DeletedFiles {
		if d.Level >= NumLevels {
			return format.Corruptf(SectionManifest, off, "bad deleted file level %d", d.Level)
		}
		delete(v.files[d.Level], d.Number)
	}
	for _, nf := range e.NewFiles {
		if nf.Level >= NumLevels || nf.Size > 1<<62 {
			return format.Corruptf(SectionManifest, off, "bad new file level %d or size %d", nf.Level, nf.Size)
		}
		f := FileInfo{Level: nf.Level, Number: nf.Number, Size: int64(nf.Size)}
		if compareKeys(nf.Smallest, nf.Largest) > 0 {
			return format.Corruptf(SectionManifest, off, "file %d's smallest key sorts after its largest", f.Number)
		}
		f.Smallest = append([]byte(nil), nf.Smallest...)
		f.Largest = append([]byte(nil), nf.Largest...)
		if v.files[f.Level] == nil {
			v.files[f.Level] = make(map[uint64]FileInfo)
		}
		v.files[f.Level][f.Number] = f
	}
	return nil
}

// live returns the version's tables: level 0 newest file number first,
// levels 1 and up by smallest key. It checks that levels 1 and up do not
// overlap.
func (v *version) live() ([]FileInfo, error) {
	var out []FileInfo
	for level := range v.files {
		fs := make([]FileInfo, 0, len(v.files[level]))
		for _, f := range v.files[level] {
			fs = append(fs, f)
		}
		if level == 0 {
			sort.Slice(fs, func(i, j int) bool { return fs[i].Number > fs[j].Number })
		} else {
			sort.Slice(fs, func(i, j int) bool { return compareKeys(fs[i].Smallest, fs[j].Smallest) < 0 })
			for i := 1; i < len(fs); i++ {
				if compareKeys(fs[i-1].Largest, fs[i].Smallest) >= 0 {
					return nil, fmt.Errorf("%w: level %d: tables %d and %d overlap", format.ErrCorrupt, level, fs[i-1].Number, fs[i].Number)
				}
			}
		}
		out = append(out, fs...)
	}
	return out, nil
}
