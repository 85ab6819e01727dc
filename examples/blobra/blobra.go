// Package blobra reads sstables kept in object storage through
// gocloud.dev/blob: ReaderAt adapts a blob to the io.ReaderAt that
// reader.New takes, with one ranged GET ((*blob.Bucket).NewRangeReader)
// per ReadAt, and counts the requests and bytes.
//
// It lives in its own module, so that the sstable module does not depend
// on the Go CDK. Any blob driver works the same: fileblob (used by the
// tests), s3blob, gcsblob, azureblob.
package blobra

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"gocloud.dev/blob"

	"github.com/sstkit/sstable/reader"
)

// ReaderAt is an io.ReaderAt over one blob: every ReadAt is one ranged
// read, (*blob.Bucket).NewRangeReader, that is one GET request on S3, GCS
// or Azure. It is safe for concurrent use, as io.ReaderAt requires and
// reader.Reader relies on.
type ReaderAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
	size   int64

	calls, bytes atomic.Int64
}

// NewReaderAt returns a ReaderAt over the blob key in bucket, of size
// bytes. Every ReadAt uses ctx; cancel it to abandon the reads in flight.
func NewReaderAt(ctx context.Context, bucket *blob.Bucket, key string, size int64) *ReaderAt {
	return &ReaderAt{ctx: ctx, bucket: bucket, key: key, size: size}
}

// Size returns the blob's size in bytes, as given to NewReaderAt.
func (r *ReaderAt) Size() int64 { return r.size }

// Calls returns the number of ReadAt calls so far: requests to the store.
func (r *ReaderAt) Calls() int64 { return r.calls.Load() }

// Bytes returns the bytes asked for by ReadAt so far.
func (r *ReaderAt) Bytes() int64 { return r.bytes.Load() }

// ResetCounts sets Calls and Bytes to zero.
func (r *ReaderAt) ResetCounts() { r.calls.Store(0); r.bytes.Store(0) }

// ReadAt reads len(p) bytes at offset off with one ranged read, following
// io.ReaderAt: it returns len(p) and a nil error, or fewer bytes and an
// error, io.EOF when the range runs past the end of the blob. Errors of
// the store are returned wrapped, with the key and range; gcerrors.Code
// tells NotFound and the like.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("blobra: %s: negative offset %d", r.key, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n == 0 {
		return 0, nil
	}
	eof := false
	if n > r.size-off {
		n, eof = r.size-off, true
	}
	r.calls.Add(1)
	r.bytes.Add(n)
	rr, err := r.bucket.NewRangeReader(r.ctx, r.key, off, n, nil)
	if err != nil {
		return 0, fmt.Errorf("blobra: %s: read %d bytes at %d: %w", r.key, n, off, err)
	}
	got, err := io.ReadFull(rr, p[:n])
	cerr := rr.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the blob is shorter than size
		}
		return got, fmt.Errorf("blobra: %s: read %d bytes at %d: %w", r.key, n, off, err)
	}
	if eof {
		return got, io.EOF
	}
	return got, nil
}

// Open opens the table stored as key in bucket: it asks the store for
// the blob's size (one attributes request, not a ReadAt) and calls
// reader.New, whose first ReadAt reads the file's tail (opts.TailSize).
// The returned ReaderAt counts the reads; the caller closes the Reader
// (which does not close the bucket).
func Open(ctx context.Context, bucket *blob.Bucket, key string, opts *reader.Options) (*reader.Reader, *ReaderAt, error) {
	attrs, err := bucket.Attributes(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("blobra: %s: %w", key, err)
	}
	ra := NewReaderAt(ctx, bucket, key, attrs.Size)
	r, err := reader.New(ra, attrs.Size, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("blobra: %s: %w", key, err)
	}
	return r, ra, nil
}
