package leveldb

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/sstkit/sstable/format"
)

// NumLevels is the number of levels in a LevelDB database (config::
// kNumLevels).
const NumLevels = 7

// BytewiseComparator is the name of LevelDB's default comparator, which
// orders user keys as bytes.Compare; the only one this package reads.
const BytewiseComparator = "leveldb.BytewiseComparator"

// SectionManifest names a MANIFEST's version edits in corruption errors.
const SectionManifest = "version edit"

// Version edit tags (LevelDB db/version_edit.cc; goleveldb's session
// records use the same numbers).
const (
	tagComparator     = 1
	tagLogNumber      = 2
	tagNextFileNumber = 3
	tagLastSequence   = 4
	tagCompactPointer = 5
	tagDeletedFile    = 6
	tagNewFile        = 7
	tagPrevLogNumber  = 9
)

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
	}{{tagNextFileNumber, "next file number"}, {tagLogNumber, "log number"}, {tagLastSequence, "last sequence number"}} {
		if v.has&(1<<need.tag) == 0 {
			return format.Corruptf(SectionManifest, 0, "no version edit gives the %s", need.what)
		}
	}
	return nil
}

// apply decodes one version edit (a MANIFEST record at off) into v.
func (v *version) apply(rec []byte, off int64) error {
	bad := func(what string) error {
		return format.Corruptf(SectionManifest, off, "%s", what)
	}
	for len(rec) > 0 {
		tag, n := binary.Uvarint(rec)
		if n <= 0 {
			return bad("bad tag")
		}
		rec = rec[n:]
		var ok bool
		switch tag {
		case tagComparator:
			var name []byte
			if name, rec, ok = lengthPrefixed(rec); !ok {
				return bad("bad comparator name")
			}
			v.comparator = string(name)
		case tagLogNumber, tagNextFileNumber, tagLastSequence, tagPrevLogNumber:
			x, n := binary.Uvarint(rec)
			if n <= 0 {
				return bad(fmt.Sprintf("bad value for tag %d", tag))
			}
			rec = rec[n:]
			v.has |= 1 << tag
			switch tag {
			case tagLogNumber:
				v.logNumber = x
			case tagNextFileNumber:
				v.nextFile = x
			case tagLastSequence:
				v.lastSeq = x
			case tagPrevLogNumber:
				v.prevLogNumber = x
			}
		case tagCompactPointer:
			if _, rec, ok = levelField(rec); !ok {
				return bad("bad compact pointer level")
			}
			if _, rec, ok = lengthPrefixed(rec); !ok {
				return bad("bad compact pointer key")
			}
		case tagDeletedFile:
			var level int
			if level, rec, ok = levelField(rec); !ok {
				return bad("bad deleted file level")
			}
			num, n := binary.Uvarint(rec)
			if n <= 0 {
				return bad("bad deleted file number")
			}
			rec = rec[n:]
			delete(v.files[level], num)
		case tagNewFile:
			var f FileInfo
			if f.Level, rec, ok = levelField(rec); !ok {
				return bad("bad new file level")
			}
			var size uint64
			var n1, n2 int
			if f.Number, n1 = binary.Uvarint(rec); n1 > 0 {
				size, n2 = binary.Uvarint(rec[n1:])
			}
			if n1 <= 0 || n2 <= 0 || size > 1<<62 {
				return bad("bad new file number or size")
			}
			rec, f.Size = rec[n1+n2:], int64(size)
			if f.Smallest, rec, ok = lengthPrefixed(rec); !ok || len(f.Smallest) < trailerLen {
				return bad("bad new file smallest key")
			}
			if f.Largest, rec, ok = lengthPrefixed(rec); !ok || len(f.Largest) < trailerLen {
				return bad("bad new file largest key")
			}
			if compareKeys(f.Smallest, f.Largest) > 0 {
				return bad(fmt.Sprintf("file %d's smallest key sorts after its largest", f.Number))
			}
			f.Smallest = append([]byte(nil), f.Smallest...)
			f.Largest = append([]byte(nil), f.Largest...)
			if v.files[f.Level] == nil {
				v.files[f.Level] = make(map[uint64]FileInfo)
			}
			v.files[f.Level][f.Number] = f
		default:
			return bad(fmt.Sprintf("unknown tag %d", tag))
		}
	}
	return nil
}

func lengthPrefixed(b []byte) (s, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(n)], b[k+int(n):], true
}

func levelField(b []byte) (int, []byte, bool) {
	l, k := binary.Uvarint(b)
	if k <= 0 || l >= NumLevels {
		return 0, nil, false
	}
	return int(l), b[k:], true
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
