package lsmdb

import (
	"encoding/binary"
	"fmt"

	"github.com/sstkit/sstable/format"
)

// SectionManifest names a MANIFEST's version edits in corruption errors.
const SectionManifest = "version edit"

// Version edit tags: LevelDB's (db/version_edit.cc, which goleveldb's
// session records share) and RocksDB's additions (its db/version_edit.h).
const (
	TagComparator       = 1
	TagLogNumber        = 2
	TagNextFileNumber   = 3
	TagLastSequence     = 4
	TagCompactPointer   = 5
	TagDeletedFile      = 6
	TagNewFile          = 7
	TagPrevLogNumber    = 9
	TagMinLogNumberKeep = 10 // RocksDB from here on

	TagNewFile2          = 100
	TagNewFile3          = 102
	TagNewFile4          = 103
	TagColumnFamily      = 200
	TagColumnFamilyAdd   = 201
	TagColumnFamilyDrop  = 202
	TagMaxColumnFamily   = 203
	TagInAtomicGroup     = 300
	TagBlobFileAddition  = 400
	TagBlobFileGarbage   = 401
	TagSafeIgnoreMask    = 1 << 13 // an unknown tag with this bit has a length-prefixed value to skip
	TagDBID              = TagSafeIgnoreMask + 1
	TagBlobFileAdditionD = TagSafeIgnoreMask + 2 // deprecated numbers of the blob tags
	TagBlobFileGarbageD  = TagSafeIgnoreMask + 3
	TagWalAddition       = TagSafeIgnoreMask + 4
	TagWalDeletion       = TagSafeIgnoreMask + 5
	TagFullHistoryTsLow  = TagSafeIgnoreMask + 6
	TagWalAddition2      = TagSafeIgnoreMask + 7
	TagWalDeletion2      = TagSafeIgnoreMask + 8
	TagPersistUDT        = TagSafeIgnoreMask + 9
)

// NewFile is a table a version edit adds.
type NewFile struct {
	Level                    int
	Number                   uint64 // the file number, NNNNNN.sst (or .ldb)
	PathID                   uint32 // RocksDB's db_paths index; 0 is the directory itself
	Size                     uint64 // bytes
	Smallest, Largest        []byte // internal keys
	SmallestSeq, LargestSeq  uint64 // RocksDB's; LevelDB's edits leave 0 and MaxSequence
	EpochNumber              uint64 // RocksDB 8+'s order of level 0 files; 0 unknown
	OldestBlobFile           uint64 // the oldest blob file its blob indexes name; 0 none
	UserDefinedTimestampsOff bool   // RocksDB wrote the keys without their timestamps
}

// DeletedFile is a table a version edit removes from a level.
type DeletedFile struct {
	Level  int
	Number uint64
}

// BlobFile is a blob file a version edit adds, or garbage it records in
// one (RocksDB's integrated BlobDB).
type BlobFile struct {
	Number       uint64
	Count, Bytes uint64 // blobs and their bytes: in all (addition), or garbage
}

// Edit is one decoded version edit: the fields it sets (Has says which
// of the numbered ones), the files it adds and removes. LevelDB writes a
// subset; RocksDB's edits also name a column family and blob files.
type Edit struct {
	Has uint64 // 1<<tag for each of TagComparator to TagMinLogNumberKeep the edit sets; HasMaxCF

	Comparator      string
	LogNumber       uint64
	PrevLogNumber   uint64
	NextFileNumber  uint64
	LastSequence    uint64
	MinLogNumber    uint64 // RocksDB's min log number to keep
	MaxColumnFamily uint32

	ColumnFamily   uint32 // the column family the edit is about; 0 default
	AddFamily      string // the name of a column family the edit creates
	IsAddFamily    bool
	IsDropFamily   bool
	InAtomicGroup  bool
	AtomicRemain   uint32 // edits after this one in its atomic group
	DBID           string
	DeletedFiles   []DeletedFile
	NewFiles       []NewFile
	BlobAdditions  []BlobFile
	BlobGarbage    []BlobFile
	WalAdditions   []uint64
	WalDeletion    uint64 // WALs below it are obsolete; 0 none
	FullHistoryLow []byte
	RocksDBTag     uint64 // the first tag only RocksDB writes, 0 none
}

