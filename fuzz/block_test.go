package fuzz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/golang/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/minio/minlz"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// addBlockSeeds adds the data and index blocks of the seed tables, the
// stored bytes of their snappy blocks, and a few hand-made blocks.
func addBlockSeeds(f *testing.F, withData, withIndex, withSnappy bool) {
	for _, p := range seedParts(f) {
		if withIndex && p.index != nil {
			f.Add(p.index)
		}
		if withIndex && len(p.indexParts) > 0 {
			f.Add(p.indexParts[0])
		}
		if withData {
			for i, b := range p.dataBlocks {
				if i < 3 || i == len(p.dataBlocks)-1 {
					f.Add(b)
				}
			}
		}
		if withSnappy {
			for i, b := range p.snappyBlocks {
				if i < 2 {
					f.Add(b)
				}
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})                                // empty block
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0})                    // one restart, no entries
	f.Add([]byte{0, 1, 1, 'k', 'v', 0, 0, 0, 0, 1, 0, 0, 0}) // one entry
	f.Add(snappy.Encode(nil, bytes.Repeat([]byte("snappy!"), 40)))
	f.Add(binary.AppendUvarint(nil, 1<<30)) // a snappy header claiming 1 GiB
	f.Add(codec.AppendZstd(nil, bytes.Repeat([]byte("zstd! "), 40), format.LevelDefault))
	f.Add(codec.AppendZstd(nil, []byte{0, 1, 1, 'k', 'v', 0, 0, 0, 0, 1, 0, 0, 0}, format.LevelFastest))
	if m, ok := codec.AppendMinLZ(nil, bytes.Repeat([]byte("minlz! "), 40), format.LevelDefault); ok {
		f.Add(m)
	}
	f.Add([]byte{0, 0x80, 0x80, 0x80, 0x04, 0}) // a MinLZ header claiming 8 MiB
	f.Add([]byte{0, 0, 'l', 'i', 't'})          // a literal-only MinLZ block
	// A zstd frame claiming 1 GiB (single segment, 8-byte content size)
	// with one RLE block of 100 bytes.
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0x23, 0x03, 0, 'a'})
}

// blockEntry is a copied BlockIter position.
type blockEntry struct {
	Key, Value []byte
}

// FuzzBlock decodes arbitrary bytes as block contents. BlockIter takes the
// contents directly, so this is the path on which a block whose checksum
// passes but whose bytes are garbage reaches the entry decoder. The
// single-entry decoders of hashed lookups, EntryAt (version 2) and
// EntryParts (version 4), are compared with the iterator on every entry
// (checkEntryAt); its seeds hold the data blocks of every format version.
func FuzzBlock(f *testing.F) {
	addBlockSeeds(f, true, true, true)
	f.Fuzz(func(t *testing.T, contents []byte) {
		checkBlock(t, format.SectionDataBlock, contents)
		checkEntryAt(t, contents)
		checkStoredBlock(t, contents)
	})
}

// TestEntryPartsSeedBlocks checks that on the data blocks of every
// version 4 seed table, which share prefixes with their first key,
// EntryParts agrees with BlockIter on every entry: checkEntryAt's
// comparison runs there, not only on fuzzed bytes.
func TestEntryPartsSeedBlocks(t *testing.T) {
	tables, blocks := 0, 0
	for _, p := range seedParts(t) {
		if p.footer.Version != format.Version4 || len(p.dataBlocks) == 0 {
			continue
		}
		tables++
		for i, b := range p.dataBlocks {
			var it codec.BlockIter
			if err := it.Init(format.SectionDataBlock, 0, b); err != nil {
				t.Fatal(err)
			}
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				n++
			}
			if it.Err() != nil || n == 0 {
				t.Fatalf("data block %d: %d entries, %v", i, n, it.Err())
			}
			if agreed := checkEntryAt(t, b); agreed != n {
				t.Fatalf("data block %d of a version 4 table: EntryParts agrees with BlockIter on %d of %d entries", i, agreed, n)
			}
			blocks++
		}
	}
	if tables < 10 {
		t.Fatalf("%d version 4 seed tables with data blocks, want at least 10", tables)
	}
	t.Logf("%d data blocks of %d version 4 tables", blocks, tables)
}

