package specdecode

// The decoder: every section of a table, read as the documentation of
// package format (its overview and the declarations it lists) says, with
// every rule it states checked. It uses no code of the module's own
// decoders.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"strconv"
	"strings"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/minio/minlz"
)

// specError is a place where a table's bytes disagree with the
// specification: the section, the file offset of the bytes, and what.
type specError struct {
	section string
	offset  uint64
	msg     string
}

func (e *specError) Error() string {
	return fmt.Sprintf("%s at byte offset %d: %s", e.section, e.offset, e.msg)
}

func bad(section string, off uint64, format string, args ...any) error {
	return &specError{section, off, fmt.Sprintf(format, args...)}
}

// Section names, as the specification's headings call them.
const (
	secFile       = "file"
	secFooter     = "footer"
	secProps      = "properties"
	secData       = "data block"
	secIndex      = "index block"
	secTop        = "top-level index"
	secIndexPart  = "index partition"
	secFilterPart = "filter partition"
	secFilter     = "filter section"
	secHash       = "hash index"
)

// Constants of the specification ("Footer", "Block trailer").
const (
	footerLen  = 64
	trailerLen = 5
	magic      = "\x8bSST\r\n\x1a\n"
	crcMask    = 0xa282ead8

	blockRaw      = 0
	blockSnappy   = 1
	blockZstd     = 2
	blockMinLZ    = 3
	blockZstdDict = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the CRC-32C of the concatenation of parts, masked as
// LevelDB does.
func maskedCRC(parts ...[]byte) uint32 {
	var c uint32
	for _, p := range parts {
		c = crc32.Update(c, castagnoli, p)
	}
	return (c>>15 | c<<17) + crcMask
}

// handle locates stored bytes; the 5-byte trailer follows them.
type handle struct{ off, n uint64 }

func (h handle) end() uint64 { return h.off + h.n + trailerLen }

// entry is one decoded entry of a block.
type entry struct {
	off    int // offset of its header in the decoded block
	shared int
	key    []byte
	value  []byte
}

// dataBlock is one data block, decoded.
type dataBlock struct {
	h        handle
	typ      byte
	contents []byte // decoded
	end      int    // offset of the restart array
	entries  []entry
	sep      []byte // its index key
	part     int    // its partition, in a partitioned table
}

// partition is one partition of a version 3 (or partitioned version 4)
// table.
type partition struct {
	key        []byte // its top-level index key
	off        uint64 // file offset of its filter partition
	filterLen  uint64
	indexLen   uint64
	firstBlock uint64
	filter     []byte
}

// table is a decoded table.
type table struct {
	file        []byte
	version     uint32
	index       handle // footer: index block, or top-level index
	filter      handle // footer: filter section, or the partitions
	propsH      handle
	p           props
	split       func([]byte) int // a key's prefix length under tag 20; nil without a splitter
	partitioned bool
	blocks      []*dataBlock
	parts       []*partition
	filterBytes []byte     // a one-level table's filter
	hash        *hashIndex // nil without a hash index section
	spans       []fragment // a version 5 table's span block
}

// prefix returns key's prefix under the table's splitter: key itself
// without one.
func (t *table) prefix(key []byte) []byte {
	if t.split == nil {
		return key
	}
	return key[:t.split(key)]
}

// decode decodes and checks a whole table.
func decode(file []byte) (*table, error) {
	t := &table{file: file}
	if err := t.decodeFooter(); err != nil {
		return nil, err
	}
	props, err := t.rawBlock(secProps, t.propsH)
	if err != nil {
		return nil, err
	}
	if t.p, err = decodeProps(props, t.propsH.off); err != nil {
		return nil, err
	}
	if err := t.checkVersion(); err != nil {
		return nil, err
	}
	if err := t.checkLayout(); err != nil {
		return nil, err
	}
	if t.p.splitter != "" {
		if t.split, err = suffixSplitter(t.p.splitter); err != nil {
			return nil, bad(secProps, t.propsH.off, "%v", err)
		}
	}
	var idx []indexEntry
	if t.partitioned {
		idx, err = t.decodePartitions()
	} else {
		idx, err = t.decodeIndexBlock()
	}
	if err != nil {
		return nil, err
	}
	if err := t.decodeDataBlocks(idx); err != nil {
		return nil, err
	}
	if err := t.checkKeys(); err != nil {
		return nil, err
	}
	if t.p.hashSize != 0 {
		sec, err := t.rawBlock(secHash, handle{t.p.dataSize, t.p.hashSize - trailerLen})
		if err != nil {
			return nil, err
		}
		if t.hash, err = t.decodeHashIndex(sec); err != nil {
			return nil, err
		}
		if err := t.checkHashSlots(); err != nil {
			return nil, err
		}
	}
	if err := t.decodeFilters(); err != nil {
		return nil, err
	}
	if err := t.decodeSpans(); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeFooter reads the last 64 bytes ("Footer").
func (t *table) decodeFooter() error {
	n := uint64(len(t.file))
	if n < footerLen {
		return bad(secFile, 0, "%d bytes cannot hold the %d-byte footer", n, footerLen)
	}
	start := n - footerLen
	f := t.file[start:]
	if string(f[56:]) != magic {
		return bad(secFooter, start+56, "magic % x, want % x", f[56:], magic)
	}
	if got, want := maskedCRC(f[:52]), binary.LittleEndian.Uint32(f[52:]); got != want {
		return bad(secFooter, start+52, "footer CRC %#08x, bytes [0, 52) give %#08x", want, got)
	}
	t.version = binary.LittleEndian.Uint32(f[48:])
	if t.version < 1 || t.version > 5 {
		return bad(secFooter, start+48, "version %d is not 1 to 5", t.version)
	}
	hs := []*handle{&t.index, &t.filter, &t.propsH}
	for i, h := range hs {
		h.off = binary.LittleEndian.Uint64(f[16*i:])
		h.n = binary.LittleEndian.Uint64(f[16*i+8:])
		if h.off > start || h.n > start-h.off || start-h.off-h.n < trailerLen {
			return bad(secFooter, start+uint64(16*i), "handle %+v does not fit before the footer", *h)
		}
	}
	return nil
}

// readBlock returns the stored bytes and type of the block at h, after
// checking its trailer's CRC ("Block trailer").
func (t *table) readBlock(section string, h handle) ([]byte, byte, error) {
	limit := uint64(len(t.file)) - footerLen
	if h.off > limit || h.n > limit-h.off || limit-h.off-h.n < trailerLen {
		return nil, 0, bad(section, h.off, "block of %d bytes and its trailer pass the footer at %d", h.n, limit)
	}
	stored := t.file[h.off : h.off+h.n]
	typ := t.file[h.off+h.n]
	want := binary.LittleEndian.Uint32(t.file[h.off+h.n+1:])
	if got := maskedCRC(stored, []byte{typ}); got != want {
		return nil, 0, bad(section, h.off+h.n, "trailer CRC %#08x, the %d stored bytes and type give %#08x", want, h.n, got)
	}
	if typ > blockZstdDict {
		return nil, 0, bad(section, h.off+h.n, "block type %d", typ)
	}
	return stored, typ, nil
}

// rawBlock is readBlock for the sections that are always stored raw.
func (t *table) rawBlock(section string, h handle) ([]byte, error) {
	stored, typ, err := t.readBlock(section, h)
	if err == nil && typ != blockRaw {
		err = bad(section, h.off+h.n, "stored with type %d, not raw", typ)
	}
	return stored, err
}

// zstdDecoder decodes zstd frames; the frame header is parsed here.
var zstdDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))

