package specdecode

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

type kv struct{ key, value []byte }

// goldenInput returns the entries of testdata/golden/input.txt.
func goldenInput(t *testing.T) []kv {
	f, err := os.Open("../../testdata/golden/input.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []kv
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := bytes.Cut(sc.Bytes(), []byte{'\t'})
		out = append(out, kv{bytes.Clone(k), bytes.Clone(v)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// numbered returns n entries with keys "key/%08d" and values of valueLen
// bytes cut at varying offsets from 64 KiB of letters drawn at random
// from a small alphabet, so that blocks compress.
func numbered(n, valueLen int) []kv {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := make([]byte, 64<<10)
	for i := range pool {
		pool[i] = "abcdefgh"[rng.IntN(8)]
	}
	out := make([]kv, n)
	for i := range out {
		at := i * 7919 % (len(pool) - valueLen)
		out[i] = kv{fmt.Appendf(nil, "key/%08d", i), pool[at : at+valueLen]}
	}
	return out
}

// longKeys returns entries whose first and last keys are longer than
// the 1024 bytes the properties block holds, between keys of 95 bytes
// whose counters make neighbours differ by one in a byte followed by
// more: the separators LevelDB would keep whole, which writers cut.
func longKeys() []kv {
	out := []kv{{append([]byte("a"), bytes.Repeat([]byte{'x'}, 1500)...), []byte("first")}}
	for i := range 40 {
		k := fmt.Appendf(nil, "m/%s%03d%s", bytes.Repeat([]byte{'p'}, 70), i, bytes.Repeat([]byte{'z'}, 20))
		out = append(out, kv{k, fmt.Appendf(nil, "value %d", i)})
	}
	return append(out, kv{append([]byte("z"), bytes.Repeat([]byte{'x'}, 1500)...), []byte("last")})
}

// wideV4 returns entries that give a version 4 hash index 5-byte slots:
// 129 blocks (8 block bits) in which the second entry lies past offset
// 2^19 (20 offset bits), leaving fewer than 5 tag bits in 4 bytes. No
// smaller table has them: every block but the last reaches the block
// size, which exceeds the largest offset, so 64 MiB of blocks at least.
func wideV4() []kv {
	big := make([]byte, 1<<19)
	var out []kv
	for i := range 129 {
		out = append(out, kv{fmt.Appendf(nil, "b%04d/0", i), big}, kv{fmt.Appendf(nil, "b%04d/1", i), []byte("small")})
	}
	return out
}

// cutSeparators counts the index keys cut by the exception for long keys:
// neither the last key whole nor LevelDB's one incremented byte past the
// common prefix.
func cutSeparators(t *table) int {
	n := 0
	for i, b := range t.blocks[:len(t.blocks)-1] {
		last := b.entries[len(b.entries)-1].key
		if cp := commonPrefix(last, t.blocks[i+1].entries[0].key); len(b.sep) > cp+1 && len(b.sep) < len(last) {
			n++
		}
	}
	return n
}

// TestBuiltTablesAgreeWithSpec does what TestGoldenTablesAgreeWithSpec
// does for tables built here, for what no golden table has: the LevelDB
// Bloom filter, BinaryFuse8 in version 4, hash indexes with file offsets
// (flags bit 0), 5-byte slots in versions 2 and 4, 6-byte ones in version
// 2, 7-bit tags in version 4, version 4's default restart interval, keys
// too long for the properties block (tags 18 and 19) and the separators
// cut for long keys.
func TestBuiltTablesAgreeWithSpec(t *testing.T) {
	input := goldenInput(t)
	small := builder.Options{BlockSize: 256, RestartInterval: 4}
	with := func(o builder.Options, f func(*builder.Options)) builder.Options { f(&o); return o }
	cases := []struct {
		name    string
		opts    builder.Options
		entries []kv
		covers  string
		check   func(*table) bool
		large   bool // skipped with -short
	}{
		{"v1-leveldb", with(small, func(o *builder.Options) { o.FormatVersion, o.Filter = format.Version1, filterblock.LevelDBBloom(10) }), input,
			"LevelDB Bloom filter", func(t *table) bool { return t.p.policy == levelDBName }, false},
		{"v4-leveldb", with(small, func(o *builder.Options) { o.Filter = filterblock.LevelDBBloom(10) }), input,
			"LevelDB Bloom filter in version 4", func(t *table) bool { return t.p.policy == levelDBName && t.version >= 4 }, false},
		{"v4-fuse", with(small, func(o *builder.Options) { o.Filter = filterblock.BinaryFuse8() }), input,
			"BinaryFuse8 in version 4", func(t *table) bool { return t.p.policy == fuseName && t.version >= 4 }, false},
		{"v2-raw", with(small, func(o *builder.Options) { o.HashIndex, o.Compression = true, format.NoCompression }), input,
			"file offsets (flags 1)", func(t *table) bool { return t.hash.flags == flagFileOffsets }, false},
		{"v3-raw-hash", with(small, func(o *builder.Options) {
			o.HashIndex, o.Compression, o.PartitionThreshold, o.PartitionSize = true, format.NoCompression, 1, 256
		}), input,
			"file offsets (flags 1) in version 3", func(t *table) bool { return t.version == 3 && t.hash.flags == flagFileOffsets }, false},
		{"v2-wide", builder.Options{HashIndex: true}, numbered(6000, 200),
			"5-byte slots, decoded offsets (flags 2)", func(t *table) bool { return t.hash.width == 5 && t.hash.flags == flagDecodedOffsets }, false},
		{"v2-raw-wide", builder.Options{HashIndex: true, Compression: format.NoCompression}, numbered(6000, 200),
			"5-byte slots, file offsets (flags 1)", func(t *table) bool { return t.hash.width == 5 && t.hash.flags == flagFileOffsets }, false},
		// 1000 blocks (10 block bits) decoding to 4.4 MB (23 offset bits).
		{"v2-wider", builder.Options{HashIndex: true}, numbered(2000, 2200),
			"6-byte slots, decoded offsets (flags 2)", func(t *table) bool { return t.hash.width == 6 && t.hash.flags == flagDecodedOffsets }, false},
		// Stored raw: decoding 64 MiB of snappy blocks twice (here and in
		// the reader) took longer than the rest of the test together.
		{"v4-wide", builder.Options{BlockSize: 1<<19 + 30, Compression: format.NoCompression}, wideV4(),
			"5-byte version 4 slots", func(t *table) bool { return t.hash.width == 5 && t.version >= 4 }, true},
		// 257 blocks (9 block bits) with entries past offset 2^15 (16
		// offset bits) leave 7 tag bits in 4-byte slots: at least 5, as
		// version 4 asks, fewer than the 8 of versions 2 and 3.
		{"v4-tag7", builder.Options{BlockSize: 40000, Compression: format.NoCompression}, numbered(257*40, 1000),
			"4-byte version 4 slots with fewer than 8 tag bits", func(t *table) bool { return t.hash.width == 4 && t.hash.tagBits < 8 && t.version >= 4 }, true},
		{"v4-default", builder.Options{}, numbered(3000, 40),
			"version 4 defaults (restart interval 32)", func(t *table) bool { return t.p.restartInterval == 32 && t.version >= 4 }, false},
		{"v4-longkeys", builder.Options{BlockSize: 256, PartitionThreshold: 1, PartitionSize: 256}, longKeys(),
			"tags 18 and 19, long separators, partitioned", func(t *table) bool {
				return t.p.smallestLen > 0 && t.p.largestLen > 0 && t.p.partitioned && cutSeparators(t) > 0
			}, false},
		{"v1-longkeys", builder.Options{BlockSize: 256, FormatVersion: format.Version1}, longKeys(),
			"tags 18 and 19 in version 1", func(t *table) bool {
				return t.p.smallestLen > 0 && t.p.largestLen > 0 && t.version == 1 && cutSeparators(t) > 0
			}, false},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.large && testing.Short() {
				t.Skip("a 64 MiB table; not with -short")
			}
			path := filepath.Join(dir, c.name+".sst")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			opts := c.opts
			b := builder.New(f, &opts)
			for _, e := range c.entries {
				if err := b.Add(e.key, e.value); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			tb := checkTable(t, path)
			if tb != nil && !c.check(tb) {
				t.Errorf("%s: built to cover %s, but does not: %s", c.name, c.covers, tb.summary())
			}
		})
	}
}