// checkBlock runs every BlockIter operation over contents and returns the
// forward scan, or nil if it failed.
func checkBlock(t *testing.T, section string, contents []byte) []blockEntry {
	limit := len(contents) + 1 // every entry takes at least 3 bytes
	var it codec.BlockIter
	if err := it.Init(section, 100, contents); err != nil {
		wantErr(t, "Init", err, format.ErrCorrupt)
		if it.Err() == nil {
			t.Fatalf("Init returned %v but Err is nil", err)
		}
		if it.First() || it.Valid() || it.Last() || it.SeekGE(nil) || it.Next() || it.Prev() {
			t.Fatal("iterator positioned after Init failed")
		}
		return nil
	}

	var fwd []blockEntry
	for ok := it.First(); ok; ok = it.Next() {
		if !it.Valid() {
			t.Fatal("First/Next returned true but Valid is false")
		}
		if len(fwd) >= limit {
			t.Fatalf("forward scan of a %d-byte block passed %d entries", len(contents), limit)
		}
		fwd = append(fwd, blockEntry{cp(it.Key()), cp(it.Value())})
	}
	fwdErr := it.Err()
	wantErr(t, "forward scan", fwdErr, format.ErrCorrupt)
	if it.Valid() {
		t.Fatal("Valid after forward scan ended")
	}

	var bwd []blockEntry
	for ok := it.Last(); ok; ok = it.Prev() {
		if len(bwd) >= limit {
			t.Fatalf("backward scan of a %d-byte block passed %d entries", len(contents), limit)
		}
		bwd = append(bwd, blockEntry{cp(it.Key()), cp(it.Value())})
	}
	bwdErr := it.Err()
	wantErr(t, "backward scan", bwdErr, format.ErrCorrupt)
	if fwdErr == nil && bwdErr == nil {
		slices.Reverse(bwd)
		if diff := diffEntries(fwd, bwd); diff != "" {
			t.Fatalf("backward scan differs from forward scan (-fwd +bwd):\n%s", diff)
		}
	}
	sorted := fwdErr == nil && slices.IsSortedFunc(fwd, func(a, b blockEntry) int { return bytes.Compare(a.Key, b.Key) })

	targets := keysFrom(contents, 16)
	for i, e := range fwd {
		if i < 8 || i == len(fwd)-1 {
			targets = append(targets, e.Key, successor(e.Key))
		}
	}
	for _, target := range targets {
		// A corruption is sticky, so start each seek afresh.
		if err := it.Init(section, 100, contents); err != nil {
			t.Fatalf("second Init failed: %v", err)
		}
		ok := it.SeekGE(target)
		wantErr(t, "SeekGE", it.Err(), format.ErrCorrupt)
		var got []byte
		if ok {
			got = bytes.Clone(it.Key())
			if bytes.Compare(got, target) < 0 {
				t.Fatalf("SeekGE(%q) landed on smaller key %q", target, got)
			}
		}
		if sorted && it.Err() == nil {
			i, _ := slices.BinarySearchFunc(fwd, target, func(e blockEntry, k []byte) int { return bytes.Compare(e.Key, k) })
			switch {
			case i == len(fwd) && ok:
				t.Fatalf("SeekGE(%q) found %q, the block's keys are all smaller", target, got)
			case i < len(fwd) && !ok:
				t.Fatalf("SeekGE(%q) found nothing, want %q", target, fwd[i].Key)
			case i < len(fwd) && !bytes.Equal(got, fwd[i].Key):
				t.Fatalf("SeekGE(%q) found %q, want %q", target, got, fwd[i].Key)
			}
		}
		if ok {
			// A step either way after a seek must stay bounded and safe.
			it.RestartIndex()
			if it.Next() {
				it.Prev()
			}
			wantErr(t, "Next/Prev after SeekGE", it.Err(), format.ErrCorrupt)
		}
	}
	return fwd
}

