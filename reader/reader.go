// Package reader opens table files written by package builder and answers
// point lookups (MayContain, Get) and ordered scans (Iterator). Files are
// memory-mapped read-only where the platform allows it; New reads through
// any io.ReaderAt instead. A Reader is safe for concurrent use.
//
// # How a table is read
//
// A lookup passes through three stages, each arranged once, when the table
// is opened, for its format version, its filter and splitter, and the way
// its bytes arrive:
//
//   - The filter says whether a key (or, in a table built with a
//     splitter, its prefix) can be in the table. Get, Has, MayContain and
//     the prefix seeks ask it first (in a memory-mapped partitioned table
//     with a hash index, Get asks the hash index's slots instead), so an
//     absent key costs a hash and a probe of a cache line or two, and no
//     data block. A one-level table
//     has one filter; a partitioned table has one per partition, read
//     with it. A memory-mapped reader of a format version 4 table copies
//     its whole filter into its cache (not the Go heap) on its first Get
//     or Has, counted in the cache's budget and never evicted until Close
//     (see Memory), after which ruling a key out neither reads the file
//     nor pins the reader. A
//     table whose filter policy or splitter the reader does not know
//     (Options.Filters, Options.Splitters) is read without its filter.
//   - The index says which data block holds a key: a binary search of the
//     index block, or in a partitioned table of the key's index partition,
//     found through the top-level index. A table with a hash index
//     (format versions 2 and 4) takes one probe from the key to its entry
//     instead; over a ReaderAt only when the sections after the data
//     blocks fit in Options.TailSize, and never for a partitioned table.
//     Iterators walk the index block by block.
//   - The bytes come from the file mapping (Open) or through ReadAt (New,
//     Options.NoMmap). A mapped file's raw blocks are read in place, with
//     no copy and no cache space, and its compressed blocks are decoded
//     into the cache. A reader without a mapping reads the file's tail
//     when it is opened, then each block the first time a call needs it,
//     into the cache, where later calls find it while it stays; a scan
//     reads ahead in windows from MinReadahead to MaxReadahead bytes.
//     Every block's checksum is checked when it is first read.
//
// A Get is one pass through the three: a filter probe, an index search
// or hash probe, and one data block. The Memory section says what each
// stage holds.
package reader

// The stages are the reader's three lookup layers, each an interface
// with one implementation per kind, chosen in one place
// (Reader.chooseLayers, in open.go) and composed by Get, Has,
// MayContain, Iterator and Verify; a fourth layer, spans, stands beside
// them:
//
//   - source (source.go): given a block handle, the checked block and
//     the pin that keeps it alive. mmapSource (source_mmap.go) reads the
//     mapping in place; readAtSource (source_readat.go, with
//     source_tail.go, readahead.go and partitions_readat.go) reads
//     through an io.ReaderAt, with the kept tail, read-ahead and
//     partition windows and the shared cache.
//   - index (index.go): which data block, and where in it, holds a key;
//     walks the blocks for iterators. blockIndex (one index block),
//     partedIndex (index_parted.go, partitions.go: index partitions under
//     a top-level index, with the two-level iterator), hashedIndex
//     (index_hash.go: version 2's hash index straight to the entry) and
//     compactIndex (index_compact.go: version 4's slot names the block
//     and the entry's offset, which decodes with the block's first key).
//   - filter (filter.go): noFilter, wholeFilter (one filter section),
//     partedFilter (a filter per partition) and heldFilter (a version 4
//     table's whole filter, copied into the cache by a mapped reader's
//     first Get or Has and from then on probed before the reader is
//     pinned).
//   - spans (spans.go): spanLayer, a version 5 table's span block, one
//     kind, set up by chooseLayers too. It owns the block's loading (in
//     place in a mapping; over an io.ReaderAt from the kept tail or one
//     read, charged to the cache), its checks against its trailer and
//     the properties, the span bounds it fills into the properties at
//     open, SpanAt's lookup, the decoded block span iterators walk, and
//     Verify's re-read. No lookup stage uses it; the Reader keeps only
//     SpanAt and NewSpanIterator, which pin the reader, guard against
//     faults (endGuardedSpan) and name the errors.
//
// A new index kind is one more type implementing index, built by
// chooseLayers for the format version or feature that calls for it; a
// new byte source is one more type implementing source, built by a
// constructor like New. Neither touches the other layers. The calls live
// in get.go (lookups), iterator.go (the iterator and its steps),
// iterator_seek.go (its seeks), iterator_bounds.go (its bounds), all.go
// (range-over-func), spans.go (SpanAt, the span iterator), verify.go
// (Verify, whose walk over the table is a verifier of its own) and
// errors.go (the errors' names).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// ErrNotFound is the error Get returns for an absent key: the sentinel
// itself, never wrapped nor named, so that a miss allocates nothing and
// err == ErrNotFound holds (errors.Is works too).
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
	// bytes mean 64. A one-level table's hash index (format versions 2
	// and 4) is used over a ReaderAt only when every section after the
	// data blocks fits in the tail; otherwise Get searches the index
	// block, as in version 1, so that no lookup reads a large hash index
	// whole. A partitioned table's hash index (format.Version3, or
	// Version4 with Properties.Partitioned) is never used over a ReaderAt:
	// lookups read the key's partition, as without a hash index. When the
	// tail holds data blocks (or partitions) too, as in tables of less
	// than about TailSize bytes of filter and index, the reader keeps
	// those in its cache, and lookups and scans of them make no read.
	TailSize int

	// NoMmap makes Open read the file with pread (ReadAt) instead of
	// memory-mapping it. The OS page cache then holds no pages on the
	// reader's behalf beyond what the kernel keeps anyway, and every byte
	// the reader holds is in Cache (within its capacity) or in the small
	// per-reader state described in the package documentation.
	NoMmap bool

	// Name names the table in the errors of a Reader made by New, as the
	// path does for Open: every error New and the Reader return, except
	// ErrNotFound, then reads "Name: ...", and each *format.CorruptError
	// among them has File set to Name. "" names nothing. Open ignores
	// Name: its errors name the path it was given.
	Name string
}