// decompress returns the contents of a data block of type typ, at most
// maxLen bytes (property tag 16); dict is the table's dictionary (tag
// 28), nil when it has none.
func decompress(off uint64, stored []byte, typ byte, maxLen uint64, dict []byte) ([]byte, error) {
	switch typ {
	case blockMinLZ:
		// A 0 byte, the decoded length as a uvarint, then MinLZ elements.
		if len(stored) == 0 || stored[0] != 0 {
			return nil, bad(secData, off, "MinLZ block does not start with 0")
		}
		n, w := binary.Uvarint(stored[1:])
		if w <= 0 {
			return nil, bad(secData, off, "MinLZ block without a length")
		}
		if n == 0 {
			n = uint64(len(stored) - 1 - w) // literals only
		}
		if n > maxLen {
			return nil, bad(secData, off, "MinLZ block claims %d bytes, largest block %d", n, maxLen)
		}
		out, err := minlz.Decode(nil, stored)
		if err != nil || uint64(len(out)) != n {
			return nil, bad(secData, off, "MinLZ block claims %d bytes, decodes to %d (%v)", n, len(out), err)
		}
		return out, nil
	case blockZstdDict:
		if dict == nil {
			return nil, bad(secData, off, "dictionary block in a table without tag 28")
		}
		n, id, err := zstdHeader(stored)
		if err != nil {
			return nil, bad(secData, off, "%v", err)
		}
		if want := binary.LittleEndian.Uint32(dict[4:]); id != want {
			return nil, bad(secData, off, "zstd frame names dictionary %d, tag 28's is %d", id, want)
		}
		if n > maxLen {
			return nil, bad(secData, off, "zstd frame claims %d bytes, largest block %d", n, maxLen)
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderDicts(dict))
		if err != nil {
			return nil, bad(secProps, off, "tag 28: %v", err)
		}
		defer dec.Close()
		out, err := dec.DecodeAll(stored, make([]byte, 0, n))
		if err != nil || uint64(len(out)) != n {
			return nil, bad(secData, off, "zstd frame claims %d bytes, decodes to %d (%v)", n, len(out), err)
		}
		return out, nil
	case blockSnappy:
		n, err := snappy.DecodedLen(stored)
		if err != nil || uint64(n) > maxLen {
			return nil, bad(secData, off, "snappy block claims %d bytes (%v), largest block %d", n, err, maxLen)
		}
		out, err := snappy.Decode(nil, stored)
		if err != nil {
			return nil, bad(secData, off, "snappy: %v", err)
		}
		return out, nil
	case blockZstd:
		n, id, err := zstdHeader(stored)
		if err != nil {
			return nil, bad(secData, off, "%v", err)
		}
		if id != 0 {
			return nil, bad(secData, off, "type 2 zstd frame names dictionary %d", id)
		}
		if n > maxLen {
			return nil, bad(secData, off, "zstd frame claims %d bytes, largest block %d", n, maxLen)
		}
		out, err := zstdDecoder.DecodeAll(stored, make([]byte, 0, n))
		if err != nil || uint64(len(out)) != n {
			return nil, bad(secData, off, "zstd frame claims %d bytes, decodes to %d (%v)", n, len(out), err)
		}
		return out, nil
	}
	return stored, nil
}

