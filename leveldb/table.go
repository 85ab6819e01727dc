package leveldb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/blockcache"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/reader"
)

// Magic is the magic number in the last 8 bytes of a LevelDB table
// (LevelDB's kTableMagicNumber, table/format.h), stored little-endian.
const Magic = 0xdb4775248b80fb57

// FooterLen is the size of a LevelDB table's footer, in bytes: two block
// handles zero-padded to 40 bytes, then the magic number.
const FooterLen = 48

// Section names in this package's corruption errors, beside format's
// SectionFooter, SectionIndex, SectionDataBlock and SectionFile.
const (
	SectionMetaindex = "metaindex block"
	SectionFilter    = "filter block"
)

// ErrClosed is returned by a Table's methods after Close.
var ErrClosed = errors.New("leveldb: table closed")

// ErrNotTable is wrapped by the error OpenTable and NewTable return for
// a file whose last 8 bytes are not LevelDB's magic number. The error
// wraps format.ErrCorrupt too.
var ErrNotTable = errors.New("leveldb: not a LevelDB table")

// TableOptions configure OpenTable and NewTable. The zero value (or nil)
// maps the file and caches decoded blocks in reader.DefaultCache.
type TableOptions struct {
	// Cache holds the table's decompressed data blocks, and every data
	// block of a table read without a mapping; shared with the module's
	// own readers. nil: reader.DefaultCache().
	Cache *cache.Cache
	// NoMmap makes OpenTable read with ReadAt rather than map the file.
	NoMmap bool
	// Name names the table in errors; OpenTable uses the path.
	Name string
}

// Table is one open LevelDB table. It is safe for concurrent use: many
// goroutines may call Get and use iterators of their own at once.
type Table struct {
	name   string
	file   *os.File // opened by OpenTable; nil for NewTable
	ra     io.ReaderAt
	mapped []byte // the file, when mapped
	size   int64

	footer    tableFooter
	index     blockIndex
	filter    *filterBlock // nil: no filter consulted
	metaNames []string     // the metaindex's keys

	cache    *blockcache.Table // decoded data blocks, slot i for block i
	verified []atomic.Bool     // per data block: a mapped raw block's checksum passed
	closed   atomic.Bool
}

type tableFooter struct {
	metaindex, index             format.BlockHandle
	metaindexType, indexType     byte
	metaindexStored, indexStored int
}