// HasMaxCF is the Has bit of TagMaxColumnFamily.
const HasMaxCF = 1 << 16

// DecodeEdit decodes one version edit, a MANIFEST record at file offset
// off. RocksDB's tags are read too (RocksDBTag names the first); an
// unknown tag is an error unless it has TagSafeIgnoreMask's bit (RocksDB
// then skips its length-prefixed value), and so is an unknown custom
// field of a new file that RocksDB marks not safe to ignore. Errors wrap
// format.ErrCorrupt.
func DecodeEdit(rec []byte, off int64) (e Edit, err error) {
	bad := func(what string) error {
		return format.Corruptf(SectionManifest, off, "%s", what)
	}
	for len(rec) > 0 {
		tag, n := binary.Uvarint(rec)
		if n <= 0 {
			return e, bad("bad tag")
		}
		rec = rec[n:]
		if tag >= TagMinLogNumberKeep && e.RocksDBTag == 0 {
			e.RocksDBTag = tag
		}
		var ok bool
		var x uint64
		switch tag {
		case TagComparator:
			var name []byte
			if name, rec, ok = lengthPrefixed(rec); !ok {
				return e, bad("bad comparator name")
			}
			e.Comparator = string(name)
			e.Has |= 1 << tag
		case TagLogNumber, TagNextFileNumber, TagLastSequence, TagPrevLogNumber, TagMinLogNumberKeep:
			if x, rec, ok = uvarint(rec); !ok {
				return e, bad(fmt.Sprintf("bad value for tag %d", tag))
			}
			e.Has |= 1 << tag
			switch tag {
			case TagLogNumber:
				e.LogNumber = x
			case TagNextFileNumber:
				e.NextFileNumber = x
			case TagLastSequence:
				e.LastSequence = x
			case TagPrevLogNumber:
				e.PrevLogNumber = x
			case TagMinLogNumberKeep:
				e.MinLogNumber = x
			}
		case TagMaxColumnFamily:
			if x, rec, ok = uvarint(rec); !ok || x > 1<<32-1 {
				return e, bad("bad max column family")
			}
			e.MaxColumnFamily, e.Has = uint32(x), e.Has|HasMaxCF
		case TagCompactPointer:
			if _, rec, ok = levelField(rec); !ok {
				return e, bad("bad compact pointer level")
			}
			if _, rec, ok = lengthPrefixed(rec); !ok {
				return e, bad("bad compact pointer key")
			}
		case TagDeletedFile:
			var f DeletedFile
			if f.Level, rec, ok = levelField(rec); !ok {
				return e, bad("bad deleted file level")
			}
			if f.Number, rec, ok = uvarint(rec); !ok {
				return e, bad("bad deleted file number")
			}
			e.DeletedFiles = append(e.DeletedFiles, f)
		case TagNewFile, TagNewFile2, TagNewFile3, TagNewFile4:
			var f NewFile
			if f, rec, err = decodeNewFile(tag, rec, bad); err != nil {
				return e, err
			}
			e.NewFiles = append(e.NewFiles, f)
		case TagColumnFamily:
			if x, rec, ok = uvarint(rec); !ok || x > 1<<32-1 {
				return e, bad("bad column family")
			}
			e.ColumnFamily = uint32(x)
		case TagColumnFamilyAdd:
			var name []byte
			if name, rec, ok = lengthPrefixed(rec); !ok {
				return e, bad("bad column family name")
			}
			e.AddFamily, e.IsAddFamily = string(name), true
		case TagColumnFamilyDrop:
			e.IsDropFamily = true
		case TagInAtomicGroup:
			if x, rec, ok = uvarint(rec); !ok || x > 1<<32-1 {
				return e, bad("bad atomic group count")
			}
			e.InAtomicGroup, e.AtomicRemain = true, uint32(x)
		case TagBlobFileAddition, TagBlobFileAdditionD, TagBlobFileGarbage, TagBlobFileGarbageD:
			var b BlobFile
			if b.Number, rec, ok = uvarint(rec); !ok {
				return e, bad("bad blob file number")
			}
			if b.Count, rec, ok = uvarint(rec); !ok {
				return e, bad("bad blob count")
			}
			if b.Bytes, rec, ok = uvarint(rec); !ok {
				return e, bad("bad blob bytes")
			}
			addition := tag == TagBlobFileAddition || tag == TagBlobFileAdditionD
			if addition {
				for i := 0; i < 2; i++ { // checksum method, checksum value
					if _, rec, ok = lengthPrefixed(rec); !ok {
						return e, bad("bad blob file checksum")
					}
				}
			}
			if rec, err = skipCustomFields(rec, 0, 1<<6, bad); err != nil {
				return e, err
			}
			if addition {
				e.BlobAdditions = append(e.BlobAdditions, b)
			} else {
				e.BlobGarbage = append(e.BlobGarbage, b)
			}
		case TagWalAddition, TagWalAddition2:
			body := rec
			if tag == TagWalAddition2 {
				if body, rec, ok = lengthPrefixed(rec); !ok {
					return e, bad("bad WAL addition")
				}
			}
			if x, body, ok = uvarint(body); !ok {
				return e, bad("bad WAL addition number")
			}
			for { // tags: 1 terminates, 2 the synced size
				var t uint64
				if t, body, ok = uvarint(body); !ok || t != 1 && t != 2 {
					return e, bad("bad WAL addition field")
				}
				if t == 1 {
					break
				}
				if _, body, ok = uvarint(body); !ok {
					return e, bad("bad WAL synced size")
				}
			}
			if tag == TagWalAddition {
				rec = body
			}
			e.WalAdditions = append(e.WalAdditions, x)
		case TagWalDeletion, TagWalDeletion2:
			body := rec
			if tag == TagWalDeletion2 {
				if body, rec, ok = lengthPrefixed(rec); !ok {
					return e, bad("bad WAL deletion")
				}
			}
			if e.WalDeletion, body, ok = uvarint(body); !ok {
				return e, bad("bad WAL deletion number")
			}
			if tag == TagWalDeletion {
				rec = body
			}
		case TagDBID:
			var id []byte
			if id, rec, ok = lengthPrefixed(rec); !ok {
				return e, bad("bad database ID")
			}
			e.DBID = string(id)
		case TagFullHistoryTsLow:
			if e.FullHistoryLow, rec, ok = lengthPrefixed(rec); !ok || len(e.FullHistoryLow) == 0 {
				return e, bad("bad full_history_ts_low")
			}
		default:
			if tag&TagSafeIgnoreMask == 0 {
				return e, bad(fmt.Sprintf("unknown tag %d", tag))
			}
			if _, rec, ok = lengthPrefixed(rec); !ok {
				return e, bad(fmt.Sprintf("tag %d: bad length", tag))
			}
		}
	}
	return e, nil
}

