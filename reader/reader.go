// Package reader opens table files written by package builder and answers
// point lookups (MayContain, Get) and ordered scans (Iterator). Files are
// memory-mapped read-only where the platform allows it; New reads through
// any io.ReaderAt instead. A Reader is safe for concurrent use.
package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
)

// ErrNotFound is wrapped by the error Get returns for an absent key.
var ErrNotFound = errors.New("sstable: key not found")

// ErrClosed is wrapped by the errors of calls made after Close.
var ErrClosed = errors.New("sstable: reader closed")

var errNoMmap = errors.New("mmap unavailable")

// DefaultTailSize is the default Options.TailSize, in bytes: 256 KiB.
const DefaultTailSize = 256 << 10

// maxPropertiesLen bounds the decoded properties block, in bytes.
const maxPropertiesLen = 1 << 20

// Options configure a Reader. A nil *Options means the defaults.
type Options struct {
	// Filters lists filter policies to recognise by name, besides the
	// built-in filterblock.Bloom, LevelDBBloom and BinaryFuse8; an entry
	// here takes precedence over a built-in policy of the same name. A
	// table whose policy is not known is read as if it had no filter:
	// MayContain returns true, FilterKnown returns false, and
	// Properties().FilterPolicy still names the stored policy.
	Filters []filterblock.Policy

	// Splitters lists splitters to recognise by name (format.Splitter),
	// besides the built-in format.Suffix(n); an entry here takes
	// precedence over a built-in splitter of the same name. A table built
	// with a splitter the reader does not know has its filter and hash
	// index over prefixes it cannot compute, so it is read as if it had
	// no filter, no splitter and no hash index: MayContain and
	// MayContainPrefix return true, Get searches the index block,
	// Iterator.SeekPrefixGE works as SeekGE followed by a bytes.HasPrefix
	// check, and Properties().SplitterUnknown is set.
	Splitters []format.Splitter

	// Cache holds the reader's decoded blocks: data blocks that are
	// compressed, or read through ReadAt, and, for a reader without a file
	// mapping, its index block, filter and hash index. Any number of
	// readers may share one Cache; its capacity then bounds what they all
	// hold. nil means DefaultCache(), one cache of DefaultCacheSize bytes
	// shared by every reader opened without one. Raw data blocks of a
	// memory-mapped file are read in place and never cached.
	Cache *cache.Cache

	// TailSize is how many bytes at the end of the file a reader without
	// a mapping (New, or Open with NoMmap) reads in its first ReadAt: the
	// footer, the properties, and the filter, index block and hash index
	// too when they fit, so that opening a table and looking a key up in it
	// cost as few reads as possible on object storage, where every ReadAt
	// is a request. 0 means DefaultTailSize; values below the footer's 64
	// bytes mean 64. A version 2 table's hash index is used over a
	// ReaderAt only when every section after the data blocks fits in the
	// tail; otherwise Get searches the index block, as in version 1, so
	// that no lookup reads a large hash index whole. A partitioned
	// (format.Version3) table's hash index is never used over a ReaderAt:
	// lookups read the key's partition, as without a hash index. When the
	// tail holds data blocks (or partitions) too, as in tables of less
	// than about TailSize bytes of filter and index, the reader keeps
	// those in its cache, and lookups and scans of them make no read
	// (tail.go).
	TailSize int

	// NoMmap makes Open read the file with pread (ReadAt) instead of
	// memory-mapping it. The OS page cache then holds no pages on the
	// reader's behalf beyond what the kernel keeps anyway, and every byte
	// the reader holds is in Cache (within its capacity) or in the small
	// per-reader state described in the package documentation.
	NoMmap bool
}

