package fuzz

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// roundTripInput is what FuzzRoundTrip decodes its bytes into.
type roundTripInput struct {
	opts builder.Options
	mmap bool
	kvs  []kv // sorted, unique keys
}

// decodeRoundTrip turns arbitrary bytes into builder options and a sorted
// set of unique keys with values. The layout, every part optional:
//
//	byte 0: block size = 1 + 16·(b & 127) (so 1 to 2033 bytes); bit 7
//	        writes format version 4, the default (partitioned by bit 5 of
//	        byte 1, the hash index not optional, bit 7 of byte 2 ignored),
//	        else the older layouts (FormatVersion 1)
//	byte 1: restart interval = b & 31 (0 means the default, 16); bit 5
//	        partitions the table (format version 3, with the hash index
//	        section too if bit 7 of byte 2 asks for one) in partitions of
//	        64·(1 + b>>6) bytes
//	byte 2: bits 0-1 compression (0 default, 1 none, 2 snappy, 3 zstd;
//	        with restart interval 31, 2 is MinLZ and 3 zstd with a
//	        256-byte dictionary);
//	        bits 2-5 filter bits per key (0 means 10, 15 the binary fuse
//	        filter BinaryFuse8); bit 6 read via mmap;
//	        bit 7 hash index (format version 2)
//	then records: shared, klen, vlen bytes, then the key's new bytes and the
//	value. The key is the first shared%(len(prev)+1) bytes of the previous
//	record's key followed by klen%32 bytes of input; a vlen with the top bit
//	set makes a compressible value of (vlen&127)·4 copies of one input byte,
//	otherwise the value is the next vlen%64 bytes. A later duplicate key
//	replaces the earlier value.
func decodeRoundTrip(data []byte) roundTripInput {
	var in roundTripInput
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	take := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n:n]
		data = data[n:]
		return b
	}
	bs := next()
	in.opts.BlockSize = 1 + 16*int(bs&127)
	in.opts.FormatVersion = format.Version1
	ri := next()
	in.opts.RestartInterval = int(ri & 31)
	if ri&32 != 0 {
		// Partitioned (format version 3) whatever the size, in
		// partitions of 64 to 256 bytes.
		in.opts.PartitionThreshold = 1
		in.opts.PartitionSize = 64 * (1 + int(ri>>6))
	}
	b := next()
	in.opts.Compression = []format.Compression{format.DefaultCompression, format.NoCompression, format.SnappyCompression, format.ZstdCompression}[b&3]
	if ri&31 == 31 {
		// Restart interval 31 also picks the newer codecs: MinLZ for
		// snappy, zstd with a dictionary for zstd.
		switch in.opts.Compression {
		case format.SnappyCompression:
			in.opts.Compression = format.MinLZCompression
		case format.ZstdCompression:
			in.opts.DictionarySize = builder.MinDictionarySize
		}
	}
	in.opts.Filter = filterblock.Bloom(float64(b >> 2 & 15))
	if b>>2&15 == 15 {
		in.opts.Filter = filterblock.BinaryFuse8()
	}
	in.mmap = b&64 != 0
	in.opts.HashIndex = b&128 != 0
	if bs&128 != 0 {
		in.opts.FormatVersion, in.opts.HashIndex = 0, false
	}

	m := map[string][]byte{}
	var prev []byte
	for len(data) > 0 {
		shared, klen, vlen := int(next()), int(next()&31), next()
		key := append(bytes.Clone(prev[:shared%(len(prev)+1)]), take(klen)...)
		var val []byte
		if vlen&128 != 0 {
			val = bytes.Repeat([]byte{next()}, int(vlen&127)*4)
		} else {
			val = bytes.Clone(take(int(vlen % 64)))
		}
		m[string(key)] = val
		prev = key
	}
	for k, v := range m {
		in.kvs = append(in.kvs, kv{[]byte(k), cp(v)})
	}
	slices.SortFunc(in.kvs, func(a, b kv) int { return bytes.Compare(a.Key, b.Key) })
	return in
}