// checkStoredBlock runs the checksum and decompression path over stored.
func checkStoredBlock(t *testing.T, stored []byte) {
	// The trailer check must accept a correct trailer and reject others.
	for _, typ := range []byte{format.BlockTypeRaw, format.BlockTypeSnappy, 7} {
		buf := codec.AppendTrailer(bytes.Clone(stored), stored, typ)
		got, gotTyp, err := codec.CheckBlock(format.SectionDataBlock, 0, buf)
		wantErr(t, "CheckBlock", err, format.ErrCorrupt)
		if (err == nil) != (typ <= format.BlockTypeSnappy) {
			t.Fatalf("CheckBlock of a good trailer of type %d: %v", typ, err)
		}
		if err == nil && (!bytes.Equal(got, stored) || gotTyp != typ) {
			t.Fatal("CheckBlock returned other bytes than stored")
		}
		buf[len(buf)-1] ^= 0x10
		if _, _, err := codec.CheckBlock(format.SectionDataBlock, 0, buf); err == nil {
			t.Fatal("CheckBlock accepted a damaged checksum")
		}
	}
	_, _, err := codec.CheckBlock(format.SectionDataBlock, 0, stored)
	wantErr(t, "CheckBlock", err, format.ErrCorrupt)

	// Snappy with a small limit, decoding into a buffer of that capacity:
	// success must not allocate a new buffer.
	const small = 256
	dst := make([]byte, 0, small)
	out, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeSnappy, small, dst)
	wantErr(t, "DecodeBlock", err, format.ErrCorrupt)
	if err == nil {
		if len(out) > small {
			t.Fatalf("DecodeBlock returned %d bytes, limit %d", len(out), small)
		}
		if len(out) > 0 && &out[:1][0] != &dst[:1][0] {
			t.Fatal("DecodeBlock allocated although dst had room")
		}
		want, err := snappy.Decode(nil, stored)
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("DecodeBlock disagrees with snappy.Decode (err %v)", err)
		}
	}

	// With a large limit and no buffer, the allocation must stay within
	// snappy's maximum expansion of the input, whatever length it claims.
	// ReadMemStats stops the world, so measure only when the claimed
	// length is large enough for an unchecked allocation to matter.
	claimed, _ := snappy.DecodedLen(stored)
	var before, after runtime.MemStats
	if claimed > 1<<16 {
		runtime.ReadMemStats(&before)
	}
	out, err = codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeSnappy, 1<<30, nil)
	wantErr(t, "DecodeBlock", err, format.ErrCorrupt)
	if claimed > 1<<16 {
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > uint64(64*len(stored))+1<<16 {
			t.Fatalf("DecodeBlock of %d bytes claiming %d allocated %d bytes", len(stored), claimed, grown)
		}
	}
	if err == nil {
		if n, _ := snappy.DecodedLen(stored); n != len(out) {
			t.Fatalf("DecodeBlock returned %d bytes, header says %d", len(out), n)
		}
	}

	// Raw blocks come back as they are; unknown types are rejected.
	if out, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeRaw, 0, nil); err != nil || !bytes.Equal(out, stored) {
		t.Fatalf("DecodeBlock raw: %v", err)
	}
	if _, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, 5, 1<<20, nil); err == nil {
		t.Fatal("DecodeBlock accepted compression type 5")
	} else {
		wantErr(t, "DecodeBlock type 5", err, format.ErrCorrupt)
	}
	// A dictionary block without a dictionary is always corrupt.
	if _, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeZstdDict, 1<<20, nil); err == nil {
		t.Fatal("DecodeBlock accepted a dictionary block without a dictionary")
	} else {
		wantErr(t, "DecodeBlock type 4", err, format.ErrCorrupt)
	}

	checkZstdBlock(t, stored)
	checkMinLZBlock(t, stored)
	checkZstdDictBlock(t, stored)
}

