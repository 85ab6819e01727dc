package format

import (
	"fmt"
	"slices"
	"strings"
)

// Table format versions. A table's version is stored in its footer and
// its properties.
const (
	// Version1 is the base layout: data blocks, filter section, index
	// block, properties, footer.
	Version1 uint32 = 1
	// Version2 adds a hash index section after the data blocks, and stores
	// every data block entry whole (shared = 0) so that the hash index can
	// point at it. Builders write it when asked for a hash index.
	Version2 uint32 = 2
	// Version3 is Version1 with a partitioned index and filter: the
	// index block and the filter are cut into partitions of a few KiB,
	// each partition's filter stored next to its index, and a small
	// top-level index, which the footer's index handle names, leads to the
	// partition of a key. Builders write it for tables whose index and
	// filter would be large (builder.Options.PartitionThreshold). A table
	// built with a hash index is Version2 partitioned the same way: it
	// keeps its whole keys and its hash index section, before the
	// partitions (HashIndexSize is not 0). See the package documentation,
	// "Partitioned index and filter".
	Version3 uint32 = 3
	// Version4 is what builders write by default: Version2's hash index,
	// made compact, on Version1's layout or Version3's partitions. Data
	// block entries share prefixes with their block's first key (not with
	// the previous entry), so any entry decodes from its offset and the
	// block's first entry without the keys being stored whole; the hash
	// index holds about 1.1 slots of 4 bytes per entry (for tables of up
	// to about 2M entries in 4 KiB blocks), each the entry's block and
	// offset in it; and a partitioned table's hash index section also
	// carries the whole table's filter, so a memory-mapped reader rules
	// out an absent key with one probe. See the package documentation,
	// "Version 4".
	Version4 uint32 = 4
	// Version5 is Version4 (one-level or partitioned) with a span block
	// after the index block (after the top-level index in a partitioned
	// table) and before the properties: the table's range deletions or
	// range keys, fragmented (builder.Builder.AddSpan). A builder writes
	// it exactly when a table has at least one span; it is never asked
	// for by Options.FormatVersion. See the package documentation, "Span
	// block (version 5)".
	Version5 uint32 = 5
	// Version is the newest version this package reads and writes; readers
	// accept Version1 through Version.
	Version = Version5
)

// Properties describes a table. The builder fills it in and stores it in
// the properties block; readers return it from Reader.Properties.
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
