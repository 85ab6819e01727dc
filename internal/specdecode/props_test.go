package specdecode

import (
	"bytes"
	"encoding/binary"
)

// props holds the properties block's records ("Properties block").
type props struct {
	tags            []uint64          // in file order
	version         uint32            // tag 1
	entries         uint64            // tag 2
	dataBlocks      uint64            // tag 3
	smallest        []byte            // tag 4; nil when absent
	largest         []byte            // tag 5; nil when absent
	rawKeys         uint64            // tag 6
	rawValues       uint64            // tag 7
	dataSize        uint64            // tag 8
	indexSize       uint64            // tag 9
	filterSize      uint64            // tag 10
	compression     uint64            // tag 11; 0 when absent
	policy          string            // tag 12
	milliBits       uint64            // tag 13
	blockSize       uint64            // tag 14
	restartInterval uint64            // tag 15
	maxBlock        uint64            // tag 16
	hashSize        uint64            // tag 17; 0 when absent
	smallestLen     uint64            // tag 18; 0 when absent
	largestLen      uint64            // tag 19; 0 when absent
	splitter        string            // tag 20
	user            map[string][]byte // tag 21; nil when absent
	partitioned     bool              // tag 22
	spanSize        uint64            // tag 23; 0 when absent
	numSpans        uint64            // tag 24
	numFragments    uint64            // tag 25
	spanSmallest    []byte            // tag 26; nil when absent
	spanLargest     []byte            // tag 27; nil when absent
	dictionary      []byte            // tag 28; nil when absent
}

// has reports whether the block holds a record of tag.
func (p *props) has(tag uint64) bool {
	for _, t := range p.tags {
		if t == tag {
			return true
		}
	}
	return false
}

// decodeProps decodes the records of a properties block stored at off.
func decodeProps(b []byte, off uint64) (props, error) {
	var p props
	for pos := 0; pos < len(b); {
		at := off + uint64(pos)
		tag, w := binary.Uvarint(b[pos:])
		if w <= 0 {
			return p, bad(secProps, at, "bad tag uvarint")
		}
		pos += w
		n, w := binary.Uvarint(b[pos:])
		if w <= 0 || n > uint64(len(b)-pos-w) {
			return p, bad(secProps, at, "tag %d: bad length", tag)
		}
		pos += w
		val := b[pos : pos+int(n)]
		pos += int(n)
		if len(p.tags) > 0 && tag <= p.tags[len(p.tags)-1] {
			return p, bad(secProps, at, "tag %d after tag %d", tag, p.tags[len(p.tags)-1])
		}
		p.tags = append(p.tags, tag)
		var num uint64
		switch tag {
		case 4, 5, 12, 20, 21, 26, 27, 28:
		default:
			// An integer: one uvarint filling the value.
			v, w := binary.Uvarint(val)
			if w <= 0 || w != len(val) {
				return p, bad(secProps, at, "tag %d: value % x is not one uvarint", tag, val)
			}
			num = v
		}
		switch tag {
		case 1:
			p.version = uint32(num)
			if uint64(p.version) != num {
				return p, bad(secProps, at, "version %d", num)
			}
		case 2:
			p.entries = num
		case 3:
			p.dataBlocks = num
		case 4:
			p.smallest = bytes.Clone(val)
			if p.smallest == nil {
				p.smallest = []byte{}
			}
		case 5:
			p.largest = bytes.Clone(val)
			if p.largest == nil {
				p.largest = []byte{}
			}
		case 6:
			p.rawKeys = num
		case 7:
			p.rawValues = num
		case 8:
			p.dataSize = num
		case 9:
			p.indexSize = num
		case 10:
			p.filterSize = num
		case 11:
			if num < 1 || num > 4 {
				return p, bad(secProps, at, "compression %d is not 1, 2, 3 or 4", num)
			}
			p.compression = num
		case 12:
			p.policy = string(val)
		case 13:
			p.milliBits = num
		case 14:
			p.blockSize = num
		case 15:
			p.restartInterval = num
		case 16:
			p.maxBlock = num
		case 17:
			if num == 0 {
				return p, bad(secProps, at, "hash index size 0")
			}
			p.hashSize = num
		case 18, 19:
			if num <= 1024 {
				return p, bad(secProps, at, "tag %d: key length %d, not above 1024", tag, num)
			}
			if tag == 18 {
				p.smallestLen = num
			} else {
				p.largestLen = num
			}
		case 23:
			p.spanSize = num
		case 24:
			p.numSpans = num
		case 25:
			p.numFragments = num
		case 26:
			p.spanSmallest = append([]byte{}, val...)
		case 27:
			p.spanLargest = append([]byte{}, val...)
		case 20:
			if len(val) < 1 || len(val) > 255 {
				return p, bad(secProps, at, "splitter name of %d bytes", len(val))
			}
			p.splitter = string(val)
		case 21:
			u, err := decodeUser(val, at)
			if err != nil {
				return p, err
			}
			p.user = u
		case 22:
			if num != 1 {
				return p, bad(secProps, at, "partitioned is %d, not 1", num)
			}
			p.partitioned = true
		case 28:
			// A Zstandard dictionary (RFC 8878 section 5): magic
			// 0xEC30A437 and a non-zero ID, 4 bytes LE each.
			if len(val) < 8 || binary.LittleEndian.Uint32(val) != 0xEC30A437 || binary.LittleEndian.Uint32(val[4:]) == 0 {
				return p, bad(secProps, at, "tag 28 is not a zstd dictionary with an ID")
			}
			p.dictionary = val
		default:
			return p, bad(secProps, at, "tag %d is not in the specification", tag)
		}
	}
	// Exactly one of tags 4 and 18, and one of 5 and 19, with entries;
	// none of them without.
	has4, has5 := p.has(4) || p.has(18), p.has(5) || p.has(19)
	if p.has(4) && p.has(18) || p.has(5) && p.has(19) || has4 != (p.entries > 0) || has5 != (p.entries > 0) {
		return p, bad(secProps, off, "%d entries with tags %v", p.entries, p.tags)
	}
	for _, t := range []uint64{1, 2, 3, 8, 9, 10, 14, 15, 16} {
		if !p.has(t) {
			return p, bad(secProps, off, "no tag %d", t)
		}
	}
	return p, nil
}