// checkMinLZBlock decodes stored as a MinLZ block: with a small limit
// into a buffer of that capacity (success must not allocate), and with a
// large limit, where what decodes must agree with DecodedLen and with
// minlz's own decoder, and a block not starting with MinLZ's 0 byte is
// refused. It also round-trips stored through AppendMinLZ.
func checkMinLZBlock(t *testing.T, stored []byte) {
	const small = 256
	dst := make([]byte, 0, small)
	out, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeMinLZ, small, dst)
	wantErr(t, "DecodeBlock minlz", err, format.ErrCorrupt)
	if err == nil {
		if len(out) > small {
			t.Fatalf("DecodeBlock minlz returned %d bytes, limit %d", len(out), small)
		}
		if len(out) > 0 && &out[:1][0] != &dst[:1][0] {
			t.Fatal("DecodeBlock minlz allocated although dst had room")
		}
	}
	n, lenErr := codec.DecodedLen(stored, format.BlockTypeMinLZ)
	wantErr(t, "DecodedLen minlz", lenErr, format.ErrCorrupt)
	out, err = codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeMinLZ, 1<<24, nil)
	wantErr(t, "DecodeBlock minlz", err, format.ErrCorrupt)
	if err == nil {
		if len(stored) == 0 || stored[0] != 0 {
			t.Fatal("DecodeBlock minlz accepted a block without MinLZ's 0 byte")
		}
		if lenErr != nil || n != len(out) {
			t.Fatalf("DecodeBlock minlz returned %d bytes, DecodedLen %d, %v", len(out), n, lenErr)
		}
		want, err := minlz.Decode(nil, stored)
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("DecodeBlock minlz disagrees with the library's decoder (err %v)", err)
		}
	}
	enc, ok := codec.AppendMinLZ(nil, stored, format.LevelDefault)
	if !ok {
		t.Fatalf("AppendMinLZ refused %d bytes", len(stored))
	}
	back, err := codec.DecodeBlock(format.SectionDataBlock, 0, enc, format.BlockTypeMinLZ, len(stored), nil)
	if err != nil || !bytes.Equal(back, stored) {
		t.Fatalf("MinLZ round trip of %d bytes: %v", len(stored), err)
	}
}

// fuzzDict is a dictionary trained from the fuzz seeds' shapes, for
// checkZstdDictBlock.
var fuzzDict = sync.OnceValues(func() (*codec.ZstdDict, *codec.ZstdDictEncoder) {
	var samples [][]byte
	for i := range 64 {
		samples = append(samples, []byte(fmt.Sprintf("key%05d value number %d of the fuzz dictionary; zstd! snappy! ", i, i*i)))
	}
	raw, err := codec.TrainZstdDict(samples, 1024, format.LevelDefault)
	if err != nil {
		panic(err)
	}
	d, err := codec.NewZstdDict("dictionary", 0, raw)
	if err != nil {
		panic(err)
	}
	// One encoder for every call: a fuzz worker runs its inputs one at
	// a time, and making an encoder costs more than the checks.
	enc, err := codec.NewZstdDictEncoder(raw, format.LevelDefault)
	if err != nil {
		panic(err)
	}
	return d, enc
})

// checkZstdDictBlock decodes stored as a zstd dictionary block with a
// fixed dictionary: success must agree with DecodedLen and stay within
// the limit; and round-trips stored through the dictionary's encoder.
func checkZstdDictBlock(t *testing.T, stored []byte) {
	d, enc := fuzzDict()
	n, lenErr := codec.DecodedLen(stored, format.BlockTypeZstdDict)
	wantErr(t, "DecodedLen zstd dict", lenErr, format.ErrCorrupt)
	out, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, stored, format.BlockTypeZstdDict, 1<<20, nil, d)
	wantErr(t, "DecodeBlock zstd dict", err, format.ErrCorrupt)
	if err == nil && (lenErr != nil || n != len(out) || n > 1<<20) {
		t.Fatalf("DecodeBlock zstd dict returned %d bytes, DecodedLen %d, %v", len(out), n, lenErr)
	}
	if len(stored) == 0 {
		return // the encoder names no dictionary in an empty frame; data blocks are never empty
	}
	frame := enc.Append(nil, stored)
	back, err := codec.DecodeBlockDict(format.SectionDataBlock, 0, frame, format.BlockTypeZstdDict, len(stored), nil, d)
	if err != nil || !bytes.Equal(back, stored) {
		t.Fatalf("zstd dictionary round trip of %d bytes: %v", len(stored), err)
	}
}