// Reader reads one table. All methods are safe for concurrent use. After
// Close, Get, Has and Verify return errors wrapping ErrClosed, NewIter
// returns an iterator whose Err wraps ErrClosed, and MayContain and
// MayContainPrefix return true. An Iterator opened before Close keeps
// working until it is closed: it holds the file (and its mapping) open,
// as a call in flight does.
type Reader struct {
	mapped []byte      // the whole file when memory-mapped, else nil
	ra     io.ReaderAt // the source when not memory-mapped
	file   *os.File    // closed by Close, if we opened it
	size   int64
	name   string // the path given to Open, for messages; "" from New

	footer  footer.Footer
	props   format.Properties
	dataEnd uint64 // end of the data blocks: the hash index's or filter section's offset

	policy      filterblock.Policy // nil when the table's policy (or splitter) is unknown
	splitter    format.Splitter    // the table's splitter; nil when it has none or it is unknown
	useHash     bool               // Get and SeekPrefixGE may use the hash index (a table with one, splitter known if any, and for an unmapped reader a one-level table whose sections are in the tail: see Options.TailSize)
	cacheLocal  bool               // policy is the built-in Bloom: probe without an interface call
	filterState lazySection
	filter      []byte // filter bits, if filterKept
	filterOff   int    // where the filter bits start in the filter section's contents
	filterHead  []byte // the section's bytes before them: name and padding
	indexState  lazySection
	index       []byte // index block contents, if indexKept
	hashState   lazySection
	hidx        format.HashIndex // the hash index, if hidxKept
	metaMu      sync.Mutex       // held by loadMeta

	// The part of the tail New read that holds data blocks, or a
	// Version3 table's partitions: the file's bytes [tailOff, tailEnd),
	// kept in the cache (slot slotTail) so that lookups and iterators of
	// what it holds make no read (tail.go). tailOff == tailEnd when
	// nothing is kept.
	tailOff, tailEnd uint64

	// Whether the reader keeps a section itself, once it has loaded: a
	// mapped reader's sections are slices of the mapping; an unmapped
	// reader's are in the cache (Reader.sections), read again if evicted,
	// unless they are too large for it: the reader then keeps them on the
	// Go heap.
	indexKept, filterKept, hidxKept bool

	// A Version3 table's partitions (partition.go): their handles, from
	// the top-level index's first load; an unmapped reader's cache slots,
	// one per partition; a mapped reader's checked-on-first-use flags.
	parted      bool
	parts       []format.PartitionHandle
	topKeys     [][]byte // the top-level index's keys, parts[i]'s key at i
	partTable   *cache.Table
	partChecked []atomic.Bool
	partMisses  atomic.Int32 // lookups' partition misses (partition.go), counted up to the one that prefetches

	blocksOnce sync.Once       // sets up verified and blocks
	verified   []atomic.Uint32 // per data block: checksum checked, stored raw, end of entries (mapped files; see blockChecked)
	cache      *cache.Cache    // where decoded blocks live
	sections   *cache.Table    // the index, filter and hash index of an unmapped reader; registers the reader with cache from Open to Close
	blocks     *cache.Table    // data block i is slot i; nil until the index or hash index is loaded

	scans  atomic.Int32 // full scans in progress; the mapping is advised sequential while > 0
	refs   atomic.Int64 // 1 for the owner + 1 per call in flight or open iterator
	closed atomic.Bool
	freed  atomic.Bool

	dropOnce sync.Once // closes the cache tables
}

// lazySection records the one-time load and checksum of a section.
type lazySection struct {
	done atomic.Bool
	mu   sync.Mutex
	err  error
}