// decodeNewFile decodes the fields of a new file of one of the four tags:
// level, number, (path ID: NewFile3), size, smallest and largest internal
// keys, then from NewFile2 the sequence number range, and in NewFile4 the
// custom fields (db/version_edit.cc, DecodeNewFile4From).
func decodeNewFile(tag uint64, rec []byte, bad func(string) error) (f NewFile, rest []byte, err error) {
	var ok bool
	if f.Level, rec, ok = levelField(rec); !ok {
		return f, nil, bad("bad new file level")
	}
	if f.Number, rec, ok = uvarint(rec); !ok {
		return f, nil, bad("bad new file number")
	}
	if tag == TagNewFile3 {
		var p uint64
		if p, rec, ok = uvarint(rec); !ok || p > 3 {
			return f, nil, bad("bad new file path ID")
		}
		f.PathID = uint32(p)
	}
	if f.Size, rec, ok = uvarint(rec); !ok {
		return f, nil, bad("bad new file size")
	}
	if f.Smallest, rec, ok = lengthPrefixed(rec); !ok || len(f.Smallest) < 8 {
		return f, nil, bad("bad new file smallest key")
	}
	if f.Largest, rec, ok = lengthPrefixed(rec); !ok || len(f.Largest) < 8 {
		return f, nil, bad("bad new file largest key")
	}
	f.LargestSeq = 1<<56 - 1
	if tag == TagNewFile {
		return f, rec, nil
	}
	if f.SmallestSeq, rec, ok = uvarint(rec); !ok {
		return f, nil, bad("bad new file smallest sequence number")
	}
	if f.LargestSeq, rec, ok = uvarint(rec); !ok {
		return f, nil, bad("bad new file largest sequence number")
	}
	if tag != TagNewFile4 {
		return f, rec, nil
	}
	for {
		var ct uint64
		if ct, rec, ok = uvarint(rec); !ok {
			return f, nil, bad("bad new file custom field")
		}
		if ct == 1 { // terminate
			return f, rec, nil
		}
		var field []byte
		if field, rec, ok = lengthPrefixed(rec); !ok {
			return f, nil, bad("bad new file custom field value")
		}
		switch ct {
		case 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 17:
			// need compaction, min log number to keep (a hack of old
			// releases, fixed64), ancestor and creation times, file
			// checksum and its function, temperature, timestamps, unique
			// ID, range deletion size, tail size, open metadata: nothing a
			// read needs.
		case 4:
			if f.OldestBlobFile, _, ok = uvarint(field); !ok {
				return f, nil, bad("bad oldest blob file number")
			}
		case 13:
			if f.EpochNumber, _, ok = uvarint(field); !ok {
				return f, nil, bad("bad epoch number")
			}
		case 16:
			f.UserDefinedTimestampsOff = len(field) == 1 && field[0] == 0
		default:
			if ct&(1<<6) != 0 {
				return f, nil, bad(fmt.Sprintf("new file custom field %d that RocksDB marks not safe to ignore", ct))
			}
		}
	}
}