// decodeUser decodes tag 21: user properties in increasing name order.
func decodeUser(b []byte, at uint64) (map[string][]byte, error) {
	u := map[string][]byte{}
	var last []byte
	for pos := 0; pos < len(b); {
		var parts [2][]byte
		for i := range parts {
			n, w := binary.Uvarint(b[pos:])
			if w <= 0 || n > uint64(len(b)-pos-w) {
				return nil, bad(secProps, at, "user property at byte %d of tag 21: bad length", pos)
			}
			pos += w
			parts[i] = b[pos : pos+int(n)]
			pos += int(n)
		}
		name, value := parts[0], parts[1]
		if len(name) < 1 || len(name) > 255 || len(u) > 0 && bytes.Compare(last, name) >= 0 {
			return nil, bad(secProps, at, "user property name %q (after %q)", name, last)
		}
		last = name
		u[string(name)] = append([]byte{}, value...)
	}
	return u, nil
}

// checkVersion checks the version in the footer and the properties, and
// which tags that version has ("Properties block", "Version 4").
func (t *table) checkVersion() error {
	p := &t.p
	at := t.propsH.off
	switch {
	case p.version != t.version:
		return bad(secProps, at, "version %d, the footer says %d", p.version, t.version)
	case t.version == 1 && p.hashSize != 0:
		return bad(secProps, at, "a version 1 table with a hash index (tag 17)")
	case (t.version == 2 || t.version >= 4) && p.hashSize == 0:
		return bad(secProps, at, "a version %d table without a hash index (tag 17)", t.version)
	case t.version == 5 && !(p.has(23) && p.has(24) && p.has(25)):
		return bad(secProps, at, "a version 5 table without tags 23 to 25")
	case t.version != 5 && (p.has(23) || p.has(24) || p.has(25) || p.has(26) || p.has(27)):
		return bad(secProps, at, "span tags (23 to 27) in a version %d table", t.version)
	case p.partitioned && t.version < 4:
		return bad(secProps, at, "tag 22 in a version %d table", t.version)
	}
	t.partitioned = t.version == 3 || p.partitioned
	return nil
}

// checkLayout checks that the sections follow each other as drawn in
// "File" and "Partitioned index and filter", with the sizes the
// properties give.
func (t *table) checkLayout() error {
	p := &t.p
	switch {
	case t.filter.off != p.dataSize+p.hashSize:
		return bad(secFooter, uint64(len(t.file))-footerLen+16, "filter handle at %d, data size + hash index size is %d", t.filter.off, p.dataSize+p.hashSize)
	case t.filter.end() != t.index.off:
		return bad(secFooter, uint64(len(t.file))-footerLen, "index handle at %d, the filter handle ends at %d", t.index.off, t.filter.end())
	case t.index.end()+p.spanSize != t.propsH.off:
		return bad(secFooter, uint64(len(t.file))-footerLen+32, "properties at %d, the index ends at %d", t.propsH.off, t.index.end())
	case t.propsH.end() != uint64(len(t.file))-footerLen:
		return bad(secFooter, uint64(len(t.file))-footerLen+32, "properties end at %d, the footer starts at %d", t.propsH.end(), len(t.file)-footerLen)
	case p.indexSize != t.index.n+trailerLen:
		return bad(secProps, t.propsH.off, "index size (tag 9) %d, the index handle gives %d", p.indexSize, t.index.n+trailerLen)
	case p.filterSize != t.filter.n+trailerLen:
		return bad(secProps, t.propsH.off, "filter size (tag 10) %d, the filter handle gives %d", p.filterSize, t.filter.n+trailerLen)
	}
	return nil
}
