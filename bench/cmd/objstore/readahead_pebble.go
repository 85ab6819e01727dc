package main

// pebbleReadable adapts a counted io.ReaderAt to Pebble v1.1.5's
// objstorage.Readable the way Pebble reads remote objects: ReadAt goes
// straight to the object; a ReadHandle (what Pebble's iterators read data
// blocks through) reads ahead with the state machine of
// objstorageprovider/readahead.go and the buffer logic of
// objstorageprovider/remote_readable.go (remoteReadHandle, 1 MiB maximum).
// Both are unexported in Pebble, so they are ported here, from
// github.com/cockroachdb/pebble v1.1.5 (BSD-3-Clause, Copyright The
// LevelDB-Go and Pebble Authors), with only the invariants check dropped.

import (
	"context"
	"io"

	"github.com/cockroachdb/pebble/objstorage"
)

const (
	pebbleMinFileReadsForReadahead = 2
	pebbleInitialReadaheadSize     = 64 << 10
	pebbleRemoteMaxReadaheadSize   = 1 << 20
)

type pebbleReadable struct {
	ra   io.ReaderAt
	size int64
}

var _ objstorage.Readable = (*pebbleReadable)(nil)

func (r *pebbleReadable) ReadAt(_ context.Context, p []byte, off int64) error {
	n, err := r.ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (r *pebbleReadable) Close() error { return nil }
func (r *pebbleReadable) Size() int64  { return r.size }

func (r *pebbleReadable) NewReadHandle(context.Context) objstorage.ReadHandle {
	h := &pebbleReadHandle{readable: r}
	h.state = readaheadState{size: pebbleInitialReadaheadSize, maxReadaheadSize: pebbleRemoteMaxReadaheadSize}
	return h
}

type pebbleReadHandle struct {
	readable      *pebbleReadable
	state         readaheadState
	data          []byte
	offset        int64
	forCompaction bool
}

func (r *pebbleReadHandle) ReadAt(ctx context.Context, p []byte, offset int64) error {
	readaheadSize := r.maybeReadahead(offset, len(p))
	if rhSize := int64(len(r.data)); rhSize > 0 {
		if r.offset <= offset && r.offset+rhSize > offset {
			n := copy(p, r.data[offset-r.offset:])
			if n == len(p) {
				return nil
			}
			offset += int64(n)
			p = p[n:]
			readaheadSize -= n
		}
	}
	if readaheadSize > len(p) {
		if offset+int64(readaheadSize) > r.readable.size {
			readaheadSize = int(r.readable.size - offset)
			if readaheadSize <= 0 {
				return io.EOF
			}
		}
		r.offset = offset
		if cap(r.data) >= readaheadSize {
			r.data = r.data[:readaheadSize]
		} else {
			r.data = make([]byte, readaheadSize)
		}
		if err := r.readable.ReadAt(ctx, r.data, offset); err != nil {
			r.data = r.data[:0]
			return err
		}
		copy(p, r.data)
		return nil
	}
	return r.readable.ReadAt(ctx, p, offset)
}

func (r *pebbleReadHandle) maybeReadahead(offset int64, n int) int {
	if r.forCompaction {
		return pebbleRemoteMaxReadaheadSize
	}
	return int(r.state.maybeReadahead(offset, int64(n)))
}

func (r *pebbleReadHandle) Close() error        { r.data = nil; return nil }
func (r *pebbleReadHandle) SetupForCompaction() { r.forCompaction = true }
func (r *pebbleReadHandle) RecordCacheHit(_ context.Context, offset, size int64) {
	if !r.forCompaction {
		r.state.recordCacheHit(offset, size)
	}
}

type readaheadState struct {
	numReads         int64
	maxReadaheadSize int64
	size             int64
	prevSize         int64
	limit            int64
}

func (rs *readaheadState) recordCacheHit(offset, blockLength int64) {
	currentReadEnd := offset + blockLength
	if rs.numReads >= pebbleMinFileReadsForReadahead {
		if currentReadEnd >= rs.limit && offset <= rs.limit+rs.maxReadaheadSize {
			rs.limit = currentReadEnd
			return
		}
		if currentReadEnd < rs.limit-rs.prevSize || offset > rs.limit+rs.maxReadaheadSize {
			rs.numReads = 1
			rs.limit = currentReadEnd
			rs.size = pebbleInitialReadaheadSize
			rs.prevSize = 0
			return
		}
		return
	}
	if currentReadEnd >= rs.limit && offset <= rs.limit+rs.maxReadaheadSize {
		rs.numReads++
		return
	}
	rs.numReads = 1
	rs.limit = currentReadEnd
	rs.size = pebbleInitialReadaheadSize
	rs.prevSize = 0
}

func (rs *readaheadState) maybeReadahead(offset, blockLength int64) int64 {
	currentReadEnd := offset + blockLength
	if rs.numReads >= pebbleMinFileReadsForReadahead {
		if currentReadEnd >= rs.limit && offset <= rs.limit+rs.maxReadaheadSize {
			rs.numReads++
			rs.limit = offset + rs.size
			rs.prevSize = rs.size
			rs.size *= 2
			if rs.size > rs.maxReadaheadSize {
				rs.size = rs.maxReadaheadSize
			}
			return rs.prevSize
		}
		if currentReadEnd < rs.limit-rs.prevSize || offset > rs.limit+rs.maxReadaheadSize {
			rs.numReads = 1
			rs.limit = currentReadEnd
			rs.size = pebbleInitialReadaheadSize
			rs.prevSize = 0
			return 0
		}
		rs.numReads++
		return 0
	}
	if currentReadEnd >= rs.limit && offset <= rs.limit+rs.maxReadaheadSize {
		rs.numReads++
		return 0
	}
	rs.numReads = 1
	rs.limit = currentReadEnd
	rs.size = pebbleInitialReadaheadSize
	rs.prevSize = 0
	return 0
}