// Reader reads one table. All methods are safe for concurrent use. After
// Close, Get, Has and Verify return errors wrapping ErrClosed, NewIter
// returns an iterator whose Err wraps ErrClosed, and MayContain and
// MayContainPrefix return true. An Iterator opened before Close keeps
// working until it is closed: it holds the file (and its mapping) open,
// as a call in flight does.
//
// Every error a Reader returns names its table, from Open or New on,
// except ErrNotFound: see the package documentation's Errors section.
type Reader struct {
	// The layers (see the package documentation), chosen by open.
	src       source
	index     index
	filter    filter      // what MayContain probes
	getFilter filter      // what Get probes before the index: filter, or nil where the index probes it itself (or there is none); nil costs no call
	held      *heldFilter // a version 4 table's whole filter copied into the cache (mapped readers), made by the first Get or Has and from then on probed before the reader is pinned, instead of getFilter
	hash      *hashTable  // the hash index, nil without one; Verify checks it
	parts     *partitions // a Version3 table's partitions, else nil; Verify checks them
	spans     spanLayer   // the span layer: a Version5 table's span block (spans.go)

	// guarded is set when reads touch a file mapping, which faults if the
	// file shrinks: the entry points then run under the fault guard
	// (fault.go). Only the hottest ones test it; the others always guard.
	guarded bool

	size      int64
	name      string // the path given to Open, or Options.Name for New: see named
	errClosed error  // ErrClosed, named: the error of calls after Close
	footer    footer.Footer
	props     format.Properties
	dataEnd   uint64          // end of the data blocks: the hash index's or filter section's offset
	dict      *codec.ZstdDict // the table's zstd dictionary (property tag 28), nil without one; closed by free

	policy   filterblock.Policy // nil when the table's policy (or splitter) is unknown
	bloom    bool               // policy is the built-in Bloom
	splitter format.Splitter    // the table's splitter; nil when it has none or it is unknown

	refs    atomic.Int64 // 1 for the owner + 1 per call in flight or open iterator
	closed  atomic.Bool
	res     *resources      // what free releases, apart from the Reader
	cleanup runtime.Cleanup // frees res once the Reader is unreachable, if nothing freed it before
}

// resources is what a Reader releases when it is freed: its source (the
// mapping or the file Open opened, and the cache tables that hold its
// blocks and charges), its filter copy's pin and its zstd dictionary.
// They are held apart from the Reader, in an object that points to none
// of it, so that the cleanup Open and New attach to the Reader
// (runtime.AddCleanup) can release them once the Reader is unreachable
// without keeping it reachable. An open Iterator or SpanIterator refers
// to its Reader, and so keeps the resources too.
type resources struct {
	src      source
	held     *heldFilter
	dict     *codec.ZstdDict
	dropOnce sync.Once // drops the source's cached blocks
	freed    atomic.Bool
}

// drop drops the source's blocks from the cache, once.
func (x *resources) drop() { x.dropOnce.Do(x.src.drop) }

// free drops the source's blocks and releases the rest, once.
func (x *resources) free() {
	if !x.freed.CompareAndSwap(false, true) {
		return
	}
	x.drop()
	if x.held != nil {
		// Not in drop: calls in flight at Close still probe the copy,
		// and a probe made before pinning reads it before it checks
		// closed (GetAppend).
		x.held.releasePin()
	}
	x.src.free()
	if x.dict != nil {
		x.dict.Close()
	}
}

// finishOpen ends Open and New: it opens r, hands what r holds to its
// resources, and either frees them (open failed) or attaches the cleanup
// that frees them should r become unreachable without Close.
func (r *Reader) finishOpen(opts *Options) (*Reader, error) {
	err := r.open(opts)
	r.res.held, r.res.dict = r.held, r.dict // set by open only
	if err != nil {
		r.free()
		return nil, r.named(err)
	}
	r.cleanup = runtime.AddCleanup(r, (*resources).free, r.res)
	return r, nil
}