// zstdHeader reads the frame content size from a Zstandard frame
// header (RFC 8878, section 3.1.1.1), which the specification requires,
// and the dictionary ID (0 when absent), and checks that the frame has no
// checksum, which writers omit.
func zstdHeader(b []byte) (uint64, uint32, error) {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return 0, 0, fmt.Errorf("not a zstd frame")
	}
	fhd := b[4]
	fcsFlag, single, checksum, dictFlag := fhd>>6, fhd>>5&1 == 1, fhd>>2&1 == 1, fhd&3
	if checksum {
		return 0, 0, fmt.Errorf("zstd frame carries a checksum, which writers omit")
	}
	pos := 5
	if !single {
		pos++ // window descriptor
	}
	idLen := []int{0, 1, 2, 4}[dictFlag]
	if len(b) < pos+idLen {
		return 0, 0, fmt.Errorf("zstd frame header truncated")
	}
	var id uint32
	for i := idLen - 1; i >= 0; i-- {
		id = id<<8 | uint32(b[pos+i])
	}
	pos += idLen
	size := []int{0, 2, 4, 8}[fcsFlag]
	if fcsFlag == 0 && single {
		size = 1
	}
	if size == 0 {
		return 0, 0, fmt.Errorf("zstd frame without a content size")
	}
	if len(b) < pos+size {
		return 0, 0, fmt.Errorf("zstd frame header truncated")
	}
	var v uint64
	for i := size - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[pos+i])
	}
	if size == 2 {
		v += 256
	}
	return v, id, nil
}

// How a block's entries share key bytes.
type sharing int

const (
	sharePrev  sharing = iota // with the previous key (version 1, and 3 without a hash index)
	shareNone                 // keys stored whole (versions 2 and 3 with a hash index; index blocks)
	shareFirst                // with the block's first key (version 4)
)

