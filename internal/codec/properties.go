package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"

	"github.com/sstkit/sstable/format"
)

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
	// Version5 (spans) only.
	propSpanBlockSize
	propNumSpans
	propNumSpanFragments
	propSmallestSpanKey // left out for a key longer than MaxPropertiesKeyLen
	propLargestSpanKey  // left out for a key longer than MaxPropertiesKeyLen
)

// propDictionary is tag 28: the table's zstd dictionary (after the span
// tags, 23 to 27).
const propDictionary = 28

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
		if n <= 0 || nameLen == 0 || nameLen > format.MaxUserPropertyNameLen || nameLen > uint64(len(val)-pos-n) {
			return nil, format.Corruptf(format.SectionProperties, recOff, "user property at record byte %d: bad name length", pos)
		}
		pos += n
		name := val[pos : pos+int(nameLen)]
		pos += int(nameLen)
		if len(m) > 0 && bytes.Compare(name, last) <= 0 {
			return nil, format.Corruptf(format.SectionProperties, recOff, "user property %q after %q: names must increase", name, last)
		}
		last = name
		valLen, n := binary.Uvarint(val[pos:])
		if n <= 0 || valLen > uint64(len(val)-pos-n) {
			return nil, format.Corruptf(format.SectionProperties, recOff, "user property %q: bad value length", name)
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
func AppendProperties(dst []byte, p *format.Properties) []byte {
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
	if p.Compression != format.DefaultCompression { // absent decodes as DefaultCompression; 0 is rejected
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
	if p.NumSpanFragments > 0 {
		num(propSpanBlockSize, p.SpanBlockSize)
		num(propNumSpans, p.NumSpans)
		num(propNumSpanFragments, p.NumSpanFragments)
		if p.SmallestSpanKey != nil && len(p.SmallestSpanKey) <= format.MaxPropertiesKeyLen {
			str(propSmallestSpanKey, p.SmallestSpanKey)
		}
		if p.LargestSpanKey != nil && len(p.LargestSpanKey) <= format.MaxPropertiesKeyLen {
			str(propLargestSpanKey, p.LargestSpanKey)
		}
	}
	if len(p.Dictionary) > 0 {
		str(propDictionary, p.Dictionary)
	}
	return dst
}

// omittedLen returns the length AppendProperties records for a smallest
// or largest key it leaves out: the key's, when longer than
// MaxPropertiesKeyLen, or for a nil key the omitted length a decoded
// Properties carries; 0 when the key is stored.
func omittedLen(key []byte, omitted uint64) uint64 {
	switch {
	case len(key) > format.MaxPropertiesKeyLen:
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
func DecodeProperties(src []byte, off int64) (format.Properties, error) {
	var p format.Properties
	lastTag := uint64(0)
	for pos := 0; pos < len(src); {
		recOff := off + int64(pos)
		tag, n := binary.Uvarint(src[pos:])
		if n <= 0 {
			return p, format.Corruptf(format.SectionProperties, recOff, "bad record tag varint")
		}
		pos += n
		length, n := binary.Uvarint(src[pos:])
		if n <= 0 {
			return p, format.Corruptf(format.SectionProperties, recOff, "bad record length varint")
		}
		pos += n
		if length > uint64(len(src)-pos) {
			return p, format.Corruptf(format.SectionProperties, recOff, "record %d claims %d bytes, %d remain", tag, length, len(src)-pos)
		}
		if tag <= lastTag {
			return p, format.Corruptf(format.SectionProperties, recOff, "record tag %d after tag %d: tags must increase", tag, lastTag)
		}
		lastTag = tag
		val := src[pos : pos+int(length)]
		pos += int(length)
		var num uint64
		if tag != propSmallestKey && tag != propLargestKey && tag != propFilterPolicy && (tag <= propLargestKeyLen || tag >= propPartitioned && tag <= propNumSpanFragments) {
			v, n := binary.Uvarint(val)
			if n <= 0 || n != len(val) {
				return p, format.Corruptf(format.SectionProperties, recOff, "record %d: bad integer", tag)
			}
			num = v
		}
		switch tag {
		case propFormatVersion:
			if num > math.MaxUint32 {
				return p, format.Corruptf(format.SectionProperties, recOff, "format version %d out of range", num)
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
			if c := format.Compression(num); c != format.NoCompression && c != format.SnappyCompression && c != format.ZstdCompression && c != format.MinLZCompression {
				return p, format.Corruptf(format.SectionProperties, recOff, "unknown compression %d", num)
			}
			p.Compression = format.Compression(num)
		case propFilterPolicy:
			p.FilterPolicy = string(val)
		case propFilterMilliBitsPerKey:
			if num > math.MaxUint32 { // larger values do not survive the float64 round trip
				return p, format.Corruptf(format.SectionProperties, recOff, "filter bits per key %d/1000 out of range", num)
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
			if num <= format.MaxPropertiesKeyLen || num > math.MaxInt32 {
				return p, format.Corruptf(format.SectionProperties, recOff, "record %d: left-out key of %d bytes (want %d to 2^31-1)", tag, num, format.MaxPropertiesKeyLen+1)
			}
			if tag == propSmallestKeyLen {
				p.SmallestKeyOmitted = num
			} else {
				p.LargestKeyOmitted = num
			}
		case propSplitter:
			if len(val) == 0 || len(val) > format.MaxSplitterNameLen {
				return p, format.Corruptf(format.SectionProperties, recOff, "splitter name of %d bytes", len(val))
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
				return p, format.Corruptf(format.SectionProperties, recOff, "partitioned record holds %d, not 1", num)
			}
			p.Partitioned = true
		case propSpanBlockSize:
			p.SpanBlockSize = num
		case propNumSpans:
			p.NumSpans = num
		case propNumSpanFragments:
			p.NumSpanFragments = num
		case propSmallestSpanKey:
			p.SmallestSpanKey = append([]byte{}, val...)
		case propLargestSpanKey:
			p.LargestSpanKey = append([]byte{}, val...)
		case propDictionary:
			if len(val) == 0 {
				return p, format.Corruptf(format.SectionProperties, recOff, "empty dictionary record")
			}
			p.Dictionary = append([]byte{}, val...)
		}
	}
	if has := p.NumSpanFragments > 0; has != (p.SpanBlockSize > 0) || has != (p.NumSpans > 0) || !has && (p.SmallestSpanKey != nil || p.LargestSpanKey != nil) {
		return p, format.Corruptf(format.SectionProperties, off, "span records disagree: %d fragments, %d spans, span block of %d bytes", p.NumSpanFragments, p.NumSpans, p.SpanBlockSize)
	}
	if p.NumSpanFragments > 0 && (p.SmallestSpanKey != nil && len(p.SmallestSpanKey) > format.MaxPropertiesKeyLen || p.LargestSpanKey != nil && len(p.LargestSpanKey) > format.MaxPropertiesKeyLen) {
		return p, format.Corruptf(format.SectionProperties, off, "span bound of more than %d bytes stored in the properties", format.MaxPropertiesKeyLen)
	}
	hasSmallest := p.SmallestKey != nil || p.SmallestKeyOmitted != 0
	hasLargest := p.LargestKey != nil || p.LargestKeyOmitted != 0
	if has := p.NumEntries > 0; has != hasSmallest || has != hasLargest {
		return p, format.Corruptf(format.SectionProperties, off, "%d entries but smallest/largest key records present=%v/%v", p.NumEntries, hasSmallest, hasLargest)
	}
	if p.SmallestKey != nil && p.SmallestKeyOmitted != 0 || p.LargestKey != nil && p.LargestKeyOmitted != 0 {
		return p, format.Corruptf(format.SectionProperties, off, "a key both stored and left out (tags 4 and 18, or 5 and 19)")
	}
	return p, nil
}
