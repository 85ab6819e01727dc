package implsetup

import (
	"bufio"
	"bytes"
	"errors"
	"os"

	"github.com/syndtr/goleveldb/leveldb/cache"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/table"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// GoleveldbOptions returns the options goleveldb's table writer and
// reader get, as its DB passes them: a Bloom filter at BitsPerKey,
// BlockSize, and c (snappy for anything but None: goleveldb has no zstd).
// Reading ignores Compression. Strict mode stays the default, so block
// checksums are verified when a block is read.
func GoleveldbOptions(c Compression) *opt.Options {
	o := &opt.Options{
		Filter:      filter.NewBloomFilter(BitsPerKey),
		Compression: opt.SnappyCompression,
		BlockSize:   BlockSize,
	}
	if c == None {
		o.Compression = opt.NoCompression
	}
	return o
}

// GoleveldbWriter is a goleveldb table writer over a file it owns,
// through a 256 KiB bufio.Writer (goleveldb's DB writes unbuffered, one
// write per block; the buffer is a fair advantage).
type GoleveldbWriter struct {
	w  *table.Writer
	bw *bufio.Writer
	f  *os.File
}

// CreateGoleveldb creates path and returns a writer of a table with opts.
func CreateGoleveldb(path string, opts *opt.Options) (*GoleveldbWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	return &GoleveldbWriter{w: table.NewWriter(bw, opts, nil, 0), bw: bw, f: f}, nil
}

// Append adds an entry; keys must come in increasing order.
func (w *GoleveldbWriter) Append(key, value []byte) error { return w.w.Append(key, value) }

// Close finishes the table, flushes the buffer and closes the file.
func (w *GoleveldbWriter) Close() error {
	if err := w.w.Close(); err != nil {
		w.f.Close()
		return err
	}
	if err := w.bw.Flush(); err != nil {
		w.f.Close()
		return err
	}
	return w.f.Close()
}

// Abort closes the file after a failed Append, leaving a partial table.
func (w *GoleveldbWriter) Abort() { w.f.Close() }

// GoleveldbBufferPool returns a buffer pool for reading blocks, sized as
// goleveldb's DB sizes its own: a block and its 5-byte trailer.
func GoleveldbBufferPool() *util.BufferPool { return util.NewBufferPool(BlockSize + 5) }

// OpenGoleveldb opens the table at path as goleveldb's DB opens table
// file num (tOps.open): table.NewReader over the *os.File (pread, no
// mmap), its blocks cached decoded in namespace num of c, read into
// buffers from bpool, with opts (from GoleveldbOptions; the reader keeps
// them, so that readers opened together can share one). The reader's
// Release closes the file.
func OpenGoleveldb(path string, num int64, c *cache.Cache, bpool *util.BufferPool, opts *opt.Options) (*table.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := table.NewReader(f, st.Size(), storage.FileDesc{Type: storage.TypeTable, Num: num},
		&cache.NamespaceGetter{Cache: c, NS: uint64(num)}, bpool, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

// GoleveldbGet looks key up in r with Reader.Find(key, true, nil), the
// only lookup that consults the filter (Reader.Get never does), then
// checks that the key found is key. Find returns a copy of the value.
func GoleveldbGet(r *table.Reader, key []byte) ([]byte, bool, error) {
	rkey, v, err := r.Find(key, true, nil)
	if err != nil {
		if errors.Is(err, table.ErrNotFound) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if !bytes.Equal(rkey, key) {
		return nil, false, nil
	}
	return v, true, nil
}