// skipCustomFields skips custom fields (tag, length-prefixed value) up to
// the end marker; a tag with the forward-incompatible bit is an error.
func skipCustomFields(rec []byte, end, incompatible uint64, bad func(string) error) ([]byte, error) {
	for {
		t, rest, ok := uvarint(rec)
		if !ok {
			return nil, bad("bad custom field tag")
		}
		rec = rest
		if t == end {
			return rec, nil
		}
		if t&incompatible != 0 {
			return nil, bad(fmt.Sprintf("custom field %d that RocksDB marks forward-incompatible", t))
		}
		if _, rec, ok = lengthPrefixed(rec); !ok {
			return nil, bad("bad custom field value")
		}
	}
}

func uvarint(b []byte) (uint64, []byte, bool) {
	x, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, false
	}
	return x, b[n:], true
}

// lengthPrefixed splits a uvarint-length-prefixed string off b.
func lengthPrefixed(b []byte) (s, rest []byte, ok bool) {
	n, m := binary.Uvarint(b)
	if m <= 0 || n > uint64(len(b)-m) {
		return nil, nil, false
	}
	return b[m : m+int(n) : m+int(n)], b[m+int(n):], true
}

// levelField decodes a level number, up to 63 (RocksDB's limit is far
// below; LevelDB's 7).
func levelField(b []byte) (int, []byte, bool) {
	x, rest, ok := uvarint(b)
	if !ok || x >= 64 {
		return 0, nil, false
	}
	return int(x), rest, true
}