// load runs fn until it succeeds or reports corruption; every caller
// gets that result. Other errors (failed reads) may be transient and are
// not remembered: the next call tries again.
func (l *lazySection) load(fn func() error) error {
	if l.done.Load() {
		return l.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done.Load() {
		err := fn()
		if err != nil && !errors.Is(err, format.ErrCorrupt) {
			return err
		}
		l.err = err
		l.done.Store(true)
	}
	return l.err
}

// Open opens the table at path. It memory-maps the file read-only
// (golang.org/x/sys/unix.Mmap) and falls back to ReadAt where mapping is
// unavailable. Open reads only the footer and properties (with NoMmap, the
// file's tail, as New does); the index and filter are checked on first
// use. Errors for damaged or foreign files wrap
// format.ErrCorrupt.
func Open(path string, opts *Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sstable: %w", err) // "open PATH: ..."
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		err = errIsDir(path)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sstable: %w", err)
	}
	size := st.Size()
	r := &Reader{size: size, name: path}
	if size >= footer.Size && (opts == nil || !opts.NoMmap) {
		if data, err := mmapFile(f, size); err == nil {
			r.mapped = data
		}
	}
	if r.mapped != nil {
		f.Close()
	} else {
		r.ra, r.file = f, f
	}
	if err := r.initProtected(opts); err != nil {
		r.free()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// initProtected runs init, turning a memory fault in the mapping into an
// error.
func (r *Reader) initProtected(opts *Options) (err error) {
	if r.mapped != nil {
		defer restoreFault(protect())
		defer r.recoverFault(&err)
	}
	return r.init(opts)
}

// New returns a Reader over the size bytes of src, read with ReadAt, for
// tables in object storage or memory. It makes one ReadAt of the file's
// last Options.TailSize bytes (DefaultTailSize, 256 KiB, by default),
// which hold the footer, the properties and, when they fit, the filter,
// index block and hash index; those are then kept in the cache, and so
// are the data blocks and partitions the rest of the tail holds, which
// lookups and scans then take from the cache without a read. It makes
// a second read only for properties that start before the tail. The
// first lookup or iterator reads the filter and index block that did not
// fit, in one ReadAt. So a cold Get of a present key makes at most three
// reads counting New's (tail, filter and index, data block), and of an
// absent key the filter rules out at most two. In a partitioned table
// (format.Version3) the tail holds the top-level index, and a lookup
// reads only its key's partition, filter and index together, a few KiB,
// cached in a cache slot of its own: the same three and two reads, with
// kilobytes instead of the whole filter and index. A partitioned table
// built with a hash index is read the same way: no lookup over a
// ReaderAt reads its hash index.
//
// A ReadAt that returns fewer bytes than asked (with io.EOF or a nil
// error) is followed by one for the rest; a source that ends before size
// gives an error wrapping io.ErrUnexpectedEOF. Failed reads are reported
// as the source's errors and never remembered: a later call reads again.
// Errors for damaged or foreign data wrap format.ErrCorrupt.
func New(src io.ReaderAt, size int64, opts *Options) (*Reader, error) {
	r := &Reader{ra: src, size: size}
	if err := r.init(opts); err != nil {
		r.free()
		return nil, err
	}
	return r, nil
}

func (r *Reader) init(opts *Options) error {
	r.refs.Store(1)
	if r.size < footer.Size {
		return format.Corruptf(format.SectionFile, 0, "file of %d bytes is too small for the %d-byte footer: not an sstable", r.size, footer.Size)
	}
	r.cache = DefaultCache()
	if opts != nil && opts.Cache != nil {
		r.cache = opts.Cache
	}
	var err error
	if r.sections, err = r.cache.NewTable(numSections); err != nil {
		return fmt.Errorf("sstable: open: block cache: %w", err)
	}
	// A reader without a mapping reads the file's tail in one ReadAt:
	// the footer and, when they fit, everything after the data blocks.
	// It reads into memory the cache lends, which keepTail keeps when the
	// tail holds data blocks or partitions.
	tailLen := int64(footer.Size)
	var tailPin cache.Handle
	var tailBuf []byte
	if r.mapped == nil {
		tailLen = DefaultTailSize
		if opts != nil && opts.TailSize != 0 {
			tailLen = max(int64(opts.TailSize), footer.Size)
		}
		tailLen = min(tailLen, r.size)
		if p, ok := r.sections.Reserve(slotTail, int(tailLen)); ok {
			tailPin, tailBuf = p, p.Bytes()[:0]
		}
	}
	defer func() { tailPin.Release() }()
	tailOff := r.size - tailLen
	tail, err := r.read(format.SectionFooter, tailOff, int(tailLen), tailBuf)
	if err != nil {
		return err
	}
	if r.footer, err = footer.Decode(tail[tailLen-footer.Size:], r.size); err != nil {
		return err
	}
	f := &r.footer
	footerOff := uint64(r.size - footer.Size)
	switch {
	case f.Index.Offset != f.Filter.End():
		return format.Corruptf(format.SectionFooter, int64(footerOff), "index block at %d does not follow the filter section ending at %d", f.Index.Offset, f.Filter.End())
	case f.Properties.Offset != f.Index.End():
		return format.Corruptf(format.SectionFooter, int64(footerOff), "properties at %d do not follow the index block ending at %d", f.Properties.Offset, f.Index.End())
	case f.Properties.End() != footerOff:
		return format.Corruptf(format.SectionFooter, int64(footerOff), "properties end at %d, not at the footer", f.Properties.End())
	}

	var raw []byte
	if pre := tailPart(tail, tailOff, f.Properties); pre != nil {
		raw = pre
	} else if raw, err = r.readBlock(format.SectionProperties, f.Properties, nil); err != nil {
		return err
	}
	stored, typ, err := format.CheckBlock(format.SectionProperties, int64(f.Properties.Offset), raw)
	if err != nil {
		return err
	}
	contents, err := format.DecodeBlock(format.SectionProperties, int64(f.Properties.Offset), stored, typ, maxPropertiesLen, nil)
	if err != nil {
		return err
	}
	if r.props, err = format.DecodeProperties(contents, int64(f.Properties.Offset)); err != nil {
		return err
	}
	p := &r.props
	propsOff := int64(f.Properties.Offset)
	r.dataEnd = p.DataSize
	switch {
	case p.FormatVersion != f.Version:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d disagrees with the footer's %d", p.FormatVersion, f.Version)
	case f.Version == format.Version1 && p.HashIndexSize != 0:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d table with a %d-byte hash index", f.Version, p.HashIndexSize)
	case f.Version == format.Version3 && p.NumDataBlocks == 0:
		return format.Corruptf(format.SectionProperties, propsOff, "format version 3 (partitioned) table without data blocks")
	case (f.Version == format.Version2 || p.HashIndexSize != 0) && p.HashIndexSize < format.BlockTrailerLen+format.HashIndexHeaderLen:
		return format.Corruptf(format.SectionProperties, propsOff, "format version %d table with a hash index of %d bytes", f.Version, p.HashIndexSize)
	case p.DataSize > f.Filter.Offset || p.HashIndexSize != f.Filter.Offset-p.DataSize:
		return format.Corruptf(format.SectionProperties, propsOff, "data size %d and hash index size %d disagree with the filter offset %d", p.DataSize, p.HashIndexSize, f.Filter.Offset)
	case p.NumDataBlocks > p.DataSize/format.BlockTrailerLen:
		return format.Corruptf(format.SectionProperties, propsOff, "%d data blocks cannot fit in %d bytes", p.NumDataBlocks, p.DataSize)
	case p.FilterSize != f.Filter.Length+format.BlockTrailerLen:
		return format.Corruptf(format.SectionProperties, propsOff, "filter size %d disagrees with the footer's %d", p.FilterSize, f.Filter.Length+format.BlockTrailerLen)
	case p.IndexSize != f.Index.Length+format.BlockTrailerLen:
		return format.Corruptf(format.SectionProperties, propsOff, "index size %d disagrees with the footer's %d", p.IndexSize, f.Index.Length+format.BlockTrailerLen)
	case p.MaxBlockSize > uint64(maxSnappyDecoded(r.dataEnd)):
		return format.Corruptf(format.SectionProperties, propsOff, "max block size %d is impossible for %d bytes of data", p.MaxBlockSize, r.dataEnd)
	}

	r.parted = f.Version == format.Version3
	r.policy, r.cacheLocal = lookupPolicy(p.FilterPolicy, opts)
	p.FilterUnknown = r.policy == nil && p.FilterPolicy != ""
	// Over a ReaderAt, a one-level table's hash index is used when it is
	// in the tail; a partitioned table's never: its lookups read one
	// partition, as without a hash index (Options.TailSize).
	r.useHash = p.HashIndexSize != 0 && (r.mapped != nil || !r.parted && uint64(r.size)-p.DataSize <= uint64(tailLen))
	if p.Splitter != "" {
		r.splitter = lookupSplitter(p.Splitter, opts)
		if r.splitter == nil {
			// The filter and hash index hold prefixes this reader cannot
			// compute: use neither.
			p.SplitterUnknown = true
			r.policy, r.cacheLocal, r.useHash = nil, false, false
		}
	}
	if r.mapped == nil {
		// Sections in the tail are loaded now, from its bytes; damage
		// found in them is reported on first use, as for a section read
		// later.
		r.loadSectionsFrom(tail, tailOff)
		r.keepTail(tailPin, tailOff)
	}
	return nil
}

// tailPart returns the bytes of the block at h with its trailer, if they
// lie in tail, which starts at file offset tailOff; else nil.
func tailPart(tail []byte, tailOff int64, h format.BlockHandle) []byte {
	end := h.End()
	if h.Offset < uint64(tailOff) || end < h.Offset || end > uint64(tailOff)+uint64(len(tail)) {
		return nil
	}
	return tail[h.Offset-uint64(tailOff) : end-uint64(tailOff)]
}

// metaSection is a section loadMeta may load.
type metaSection struct {
	state *lazySection
	h     format.BlockHandle
	load  func(pre []byte) error
}

// metaSections lists the sections that lookups of an unmapped reader
// use, not loaded yet: the filter (if its policy is known), the index
// block, and the hash index if Get uses it.
func (r *Reader) metaSections(dst []metaSection) []metaSection {
	if r.policy != nil && !r.parted && !r.filterState.done.Load() {
		dst = append(dst, metaSection{&r.filterState, r.footer.Filter, r.loadFilterFrom})
	}
	if !r.indexState.done.Load() {
		dst = append(dst, metaSection{&r.indexState, r.footer.Index, r.loadIndexFrom})
	}
	if r.useHash && !r.hashState.done.Load() {
		dst = append(dst, metaSection{&r.hashState, r.hashIndexHandle(), r.loadHashIndexFrom})
	}
	return dst
}

// loadSectionsFrom loads the sections metaSections lists that lie in
// buf, which holds the file's bytes from offset off.
func (r *Reader) loadSectionsFrom(buf []byte, off int64) {
	var arr [3]metaSection
	for _, m := range r.metaSections(arr[:0]) {
		if pre := tailPart(buf, off, m.h); pre != nil {
			m.state.load(func() error { return m.load(pre) })
		}
	}
}

// loadMeta loads, with one ReadAt of the span they cover, the sections
// metaSections lists: the filter and the index block are adjacent, so a
// table whose tail did not hold them needs one more read, not two. A
// version 2 table's hash index is in the tail whenever Get uses it. Only
// for unmapped readers.
func (r *Reader) loadMeta() error {
	r.metaMu.Lock()
	defer r.metaMu.Unlock()
	var arr [3]metaSection
	ms := r.metaSections(arr[:0])
	if len(ms) == 0 {
		return nil
	}
	lo, hi := ms[0].h.Offset, ms[0].h.End()
	for _, m := range ms[1:] {
		lo, hi = min(lo, m.h.Offset), max(hi, m.h.End())
	}
	// init checked that the sections lie inside the file.
	buf, err := r.read(format.SectionFile, int64(lo), int(hi-lo), nil)
	if err != nil {
		return err
	}
	r.loadSectionsFrom(buf, int64(lo))
	return nil
}

// beforeLoad runs loadMeta if state is not loaded yet, for an unmapped
// reader; it returns loadMeta's error unless the section got loaded
// anyway.
func (r *Reader) beforeLoad(state *lazySection) error {
	if r.mapped != nil || state.done.Load() {
		return nil
	}
	if err := r.loadMeta(); err != nil && !state.done.Load() {
		return err
	}
	return nil
}

// lookupSplitter finds the splitter named name among opts.Splitters, then
// the built-in ones; nil if none matches.
func lookupSplitter(name string, opts *Options) format.Splitter {
	if opts != nil {
		for _, s := range opts.Splitters {
			if s != nil && s.Name() == name {
				return s
			}
		}
	}
	return format.BuiltinSplitter(name)
}

// split returns the length of key's prefix under the table's splitter, or
// len(key) without one. A splitter answering outside [0, len(key)] is
// taken as len(key), so that a faulty splitter cannot crash a lookup.
func (r *Reader) split(key []byte) int {
	if r.splitter == nil {
		return len(key)
	}
	if n := r.splitter.Split(key); n >= 0 && n <= len(key) {
		return n
	}
	return len(key)
}

// hasPrefix reports whether key's prefix is prefix: under the table's
// splitter when the reader knows it, else bytes.HasPrefix.
func (r *Reader) hasPrefix(key, prefix []byte) bool {
	if !bytes.HasPrefix(key, prefix) {
		return false
	}
	return r.splitter == nil || r.split(key) == len(prefix)
}

// maxSnappyDecoded bounds the decoded size of n stored bytes.
func maxSnappyDecoded(n uint64) uint64 { return 22*n + 16 }

// lookupPolicy finds the policy named name: first among opts.Filters, then
// among the built-in policies (builtin is then true). It returns nil if
// none matches.
func lookupPolicy(name string, opts *Options) (p filterblock.Policy, builtin bool) {
	if opts != nil {
		for _, p := range opts.Filters {
			if p != nil && p.Name() == name {
				return p, false
			}
		}
	}
	switch name {
	case filterblock.BloomName:
		return filterblock.Bloom(0), true
	case filterblock.LevelDBName:
		return filterblock.LevelDBBloom(0), false
	case filterblock.BinaryFuse8Name:
		return filterblock.BinaryFuse8(), false
	}
	return nil, false
}

// read returns n bytes at off: a slice of the mapping, or bytes read into
// buf (grown as needed) by readFull. A range outside the file gives an
// error wrapping ErrCorrupt; failed reads give errors that do not.
func (r *Reader) read(section string, off int64, n int, buf []byte) ([]byte, error) {
	if off < 0 || n < 0 || off > r.size || int64(n) > r.size-off {
		return nil, format.Corruptf(section, off, "%d bytes at offset %d lie outside the %d-byte file", n, off, r.size)
	}
	if r.mapped != nil {
		return r.mapped[off : off+int64(n) : off+int64(n)], nil
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if err := r.readFull(section, buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// readFull fills buf from r.ra at off. A short read, with a nil error or
// io.EOF, is followed by a read of the rest, as long as each call makes
// progress. Failures never wrap format.ErrCorrupt: a read that fails may
// succeed when tried again, so callers must not remember it as damage.
// A source that ends before the size given to New gives an error wrapping
// io.ErrUnexpectedEOF.
func (r *Reader) readFull(section string, buf []byte, off int64) error {
	got := 0
	for got < len(buf) {
		m, err := r.ra.ReadAt(buf[got:], off+int64(got))
		if m < 0 || m > len(buf)-got {
			return fmt.Errorf("sstable: read %s at offset %d: ReaderAt returned %d for a %d-byte read", section, off+int64(got), m, len(buf)-got)
		}
		got += m
		if got == len(buf) {
			return nil
		}
		if m > 0 && (err == nil || err == io.EOF) {
			continue // a short read: ask for the rest
		}
		switch err {
		case nil:
			err = io.ErrNoProgress
		case io.EOF:
			return fmt.Errorf("sstable: read %s at offset %d: input ends %d bytes into a %d-byte read, before the size given (%d bytes): %w", section, off, got, len(buf), r.size, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("sstable: read %s at offset %d: %w", section, off+int64(got), err)
	}
	return nil
}

// readBlock returns the stored bytes and trailer of the block at h.
func (r *Reader) readBlock(section string, h format.BlockHandle, buf []byte) ([]byte, error) {
	if h.Length > uint64(r.size) {
		return nil, format.Corruptf(section, int64(h.Offset), "block length %d exceeds the file", h.Length)
	}
	return r.read(section, int64(h.Offset), int(h.Length)+format.BlockTrailerLen, buf)
}

func (r *Reader) loadIndex() error {
	if err := r.beforeLoad(&r.indexState); err != nil {
		return err
	}
	return r.indexState.load(func() error { return r.loadIndexFrom(nil) })
}

// loadIndexFrom loads the index block from pre, its bytes and trailer, or
// with a read if pre is nil. Call it inside r.indexState.load.
func (r *Reader) loadIndexFrom(pre []byte) error {
	contents, pin, err := r.readSection(slotIndex, format.SectionIndex, r.footer.Index, r.checkIndex, pre)
	if err != nil {
		return err
	}
	if !pin.Cached() {
		r.index, r.indexKept = contents, true
	}
	pin.Release()
	r.initBlocks()
	return nil
}

// checkIndex checks the index block's structure: one restart per entry,
// one entry per data block.
func (r *Reader) checkIndex(contents []byte) error {
	if r.parted {
		return r.checkTop(contents, !r.indexState.done.Load())
	}
	var it format.BlockIter
	if err := it.Init(format.SectionIndex, int64(r.footer.Index.Offset), contents); err != nil {
		return err
	}
	if n := it.NumRestarts(); uint64(n) != r.props.NumDataBlocks {
		return format.Corruptf(format.SectionIndex, int64(r.footer.Index.Offset), "%d entries for %d data blocks", n, r.props.NumDataBlocks)
	}
	return nil
}

// initBlocks sets up the per-data-block state: the checksum-checked bits
// and the cache table. init bounded NumDataBlocks by the data size.
func (r *Reader) initBlocks() {
	r.blocksOnce.Do(func() {
		n := int(r.props.NumDataBlocks)
		if r.mapped != nil {
			r.verified = make([]atomic.Uint32, n)
		}
		// Raw blocks of a mapped file need no cache. NewTable cannot fail:
		// r.sections keeps the cache open.
		if r.mapped == nil || r.props.Compression != format.NoCompression {
			r.blocks, _ = r.cache.NewTable(n)
		}
		if r.parted && r.mapped != nil {
			r.partChecked = make([]atomic.Bool, len(r.parts))
		} else if r.parted {
			r.partTable, _ = r.cache.NewTable(len(r.parts))
		}
	})
}

// hashIndexHandle is the hash index section's block handle.
func (r *Reader) hashIndexHandle() format.BlockHandle {
	return format.BlockHandle{Offset: r.props.DataSize, Length: r.props.HashIndexSize - format.BlockTrailerLen}
}

// loadHashIndex loads and checks the hash index of a Version2 table, or
// of a Version3 table that has one. In a Version3 table it loads the
// top-level index first: initBlocks, which the first load of either
// runs, sizes the partitions' state by it.
func (r *Reader) loadHashIndex() error {
	if r.hashState.done.Load() {
		return r.hashState.err
	}
	if r.parted {
		if err := r.loadIndex(); err != nil {
			return err
		}
	}
	if r.useHash {
		if err := r.beforeLoad(&r.hashState); err != nil {
			return err
		}
	}
	return r.hashState.load(func() error { return r.loadHashIndexFrom(nil) })
}

// loadHashIndexFrom is loadIndexFrom for the hash index.
func (r *Reader) loadHashIndexFrom(pre []byte) error {
	contents, pin, err := r.readSection(slotHashIndex, format.SectionHashIndex, r.hashIndexHandle(), r.checkHashIndex, pre)
	if err != nil {
		return err
	}
	if !pin.Cached() {
		// Checked by readSection; cannot fail.
		r.hidx, _ = r.decodeHashIndex(contents)
		r.hidxKept = true
	}
	pin.Release()
	r.initBlocks()
	return nil
}

func (r *Reader) decodeHashIndex(contents []byte) (format.HashIndex, error) {
	return format.DecodeHashIndex(contents, int64(r.props.DataSize), r.props.DataSize, r.props.NumDataBlocks)
}

func (r *Reader) checkHashIndex(contents []byte) error {
	_, err := r.decodeHashIndex(contents)
	return err
}

func (r *Reader) loadFilter() error {
	if r.filterState.done.Load() {
		return r.filterState.err
	}
	if r.parted {
		return nil // the filter is partitioned: see partition.go
	}
	if r.policy != nil {
		if err := r.beforeLoad(&r.filterState); err != nil {
			return err
		}
	}
	return r.filterState.load(func() error { return r.loadFilterFrom(nil) })
}

// loadFilterFrom is loadIndexFrom for the filter section.
func (r *Reader) loadFilterFrom(pre []byte) error {
	contents, pin, err := r.readSection(slotFilter, format.SectionFilter, r.footer.Filter, r.checkFilter, pre)
	if err != nil {
		return err
	}
	// Checked by readSection; cannot fail. The filter starts at the
	// same offset in every later read of the section.
	_, filter, _ := filterblock.DecodeSection(contents, r.footer.Filter.Offset)
	r.filterOff = len(contents) - len(filter)
	r.filterHead = bytes.Clone(contents[:r.filterOff])
	if !pin.Cached() {
		r.filter, r.filterKept = filter, true
	}
	pin.Release()
	return nil
}

// checkFilter checks the filter section's structure and policy name. A
// section read again after eviction must start with the same bytes as on
// its first load (its name and padding), which checks it without
// allocating.
func (r *Reader) checkFilter(contents []byte) error {
	if r.filterState.done.Load() {
		if len(contents) < r.filterOff || !bytes.Equal(contents[:r.filterOff], r.filterHead) {
			return format.Corruptf(format.SectionFilter, int64(r.footer.Filter.Offset), "filter section changed since it was first read")
		}
		return nil
	}
	name, _, err := filterblock.DecodeSection(contents, r.footer.Filter.Offset)
	if err != nil {
		return err
	}
	if name != r.props.FilterPolicy {
		return format.Corruptf(format.SectionFilter, int64(r.footer.Filter.Offset), "filter section names policy %q, properties name %q", name, r.props.FilterPolicy)
	}
	return nil
}

// beginScan advises the kernel that the mapping is read sequentially while
// at least one full scan (Verify, an iterator started with First or Last)
// runs; endScan returns it to random access for point lookups.
func (r *Reader) beginScan() {
	if r.mapped != nil && r.scans.Add(1) == 1 {
		adviseAccess(r.mapped, true)
	}
}

func (r *Reader) endScan() {
	if r.mapped != nil && r.scans.Add(-1) == 0 {
		adviseAccess(r.mapped, false)
	}
}

// acquire takes a reference for a call; false once the reader is closed.
func (r *Reader) acquire() bool {
	r.refs.Add(1)
	if r.closed.Load() {
		r.release()
		return false
	}
	return true
}

func (r *Reader) release() {
	if r.refs.Add(-1) == 0 {
		r.free()
	}
}

// free unmaps the file and closes it, once.
func (r *Reader) free() {
	if !r.freed.CompareAndSwap(false, true) {
		return
	}
	r.dropCached()
	if r.mapped != nil {
		munmap(r.mapped)
	}
	if r.file != nil {
		r.file.Close()
	}
}

// Close releases the reader and drops its blocks from the cache (blocks
// that calls in flight or open iterators still use are freed when they are
// done with them). Calls already in flight finish first. Iterators opened
// before Close go on working, reading blocks again as they need them, and
// the file stays open and mapped until the last of them is closed: close
// every Iterator, or the file is never released. Later calls return
// errors wrapping ErrClosed (NewIter an iterator whose Err does).
// Closing twice returns an error wrapping ErrClosed.
func (r *Reader) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return &closedTwiceError{name: r.name}
	}
	r.dropCached()
	r.release()
	return nil
}

// Properties returns the table's properties, as stored in its properties
// block.
func (r *Reader) Properties() format.Properties { return r.props }

// FilterKnown reports whether the table's filter policy was recognised. If
// not, MayContain always returns true.
func (r *Reader) FilterKnown() bool { return r.policy != nil }

// Footer returns the decoded footer: the handles of the filter section,
// index block and properties block.
func (r *Reader) Footer() footer.Footer { return r.footer }

// Size returns the file size in bytes.
func (r *Reader) Size() int64 { return r.size }

// inMapping reports whether b lies in the file mapping.
func (r *Reader) inMapping(b []byte) bool {
	if len(r.mapped) == 0 || len(b) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.mapped)))
	return p-base < uintptr(len(r.mapped))
}

// Mapped reports whether the file is memory-mapped.
func (r *Reader) Mapped() bool { return r.mapped != nil }

// numSections is the number of slots of Reader.sections.
const numSections = 5

// Slots of Reader.sections.
const (
	slotIndex = iota
	slotFilter
	slotHashIndex
	slotTail      // the tail's data blocks or partitions (tail.go)
	slotReadahead // reserved for iterators' read-ahead windows, never published
)

// dropCached closes the reader's cache tables, once: their blocks leave
// the cache, and the reader no longer holds the cache open.
func (r *Reader) dropCached() {
	r.dropOnce.Do(func() {
		r.blocksOnce.Do(func() {}) // no table may be created after this
		if r.blocks != nil {
			r.blocks.Close()
		}
		if r.partTable != nil {
			r.partTable.Close()
		}
		if r.sections != nil {
			r.sections.Close()
		}
	})
}
