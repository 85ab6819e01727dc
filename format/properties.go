package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
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
	// Version is the newest version this package reads and writes; readers
	// accept Version1 through Version.
	Version = Version4
)

// Properties describes a table. The builder fills it in and stores it in
// the properties block; readers return it from Reader.Properties.
type Properties struct {
	FormatVersion    uint32      // table format version (Version)
	NumEntries       uint64      // key/value entries
	NumDataBlocks    uint64      // data blocks
	SmallestKey      []byte      // first key; nil when NumEntries is 0 (and, from DecodeProperties, when left out: SmallestKeyOmitted)
	LargestKey       []byte      // last key; nil when NumEntries is 0 (and, from DecodeProperties, when left out: LargestKeyOmitted)
	RawKeyBytes      uint64      // sum of key lengths, bytes
	RawValueBytes    uint64      // sum of value lengths, bytes
	DataSize         uint64      // bytes of all data blocks, trailers included
	IndexSize        uint64      // bytes of the index block, trailer included
	FilterSize       uint64      // bytes of the filter section, trailer included
	Compression      Compression // NoCompression, SnappyCompression or ZstdCompression
	FilterPolicy     string      // filter policy name; "" when the table has no filter
	FilterBitsPerKey float64     // the policy's configured bits per key (stored in 1/1000 bits)
	BlockSize        uint64      // target data block size the builder used, bytes
	RestartInterval  uint64      // entries between restart points in data blocks
	MaxBlockSize     uint64      // largest decoded data block, bytes; bounds decompression
	HashIndexSize    uint64      // bytes of the hash index section, trailer included; 0 in a table without one (always in Version1)
	Splitter         string      // name of the Splitter the filter and hash index were built over; "" when keys are whole
	Partitioned      bool        // a Version4 table's index and filter are partitioned (tag 22), as a Version3 table's always are

	// SmallestKeyOmitted and LargestKeyOmitted are the lengths of
	// SmallestKey and LargestKey when the properties block leaves them
	// out, 0 when it holds them: a key longer than MaxPropertiesKeyLen is
	// stored only where it belongs, in the first (last) data block, and
	// the block records its length instead (tags 18 and 19), so that a
	// key of any size is stored once. DecodeProperties then leaves the
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

// Property record tags. Records are stored in increasing tag order;
// readers skip tags they do not know, so new properties can be added
// without a format version change.
const (
	propFormatVersion = iota + 1
	propNumEntries
	propNumDataBlocks
	propSmallestKey
	propLargestKey
	propRawKeyBytes
	propRawValueBytes
	propDataSize
	propIndexSize
	propFilterSize
	propCompression
	propFilterPolicy
	propFilterMilliBitsPerKey
	propBlockSize
	propRestartInterval
	propMaxBlockSize
	propHashIndexSize
	propSmallestKeyLen // instead of propSmallestKey for a key longer than MaxPropertiesKeyLen
	propLargestKeyLen  // instead of propLargestKey for a key longer than MaxPropertiesKeyLen
	propSplitter
	propUser
	propPartitioned // Version4 only: 1 when the index and filter are partitioned
)

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

// AppendUserProperties appends the tag 21 record value for user: for each
// name in increasing bytes order, `uvarint nameLen | name | uvarint
// valueLen | value`.
func AppendUserProperties(dst []byte, user map[string][]byte) []byte {
	names := make([]string, 0, len(user))
	for k := range user {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		dst = binary.AppendUvarint(dst, uint64(len(k)))
		dst = append(dst, k...)
		dst = binary.AppendUvarint(dst, uint64(len(user[k])))
		dst = append(dst, user[k]...)
	}
	return dst
}

// UserPropertiesSize returns the encoded size of a user property record
// (the part of AppendUserProperties' output one name and value take).
func UserPropertiesSize(name string, valueLen int) int {
	return uvarintLen(uint64(len(name))) + len(name) + uvarintLen(uint64(valueLen)) + valueLen
}

// decodeUser decodes a tag 21 record value; recOff names the record in
// errors.
func decodeUser(val []byte, recOff int64) (map[string][]byte, error) {
	if len(val) == 0 {
		return nil, nil // an empty record: no user properties, as without one
	}
	m := make(map[string][]byte)
	var last []byte
	for pos := 0; pos < len(val); {
		nameLen, n := binary.Uvarint(val[pos:])
		if n <= 0 || nameLen == 0 || nameLen > MaxUserPropertyNameLen || nameLen > uint64(len(val)-pos-n) {
			return nil, Corruptf(SectionProperties, recOff, "user property at record byte %d: bad name length", pos)
		}
		pos += n
		name := val[pos : pos+int(nameLen)]
		pos += int(nameLen)
		if len(m) > 0 && bytes.Compare(name, last) <= 0 {
			return nil, Corruptf(SectionProperties, recOff, "user property %q after %q: names must increase", name, last)
		}
		last = name
		valLen, n := binary.Uvarint(val[pos:])
		if n <= 0 || valLen > uint64(len(val)-pos-n) {
			return nil, Corruptf(SectionProperties, recOff, "user property %q: bad value length", name)
		}
		pos += n
		m[string(name)] = bytes.Clone(val[pos : pos+int(valLen)])
		if m[string(name)] == nil {
			m[string(name)] = []byte{}
		}
		pos += int(valLen)
	}
	return m, nil
}

// AppendProperties appends the encoding of p to dst: a sequence of records
// `uvarint tag | uvarint length | value`, in increasing tag order, where
// integers are uvarints and strings are raw bytes. A smallest or largest
// key longer than MaxPropertiesKeyLen is left out, its length recorded
// instead, as is the omitted length of a nil key (SmallestKeyOmitted, as
// DecodeProperties returns it).
func AppendProperties(dst []byte, p *Properties) []byte {
	num := func(tag int, v uint64) {
		dst = binary.AppendUvarint(dst, uint64(tag))
		dst = binary.AppendUvarint(dst, uint64(uvarintLen(v)))
		dst = binary.AppendUvarint(dst, v)
	}
	str := func(tag int, v []byte) {
		dst = binary.AppendUvarint(dst, uint64(tag))
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	num(propFormatVersion, uint64(p.FormatVersion))
	num(propNumEntries, p.NumEntries)
	num(propNumDataBlocks, p.NumDataBlocks)
	smallOmit, largeOmit := omittedLen(p.SmallestKey, p.SmallestKeyOmitted), omittedLen(p.LargestKey, p.LargestKeyOmitted)
	if p.NumEntries > 0 {
		if smallOmit == 0 {
			str(propSmallestKey, p.SmallestKey)
		}
		if largeOmit == 0 {
			str(propLargestKey, p.LargestKey)
		}
	}
	num(propRawKeyBytes, p.RawKeyBytes)
	num(propRawValueBytes, p.RawValueBytes)
	num(propDataSize, p.DataSize)
	num(propIndexSize, p.IndexSize)
	num(propFilterSize, p.FilterSize)
	if p.Compression != DefaultCompression { // absent decodes as DefaultCompression; 0 is rejected
		num(propCompression, uint64(p.Compression))
	}
	if p.FilterPolicy != "" {
		str(propFilterPolicy, []byte(p.FilterPolicy))
	}
	if p.FilterPolicy != "" || p.FilterBitsPerKey != 0 { // the record may come without a policy record
		num(propFilterMilliBitsPerKey, uint64(math.Round(p.FilterBitsPerKey*1000)))
	}
	num(propBlockSize, p.BlockSize)
	num(propRestartInterval, p.RestartInterval)
	num(propMaxBlockSize, p.MaxBlockSize)
	if p.HashIndexSize != 0 {
		num(propHashIndexSize, p.HashIndexSize)
	}
	if p.NumEntries > 0 && smallOmit != 0 {
		num(propSmallestKeyLen, smallOmit)
	}
	if p.NumEntries > 0 && largeOmit != 0 {
		num(propLargestKeyLen, largeOmit)
	}
	if p.Splitter != "" {
		str(propSplitter, []byte(p.Splitter))
	}
	if len(p.User) > 0 {
		str(propUser, AppendUserProperties(nil, p.User))
	}
	if p.Partitioned {
		num(propPartitioned, 1)
	}
	return dst
}

// omittedLen returns the length AppendProperties records for a smallest
// or largest key it leaves out: the key's, when longer than
// MaxPropertiesKeyLen, or for a nil key the omitted length a decoded
// Properties carries; 0 when the key is stored.
func omittedLen(key []byte, omitted uint64) uint64 {
	switch {
	case len(key) > MaxPropertiesKeyLen:
		return uint64(len(key))
	case key == nil:
		return omitted
	}
	return 0
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// DecodeProperties decodes a properties block written by AppendProperties.
// off is the file offset of src, for errors. Errors wrap ErrCorrupt and
// name the offset of the bad record. Decoded keys and strings are copies.
func DecodeProperties(src []byte, off int64) (Properties, error) {
	var p Properties
	lastTag := uint64(0)
	for pos := 0; pos < len(src); {
		recOff := off + int64(pos)
		tag, n := binary.Uvarint(src[pos:])
		if n <= 0 {
			return p, Corruptf(SectionProperties, recOff, "bad record tag varint")
		}
		pos += n
		length, n := binary.Uvarint(src[pos:])
		if n <= 0 {
			return p, Corruptf(SectionProperties, recOff, "bad record length varint")
		}
		pos += n
		if length > uint64(len(src)-pos) {
			return p, Corruptf(SectionProperties, recOff, "record %d claims %d bytes, %d remain", tag, length, len(src)-pos)
		}
		if tag <= lastTag {
			return p, Corruptf(SectionProperties, recOff, "record tag %d after tag %d: tags must increase", tag, lastTag)
		}
		lastTag = tag
		val := src[pos : pos+int(length)]
		pos += int(length)
		var num uint64
		if tag != propSmallestKey && tag != propLargestKey && tag != propFilterPolicy && (tag <= propLargestKeyLen || tag == propPartitioned) {
			v, n := binary.Uvarint(val)
			if n <= 0 || n != len(val) {
				return p, Corruptf(SectionProperties, recOff, "record %d: bad integer", tag)
			}
			num = v
		}
		switch tag {
		case propFormatVersion:
			if num > math.MaxUint32 {
				return p, Corruptf(SectionProperties, recOff, "format version %d out of range", num)
			}
			p.FormatVersion = uint32(num)
		case propNumEntries:
			p.NumEntries = num
		case propNumDataBlocks:
			p.NumDataBlocks = num
		case propSmallestKey:
			p.SmallestKey = append([]byte{}, val...)
		case propLargestKey:
			p.LargestKey = append([]byte{}, val...)
		case propRawKeyBytes:
			p.RawKeyBytes = num
		case propRawValueBytes:
			p.RawValueBytes = num
		case propDataSize:
			p.DataSize = num
		case propIndexSize:
			p.IndexSize = num
		case propFilterSize:
			p.FilterSize = num
		case propCompression:
			if c := Compression(num); c != NoCompression && c != SnappyCompression && c != ZstdCompression {
				return p, Corruptf(SectionProperties, recOff, "unknown compression %d", num)
			}
			p.Compression = Compression(num)
		case propFilterPolicy:
			p.FilterPolicy = string(val)
		case propFilterMilliBitsPerKey:
			if num > math.MaxUint32 { // larger values do not survive the float64 round trip
				return p, Corruptf(SectionProperties, recOff, "filter bits per key %d/1000 out of range", num)
			}
			p.FilterBitsPerKey = float64(num) / 1000
		case propBlockSize:
			p.BlockSize = num
		case propRestartInterval:
			p.RestartInterval = num
		case propMaxBlockSize:
			p.MaxBlockSize = num
		case propHashIndexSize:
			p.HashIndexSize = num
		case propSmallestKeyLen, propLargestKeyLen:
			if num <= MaxPropertiesKeyLen || num > math.MaxInt32 {
				return p, Corruptf(SectionProperties, recOff, "record %d: left-out key of %d bytes (want %d to 2^31-1)", tag, num, MaxPropertiesKeyLen+1)
			}
			if tag == propSmallestKeyLen {
				p.SmallestKeyOmitted = num
			} else {
				p.LargestKeyOmitted = num
			}
		case propSplitter:
			if len(val) == 0 || len(val) > MaxSplitterNameLen {
				return p, Corruptf(SectionProperties, recOff, "splitter name of %d bytes", len(val))
			}
			p.Splitter = string(val)
		case propUser:
			u, err := decodeUser(val, recOff)
			if err != nil {
				return p, err
			}
			p.User = u
		case propPartitioned:
			if num != 1 {
				return p, Corruptf(SectionProperties, recOff, "partitioned record holds %d, not 1", num)
			}
			p.Partitioned = true
		}
	}
	hasSmallest := p.SmallestKey != nil || p.SmallestKeyOmitted != 0
	hasLargest := p.LargestKey != nil || p.LargestKeyOmitted != 0
	if has := p.NumEntries > 0; has != hasSmallest || has != hasLargest {
		return p, Corruptf(SectionProperties, off, "%d entries but smallest/largest key records present=%v/%v", p.NumEntries, hasSmallest, hasLargest)
	}
	if p.SmallestKey != nil && p.SmallestKeyOmitted != 0 || p.LargestKey != nil && p.LargestKeyOmitted != 0 {
		return p, Corruptf(SectionProperties, off, "a key both stored and left out (tags 4 and 18, or 5 and 19)")
	}
	return p, nil
}

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
