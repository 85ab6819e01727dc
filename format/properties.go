package format

import (
	"fmt"
	"slices"
	"strings"
)

// Version is the newest table format version this package reads and
// writes; readers accept Version1 through Version. A table's version is
// stored in its footer and its properties.
const Version = Version5

// Properties describes a table. The builder fills it in and stores it in
// the properties block; readers return it from Reader.Properties.
//
// # Properties block
//
// A sequence of records in strictly increasing tag order; readers skip tags
// they do not know, so properties can be added without a version change:
//
//	+-------------+----------------+--------------+
//	| tag uvarint | length uvarint | value bytes  |
//	+-------------+----------------+--------------+
//
// Integer values are a single uvarint filling the value; strings and keys
// are raw bytes. The tags of format version 1:
//
//	tag 1:  format version
//	tag 2:  entry count
//	tag 3:  data block count
//	tag 4:  smallest key
//	tag 5:  largest key
//	tag 6:  raw key bytes
//	tag 7:  raw value bytes
//	tag 8:  data size (bytes, trailers included)
//	tag 9:  index size (bytes, trailer included)
//	tag 10: filter size (bytes, trailer included)
//	tag 11: compression (1 none, 2 snappy, 3 zstd, 4 minlz)
//	tag 12: filter policy name
//	tag 13: filter bits per key, in 1/1000 bits (0 for a policy not sized so: BinaryFuse8)
//	tag 14: target block size (bytes)
//	tag 15: restart interval (entries)
//	tag 16: largest decoded data block (bytes)
//	tag 17: hash index size (bytes, trailer included; tables with a hash index only)
//	tag 18: smallest key's length, instead of tag 4 for a key of more than 1024 bytes
//	tag 19: largest key's length, instead of tag 5 for a key of more than 1024 bytes
//	tag 20: splitter name (1 to 255 bytes; tables built with a Splitter only)
//	tag 21: user properties (tables with at least one only)
//	tag 22: partitioned (value 1; partitioned version 4 and 5 tables only)
//	tag 23: span block size (bytes, trailer included; version 5 only)
//	tag 24: span count (spans added; version 5 only)
//	tag 25: span fragment count (version 5 only)
//	tag 26: smallest span key, the first fragment's start (version 5, unless more than 1024 bytes)
//	tag 27: largest span key, the last fragment's end, exclusive (version 5, unless more than 1024 bytes)
//	tag 28: zstd dictionary (the dictionary's bytes; tables with one only)
//
// When the entry count is non-zero, exactly one of tags 4 and 18 is present,
// and one of tags 5 and 19; otherwise none of them. A writer stores the
// smallest and largest keys whole (tags 4 and 5) when they have at most 1024
// bytes (MaxPropertiesKeyLen), and otherwise records only the length (tags 18
// and 19, a uvarint above 1024): the key is the table's first (last) entry's,
// stored once, in its data block, and a reader that wants it reads it from
// there. Writers before tags 18 and 19 stored every key whole, which readers
// still accept; readers before them report a table with tag 18 or 19 and
// without tag 4 or 5 as corrupt. Tag
// 16 bounds the size a reader will decompress a data block to. Tag 17 is
// present exactly in version 2 tables, in version 3 tables built with
// a hash index and in every version 4 table, where the data size plus the
// hash index size is the offset of the filter section (in a partitioned
// table, of the first partition, the footer's filter handle's offset); in
// version 1, and version 3 without a hash index, the data size is that
// offset.
//
// Tags 20 and 21 are written only when present, so tables without a
// splitter or user properties are byte for byte as before. Tag 20 names
// the Splitter the table's keys were split with (the built-in Suffix(n)
// is "sstkit.Suffix(n)", n in decimal: a key's prefix is all but its last
// n bytes, and a key shorter than n bytes is its own prefix). In such a
// table the filter holds each distinct prefix key[:Split(key)] once,
// instead of each key, and the hash index (versions 2 to 4) maps each
// distinct prefix (hashed as a key is) to the table's first entry with
// that prefix, so it has one occupied slot per distinct prefix.
// Consecutive keys never have decreasing prefixes, so the keys of a
// prefix are contiguous. A reader that does
// not know the splitter must neither probe the filter with whole keys nor
// look whole keys up in the hash index; readers of this package then read
// the table as if it had no filter and no hash index. (Readers written
// before tag 20 existed skip it and would do both: they see false
// negatives.)
//
// Tag 21's value is a sequence of user properties, in strictly increasing
// bytes order of name, names unique:
//
//	+-------------------+------------+--------------------+-------------+
//	| nameLen uvarint   | name bytes | valueLen uvarint   | value bytes |
//	+-------------------+------------+--------------------+-------------+
//
// A name is 1 to 255 bytes; a value may be empty. Writers of this package
// also keep values to at most 64 KiB, at most 1000 properties, and the
// whole tag 21 value to at most 512 KiB (MaxUserProperties and the other
// limits), well inside the 1 MiB readers allow the properties block. The
// properties block's trailer CRC covers them like every other record.
type Properties struct {
	FormatVersion    uint32      // table format version (Version)
	NumEntries       uint64      // key/value entries
	NumDataBlocks    uint64      // data blocks
	SmallestKey      []byte      // first key; nil when NumEntries is 0 (and when left out of the properties block: SmallestKeyOmitted)
	LargestKey       []byte      // last key; nil when NumEntries is 0 (and when left out of the properties block: LargestKeyOmitted)
	RawKeyBytes      uint64      // sum of key lengths, bytes
	RawValueBytes    uint64      // sum of value lengths, bytes
	DataSize         uint64      // bytes of all data blocks, trailers included
	IndexSize        uint64      // bytes of the index block, trailer included; in a partitioned table, of the top-level index only
	FilterSize       uint64      // bytes of the filter section, trailer included; in a partitioned table, of the whole partitions section (every filter and index partition)
	Compression      Compression // NoCompression, SnappyCompression, ZstdCompression or MinLZCompression
	FilterPolicy     string      // filter policy name; "" when the table has no filter
	FilterBitsPerKey float64     // the policy's configured bits per key (stored in 1/1000 bits)
	BlockSize        uint64      // target data block size the builder used, bytes
	RestartInterval  uint64      // entries between restart points in data blocks
	MaxBlockSize     uint64      // largest decoded data block, bytes; bounds decompression
	HashIndexSize    uint64      // bytes of the hash index section, trailer included; 0 in a table without one (always in Version1)
	Splitter         string      // name of the Splitter the filter and hash index were built over; "" when keys are whole
	Partitioned      bool        // a Version4 table's index and filter are partitioned (tag 22), as a Version3 table's always are

	// Spans (Version5 only; all zero in a table without spans). The
	// span bounds are those of the fragments, apart from SmallestKey and
	// LargestKey, which stay the point entries' bounds: the table's keys
	// and spans together lie in [min(SmallestKey, SmallestSpanKey),
	// max(LargestKey, LargestSpanKey)], the end being exclusive when it
	// is LargestSpanKey.
	SpanBlockSize    uint64 // bytes of the span block, trailer included (tag 23)
	NumSpans         uint64 // spans added with AddSpan (tag 24)
	NumSpanFragments uint64 // fragments stored in the span block (tag 25)
	SmallestSpanKey  []byte // the first fragment's start (tag 26); nil without spans, and when decoded from a block that leaves out a key of more than MaxPropertiesKeyLen bytes (readers of package reader fill it in)
	LargestSpanKey   []byte // the last fragment's end, exclusive (tag 27); nil as SmallestSpanKey is

	// Dictionary is the table's zstd dictionary (tag 28): a Zstandard
	// dictionary as RFC 8878 section 5 defines it, which data blocks of
	// type BlockTypeZstdDict are encoded with. nil when the table has none
	// (builder.Options.DictionarySize 0, the default).
	Dictionary []byte

	// SmallestKeyOmitted and LargestKeyOmitted are the lengths of
	// SmallestKey and LargestKey when the properties block leaves them
	// out, 0 when it holds them: a key longer than MaxPropertiesKeyLen is
	// stored only where it belongs, in the first (last) data block, and
	// the block records its length instead (tags 18 and 19), so that a
	// key of any size is stored once. Decoding then leaves the
	// key nil; readers of package reader fill it in from the data, so
	// that Reader.Properties has both keys whole, and keep these lengths
	// set. Builders set them at Finish.
	SmallestKeyOmitted uint64
	LargestKeyOmitted  uint64

	// User holds the user properties (Builder.SetUserProperty): names of
	// 1 to MaxUserPropertyNameLen bytes, values of up to
	// MaxUserPropertyValueLen bytes, at most MaxUserProperties of them and
	// at most MaxUserPropertiesSize bytes encoded in all. nil when the
	// table has none. Decoded values are copies owned by the caller.
	User map[string][]byte

	// SplitterUnknown is set by readers and never stored: the reader does
	// not know Splitter, so it reads the table as if it had no filter,
	// no splitter and no hash index (MayContain and MayContainPrefix
	// always true; Get searches the index block).
	SplitterUnknown bool

	// FilterUnknown is set by readers and never stored: the reader does not
	// know FilterPolicy, so it reads the table as if it had no filter
	// (MayContain always true).
	FilterUnknown bool
}