// Open opens the table at path. It memory-maps the file read-only
// (golang.org/x/sys/unix.Mmap) and falls back to ReadAt where mapping is
// unavailable. Open reads only the footer and properties (with NoMmap, the
// file's tail, as New does); the index and filter are checked on first
// use. Errors for damaged or foreign files wrap format.ErrCorrupt. Its
// errors, and those of the Reader, name path ("PATH: ..."; File of a
// *format.CorruptError).
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
	var src source
	if size >= footer.Size && (opts == nil || !opts.NoMmap) {
		if data, err := mmapFile(f, size); err == nil {
			f.Close()
			src = &mmapSource{mapped: data}
		}
	}
	if src == nil {
		src = &readAtSource{ra: f, file: f, size: size}
	}
	r := &Reader{src: src, size: size, res: &resources{src: src}}
	r.setName(path)
	return r.finishOpen(opts)
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
// (format.Version3, or Version4 with Properties.Partitioned) the tail
// holds the top-level index, and a lookup
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
// Errors for damaged or foreign data wrap format.ErrCorrupt; a nil src or
// a negative size is a bad argument, reported as such (not ErrCorrupt).
// With opts.Name set, New's errors and the Reader's name the table as
// Open's name its path.
//
// The Reader never closes src: Close releases the reader's hold on it,
// and the caller closes src (an *os.File, a network object) once done.
// src must stay readable until Close returns and every Iterator opened
// before Close is closed: such iterators go on reading through src.
// Reader.Get and the other calls read src only while they run.
func New(src io.ReaderAt, size int64, opts *Options) (*Reader, error) {
	switch {
	case src == nil:
		return nil, errors.New("sstable: reader.New: nil source")
	case size < 0:
		return nil, fmt.Errorf("sstable: reader.New: negative size %d", size)
	}
	ra := &readAtSource{ra: src, size: size}
	r := &Reader{src: ra, size: size, res: &resources{src: ra}}
	var name string
	if opts != nil {
		name = opts.Name
	}
	r.setName(name)
	return r.finishOpen(opts)
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
// len(key) without one.
func (r *Reader) split(key []byte) int {
	if r.splitter == nil {
		return len(key)
	}
	return prefixLen(r.splitter, key)
}

// prefixLen returns the length of key's prefix under sp. A splitter
// answering outside [0, len(key)] is taken as len(key), so that a faulty
// splitter cannot crash a lookup.
func prefixLen(sp format.Splitter, key []byte) int {
	if n := sp.Split(key); n >= 0 && n <= len(key) {
		return n
	}
	return len(key)
}

// hasPrefix reports whether key's prefix is prefix: under sp when the
// reader knows the table's splitter, else bytes.HasPrefix.
func hasPrefix(sp format.Splitter, key, prefix []byte) bool {
	if !bytes.HasPrefix(key, prefix) {
		return false
	}
	return sp == nil || prefixLen(sp, key) == len(prefix)
}

// lookupPolicy finds the policy named name: first among opts.Filters, then
// among the built-in policies (bloom is then true for the cache-local
// Bloom filter, probed by hash). It returns nil if none matches.
func lookupPolicy(name string, opts *Options) (p filterblock.Policy, bloom bool) {
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

// free releases the source's cached blocks and its file, once, and
// cancels the cleanup, which would otherwise do it when r is unreachable.
func (r *Reader) free() {
	r.cleanup.Stop()
	r.res.free()
	runtime.KeepAlive(r) // the cleanup cannot run before Stop, nor race res.free
}

// drop drops the source's blocks from the cache, once.
func (r *Reader) drop() { r.res.drop() }

// Close releases the reader and drops its blocks from the cache (blocks
// that calls in flight or open iterators still use are freed when they are
// done with them). Calls already in flight finish first. Iterators opened
// before Close go on working, reading blocks again as they need them, and
// the file stays open and mapped until the last of them is closed: close
// every Iterator, or the file is released only when the iterator is
// unreachable (below). The file Open opened is
// closed then; the source given to New never is: the caller closes it,
// after Close and after the last such Iterator is closed, since they read
// through it until then. Later calls return errors wrapping ErrClosed
// (NewIter an iterator whose Err does). Closing twice returns an error
// wrapping ErrClosed.
//
// A Reader that becomes unreachable without Close, none of its Iterators
// and SpanIterators (which refer to it) reachable either, is freed by a
// cleanup (runtime.AddCleanup) some time after a garbage collection finds
// it so: its mapping, the file Open opened, and its blocks and charges in
// the cache are released, silently, as Close and its last iterator's
// Close would. Blocks that an iterator dropped unclosed pinned stay
// pinned. Do not rely on the cleanup: the collector runs as the Go heap
// grows, not as mappings, files or the cache fill. Nor use slices that
// alias the mapping (the Spans of SpanAt) once the Reader may be
// unreachable: keep it reachable (or open) while they are in use.
func (r *Reader) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return &closedTwiceError{name: r.name}
	}
	r.drop()
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

// Mapped reports whether the file is memory-mapped.
func (r *Reader) Mapped() bool { return r.guarded }
