// Package rocksfilter reads the filters RocksDB's built-in filter policies
// write into block-based tables (full filter blocks and the partitions of
// a partitioned filter), answering membership queries bit for bit as
// RocksDB does. It follows RocksDB's table/block_based/filter_policy.cc
// (GetBuiltinFilterBitsReader and the readers it returns),
// util/bloom_impl.h, util/ribbon_impl.h and util/ribbon_alg.h.
//
// Every filter ends in 5 bytes of metadata. The first of them selects the
// variant: -1 the cache-local Bloom filter (FastLocalBloom) of
// NewBloomFilterPolicy from format_version 5, -2 the Standard128 Ribbon
// filter, 1 to 127 the legacy cache-local Bloom filter of
// NewBloomFilterPolicy at format_version 0 to 4 (the byte is its probe
// count), 0 a filter that matches everything. NewRibbonFilterPolicy
// writes -2, or -1 for small filters, at any format_version. A filter
// of 5 bytes or fewer matches nothing. Other negative values are reserved.
//
// What RocksDB adds to a filter (BlockBasedTableBuilder::Add,
// FullFilterBlockBuilder): for every entry, its user key without any
// user-defined timestamp when whole_key_filtering is set (the default),
// and its prefix when the table has a prefix extractor whose InDomain
// accepts the key. A Get asks for the whole user key when
// whole_key_filtering is set, else for the prefix when the key is in the
// extractor's domain, else the filter is not consulted. A table to which
// nothing was added has no filter block.
//
// A partitioned filter (metaindex key
// "partitionedfilter.rocksdb.BuiltinBloomFilter") is a top-level index
// block whose keys are the separators of the index partitions (user keys,
// or internal keys where the table's index keys are) and whose values are
// the handles of the filter partitions, each parsed by Parse. A key's
// partition is the first whose separator is at or after it, else the
// last; with internal-key separators the lookup key carries the read's
// sequence number, so a separator of the same user key with the largest
// sequence number (a shortened separator) is before it. Each partition
// also holds the prefix of the next partition's first key.
package rocksfilter

import (
	"encoding/binary"
	"math"

	"github.com/sstkit/sstable/format"
)

// Section names a filter's bytes in corruption errors.
const Section = "filter block"

// metaLen is the length of the metadata trailer every built-in filter
// ends with (kMetadataLen in filter_policy.cc).
const metaLen = 5

type kind uint8

const (
	alwaysFalse kind = iota // the zero Filter matches nothing, like an empty filter
	alwaysTrue
	fastLocalBloom
	legacyBloom
	ribbon
)

// Filter is one parsed RocksDB filter: a full filter block or one
// partition of a partitioned filter. Its zero value matches nothing. It
// aliases the bytes given to Parse, which must stay unchanged while it is
// used. MayContain is safe for concurrent use.
type Filter struct {
	data  []byte // the filter's bits, without the metadata trailer
	kind  kind
	probe uint8 // Bloom probes per key

	// legacyBloom: lines of 1<<lineShift bytes.
	lines     uint32
	lineShift uint8

	// ribbon: see ribbon.go.
	numStarts       uint32
	upperColumns    uint32
	upperStartBlock uint32
	rawSeed         uint32
}

// Parse reads the contents of a filter block (without the block trailer)
// as RocksDB's built-in policies write it; off is the file offset of
// contents, for errors. The returned Filter aliases contents.
//
// known is false for a variant this package does not know: a reserved
// marker byte, a FastLocalBloom with reserved metadata fields, a Ribbon
// filter of fewer than 2 blocks. RocksDB reads those as matching
// everything (a table with no filter), and so does the returned Filter.
//
// err, which wraps format.ErrCorrupt, reports bytes no RocksDB writes for
// a known variant: a FastLocalBloom whose bits are not whole 64-byte
// lines, a Ribbon filter whose solution is not whole 16-byte segments, a
// legacy Bloom filter whose length is not its line count times a power of
// two (of at most 2^28 bytes), a filter of 4 GiB or more. RocksDB would
// read a FastLocalBloom of less than a line past its end, ignore a
// partial last line or segment, and read the impossible legacy layouts
// as matching everything.
func Parse(contents []byte, off int64) (f Filter, known bool, err error) {
	n := len(contents)
	if n <= metaLen {
		// Written for a filter with no keys; RocksDB treats any filter
		// this short as empty.
		return Filter{kind: alwaysFalse}, true, nil
	}
	if uint64(n) > math.MaxUint32 {
		return Filter{}, false, format.Corruptf(Section, off, "filter of %d bytes exceeds RocksDB's 4 GiB limit", n)
	}
	dataLen := n - metaLen
	meta := contents[dataLen:]
	metaOff := off + int64(dataLen)
	data := contents[:dataLen:dataLen]
	marker := int8(meta[0])
	switch {
	case marker == 0:
		return Filter{kind: alwaysTrue}, true, nil
	case marker == -1:
		return parseNewBloom(data, meta, metaOff)
	case marker == -2:
		return parseRibbon(data, meta, metaOff)
	case marker < 0:
		return Filter{kind: alwaysTrue}, false, nil
	}
	return parseLegacyBloom(data, meta, metaOff, marker)
}

