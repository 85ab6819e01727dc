package rocksblob

import (
	"encoding/binary"
	"fmt"

	"github.com/sstkit/sstable/format"
)

// The blob index types, the first byte of a blob index (BlobIndex::Type,
// db/blob/blob_index.h).
const (
	// TypeInlinedTTL holds the value itself, after an expiration time:
	// only the legacy stacked BlobDB (utilities/blob_db) writes it.
	TypeInlinedTTL byte = 0
	// TypeBlob points into a blob file: what integrated BlobDB writes.
	TypeBlob byte = 1
	// TypeBlobTTL points into a blob file and has an expiration time:
	// legacy stacked BlobDB only.
	TypeBlobTTL byte = 2
)

// Index is a decoded blob index: the value a table stores, under kind
// KindBlobIndex (0x11), in place of a value kept in a blob file.
type Index struct {
	Type       byte   // TypeInlinedTTL, TypeBlob or TypeBlobTTL
	Expiration uint64 // TTL types only: the expiration time, in seconds since the Unix epoch
	// FileNumber, Offset and Size locate the value in blob file
	// FileNumber (its name is FileNumber as "%06d.blob"): Offset is the
	// byte offset of the value itself, not of its record, and Size its
	// stored (compressed) length in bytes. Not set for TypeInlinedTTL.
	// File number 0 is what RocksDB 11's embedded blobs use for "the
	// table's own file"; integrated BlobDB never writes it.
	FileNumber, Offset, Size uint64
	Compression              byte   // the stored value's compression type (rocksblock's type bytes); not set for TypeInlinedTTL
	Inlined                  []byte // TypeInlinedTTL only: the value, aliasing the bytes given to DecodeIndex
}

// HasTTL reports whether the index has an expiration time.
func (x Index) HasTTL() bool { return x.Type == TypeInlinedTTL || x.Type == TypeBlobTTL }

// String describes the index as RocksDB's BlobIndex::DebugString does
// (the inlined value's length rather than its bytes).
func (x Index) String() string {
	var s string
	if x.Type == TypeInlinedTTL {
		s = fmt.Sprintf("[inlined blob] %d bytes", len(x.Inlined))
	} else {
		s = fmt.Sprintf("[blob ref] file:%d offset:%d size:%d compression: %s", x.FileNumber, x.Offset, x.Size, compressionName(x.Compression))
	}
	if x.HasTTL() {
		s += fmt.Sprintf(" exp:%d", x.Expiration)
	}
	return s
}

// DecodeIndex decodes a blob index (BlobIndex::DecodeFrom,
// db/blob/blob_index.h):
//
//	TypeInlinedTTL: type byte, varint64 expiration, the value (the rest)
//	TypeBlob:       type byte, varint64 file number, offset, size, compression byte
//	TypeBlobTTL:    type byte, varint64 expiration, then as TypeBlob
//
// The compression byte must be the last byte. Empty input, an unknown
// type, a truncated or overlong varint (more than 64 bits: RocksDB's
// decoder drops the excess bits, its encoder never writes them) or bytes
// left over give an error wrapping format.ErrCorrupt, in section
// SectionIndex at the offset within v. Inlined aliases v.
func DecodeIndex(v []byte) (Index, error) {
	var x Index
	if len(v) == 0 {
		return x, format.Corruptf(SectionIndex, 0, "empty blob index")
	}
	x.Type = v[0]
	if x.Type > TypeBlobTTL {
		return x, format.Corruptf(SectionIndex, 0, "unknown blob index type %d", x.Type)
	}
	off := 1
	varint := func(what string) (uint64, error) {
		n, k := binary.Uvarint(v[off:])
		if k <= 0 {
			return 0, format.Corruptf(SectionIndex, int64(off), "bad varint %s", what)
		}
		off += k
		return n, nil
	}
	var err error
	if x.HasTTL() {
		if x.Expiration, err = varint("expiration"); err != nil {
			return x, err
		}
	}
	if x.Type == TypeInlinedTTL {
		x.Inlined = v[off:len(v):len(v)]
		return x, nil
	}
	if x.FileNumber, err = varint("file number"); err != nil {
		return x, err
	}
	if x.Offset, err = varint("offset"); err != nil {
		return x, err
	}
	if x.Size, err = varint("size"); err != nil {
		return x, err
	}
	if len(v)-off != 1 {
		return x, format.Corruptf(SectionIndex, int64(off), "%d bytes after the size, want 1 (the compression type)", len(v)-off)
	}
	x.Compression = v[off]
	return x, nil
}

// AppendIndex appends x's encoding (BlobIndex::EncodeTo) to dst: the
// inverse of DecodeIndex.
func AppendIndex(dst []byte, x Index) []byte {
	dst = append(dst, x.Type)
	if x.HasTTL() {
		dst = binary.AppendUvarint(dst, x.Expiration)
	}
	if x.Type == TypeInlinedTTL {
		return append(dst, x.Inlined...)
	}
	dst = binary.AppendUvarint(dst, x.FileNumber)
	dst = binary.AppendUvarint(dst, x.Offset)
	dst = binary.AppendUvarint(dst, x.Size)
	return append(dst, x.Compression)
}