// OpenTable opens the LevelDB table at path, mapping it into memory
// unless o.NoMmap. Errors: the file's own, and errors wrapping
// format.ErrCorrupt (ErrNotTable too, for a file without LevelDB's magic
// number) naming path, the section and the offset.
func OpenTable(path string, o *TableOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("leveldb: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("leveldb: %w", err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("leveldb: open %s: is a directory", path)
	}
	var opts TableOptions
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
	if err := t.open(&opts); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

// NewTable opens the LevelDB table of size bytes read through r. Errors
// as OpenTable's, named by o.Name.
func NewTable(r io.ReaderAt, size int64, o *TableOptions) (*Table, error) {
	var opts TableOptions
	if o != nil {
		opts = *o
	}
	t := &Table{name: opts.Name, ra: r, size: size}
	if err := t.open(&opts); err != nil {
		t.release()
		return nil, err
	}
	return t, nil
}

func (t *Table) open(o *TableOptions) (err error) {
	defer restoreFault(protect())
	defer t.recoverFault(&err)
	if err := t.readFooter(); err != nil {
		return t.named(err)
	}
	if err := t.readIndex(); err != nil {
		return t.named(err)
	}
	if err := t.readMetaindex(); err != nil {
		return t.named(err)
	}
	pub := o.Cache
	if pub == nil {
		if pub, err = reader.DefaultCache(); err != nil {
			return fmt.Errorf("leveldb: open %s: block cache: %w", t.name, err)
		}
	}
	n := t.index.len()
	if t.cache, err = blockcache.FromPublic(pub).NewTable(max(n, 1)); err != nil {
		return fmt.Errorf("leveldb: open %s: block cache: %w", t.name, err)
	}
	if t.mapped != nil {
		t.verified = make([]atomic.Bool, n)
	}
	return nil
}

// readFooter reads and checks the footer: the magic number, and two block
// handles inside the file.
func (t *Table) readFooter() error {
	if t.size < FooterLen {
		return format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for the %d-byte footer: not a LevelDB table", t.size, FooterLen)
	}
	off := t.size - FooterLen
	buf, err := t.read(off, FooterLen, nil)
	if err != nil {
		return err
	}
	if m := binary.LittleEndian.Uint64(buf[40:]); m != Magic {
		return &notTableError{format.Corruptf(format.SectionFooter, off+40, "magic number %#016x is not LevelDB's %#016x", m, uint64(Magic))}
	}
	meta, n1 := codec.DecodeHandle(buf[:40])
	if n1 <= 0 {
		return format.Corruptf(format.SectionFooter, off, "bad metaindex block handle")
	}
	idx, n2 := codec.DecodeHandle(buf[n1:40])
	if n2 <= 0 {
		return format.Corruptf(format.SectionFooter, off+int64(n1), "bad index block handle")
	}
	for _, h := range []format.BlockHandle{meta, idx} {
		if !inside(h, uint64(off)) {
			return format.Corruptf(format.SectionFooter, off, "block handle (offset %d, %d bytes) lies outside the %d bytes before the footer", h.Offset, h.Length, off)
		}
	}
	t.footer.metaindex, t.footer.index = meta, idx
	return nil
}

// notTableError is the error for a file without LevelDB's magic number:
// errors.Is finds both ErrNotTable and format.ErrCorrupt.
type notTableError struct{ err error }

func (e *notTableError) Error() string { return e.err.Error() }
func (e *notTableError) Unwrap() []error {
	return []error{e.err, ErrNotTable}
}

// read returns n bytes at off: a slice of the mapping, or read into buf
// (grown as needed). A short read is an error wrapping format.ErrCorrupt.
func (t *Table) read(off int64, n int, buf []byte) ([]byte, error) {
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
	return nil, fmt.Errorf("leveldb: read %d bytes at offset %d: %w", n, off, err)
}

// readBlock reads the block at h with its trailer, checks its checksum,
// and returns its contents, decoded into a new buffer if compressed.
func (t *Table) readBlock(section string, h format.BlockHandle) (contents []byte, typ byte, err error) {
	buf, err := t.read(int64(h.Offset), int(h.Length)+format.BlockTrailerLen, nil)
	if err != nil {
		return nil, 0, err
	}
	stored, typ, err := checkBlock(section, int64(h.Offset), buf)
	if err != nil {
		return nil, 0, err
	}
	contents, err = decode(section, int64(h.Offset), stored, typ, nil)
	if err != nil {
		return nil, 0, err
	}
	if typ == format.BlockTypeRaw && t.mapped != nil {
		contents = append([]byte(nil), contents...) // kept: not an alias of the mapping
	}
	return contents, typ, nil
}

// checkBlock is codec.CheckBlock for LevelDB's two block types.
func checkBlock(section string, off int64, buf []byte) ([]byte, byte, error) {
	if len(buf) >= format.BlockTrailerLen {
		if typ := buf[len(buf)-format.BlockTrailerLen]; typ > format.BlockTypeSnappy {
			// Checked first so that an unknown type reads as such, not as a
			// checksum mismatch (the type byte is under the checksum).
			if _, _, err := codec.CheckBlock(section, off, buf); err != nil {
				return nil, 0, err
			}
			return nil, 0, format.Corruptf(section, off+int64(len(buf)-format.BlockTrailerLen), "block compression type %d: LevelDB tables use 0 (none) or 1 (snappy)", typ)
		}
	}
	return codec.CheckBlock(section, off, buf)
}

// maxBlockLen bounds a decoded block, in bytes: LevelDB cuts blocks near
// its block size (4 KiB by default), and a key or value larger than that
// makes a block of its own; 1 GiB is beyond any LevelDB writes.
const maxBlockLen = 1 << 30

// decode returns a checked block's contents, decoded into dst's spare
// capacity or a new buffer if compressed, aliasing stored if raw.
func decode(section string, off int64, stored []byte, typ byte, dst []byte) ([]byte, error) {
	return codec.DecodeBlock(section, off, stored, typ, maxBlockLen, dst[:0])
}

// readIndex reads the index block into memory.
func (t *Table) readIndex() error {
	contents, typ, err := t.readBlock(format.SectionIndex, t.footer.index)
	if err != nil {
		return err
	}
	t.footer.indexType, t.footer.indexStored = typ, int(t.footer.index.Length)
	return t.index.init(contents, int64(t.footer.index.Offset), uint64(t.size-FooterLen))
}

// Close releases the table's mapping, file and cached blocks. Iterators
// must be closed first; later calls return ErrClosed.
func (t *Table) Close() error {
	if t.closed.Swap(true) {
		return t.named(ErrClosed)
	}
	return t.release()
}

func (t *Table) release() error {
	var err error
	if t.cache != nil {
		t.cache.Close()
	}
	if t.mapped != nil {
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

// Name returns the name the table's errors carry: OpenTable's path, or
// TableOptions.Name.
func (t *Table) Name() string { return t.name }

// named returns err naming the table's file, as package reader does.
func (t *Table) named(err error) error {
	if err == nil || err == reader.ErrNotFound || t.name == "" {
		return err
	}
	var nt *notTableError
	if errors.As(err, &nt) {
		return &notTableError{t.named(nt.err)}
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