// checkZstdBlock decodes stored as a zstd block: with a small limit into a
// buffer of that capacity (success must not allocate), and with a 1 MiB
// limit and no buffer, where the allocation must stay within the limit
// plus the decoder's per-block working memory, whatever the frame claims.
// What decodes must agree with DecodedLen and with the library's own
// decoder.
func checkZstdBlock(t *testing.T, stored []byte) {
	const small = 256
	dst := make([]byte, 0, small)
	out, err := codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeZstd, small, dst)
	wantErr(t, "DecodeBlock zstd", err, format.ErrCorrupt)
	if err == nil {
		if len(out) > small {
			t.Fatalf("DecodeBlock zstd returned %d bytes, limit %d", len(out), small)
		}
		if len(out) > 0 && &out[:1][0] != &dst[:1][0] {
			t.Fatal("DecodeBlock zstd allocated although dst had room")
		}
	}
	n, lenErr := codec.DecodedLen(stored, format.BlockTypeZstd)
	wantErr(t, "DecodedLen zstd", lenErr, format.ErrCorrupt)
	var before, after runtime.MemStats
	measure := lenErr == nil && n > 1<<16
	if measure {
		runtime.ReadMemStats(&before)
	}
	out, err = codec.DecodeBlock(format.SectionDataBlock, 0, stored, format.BlockTypeZstd, 1<<20, nil)
	wantErr(t, "DecodeBlock zstd", err, format.ErrCorrupt)
	if measure {
		runtime.ReadMemStats(&after)
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 3<<20 {
			t.Fatalf("DecodeBlock zstd of %d bytes claiming %d allocated %d bytes", len(stored), n, grown)
		}
	}
	if err == nil {
		if lenErr != nil || n != len(out) {
			t.Fatalf("DecodeBlock zstd returned %d bytes, DecodedLen %d, %v", len(out), n, lenErr)
		}
		want, err := zstdRef.DecodeAll(stored, nil)
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("DecodeBlock zstd disagrees with the library's decoder (err %v)", err)
		}
	}
}

// zstdRef is a plain decoder of the zstd library, as a reference.
var zstdRef, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))

// FuzzIndex decodes arbitrary bytes as an index block: every entry's value
// must be a block handle or be rejected by DecodeHandle, and a partition
// handle (the value of a top-level index entry) or be rejected by
// DecodePartitionHandle, which also gets the bytes whole. The seeds hold
// index blocks, top-level indexes and index partitions.
func FuzzIndex(f *testing.F) {
	addBlockSeeds(f, false, true, false)
	for _, h := range []format.BlockHandle{{}, {Offset: 1 << 40, Length: 1<<64 - 1}} {
		var w codec.BlockWriter
		w.RestartInterval = 1
		w.Add([]byte("k"), codec.AppendHandle(nil, h))
		f.Add(bytes.Clone(w.Finish()))
	}
	for _, p := range seedParts(f) {
		if len(p.partHandles) > 0 {
			f.Add(bytes.Clone(p.partHandles[0]))
		}
	}
	f.Add(codec.AppendPartitionHandle(nil, codec.PartitionHandle{Offset: 1<<62 - 1, FilterLen: 1<<62 - 1, IndexLen: 1<<62 - 1, FirstBlock: 1<<64 - 1}))
	f.Add(codec.AppendPartitionHandle(nil, codec.PartitionHandle{Offset: 1 << 62}))
	f.Fuzz(func(t *testing.T, contents []byte) {
		checkHandle(t, contents)
		checkPartitionHandle(t, contents)
		fwd := checkBlock(t, format.SectionIndex, contents)
		var it codec.BlockIter
		if it.Init(format.SectionIndex, 0, contents) != nil {
			return
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			if n++; n > len(contents)+1 {
				t.Fatalf("index scan of %d bytes passed %d entries", len(contents), n)
			}
			if i, atRestart := it.RestartIndex(); i < 0 || i >= it.NumRestarts() {
				t.Fatalf("RestartIndex %d (%v) outside [0, %d)", i, atRestart, it.NumRestarts())
			}
			checkHandle(t, it.Value())
			checkPartitionHandle(t, it.Value())
		}
		wantErr(t, "index scan", it.Err(), format.ErrCorrupt)
		if it.Err() == nil && n != len(fwd) {
			t.Fatalf("second scan saw %d entries, first %d", n, len(fwd))
		}
	})
}

