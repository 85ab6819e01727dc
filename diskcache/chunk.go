package diskcache

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"sync"
)

// A chunk file is its header, then its data:
//
//	magic      8 bytes  "sstdc\x00\x01\n"
//	chunkSize  uint32   ChunkSize when written
//	keyLen     uint32   the object key's length
//	objSize    uint64   the object's size
//	index      uint64   the chunk's index in the object
//	dataLen    uint32   the data's length
//	key        keyLen bytes
//	pageCRCs   ceil(dataLen/1024) x uint32: CRC-32C of each 1 KiB page of the data
//	headerCRC  uint32   CRC-32C of the header's bytes before it
//	padding    zeros up to the next multiple of 4 KiB (not checked)
//
// all little-endian, the data starting on a 4 KiB boundary: a read of a
// few KiB of data touches no more file system pages than a read of those
// bytes from the table itself, and a full chunk's file is 68 KiB, the
// 64 KiB of data and the first 4 KiB block its charge would round up to
// anyway. 1 KiB pages keep a read of a 4 KiB block to at most 6 KiB read
// and checked. The header's length thus follows from the identity
// a reader asks for, so it is read in one pread and checked whole; the
// Cache keeps the checked page CRCs and the open file (up to
// Options.MaxOpenFiles of them), so that a read from disk is then one
// pread of the pages it needs, checked against those CRCs.
const (
	magic     = "sstdc\x00\x01\n"
	fixedHdr  = 8 + 4 + 4 + 8 + 8 + 4
	crcLen    = 4
	maxKeyLen = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func pages(dataLen int64) int64 { return (dataLen + pageSize - 1) / pageSize }

func headerLen(keyLen int, dataLen int64) int64 {
	return fixedHdr + int64(keyLen) + crcLen*pages(dataLen) + crcLen
}

// dataOffset is where the data starts in a file whose header is hl bytes
// long: hl rounded up to 4 KiB.
func dataOffset(hl int64) int64 { return (hl + blockSize - 1) / blockSize * blockSize }

// encodeChunk returns the file of chunk ci, data, of the object key of
// size bytes.
func encodeChunk(key string, size, ci int64, data []byte) []byte {
	h := headerLen(len(key), int64(len(data)))
	off := dataOffset(h)
	b := make([]byte, 0, off+int64(len(data)))
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, ChunkSize)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	b = binary.LittleEndian.AppendUint64(b, uint64(ci))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, key...)
	for p := 0; p < len(data); p += pageSize {
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(data[p:min(p+pageSize, len(data))], castagnoli))
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	b = b[:off]
	return append(b, data...)
}

// readHeader reads and checks the header of the chunk file f, which
// must hold chunk ci (dataLen bytes) of the object key of size bytes: the
// header must match that identity and its CRC. It returns the data's
// offset in the file and the page CRCs.
func readHeader(f *os.File, key string, size, ci, dataLen int64) (dataOff int64, crcs []byte, ok bool) {
	if len(key) > maxKeyLen {
		return 0, nil, false
	}
	hl := headerLen(len(key), dataLen)
	hdr := make([]byte, hl)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return 0, nil, false
	}
	le := binary.LittleEndian
	if string(hdr[:8]) != magic ||
		le.Uint32(hdr[8:]) != ChunkSize ||
		le.Uint32(hdr[12:]) != uint32(len(key)) ||
		le.Uint64(hdr[16:]) != uint64(size) ||
		le.Uint64(hdr[24:]) != uint64(ci) ||
		le.Uint32(hdr[32:]) != uint32(dataLen) ||
		string(hdr[fixedHdr:fixedHdr+len(key)]) != key ||
		le.Uint32(hdr[hl-crcLen:]) != crc32.Checksum(hdr[:hl-crcLen], castagnoli) {
		return 0, nil, false
	}
	return dataOffset(hl), hdr[fixedHdr+len(key) : hl-crcLen : hl-crcLen], true
}

// pagePool holds buffers of ChunkSize bytes for readPages.
var pagePool = sync.Pool{New: func() any { b := make([]byte, ChunkSize); return &b }}

// readPages copies the data bytes [lo, hi) of the chunk file f, whose
// data starts at dataOff and is dataLen bytes with page CRCs
// crcs (from readHeader), into dst, and reports whether the pages holding
// them were read whole and pass their CRCs, and whether the read failed
// because f was closed.
func readPages(f *os.File, dataOff int64, crcs []byte, dataLen, lo, hi int64, dst []byte) (ok, closed bool) {
	p0, p1 := lo/pageSize, (hi+pageSize-1)/pageSize
	bp := pagePool.Get().(*[]byte)
	defer pagePool.Put(bp)
	data := (*bp)[:min(p1*pageSize, dataLen)-p0*pageSize]
	if _, err := f.ReadAt(data, dataOff+p0*pageSize); err != nil {
		return false, errors.Is(err, os.ErrClosed)
	}
	le := binary.LittleEndian
	for p := p0; p < p1; p++ {
		pg := data[(p-p0)*pageSize : min((p-p0+1)*pageSize, int64(len(data)))]
		if le.Uint32(crcs[p*crcLen:]) != crc32.Checksum(pg, castagnoli) {
			return false, false
		}
	}
	copy(dst, data[lo-p0*pageSize:hi-p0*pageSize])
	return true, false
}
