package reader

import (
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
)

// Read-ahead for scans over a ReaderAt.
//
// An iterator of a reader without a mapping reads data blocks through a
// window: when it needs the block that starts where the last one it read
// ended (a sequential read, as every Next that leaves a block makes, and
// First), it reads not the block alone but a window of the file from it,
// MinReadahead bytes the first time, four times more on each sequential
// window up to MaxReadahead, in one ReadAt, and serves the following
// blocks from the window. The growth is fourfold (64 KiB, 256 KiB, 1 MiB),
// so the ramp costs two reads more than 1 MiB windows would from the
// start. A run that starts at the first data block of a table whose data
// blocks take at most MaxReadahead bytes reads them all in its first
// window. So a full scan makes one ReadAt on tables of up to about 1 MiB
// (none when the tail New read holds every data block: source_tail.go),
// at most two ReadAt per MiB of file above about 2.5 MiB, and at most four
// between. A read elsewhere (SeekGE, Last, Prev) reads its block alone and
// starts the growth again. So a full scan makes about one ReadAt per MiB
// of data blocks, against one per block without read-ahead; Pebble's
// reader of remote objects does the same (objstorageprovider's
// remoteReadHandle: 64 KiB growing to 1 MiB after two sequential reads).
//
// The window's memory is lent by the reader's cache (a reservation counted
// against its capacity, never published, released when the window moves
// or the iterator closes); when the cache cannot lend it (the window is
// larger than a shard, Capacity/Shards bytes), the iterator allocates the
// window itself. Either way an iterator holds at most one window, of at
// most MaxReadahead bytes, or one block if larger. Each iterator has its
// own window and issues its own reads: iterators of one reader never wait
// for each other's reads.

// Read-ahead window sizes, in bytes.
const (
	MinReadahead = 64 << 10 // the first window of a sequential run
	MaxReadahead = 1 << 20  // the largest window
)

// readahead is an iterator's read-ahead window.
type readahead struct {
	buf  []byte            // the file's bytes [off, off+len(buf))
	off  int64             // file offset of buf
	pin  blockcache.Handle // buf's memory, when lent by the cache
	heap []byte            // a window of the iterator's own, reused
	next int64             // the end of the last block read: a read from there is sequential
	size int               // the last window's size; 0 before a sequential run
}

// release drops the window.
func (ra *readahead) release() {
	ra.pin.Release()
	ra.buf = nil
}

// readAhead returns the stored bytes and trailer of data block h, from the
// window or by a read. h has been checked against the data section.
func (src *readAtSource) readAhead(s *scratch, h format.BlockHandle) ([]byte, error) {
	ra := s.ra
	off, n := int64(h.Offset), int64(h.Length)+format.BlockTrailerLen
	if off >= ra.off && off+n <= ra.off+int64(len(ra.buf)) {
		ra.next = off + n
		return ra.buf[off-ra.off : off-ra.off+n : off-ra.off+n], nil
	}
	sequential := off == ra.next
	ra.next = off + n
	ra.release()
	if !sequential {
		ra.size = 0
		raw, err := src.readBlock(format.SectionDataBlock, h, s.raw)
		if err != nil {
			return nil, err
		}
		s.raw = raw[:0]
		return raw, nil
	}
	ra.size = min(max(4*ra.size, MinReadahead), MaxReadahead)
	if off == 0 && src.dataEnd <= MaxReadahead {
		// A run from the first block of a table whose data blocks fit one
		// largest window: a scan of a small table, read whole in one
		// ReadAt instead of the ramp's two or three.
		ra.size = int(src.dataEnd)
	}
	end := min(off+max(int64(ra.size), n), int64(src.dataEnd))
	end = max(end, off+n)
	size := int(end - off)
	var buf []byte
	if p, ok := src.sections.Reserve(slotReadahead, size); ok {
		ra.pin, buf = p, p.Bytes()
	} else {
		if cap(ra.heap) < size {
			ra.heap = make([]byte, size)
		}
		buf = ra.heap[:size]
	}
	if err := src.readFull(format.SectionDataBlock, buf, off); err != nil {
		ra.release()
		ra.next, ra.size = -1, 0
		return nil, err
	}
	ra.buf, ra.off = buf, off
	return buf[:n:n], nil
}