// MaxPropertiesKeyLen is the longest smallest or largest key the
// properties block holds (tags 4 and 5), in bytes; a longer one is left
// out and only its length recorded (tags 18 and 19, Properties.
// SmallestKeyOmitted). Up to it, a table's properties cost at most 2 KiB
// of keys, less than a data block, and readers have both keys without
// reading data blocks.
const MaxPropertiesKeyLen = 1024

// Limits of user properties (Properties.User), checked by the builder.
// Readers accept any user properties block that decodes.
const (
	MaxUserPropertyNameLen  = 255       // bytes of a name (at least 1)
	MaxUserPropertyValueLen = 64 << 10  // bytes of a value
	MaxUserProperties       = 1000      // properties per table
	MaxUserPropertiesSize   = 512 << 10 // bytes of the encoded tag 21 record value
)

// String renders the properties one per line, for tools.
func (p *Properties) String() string {
	return fmt.Sprintf("format version:     %d\nentries:            %d\ndata blocks:        %d\nsmallest key:       %q\nlargest key:        %q\nraw key bytes:      %d\nraw value bytes:    %d\ndata size:          %d\nindex size:         %d\nfilter size:        %d\ncompression:        %s\nfilter policy:      %s\nfilter bits/key:    %g\nfilter unknown:     %v\nblock size:         %d\nrestart interval:   %d\nmax block size:     %d\nhash index size:    %d\n",
		p.FormatVersion, p.NumEntries, p.NumDataBlocks, p.SmallestKey, p.LargestKey,
		p.RawKeyBytes, p.RawValueBytes, p.DataSize, p.IndexSize, p.FilterSize,
		p.Compression, p.FilterPolicy, p.FilterBitsPerKey, p.FilterUnknown, p.BlockSize, p.RestartInterval, p.MaxBlockSize, p.HashIndexSize) + p.extraString()
}

// extraString renders the splitter and user properties, present only in
// tables that have them, so that other tables print as before.
func (p *Properties) extraString() string {
	var b strings.Builder
	if p.NumSpanFragments != 0 {
		fmt.Fprintf(&b, "spans:              %d\nspan fragments:     %d\nspan block size:    %d\nsmallest span key:  %q\nlargest span end:   %q\n", p.NumSpans, p.NumSpanFragments, p.SpanBlockSize, p.SmallestSpanKey, p.LargestSpanKey)
	}
	if len(p.Dictionary) > 0 {
		fmt.Fprintf(&b, "dictionary:         %d bytes\n", len(p.Dictionary))
	}
	if p.Splitter != "" {
		fmt.Fprintf(&b, "splitter:           %s\n", p.Splitter)
		if p.SplitterUnknown {
			fmt.Fprintf(&b, "splitter unknown:   true\n")
		}
	}
	names := make([]string, 0, len(p.User))
	for k := range p.User {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(&b, "user property:      %q = %q\n", k, p.User[k])
	}
	return b.String()
}