// parseNewBloom reads the metadata of the -1 marker: a sub-implementation
// byte (0 FastLocalBloom), a byte with the log2 of the block size minus 6
// in its top 3 bits and the probe count in its low 5, and 2 bytes
// reserved (zero).
func parseNewBloom(data, meta []byte, metaOff int64) (Filter, bool, error) {
	sub, bp, rest := meta[1], meta[2], binary.LittleEndian.Uint16(meta[3:])
	probes := bp & 31
	if sub != 0 || bp>>5 != 0 || probes < 1 || probes > 30 || rest != 0 {
		// Reserved encodings: RocksDB matches everything.
		return Filter{kind: alwaysTrue}, false, nil
	}
	if len(data) < 64 || len(data)%64 != 0 {
		return Filter{}, false, format.Corruptf(Section, metaOff, "FastLocalBloom filter of %d bytes is not whole 64-byte lines", len(data))
	}
	return Filter{kind: fastLocalBloom, data: data, probe: probes}, true, nil
}

// parseLegacyBloom reads the metadata of a legacy Bloom filter: the probe
// count (1 to 127), then the number of cache lines, u32 little-endian. The
// line size is the length over the line count, a power of two: 64 bytes
// where RocksDB was built for x86 and ARM, 128 for POWER.
func parseLegacyBloom(data, meta []byte, metaOff int64, probes int8) (Filter, bool, error) {
	lines := binary.LittleEndian.Uint32(meta[1:])
	n := uint64(len(data))
	shift := uint8(0)
	if lines != 0 {
		for uint64(lines)<<shift < n && shift < 32 {
			shift++
		}
	}
	// The bit mask within a line, (1 << (shift+3)) - 1, must fit RocksDB's
	// 32-bit int.
	if lines == 0 || uint64(lines)<<shift != n || shift > 28 {
		return Filter{}, false, format.Corruptf(Section, metaOff+1, "legacy Bloom filter of %d bytes cannot hold %d cache lines", n, lines)
	}
	return Filter{kind: legacyBloom, data: data, probe: uint8(probes), lines: lines, lineShift: shift}, true, nil
}

// MayContain reports whether key may have been added to the filter; false
// means it certainly was not. key is what RocksDB adds: a whole user key
// (without timestamp) or a prefix from the table's prefix extractor.
func (f *Filter) MayContain(key []byte) bool {
	switch f.kind {
	case fastLocalBloom:
		return f.fastLocalBloomMayContain(keyHash(key))
	case ribbon:
		return f.ribbonMayContain(keyHash(key))
	case legacyBloom:
		return f.legacyBloomMayContain(legacyHash(key))
	case alwaysTrue:
		return true
	}
	return false
}

// Name names the filter's variant: "FastLocalBloom", "Ribbon",
// "LegacyBloom", "AlwaysTrue" (matches everything, including variants
// Parse does not know) or "AlwaysFalse" (matches nothing).
func (f *Filter) Name() string {
	switch f.kind {
	case fastLocalBloom:
		return "FastLocalBloom"
	case ribbon:
		return "Ribbon"
	case legacyBloom:
		return "LegacyBloom"
	case alwaysTrue:
		return "AlwaysTrue"
	}
	return "AlwaysFalse"
}

// Probes returns the number of bit probes per query of a Bloom filter, 0
// for the other variants.
func (f *Filter) Probes() int {
	if f.kind == fastLocalBloom || f.kind == legacyBloom {
		return int(f.probe)
	}
	return 0
}
