// Package lsmtable is the table engine shared by the LevelDB-family
// readers (packages leveldb and rocksdb): a table of internal keys in
// data blocks with restart points, found through an index flattened into
// arrays (its fences searched through a B+ tree of cache-line nodes,
// fencetree.go), its data blocks checked, decoded and cached, each cached
// block behind a side index that takes Gets and seeks straight to their
// entry (sideindex.go), read by iterators, Get and Verify, and shown to
// package merge as a level. The
// format packages read their own footers, meta blocks, index encodings
// and filters, and hand this package a BlockCodec, an Index and a
// Filter.
package lsmtable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// ErrClosed is wrapped by the errors of a Table's methods after Close.
var ErrClosed = errors.New("table closed")

// BlockCodec checks and decodes a format's blocks: the 5-byte trailer
// (a type byte and a checksum) and the compression the type byte names.
type BlockCodec interface {
	// Check verifies buf, a block's stored bytes and trailer read at
	// file offset off, and returns the stored bytes and the type byte;
	// an error wraps format.ErrCorrupt naming section and off.
	Check(section string, off int64, buf []byte) (stored []byte, typ byte, err error)
	// Decode returns the contents of checked stored bytes of type typ:
	// stored itself when raw (typ 0), else decoded into dst's spare
	// capacity or a new buffer.
	Decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error)
	// DecodedLen returns a compressed block's decoded size in bytes when
	// its header gives it, so that the cache can reserve room.
	DecodedLen(typ byte, stored []byte) (int, bool)
}

// Filter answers whether a data block may hold a user key: false means
// certainly not.
type Filter interface {
	MayContain(blockOff uint64, userKey []byte) bool
}

// Options configure Open and New.
type Options struct {
	Cache  *cache.Cache // decoded data blocks; nil: reader.DefaultCache()
	NoMmap bool         // Open reads with ReadAt rather than map the file
	Name   string       // names the table in errors; Open uses the path
	// ReadAhead lets a forward scan decode the table's next data blocks
	// on another goroutine (readahead.go).
	ReadAhead bool
}

// Table is one open table, safe for concurrent use. A format package
// fills its exported fields in the init function given to Open or New,
// before any read.
type Table struct {
	name   string
	file   *os.File // opened by Open; nil for New
	ra     io.ReaderAt
	mapped []byte // the file, when mapped
	size   int64

	// Codec checks and decodes every block.
	Codec BlockCodec
	// Index lists the data blocks.
	Index Index
	// Filter is consulted by Get once the index has found the data
	// block (LevelDB's filters, one per range of block offsets); nil:
	// none.
	Filter Filter
	// KeyFilter is a whole-table filter (RocksDB's full and partitioned
	// filters), consulted by Get before the index: most absent keys then
	// cost no index search. nil: none.
	KeyFilter func(userKey []byte) bool
	// Kinds has bit k set for each kind k a data block may hold.
	Kinds uint64
	// PackedFooter says data blocks end in RocksDB's packed footer: the
	// restart count in the low 31 bits, bit 31 marking a data-block hash
	// index between the restart array and the footer.
	PackedFooter bool
	// GlobalSeq, when HasGlobalSeq, is every entry's sequence number (an
	// ingested RocksDB file's); the entries then store 0.
	GlobalSeq    uint64
	HasGlobalSeq bool
	// Spans are the table's range deletions, fragmented; nil: none.
	Spans *Fragments
	// VerifyMeta checks what Verify does not read through the index;
	// nil: nothing more.
	VerifyMeta func() error

	readAhead bool
	cache     *blockcache.Table // decoded data blocks, slot i for block i
	verified  []atomic.Bool     // per data block: a mapped raw block's checksum passed

	// sideDensity is the decoded bytes per entry of the last data block
	// given a side index, 0 before the first, -1 after a block whose
	// entries were too small for one; sideTries counts the blocks
	// cached since, one in 16 of which tries again (sideRoom).
	sideDensity atomic.Int32
	sideTries   atomic.Uint32
	closed      atomic.Bool
	// unmapped is the address and length of the mapping Close released,
	// so that a fault reading it (an iterator used after Close) is told
	// from a bug.
	unmapped [2]uintptr
}