// parseBlock decodes a block's entries and restart array ("Data block")
// and checks that the restart points are every interval-th entry and that
// shared is what the version makes it. off is the block's file offset.
func parseBlock(section string, off uint64, b []byte, interval int, mode sharing) ([]entry, int, error) {
	if len(b) < 4 {
		return nil, 0, bad(section, off, "%d bytes cannot hold the restart count", len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n > uint64(len(b)-4)/4 {
		return nil, 0, bad(section, off+uint64(len(b))-4, "%d restarts do not fit %d bytes", n, len(b))
	}
	end := len(b) - 4 - 4*int(n)
	var es []entry
	var prev []byte
	for pos := 0; pos < end; {
		start := pos
		var h [3]uint64
		for i := range h {
			v, w := binary.Uvarint(b[pos:end])
			if w <= 0 {
				return nil, 0, bad(section, off+uint64(pos), "bad uvarint in entry header")
			}
			h[i], pos = v, pos+w
		}
		shared, unshared, vlen := h[0], h[1], h[2]
		if shared > uint64(len(prev)) || unshared > uint64(end-pos) || vlen > uint64(end-pos)-unshared {
			return nil, 0, bad(section, off+uint64(start), "entry (shared %d, unshared %d, value %d) does not fit", shared, unshared, vlen)
		}
		key := append(bytes.Clone(prev[:shared]), b[pos:pos+int(unshared)]...)
		pos += int(unshared)
		es = append(es, entry{off: start, shared: int(shared), key: key, value: b[pos : pos+int(vlen)]})
		pos += int(vlen)
		prev = key
	}
	if want := (len(es) + interval - 1) / interval; int(n) != want {
		return nil, 0, bad(section, off+uint64(len(b))-4, "%d restarts for %d entries at interval %d, want %d", n, len(es), interval, want)
	}
	for j := 0; j < int(n); j++ {
		r := binary.LittleEndian.Uint32(b[end+4*j:])
		if e := es[j*interval]; int(r) != e.off {
			return nil, 0, bad(section, off+uint64(end+4*j), "restart %d is %d, entry %d is at %d", j, r, j*interval, e.off)
		}
	}
	for i, e := range es {
		want := 0
		if i%interval != 0 {
			switch mode {
			case sharePrev:
				want = commonPrefix(e.key, es[i-1].key)
			case shareFirst:
				want = commonPrefix(e.key, es[0].key)
			}
		}
		if e.shared != want {
			return nil, 0, bad(section, off+uint64(e.off), "entry %d shares %d key bytes, want %d", i, e.shared, want)
		}
		if i > 0 && bytes.Compare(es[i-1].key, e.key) >= 0 {
			return nil, 0, bad(section, off+uint64(e.off), "key %q does not follow %q", e.key, es[i-1].key)
		}
	}
	return es, end, nil
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// entryAt decodes the entry at offset off of a block's entries (the
// decoded block up to its restart array) by itself, as a hash index
// lookup does: a whole key, or in version 4 the first key's first shared
// bytes followed by the entry's own.
func entryAt(entries []byte, off uint64, firstKeyShared bool) (key, value []byte, err error) {
	header := func(pos uint64) (shared, unshared, vlen uint64, p uint64, ok bool) {
		var h [3]uint64
		for i := range h {
			if pos >= uint64(len(entries)) {
				return 0, 0, 0, 0, false
			}
			v, w := binary.Uvarint(entries[pos:])
			if w <= 0 {
				return 0, 0, 0, 0, false
			}
			h[i], pos = v, pos+uint64(w)
		}
		ok = h[1] <= uint64(len(entries))-pos && h[2] <= uint64(len(entries))-pos-h[1]
		return h[0], h[1], h[2], pos, ok
	}
	shared, unshared, vlen, p, ok := header(off)
	if !ok {
		return nil, nil, fmt.Errorf("no entry at block offset %d", off)
	}
	tail, value := entries[p:p+unshared], entries[p+unshared:p+unshared+vlen]
	if shared == 0 {
		return tail, value, nil
	}
	if !firstKeyShared {
		return nil, nil, fmt.Errorf("entry at block offset %d shares %d bytes: not stored whole", off, shared)
	}
	s0, u0, _, p0, ok := header(0)
	if !ok || s0 != 0 || shared > u0 {
		return nil, nil, fmt.Errorf("entry at block offset %d shares %d bytes with a first key that cannot give them", off, shared)
	}
	return append(bytes.Clone(entries[p0:p0+shared]), tail...), value, nil
}

// indexEntry is one entry of the index block or of an index partition.
type indexEntry struct {
	sep  []byte
	h    handle
	part int
	at   uint64 // file offset of the entry, for errors
}

// decodeHandle decodes a handle filling v exactly ("Index block").
func decodeHandle(v []byte) (handle, bool) {
	off, w1 := binary.Uvarint(v)
	if w1 <= 0 {
		return handle{}, false
	}
	n, w2 := binary.Uvarint(v[w1:])
	return handle{off, n}, w2 > 0 && w1+w2 == len(v)
}

// indexEntries decodes an index block (or index partition) of handles.
func indexEntries(section string, off uint64, b []byte, part int) ([]indexEntry, error) {
	es, _, err := parseBlock(section, off, b, 1, shareNone)
	if err != nil {
		return nil, err
	}
	out := make([]indexEntry, len(es))
	for i, e := range es {
		h, ok := decodeHandle(e.value)
		if !ok {
			return nil, bad(section, off+uint64(e.off), "value of entry %d is not a handle", i)
		}
		out[i] = indexEntry{e.key, h, part, off + uint64(e.off)}
	}
	return out, nil
}

func (t *table) decodeIndexBlock() ([]indexEntry, error) {
	b, err := t.rawBlock(secIndex, t.index)
	if err != nil {
		return nil, err
	}
	return indexEntries(secIndex, t.index.off, b, 0)
}

// decodePartitions reads the top-level index and every partition
// ("Partitioned index and filter") and returns the index partitions'
// entries in order.
func (t *table) decodePartitions() ([]indexEntry, error) {
	b, err := t.rawBlock(secTop, t.index)
	if err != nil {
		return nil, err
	}
	es, _, err := parseBlock(secTop, t.index.off, b, 1, shareNone)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, bad(secTop, t.index.off, "no partitions")
	}
	var idx []indexEntry
	next := t.p.dataSize + t.p.hashSize
	for i, e := range es {
		at := t.index.off + uint64(e.off)
		var v [4]uint64
		rest := e.value
		for j := range v {
			x, w := binary.Uvarint(rest)
			if w <= 0 {
				return nil, bad(secTop, at, "partition %d: value is not four uvarints", i)
			}
			v[j], rest = x, rest[w:]
		}
		if len(rest) != 0 {
			return nil, bad(secTop, at, "partition %d: %d bytes after the four uvarints", i, len(rest))
		}
		p := &partition{key: e.key, off: v[0], filterLen: v[1], indexLen: v[2], firstBlock: v[3]}
		switch {
		case p.off != next:
			return nil, bad(secTop, at, "partition %d starts at %d, want %d", i, p.off, next)
		case i == 0 && p.firstBlock != 0:
			return nil, bad(secTop, at, "partition 0 starts at block %d", p.firstBlock)
		case i > 0 && p.firstBlock <= t.parts[i-1].firstBlock, p.firstBlock >= t.p.dataBlocks:
			return nil, bad(secTop, at, "partition %d starts at block %d (previous %d, %d blocks)", i, p.firstBlock, t.parts[max(i-1, 0)].firstBlock, t.p.dataBlocks)
		}
		if p.filter, err = t.rawBlock(secFilterPart, handle{p.off, p.filterLen}); err != nil {
			return nil, err
		}
		ih := handle{p.off + p.filterLen + trailerLen, p.indexLen}
		ib, err := t.rawBlock(secIndexPart, ih)
		if err != nil {
			return nil, err
		}
		pe, err := indexEntries(secIndexPart, ih.off, ib, i)
		if err != nil {
			return nil, err
		}
		if uint64(len(idx)) != p.firstBlock {
			return nil, bad(secTop, at, "partition %d starts at block %d, the partitions before it cover %d", i, p.firstBlock, len(idx))
		}
		if len(pe) == 0 {
			return nil, bad(secIndexPart, ih.off, "partition %d covers no data block", i)
		}
		idx = append(idx, pe...)
		t.parts = append(t.parts, p)
		next = p.off + p.filterLen + p.indexLen + 2*trailerLen
	}
	if next != t.index.off {
		return nil, bad(secTop, t.index.off, "partitions end at %d, the top-level index starts at %d", next, t.index.off)
	}
	return idx, nil
}

// decodeDataBlocks reads the data blocks the index names, which must tile
// the data section in order.
func (t *table) decodeDataBlocks(idx []indexEntry) error {
	if uint64(len(idx)) != t.p.dataBlocks {
		return bad(secIndex, t.index.off, "%d index entries, %d data blocks (tag 3)", len(idx), t.p.dataBlocks)
	}
	mode, interval := sharePrev, int(t.p.restartInterval)
	switch {
	case t.version >= 4:
		mode = shareFirst
	case t.p.hashSize != 0:
		mode = shareNone
	}
	if interval < 1 {
		return bad(secProps, t.propsH.off, "restart interval %d", interval)
	}
	var next, maxLen uint64
	for i, ie := range idx {
		if ie.h.off != next {
			return bad(secIndex, ie.at, "data block %d at %d, the previous one ends at %d", i, ie.h.off, next)
		}
		stored, typ, err := t.readBlock(secData, ie.h)
		if err != nil {
			return err
		}
		if err := t.checkCompression(ie.h, typ); err != nil {
			return err
		}
		contents, err := decompress(ie.h.off, stored, typ, t.p.maxBlock, t.p.dictionary)
		if err != nil {
			return err
		}
		es, end, err := parseBlock(secData, ie.h.off, contents, interval, mode)
		if err != nil {
			return err
		}
		if len(es) == 0 {
			return bad(secData, ie.h.off, "data block %d has no entries", i)
		}
		if mode == shareFirst {
			// Each entry decodes from its own offset and the first key.
			for _, e := range es {
				k, v, err := entryAt(contents[:end], uint64(e.off), true)
				if err != nil || !bytes.Equal(k, e.key) || !bytes.Equal(v, e.value) {
					return bad(secData, ie.h.off+uint64(e.off), "entry decodes from its offset to %q (%v), in order to %q", k, err, e.key)
				}
			}
		}
		t.blocks = append(t.blocks, &dataBlock{h: ie.h, typ: typ, contents: contents, end: end, entries: es, sep: ie.sep, part: ie.part})
		next = ie.h.end()
		maxLen = max(maxLen, uint64(len(contents)))
	}
	if next != t.p.dataSize {
		return bad(secData, next, "data blocks end at %d, data size (tag 8) is %d", next, t.p.dataSize)
	}
	if maxLen != t.p.maxBlock {
		return bad(secProps, t.propsH.off, "largest decoded block %d, tag 16 says %d", maxLen, t.p.maxBlock)
	}
	return nil
}

// checkCompression checks a data block's type against tag 11: a table
// compressed with snappy or zstd stores a block raw when compression does
// not pay, and a zstd or MinLZ table stores as snappy a block zstd or
// MinLZ would shrink too much; a zstd table may hold dictionary blocks
// only with a dictionary (tag 28), and plain frames with or without one.
func (t *table) checkCompression(h handle, typ byte) error {
	ok := typ == blockRaw
	switch t.p.compression {
	case 2:
		ok = ok || typ == blockSnappy
	case 3:
		ok = ok || typ == blockSnappy || typ == blockZstd || typ == blockZstdDict && t.p.dictionary != nil
	case 4:
		ok = ok || typ == blockMinLZ || typ == blockSnappy
	}
	if !ok {
		return bad(secData, h.off+h.n, "block type %d in a table of compression %d (tag 11)", typ, t.p.compression)
	}
	return nil
}

// checkKeys checks the keys across blocks against the index, the
// partitions and the properties.
func (t *table) checkKeys() error {
	var n, keyBytes, valueBytes uint64
	var prev []byte
	for i, b := range t.blocks {
		first, last := b.entries[0].key, b.entries[len(b.entries)-1].key
		if i > 0 && bytes.Compare(prev, first) >= 0 {
			return bad(secData, b.h.off, "first key %q does not follow %q", first, prev)
		}
		// last key of block i <= separator < first key of block i+1
		if bytes.Compare(b.sep, last) < 0 || i+1 < len(t.blocks) && bytes.Compare(b.sep, t.blocks[i+1].entries[0].key) >= 0 {
			return bad(secIndex, t.index.off, "separator %q of block %d is not in [%q, next block's first key)", b.sep, i, last)
		}
		// And exactly the key the writer's shortening gives.
		var want []byte
		if i+1 < len(t.blocks) {
			want = separator(last, t.blocks[i+1].entries[0].key)
		} else {
			want = successor(last)
		}
		if !bytes.Equal(b.sep, want) {
			return bad(secIndex, t.index.off, "separator %q of block %d, the writer's rule gives %q", b.sep, i, want)
		}
		if t.partitioned && (i+1 == len(t.blocks) || t.blocks[i+1].part != b.part) && !bytes.Equal(t.parts[b.part].key, last) {
			return bad(secTop, t.index.off, "partition %d's key is %q, its last key %q", b.part, t.parts[b.part].key, last)
		}
		if t.split != nil {
			for _, e := range b.entries {
				if prev != nil && bytes.Compare(t.prefix(e.key), t.prefix(prev)) < 0 {
					return bad(secData, b.h.off+uint64(e.off), "prefix of %q below that of %q", e.key, prev)
				}
				prev = e.key
			}
		}
		for _, e := range b.entries {
			n++
			keyBytes += uint64(len(e.key))
			valueBytes += uint64(len(e.value))
		}
		prev = last
	}
	p := &t.p
	if n != p.entries || keyBytes != p.rawKeys || valueBytes != p.rawValues {
		return bad(secProps, t.propsH.off, "%d entries of %d key and %d value bytes; tags 2, 6, 7 say %d, %d, %d", n, keyBytes, valueBytes, p.entries, p.rawKeys, p.rawValues)
	}
	if n == 0 {
		return nil
	}
	first, last := t.blocks[0].entries[0].key, prev
	for _, k := range []struct {
		key, stored []byte
		omitted     uint64
		tags        string
	}{{first, p.smallest, p.smallestLen, "4/18"}, {last, p.largest, p.largestLen, "5/19"}} {
		switch {
		case len(k.key) <= 1024 && (!bytes.Equal(k.stored, k.key) || k.omitted != 0),
			len(k.key) > 1024 && (k.stored != nil || k.omitted != uint64(len(k.key))):
			return bad(secProps, t.propsH.off, "tags %s (%q, length %d) do not give the key %q", k.tags, k.stored, k.omitted, k.key)
		}
	}
	return nil
}

// separator is the index key a writer puts between blocks ending with a
// and starting with b ("Index block"): LevelDB's FindShortestSeparator,
// except that a key of more than 64 bytes that it would keep whole is cut
// after its first byte past the common prefix and the next byte that is
// not 0xff and not its last, that byte incremented.
func separator(a, b []byte) []byte {
	i := commonPrefix(a, b)
	if i == min(len(a), len(b)) {
		return a // a is a prefix of b
	}
	if a[i] < 0xff && a[i]+1 < b[i] {
		return append(bytes.Clone(a[:i]), a[i]+1)
	}
	if len(a) > 64 {
		for j := i + 1; j < len(a)-1; j++ {
			if a[j] != 0xff {
				return append(bytes.Clone(a[:j]), a[j]+1)
			}
		}
	}
	return a
}

// successor is the last block's index key: LevelDB's FindShortSuccessor.
func successor(a []byte) []byte {
	for i, c := range a {
		if c != 0xff {
			return append(bytes.Clone(a[:i]), c+1)
		}
	}
	return a
}

// suffixSplitter returns the split function of the built-in splitter
// "sstkit.Suffix(n)": all but the last n bytes, or a shorter key whole.
func suffixSplitter(name string) (func([]byte) int, error) {
	digits, ok := strings.CutPrefix(name, "sstkit.Suffix(")
	digits, ok2 := strings.CutSuffix(digits, ")")
	n, err := strconv.Atoi(digits)
	if !ok || !ok2 || err != nil || n < 0 {
		return nil, fmt.Errorf("splitter %q is not a built-in one", name)
	}
	return func(key []byte) int {
		if len(key) < n {
			return len(key)
		}
		return len(key) - n
	}, nil
}

// bitLen is the bit length of v.
func bitLen(v uint64) uint { return uint(bits.Len64(v)) }