// checkPartitionHandle decodes src as a partition handle and checks the
// answer against the specification (four uvarints filling src, offset
// and lengths below 2^62 so that no end wraps), and that an accepted
// handle re-encodes to what decodes to it.
func checkPartitionHandle(t *testing.T, src []byte) {
	p, ok := codec.DecodePartitionHandle(src)
	var v [4]uint64
	rest, want := src, true
	for i := range v {
		x, n := binary.Uvarint(rest)
		if n <= 0 {
			want = false
			break
		}
		v[i], rest = x, rest[n:]
	}
	want = want && len(rest) == 0 && v[0] < 1<<62 && v[1] < 1<<62 && v[2] < 1<<62
	if ok != want {
		t.Fatalf("DecodePartitionHandle(%x) ok = %v, want %v", src, ok, want)
	}
	if !ok {
		if p != (codec.PartitionHandle{}) {
			t.Fatalf("DecodePartitionHandle(%x) failed but returned %+v", src, p)
		}
		return
	}
	if p != (codec.PartitionHandle{Offset: v[0], FilterLen: v[1], IndexLen: v[2], FirstBlock: v[3]}) {
		t.Fatalf("DecodePartitionHandle(%x) = %+v, the uvarints are %d", src, p, v)
	}
	if p.End() < p.Offset || p.Index().Offset < p.Offset || p.Index().End() != p.End() || p.Filter().End() != p.Index().Offset {
		t.Fatalf("partition %+v: filter %+v, index %+v, end %d", p, p.Filter(), p.Index(), p.End())
	}
	enc := codec.AppendPartitionHandle(nil, p)
	if p2, ok := codec.DecodePartitionHandle(enc); !ok || p2 != p || len(enc) > len(src) {
		t.Fatalf("partition %+v re-encodes to %x (%d bytes, from %d), which decodes to %+v, %v", p, enc, len(enc), len(src), p2, ok)
	}
}

// checkHandle decodes a handle from src and checks it re-encodes.
func checkHandle(t *testing.T, src []byte) {
	h, n := codec.DecodeHandle(src)
	if n <= 0 {
		if h != (format.BlockHandle{}) {
			t.Fatalf("DecodeHandle failed (n=%d) but returned %+v", n, h)
		}
		return
	}
	if n > len(src) || n > codec.MaxHandleLen {
		t.Fatalf("DecodeHandle read %d bytes of %d", n, len(src))
	}
	enc := codec.AppendHandle(nil, h)
	if len(enc) > n {
		t.Fatalf("handle %+v re-encodes to %d bytes, decoded from %d", h, len(enc), n)
	}
	if h2, n2 := codec.DecodeHandle(enc); h2 != h || n2 != len(enc) {
		t.Fatalf("handle %+v round-trips to %+v (%d of %d bytes)", h, h2, n2, len(enc))
	}
	off, _ := binary.Uvarint(src)
	if off != h.Offset {
		t.Fatalf("handle offset %d, first uvarint %d", h.Offset, off)
	}
}