// Open opens the table file at path, mapping it unless o.NoMmap, and
// calls init to read the format's own parts. Errors: the file's own, and
// init's.
func Open(path string, o *Options, init func(*Table) error) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open %s: is a directory", path)
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.Name = path
	t := &Table{name: path, file: f, ra: f, size: st.Size()}
	if !opts.NoMmap {
		if m, err := mmapFile(f, st.Size()); err == nil {
			t.mapped = m
		}
	}
	if err := t.open(&opts, init); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

// New opens the table of size bytes read through r, as Open does.
func New(r io.ReaderAt, size int64, o *Options, init func(*Table) error) (*Table, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	t := &Table{name: opts.Name, ra: r, size: size}
	if err := t.open(&opts, init); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

func (t *Table) open(o *Options, init func(*Table) error) (err error) {
	defer restoreFault(protect())
	defer t.recoverFault(&err)
	t.readAhead = o.ReadAhead
	if err := init(t); err != nil {
		return t.Named(err)
	}
	pub := o.Cache
	if pub == nil {
		if pub, err = reader.DefaultCache(); err != nil {
			return fmt.Errorf("open %s: block cache: %w", t.name, err)
		}
	}
	n := t.Index.Len()
	if t.cache, err = blockcache.FromPublic(pub).NewTable(max(n, 1)); err != nil {
		return fmt.Errorf("open %s: block cache: %w", t.name, err)
	}
	if t.mapped != nil {
		t.verified = make([]atomic.Bool, n)
	}
	return nil
}

// Size returns the file's size in bytes.
func (t *Table) Size() int64 { return t.size }

// Read returns n bytes at off: a slice of the mapping, or read into buf
// (grown as needed). A short read is an error wrapping format.ErrCorrupt.
func (t *Table) Read(off int64, n int, buf []byte) ([]byte, error) {
	if off < 0 || n < 0 || off > t.size || int64(n) > t.size-off {
		return nil, format.Corruptf(format.SectionFile, off, "%d bytes at offset %d lie outside the %d-byte file", n, off, t.size)
	}
	if t.mapped != nil {
		return t.mapped[off : off+int64(n) : off+int64(n)], nil
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	m, err := t.ra.ReadAt(buf, off)
	if m == n {
		return buf, nil
	}
	if err == nil || err == io.EOF {
		return nil, format.Corruptf(format.SectionFile, off+int64(m), "short read: %d of %d bytes at offset %d (was the file truncated?)", m, n, off)
	}
	return nil, fmt.Errorf("read %d bytes at offset %d: %w", n, off, err)
}

// ReadBlock reads the block at h with its trailer, checks it, and returns
// its contents on the heap (never aliasing the mapping) and its type.
func (t *Table) ReadBlock(section string, h format.BlockHandle) (contents []byte, typ byte, err error) {
	if !Inside(h, uint64(t.size)) {
		return nil, 0, format.Corruptf(section, int64(h.Offset), "block handle (offset %d, %d bytes) lies outside the %d-byte file", h.Offset, h.Length, t.size)
	}
	buf, err := t.Read(int64(h.Offset), int(h.Length)+format.BlockTrailerLen, nil)
	if err != nil {
		return nil, 0, err
	}
	stored, typ, err := t.Codec.Check(section, int64(h.Offset), buf)
	if err != nil {
		return nil, 0, err
	}
	contents, err = t.Codec.Decode(section, int64(h.Offset), stored, typ, nil)
	if err != nil {
		return nil, 0, err
	}
	if typ == format.BlockTypeRaw && t.mapped != nil {
		contents = append([]byte(nil), contents...) // kept: not an alias of the mapping
	}
	return contents, typ, nil
}

// initBlock points blk at a data block's contents, read at file offset
// off: a plain block, or one in RocksDB's packed footer layout.
func (t *Table) initBlock(blk *codec.BlockIter, off int64, contents []byte) error {
	if !t.PackedFooter {
		return blk.Init(format.SectionDataBlock, off, contents)
	}
	n := len(contents)
	if n < 4 {
		return format.Corruptf(format.SectionDataBlock, off, "data block of %d bytes is shorter than its 4-byte footer", n)
	}
	packed := binary.LittleEndian.Uint32(contents[n-4:])
	if packed&(1<<31) == 0 {
		return blk.Init(format.SectionDataBlock, off, contents)
	}
	// Entries, the restart array, the hash index's buckets (a byte each),
	// their count (u16), the packed footer: the hash index only speeds
	// up point lookups, so the iterator reads around it.
	restarts := uint64(packed &^ (1 << 31))
	if n < 6 {
		return format.Corruptf(format.SectionDataBlock, off, "data block of %d bytes is too short for its hash index", n)
	}
	buckets := uint64(binary.LittleEndian.Uint16(contents[n-6:]))
	tail := 4*restarts + buckets + 6
	if restarts == 0 || tail > uint64(n) {
		return format.Corruptf(format.SectionDataBlock, off, "data block of %d bytes cannot hold %d restart points and %d hash buckets", n, restarts, buckets)
	}
	end := n - int(tail)
	return blk.InitEntries(format.SectionDataBlock, off, contents[:end+4*int(restarts)+4], end)
}

// Close releases the table's mapping, file and cached blocks. Iterators
// must be closed first; later calls return an error wrapping ErrClosed.
func (t *Table) Close() error {
	if t.closed.Swap(true) {
		return t.Named(ErrClosed)
	}
	return t.release()
}

// Closed reports whether Close has been called.
func (t *Table) Closed() bool { return t.closed.Load() }

func (t *Table) release() error {
	var err error
	if t.cache != nil {
		t.cache.Close()
	}
	if t.mapped != nil {
		t.unmapped = [2]uintptr{uintptr(unsafe.Pointer(unsafe.SliceData(t.mapped))), uintptr(len(t.mapped))}
		err = munmap(t.mapped)
		t.mapped = nil
	}
	if t.file != nil {
		if e := t.file.Close(); err == nil {
			err = e
		}
	}
	return err
}

// Name returns the name the table's errors carry.
func (t *Table) Name() string { return t.name }

// Named returns err naming the table's file, as package reader does.
func (t *Table) Named(err error) error {
	if err == nil || err == reader.ErrNotFound || t.name == "" {
		return err
	}
	var nt *NotTableError
	if errors.As(err, &nt) {
		return &NotTableError{Err: t.Named(nt.Err), Sentinel: nt.Sentinel}
	}
	if ce, ok := err.(*format.CorruptError); ok {
		if ce.File != "" {
			return err
		}
		c := *ce
		c.File = t.name
		return &c
	}
	return fmt.Errorf("%s: %w", t.name, err)
}

// NotTableError is the error for a file without the format's magic
// number: errors.Is finds both format.ErrCorrupt (in Err) and Sentinel.
type NotTableError struct {
	Err      error
	Sentinel error
}

// Error returns Err's message.
func (e *NotTableError) Error() string { return e.Err.Error() }

// Unwrap returns Err and Sentinel.
func (e *NotTableError) Unwrap() []error { return []error{e.Err, e.Sentinel} }

// Inside reports whether the block at h, with its trailer, lies within
// the first limit bytes of the file.
func Inside(h format.BlockHandle, limit uint64) bool {
	return limit >= format.BlockTrailerLen && h.Length <= limit-format.BlockTrailerLen && h.Offset <= limit-format.BlockTrailerLen-h.Length
}

// EmptyBlock reports whether a block (checked by BlockIter.Init) holds no
// entries: only its restart array, which LevelDB's block builder writes
// with one restart point at 0 even when no entry follows.
func EmptyBlock(contents []byte) bool {
	n := len(contents)
	return n >= 4 && uint64(n) == 4+4*uint64(binary.LittleEndian.Uint32(contents[n-4:]))
}
