package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// spanCount is the -spans flag: range deletions in the span table.
var spanCount int

// buildSpans builds ours with the builder's defaults, n entries and s
// spans (range deletions, format version 5): span j covers the keys from
// key j·n/s for n/(2s) keys, with an 8-byte value (a sequence number).
func buildSpans(path string, n, s int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	b := builder.New(f, nil)
	var k, v []byte
	for i := range n {
		k, v = key(k, i, n), value(v, i)
		if err := b.Add(k, v); err != nil {
			b.Abort()
			f.Close()
			return err
		}
	}
	var end []byte
	for j := range s {
		i := j * n / s
		k, end = key(k, i, n), key(end, min(i+max(n/(2*s), 1), n-1), n)
		if i+1 >= n {
			break
		}
		if err := b.AddSpan(k, end, binary.BigEndian.AppendUint64(v[:0], uint64(j))); err != nil {
			b.Abort()
			f.Close()
			return err
		}
	}
	if err := b.Finish(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// spanResult is the span table's reads: New's, the first SpanAt's (on a
// new reader) and those of 1000 SpanAt of keys spread over the table.
type spanResult struct {
	open, first, thousand count
	blockSize, tableSize  int64
	fragments             uint64
}

// measureSpans measures SpanAt over the table at path of n entries.
func measureSpans(path string, n int) (*spanResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	src := &source{r: f, latency: latency}
	res := &spanResult{tableSize: st.Size()}
	start := time.Now()
	t, err := openOurs(src, st.Size())
	if err != nil {
		return nil, err
	}
	defer t.close()
	r := t.(oursTable).r
	reads, _ := src.take()
	res.open = counted(reads, time.Since(start))
	p := r.Properties()
	res.blockSize, res.fragments = int64(p.SpanBlockSize), p.NumSpanFragments
	var k []byte
	start = time.Now()
	if _, err := r.SpanAt(key(k, 0, n)); err != nil {
		return nil, fmt.Errorf("first SpanAt: %w", err)
	}
	reads, _ = src.take()
	res.first = counted(reads, time.Since(start))
	start = time.Now()
	for j := range lookups {
		k = key(k, int(mix(uint64(j))%uint64(n)), n)
		if _, err := r.SpanAt(k); err != nil && err != reader.ErrNotFound {
			return nil, fmt.Errorf("SpanAt %d: %w", j, err)
		}
	}
	reads, _ = src.take()
	res.thousand = counted(reads, time.Since(start))
	return res, nil
}

// String renders the result as the lines main prints.
func (r *spanResult) String() string {
	return fmt.Sprintf("ours default with %d range deletions (%d fragments, span block %s, file %s): open %s; first SpanAt %s; %d SpanAt %s",
		spanCount, r.fragments, size(r.blockSize), size(r.tableSize), r.open, r.first, lookups, r.thousand)
}
