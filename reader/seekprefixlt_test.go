package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// TestSeekPrefixLTModel checks SeekPrefixLT, and the prefix iteration it
// starts, against a sorted model: the last key below the bound with the
// prefix, within the iterator's bounds. Tables use format.Suffix(n) with
// keys shorter than n (their own prefixes) and prefixes that are
// prefixes of one another, as far as the builder accepts them, or no
// splitter; every layout (format versions 1 to 4, partitioned in tiny
// partitions), read through New and Open.
func TestSeekPrefixLTModel(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		alphabet := []byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}
		keyGen := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 5)
		var keys [][]byte
		for _, k := range rapid.SliceOfN(keyGen, 0, 80).Draw(t, "keys") {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, bytes.Compare)
		keys = slices.CompactFunc(keys, bytes.Equal)

		opts := &builder.Options{BlockSize: rapid.SampledFrom([]int{1, 48, 4096}).Draw(t, "blockSize")}
		n := rapid.IntRange(0, 3).Draw(t, "suffixLen")
		split := format.Suffix(n)
		withSplitter := rapid.Bool().Draw(t, "splitter")
		if withSplitter {
			opts.Splitter = split
		}
		opts.HashIndex = rapid.Bool().Draw(t, "hashIndex")
		drawFormatVersion(t, opts)
		if rapid.Bool().Draw(t, "partitioned") {
			drawPartitioning(t, opts)
		}
		var buf bytes.Buffer
		b := builder.New(&buf, opts)
		var model [][]byte
		for _, k := range keys {
			err := b.Add(k, k)
			if errors.Is(err, builder.ErrPrefixOrder) {
				continue
			}
			if err != nil {
				t.Fatalf("Add(%q): %v", k, err)
			}
			model = append(model, k)
		}
		if err := b.Finish(); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		data := buf.Bytes()
		var r *reader.Reader
		var err error
		if rapid.Bool().Draw(t, "open") {
			path := filepath.Join(dir, "t.sst")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err = reader.Open(path, nil)
		} else {
			r, err = reader.New(bytes.NewReader(data), int64(len(data)), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()

		hasPrefix := func(k, prefix []byte) bool {
			if !withSplitter {
				return bytes.HasPrefix(k, prefix)
			}
			return bytes.Equal(k[:split.Split(k)], prefix)
		}
		bound := func(label string) []byte {
			if rapid.Bool().Draw(t, label+"None") {
				return nil
			}
			return keyGen.Draw(t, label)
		}
		lower, upper := bound("lower"), bound("upper")
		in := func(k []byte) bool {
			return (lower == nil || bytes.Compare(k, lower) >= 0) && (upper == nil || bytes.Compare(k, upper) < 0)
		}
		it := r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper})
		defer it.Close()
		for range rapid.IntRange(1, 8).Draw(t, "seeks") {
			var prefix, key []byte
			if len(model) > 0 && rapid.Bool().Draw(t, "fromModel") {
				k := rapid.SampledFrom(model).Draw(t, "modelKey")
				prefix = k
				if withSplitter {
					prefix = k[:split.Split(k)]
				} else {
					prefix = k[:rapid.IntRange(0, len(k)).Draw(t, "prefixLen")]
				}
				key = append(bytes.Clone(prefix), keyGen.Draw(t, "keyTail")...)
			} else {
				prefix, key = keyGen.Draw(t, "prefix"), keyGen.Draw(t, "key")
			}
			want := -1
			for i := len(model) - 1; i >= 0; i-- {
				if k := model[i]; bytes.Compare(k, key) < 0 && hasPrefix(k, prefix) && in(k) {
					want = i
					break
				}
			}
			op := fmt.Sprintf("SeekPrefixLT(%q, %q) in [%q, %q)", prefix, key, lower, upper)
			got := it.SeekPrefixLT(prefix, key)
			pos := want
			for step := 0; ; step++ {
				if err := it.Err(); err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				if got != (pos >= 0) || got != it.Valid() || got && !bytes.Equal(it.Key(), model[pos]) {
					w := "none"
					if pos >= 0 {
						w = fmt.Sprintf("%q", model[pos])
					}
					t.Fatalf("%s, then %d steps: %v at %q, want %s", op, step, got, it.Key(), w)
				}
				if !got || step == 6 {
					break
				}
				// Prefix iteration mode: steps stay within the prefix.
				if rapid.Bool().Draw(t, "forward") {
					got, pos = it.Next(), pos+1
				} else {
					got, pos = it.Prev(), pos-1
				}
				if pos < 0 || pos >= len(model) || !hasPrefix(model[pos], prefix) || !in(model[pos]) {
					pos = -1
				}
			}
		}
	})
}

// TestSeekPrefixLTFilter checks that SeekPrefixLT probes the filter
// before it reads a data block: over a ReaderAt, where every data block
// read lands in the cache, seeks for 200 absent user keys (between
// present ones, which a seek without the filter finds in 25 to 35
// blocks) leave no more blocks cached than the
// present key's and the filter's false positives.
func TestSeekPrefixLTFilter(t *testing.T) {
	var es []entry
	for u := range 2000 {
		for v := range 1 + u%3 {
			k := binary.BigEndian.AppendUint64(fmt.Appendf(nil, "user%06d", 2*u), uint64(10*v))
			es = append(es, entry{string(k), "a value of some length"})
		}
	}
	for _, k := range boundsKinds {
		opts := k.opts
		opts.Splitter, opts.BlockSize = format.Suffix(8), 512
		data, _ := build(t, es, &opts)
		t.Run(k.name, func(t *testing.T) {
			r := openMem(t, data, &reader.Options{TailSize: 64, Cache: newCache(t, 16<<20)})
			defer r.Close()
			it := r.NewIterator()
			defer it.Close()
			seek := func(u int) bool {
				p := fmt.Appendf(nil, "user%06d", u)
				return it.SeekPrefixLT(p, binary.BigEndian.AppendUint64(p, 15))
			}
			if !seek(1000) || string(it.Value()) != "a value of some length" {
				t.Fatalf("present user key: %v", it.Err())
			}
			for u := 1; u < 400; u += 2 {
				if seek(u) {
					t.Fatalf("absent user%06d found at %q", u, it.Key())
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			cached := 0
			for i := range int(r.Properties().NumDataBlocks) {
				if reader.CachedBlock(r, i) {
					cached++
				}
			}
			if cached > 1+10 {
				t.Fatalf("%d data blocks read for 1 present and 200 absent user keys", cached)
			}
		})
	}
}