// encodeRoundTrip is a right inverse of decodeRoundTrip for seeds: opts
// are the three option bytes, kvs sorted unique entries with keys of at
// most 31 new bytes per record and values of at most 63 bytes.
func encodeRoundTrip(opts [3]byte, kvs []kv) []byte {
	out := opts[:]
	for _, e := range kvs {
		if len(e.Key) > 31 || len(e.Value) > 63 {
			panic("seed entry too long")
		}
		out = append(out, 0, byte(len(e.Key)), byte(len(e.Value)))
		out = append(out, e.Key...)
		out = append(out, e.Value...)
	}
	return out
}

// FuzzRoundTrip builds a table from a key/value set and options decoded from
// the input, reads it back and compares everything with the set.
func FuzzRoundTrip(f *testing.F) {
	var kvs []kv
	for i := 0; i < 30; i++ {
		kvs = append(kvs, kv{[]byte{'k', byte('a' + i%26), byte(i)}, bytes.Repeat([]byte{byte(i)}, i%5)})
	}
	f.Add(encodeRoundTrip([3]byte{0, 0, 0}, kvs))
	f.Add(encodeRoundTrip([3]byte{4, 2, 1 | 4<<2}, kvs))
	f.Add(encodeRoundTrip([3]byte{0, 1, 2 | 64}, kvs[:5]))
	// With a hash index: default options; raw 65-byte blocks through mmap;
	// snappy 1-byte blocks; no entries.
	f.Add(encodeRoundTrip([3]byte{0, 0, 128}, kvs))
	f.Add(encodeRoundTrip([3]byte{4, 2, 1 | 64 | 128}, kvs))
	f.Add(encodeRoundTrip([3]byte{0, 1, 2 | 128}, kvs[:5]))
	f.Add([]byte{0, 0, 128})
	// zstd, and the binary fuse filter, each with and without a hash index.
	f.Add(encodeRoundTrip([3]byte{4, 2, 3}, kvs))
	f.Add(encodeRoundTrip([3]byte{4, 2, 3 | 128}, kvs))
	f.Add(encodeRoundTrip([3]byte{0, 0, 15 << 2}, kvs))
	f.Add(encodeRoundTrip([3]byte{0, 0, 3 | 15<<2 | 64 | 128}, kvs))
	// Partitioned: raw and snappy, through mmap or not, with the binary
	// fuse filter (which is never partitioned) and with a hash index
	// (version 3 with a hash index section): snappy through New, raw
	// through mmap (file offsets in the slots), zstd through mmap.
	f.Add(encodeRoundTrip([3]byte{1, 32, 1 | 4<<2}, kvs))
	f.Add(encodeRoundTrip([3]byte{0, 2 | 32 | 64, 2 | 64}, kvs))
	f.Add(encodeRoundTrip([3]byte{1, 32 | 192, 0}, kvs[:7]))
	f.Add(encodeRoundTrip([3]byte{1, 32, 15 << 2}, kvs))
	f.Add(encodeRoundTrip([3]byte{1, 32, 128}, kvs))
	f.Add(encodeRoundTrip([3]byte{1, 2 | 32, 1 | 64 | 128}, kvs))
	f.Add(encodeRoundTrip([3]byte{0, 32 | 64, 3 | 64 | 128}, kvs))
	// Version 4 (bit 7 of byte 0): one-level and partitioned, every
	// compression, mmap or not, Bloom and the binary fuse filter (never
	// partitioned), tiny blocks.
	f.Add(encodeRoundTrip([3]byte{128, 0, 0}, kvs))
	f.Add(encodeRoundTrip([3]byte{128 | 4, 2, 1 | 64}, kvs))
	f.Add(encodeRoundTrip([3]byte{128, 1, 2}, kvs[:5]))
	f.Add(encodeRoundTrip([3]byte{128 | 4, 2, 3 | 64}, kvs))
	f.Add(encodeRoundTrip([3]byte{128, 0, 15 << 2}, kvs))
	f.Add(encodeRoundTrip([3]byte{128 | 1, 32, 1 | 4<<2}, kvs))
	f.Add(encodeRoundTrip([3]byte{128, 2 | 32 | 64, 2 | 64}, kvs))
	f.Add(encodeRoundTrip([3]byte{128 | 1, 32 | 192, 3 | 64}, kvs[:7]))
	f.Add([]byte{128, 0, 0})
	f.Add([]byte{255, 31, 3, 0, 0, 0})
	f.Add([]byte{1, 3, 2, 0, 5, 0x85, 'a', 'b', 'c', 'd', 'e', 'z', 3, 4, 0x90, 'f', 'g', 'h', 'i', 'y'})
	f.Add([]byte{})
	scratch := newScratchFile(f, "rt.sst")
	f.Fuzz(func(t *testing.T, data []byte) {
		in := decodeRoundTrip(data)
		var buf bytes.Buffer
		b := builder.New(&buf, &in.opts)
		for _, e := range in.kvs {
			if err := b.Add(e.Key, e.Value); err != nil {
				t.Fatalf("Add(%q): %v", e.Key, err)
			}
		}
		if len(in.kvs) > 0 {
			// A repeated key is refused and leaves the builder usable.
			if err := b.Add(in.kvs[0].Key, nil); !errors.Is(err, builder.ErrKeyOrder) {
				t.Fatalf("Add of an out-of-order key: %v", err)
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		file := buf.Bytes()
		var opened *scratchFile
		if in.mmap {
			opened = scratch
		}
		r := openTable(t, file, opened)
		if r == nil {
			t.Fatal("built table does not open")
		}
		defer r.Close()
		if err := r.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if diff := cmp.Diff(b.Properties(), r.Properties()); diff != "" {
			t.Fatalf("properties (-builder +reader):\n%s", diff)
		}
		p := r.Properties()
		wantProps := format.Properties{
			FormatVersion:    format.Version1,
			NumEntries:       uint64(len(in.kvs)),
			Compression:      format.SnappyCompression,
			FilterPolicy:     filterblock.BloomName,
			FilterBitsPerKey: 0,
			BlockSize:        uint64(in.opts.BlockSize),
			RestartInterval:  uint64(in.opts.RestartInterval),
		}
		v4 := in.opts.FormatVersion == 0
		hashed := in.opts.HashIndex || v4
		if hashed {
			wantProps.FormatVersion = format.Version2
			if v4 {
				wantProps.FormatVersion = format.Version4
			}
		}
		_, bloom := in.opts.Filter.(filterblock.Sized)
		partitioned := in.opts.PartitionThreshold > 0 && bloom && len(in.kvs) > 0
		if partitioned {
			if v4 {
				wantProps.Partitioned = true
			} else {
				wantProps.FormatVersion = format.Version3 // with a hash index or without
			}
		}
		// The sizes and counts, from the file's bytes by the layout of
		// format's doc, not from the properties.
		lay := layoutOf(t, file, partitioned, hashed)
		if lay.entries != uint64(len(in.kvs)) {
			t.Fatalf("the data blocks hold %d entries, %d were added", lay.entries, len(in.kvs))
		}
		wantProps.NumDataBlocks, wantProps.DataSize, wantProps.MaxBlockSize = lay.numBlocks, lay.dataSize, lay.maxBlock
		wantProps.HashIndexSize, wantProps.FilterSize, wantProps.IndexSize = lay.hashIndexSize, lay.filterSize, lay.indexSize
		if f := r.Footer(); f.Version != wantProps.FormatVersion {
			t.Fatalf("footer version %d, want %d", f.Version, wantProps.FormatVersion)
		}
		if in.opts.Compression != format.DefaultCompression && in.opts.Compression != format.SnappyCompression {
			wantProps.Compression = in.opts.Compression
		}
		if in.opts.DictionarySize > 0 {
			// Trained or not (too few samples), as the builder decided;
			// the reads below check that blocks decode with it.
			wantProps.Dictionary = p.Dictionary
		}
		if s, ok := in.opts.Filter.(filterblock.Sized); ok {
			wantProps.FilterBitsPerKey = s.BitsPerKey()
		} else {
			// BinaryFuse8 has no bits per key; it records Bloom's if its
			// construction fell back.
			wantProps.FilterPolicy = filterblock.BinaryFuse8Name
		}
		if len(in.kvs) > 0 {
			for _, e := range in.kvs {
				if !r.MayContain(e.Key) {
					t.Fatalf("%s: MayContain(%q) = false", p.FilterPolicy, e.Key)
				}
			}
		}
		if wantProps.RestartInterval == 0 {
			wantProps.RestartInterval = builder.DefaultRestartInterval
			if v4 {
				wantProps.RestartInterval = builder.DefaultRestartIntervalV4
			}
		}
		if len(in.kvs) > 0 {
			wantProps.SmallestKey, wantProps.LargestKey = in.kvs[0].Key, in.kvs[len(in.kvs)-1].Key
		}
		for _, e := range in.kvs {
			wantProps.RawKeyBytes += uint64(len(e.Key))
			wantProps.RawValueBytes += uint64(len(e.Value))
		}
		if diff := cmp.Diff(wantProps, p); diff != "" {
			t.Fatalf("properties (-want +got):\n%s", diff)
		}
		if (p.NumDataBlocks == 0) != (len(in.kvs) == 0) || p.NumDataBlocks > uint64(len(in.kvs)) {
			t.Fatalf("%d data blocks for %d entries", p.NumDataBlocks, len(in.kvs))
		}

		model := make([]blockEntry, len(in.kvs))
		for i, e := range in.kvs {
			model[i] = blockEntry(e)
		}
		limit := len(model)
		fwd, err := scan(t, r, limit, false)
		if err != nil {
			t.Fatalf("forward scan: %v", err)
		}
		if diff := diffEntries(model, fwd); diff != "" {
			t.Fatalf("forward scan (-want +got):\n%s", diff)
		}
		bwd, err := scan(t, r, limit, true)
		if err != nil {
			t.Fatalf("backward scan: %v", err)
		}
		slices.Reverse(bwd)
		if diff := diffEntries(model, bwd); diff != "" {
			t.Fatalf("backward scan, reversed (-want +got):\n%s", diff)
		}
		probes := keysFrom(data, 24)
		for _, e := range model {
			probes = append(probes, successor(e.Key), e.Key[:len(e.Key)/2])
		}
		checkLookups(t, r, model, probes)

		// The same file read through the other path agrees.
		other := scratch
		if in.mmap {
			other = nil
		}
		if r2 := openTable(t, file, other); r2 == nil {
			t.Fatal("built table does not open through the other path")
		} else {
			fwd2, err := scan(t, r2, limit, false)
			r2.Close()
			if err != nil || diffEntries(model, fwd2) != "" {
				t.Fatalf("the other read path disagrees: %v", err)
			}
		}
	})
}

// tableLayout is what a table's bytes say of its sections.
type tableLayout struct {
	dataSize, hashIndexSize, filterSize, indexSize uint64 // trailers included
	numBlocks, entries                             uint64 // data blocks, and the entries they hold
	maxBlock                                       uint64 // largest decoded data block
}

// layoutOf finds a table's sections from its footer and index blocks
// alone, by the layout of package format's doc, and fails the test where
// the file departs from it: the data blocks tile the data section from
// offset 0 in index order; the hash index section (present exactly when
// hashed) fills the gap up to the filter section and decodes; a
// partitioned table's partitions (a filter and an index partition each)
// tile the span from the filter handle's offset to the top-level index;
// and data, hash index, filter section or partitions, index, properties
// and footer add up to the file size.
func layoutOf(t *testing.T, file []byte, partitioned, hashed bool) tableLayout {
	t.Helper()
	size := uint64(len(file))
	f, err := footer.Decode(file[size-footer.Size:], int64(size))
	if err != nil {
		t.Fatalf("footer: %v", err)
	}
	var dict *codec.ZstdDict // the table's zstd dictionary, from its properties
	block := func(section string, h format.BlockHandle) []byte {
		stored, typ, err := codec.CheckBlock(section, int64(h.Offset), file[h.Offset:h.End()])
		if err != nil {
			t.Fatalf("%s: %v", section, err)
		}
		c, err := codec.DecodeBlockDict(section, int64(h.Offset), stored, typ, 1<<30, nil, dict)
		if err != nil {
			t.Fatalf("%s: %v", section, err)
		}
		return c
	}
	if p, err := codec.DecodeProperties(block(format.SectionProperties, f.Properties), int64(f.Properties.Offset)); err != nil {
		t.Fatalf("properties: %v", err)
	} else if p.Dictionary != nil {
		if dict, err = codec.NewZstdDict(format.SectionProperties, int64(f.Properties.Offset), p.Dictionary); err != nil {
			t.Fatal(err)
		}
		defer dict.Close()
	}
	var lay tableLayout
	dataBlocks := func(index []byte) {
		var it codec.BlockIter
		if err := it.Init(format.SectionIndex, 0, index); err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			h, n := codec.DecodeHandle(it.Value())
			if n != len(it.Value()) || h.Offset != lay.dataSize || h.End() > f.Filter.Offset {
				t.Fatalf("data block %d at %+v, the previous one ends at %d, the filter section starts at %d", lay.numBlocks, h, lay.dataSize, f.Filter.Offset)
			}
			lay.dataSize = h.End()
			lay.numBlocks++
			contents := block(format.SectionDataBlock, h)
			lay.maxBlock = max(lay.maxBlock, uint64(len(contents)))
			var d codec.BlockIter
			if err := d.Init(format.SectionDataBlock, int64(h.Offset), contents); err != nil {
				t.Fatal(err)
			}
			for ok := d.First(); ok; ok = d.Next() {
				lay.entries++
			}
			if err := d.Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	index := block(format.SectionIndex, f.Index)
	if partitioned {
		var top codec.BlockIter
		if err := top.Init(format.SectionTopIndex, 0, index); err != nil {
			t.Fatal(err)
		}
		end := f.Filter.Offset
		for ok := top.First(); ok; ok = top.Next() {
			ph, ok := codec.DecodePartitionHandle(top.Value())
			if !ok || ph.Offset != end || ph.FirstBlock != lay.numBlocks {
				t.Fatalf("partition %+v (ok %v): the previous one ends at %d after %d data blocks", ph, ok, end, lay.numBlocks)
			}
			block(format.SectionFilterPartition, ph.Filter())
			dataBlocks(block(format.SectionIndexPartition, ph.Index()))
			end = ph.End()
		}
		if err := top.Err(); err != nil {
			t.Fatal(err)
		}
		if end != f.Index.Offset || f.Filter.End() != end {
			t.Fatalf("partitions end at %d, the filter handle %+v spans to %d, the top-level index starts at %d", end, f.Filter, f.Filter.End(), f.Index.Offset)
		}
		lay.filterSize = end - f.Filter.Offset
	} else {
		dataBlocks(index)
		block(format.SectionFilter, f.Filter)
		lay.filterSize = f.Filter.Length + format.BlockTrailerLen
	}
	lay.hashIndexSize = f.Filter.Offset - lay.dataSize
	if hashed {
		h := format.BlockHandle{Offset: lay.dataSize, Length: lay.hashIndexSize - format.BlockTrailerLen}
		if lay.hashIndexSize < codec.HashIndexHeaderLen+format.BlockTrailerLen {
			t.Fatalf("hash index of %d bytes", lay.hashIndexSize)
		}
		if _, err := codec.DecodeHashIndex(block(format.SectionHashIndex, h), int64(h.Offset), lay.dataSize, lay.numBlocks); err != nil {
			t.Fatal(err)
		}
	} else if lay.hashIndexSize != 0 {
		t.Fatalf("%d bytes between the data blocks and the filter section of a table without a hash index", lay.hashIndexSize)
	}
	lay.indexSize = f.Index.Length + format.BlockTrailerLen
	if f.Index.End() != f.Properties.Offset || f.Properties.End() != size-footer.Size ||
		lay.dataSize+lay.hashIndexSize+lay.filterSize+lay.indexSize+f.Properties.Length+format.BlockTrailerLen+footer.Size != size {
		t.Fatalf("sections of %d, %d, %d, %d and %d bytes and the footer do not make the %d-byte file", lay.dataSize, lay.hashIndexSize, lay.filterSize, lay.indexSize, f.Properties.Length+format.BlockTrailerLen, size)
	}
	return lay
}
