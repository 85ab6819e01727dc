package fuzz

import (
	"bytes"
	"errors"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// FuzzPrefix builds a table with a format.Suffix splitter and user
// properties from the input (decoded as FuzzRoundTrip's, after a leading
// byte: suffix length in bits 0-2, no splitter with bit 3; so bit 7 of
// the block size byte asks for format version 4, else version 1, 2 or 3,
// and bit 5 of the restart byte partitions it), then checks
// user properties, Has, MayContainPrefix, SeekPrefixGE, bounded scans
// both ways and SeekLT against the sorted entries. Keys whose prefixes
// break the splitter's order are refused with builder.ErrPrefixOrder and
// left out of the model.
func FuzzPrefix(f *testing.F) {
	var kvs []kv
	for i := 0; i < 30; i++ {
		kvs = append(kvs, kv{[]byte{'u', byte('a' + i/3), '.', byte(i % 3)}, bytes.Repeat([]byte{byte(i)}, i%5)})
	}
	f.Add(append([]byte{1}, encodeRoundTrip([3]byte{0, 0, 0}, kvs)...))
	f.Add(append([]byte{1}, encodeRoundTrip([3]byte{1, 2, 1 | 128}, kvs)...))
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{0, 1, 2 | 64 | 128}, kvs)...))
	f.Add(append([]byte{8}, encodeRoundTrip([3]byte{4, 2, 1 | 64}, kvs)...))
	f.Add([]byte{3})
	// Version 3: partitions of 64 bytes over 1-byte blocks (one block per
	// entry, several per partition); zstd and mmap with partitions of 192.
	f.Add(append([]byte{1}, encodeRoundTrip([3]byte{0, 32, 1}, kvs)...))
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{1, 32 | 128 | 2, 3 | 64}, kvs)...))
	// Version 3 with a hash index (over prefixes): snappy through mmap,
	// where lookups take the hash index, and raw through New, where they
	// read partitions.
	f.Add(append([]byte{1}, encodeRoundTrip([3]byte{0, 32, 2 | 64 | 128}, kvs)...))
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{1, 32 | 64, 1 | 128}, kvs)...))
	// Suffix(2) over keys whose prefixes are prefixes of one another:
	// "ab\x05" has prefix "a" and sorts after "ab", before the keys of
	// prefix "ab"; "b" is shorter than the suffix, its own prefix. Keys of
	// prefix "ab" start a partition of their own (one key per block,
	// partitions of 64 bytes), so that a search for "ab" by key would
	// land in the partition of "ab\x05".
	loose := []kv{
		{[]byte("a\x00\x00"), []byte("1")}, {[]byte("a\x00\x01"), nil}, {[]byte("ab\x05"), []byte("3")},
		{[]byte("ab\x10\x00"), []byte("4")}, {[]byte("ab\x10\x01"), nil}, {[]byte("b"), []byte("6")},
	}
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{0, 32, 1}, loose)...))
	f.Add(append([]byte{2 | 8}, encodeRoundTrip([3]byte{0, 32, 1}, loose)...))
	// Version 4, the default: one-level (the compact hash index over
	// prefixes, the filter section) through New and through mmap;
	// partitioned (the whole filter in the hash index section, which a
	// mapped reader probes, and partitions, which New reads), raw and
	// snappy; the loose prefixes partitioned; no splitter.
	f.Add(append([]byte{1}, encodeRoundTrip([3]byte{128, 0, 0}, kvs)...))
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{128 | 4, 2, 1 | 64}, kvs)...))
	f.Add(append([]byte{1}, encodeRoundTrip([3]byte{128, 32, 1}, kvs)...))
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{128 | 1, 32 | 64, 2 | 64}, kvs)...))
	f.Add(append([]byte{2}, encodeRoundTrip([3]byte{128, 32, 1 | 64}, loose)...))
	f.Add(append([]byte{8}, encodeRoundTrip([3]byte{128 | 4, 32, 1 | 64}, kvs)...))
	scratch := newScratchFile(f, "prefix.sst")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		mode := data[0]
		in := decodeRoundTrip(data[1:])
		split := format.Suffix(int(mode & 7))
		if mode&8 == 0 {
			in.opts.Splitter = split
		}
		var buf bytes.Buffer
		b := builder.New(&buf, &in.opts)
		var model []blockEntry
		for _, e := range in.kvs {
			err := b.Add(e.Key, e.Value)
			if errors.Is(err, builder.ErrPrefixOrder) && in.opts.Splitter != nil {
				continue
			}
			if err != nil {
				t.Fatalf("Add(%q): %v", e.Key, err)
			}
			model = append(model, blockEntry(e))
		}
		user := map[string][]byte{}
		for _, k := range keysFrom(data, 6) {
			if len(k) > 0 {
				if err := b.SetUserProperty(string(k), successor(k)); err != nil {
					t.Fatalf("SetUserProperty(%q): %v", k, err)
				}
				user[string(k)] = successor(k)
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatalf("Finish: %v", err)
		}
		var opened *scratchFile
		if in.mmap {
			opened = scratch
		}
		r := openTable(t, buf.Bytes(), opened)
		if r == nil {
			t.Fatal("built table does not open")
		}
		defer r.Close()
		if err := r.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		p := r.Properties()
		if len(user) > 0 && len(p.User) != len(user) {
			t.Fatalf("%d user properties, set %d", len(p.User), len(user))
		}
		for k, v := range user {
			if !bytes.Equal(p.User[k], v) {
				t.Fatalf("user property %q = %q, set %q", k, p.User[k], v)
			}
		}
		prefixOf := func(k []byte) []byte { return k[:split.Split(k)] }
		hasPrefix := func(k, prefix []byte) bool {
			if in.opts.Splitter == nil {
				return bytes.HasPrefix(k, prefix)
			}
			return bytes.Equal(prefixOf(k), prefix)
		}
		for _, e := range model {
			if ok, err := r.Has(e.Key); !ok || err != nil {
				t.Fatalf("Has(%q) = %v, %v", e.Key, ok, err)
			}
			if !r.MayContainPrefix(prefixOf(e.Key)) {
				t.Fatalf("MayContainPrefix(%q) = false for present key %q", prefixOf(e.Key), e.Key)
			}
		}
		probes := keysFrom(data, 16)
		for _, e := range model {
			probes = append(probes, e.Key, successor(e.Key))
		}
		if len(probes) > 64 {
			probes = probes[:64]
		}
		first := func(from int, ok func(k []byte) bool) int {
			for i := from; i < len(model); i++ {
				if ok(model[i].Key) {
					return i
				}
			}
			return -1
		}
		at := func(op string, it *reader.Iterator, got bool, want int) {
			if err := it.Err(); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			if got != (want >= 0) || (want >= 0 && (!bytes.Equal(it.Key(), model[want].Key) || !bytes.Equal(it.Value(), model[want].Value))) {
				w := "none"
				if want >= 0 {
					w = string(model[want].Key)
				}
				t.Fatalf("%s = %v at %q; want %q", op, got, it.Key(), w)
			}
		}
		for i, lo := range probes {
			hi := probes[(i*7+3)%len(probes)]
			var lower, upper []byte
			if i%3 != 0 {
				lower = lo
			}
			if i%4 != 1 {
				upper = hi
			}
			inb := func(k []byte) bool {
				return (lower == nil || bytes.Compare(k, lower) >= 0) && (upper == nil || bytes.Compare(k, upper) < 0)
			}
			it := r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper})
			want := first(0, inb)
			for ok := it.First(); ok || want >= 0; ok = it.Next() {
				at("bounded First/Next", it, ok, want)
				want = first(want+1, inb)
			}
			// Backward from the end.
			want = -1
			for j := len(model) - 1; j >= 0; j-- {
				if inb(model[j].Key) {
					want = j
					break
				}
			}
			ok := it.Last()
			at("bounded Last", it, ok, want)
			if ok {
				ok = it.Prev()
				want--
				if want >= 0 && !inb(model[want].Key) {
					want = -1
				}
				at("bounded Last Prev", it, ok, want)
			}
			for _, k := range probes[:min(len(probes), 12)] {
				w := first(0, func(m []byte) bool { return bytes.Compare(m, k) >= 0 && inb(m) })
				at("SeekGE("+string(k)+")", it, it.SeekGE(k), w)
				w = -1
				for j := len(model) - 1; j >= 0; j-- {
					if bytes.Compare(model[j].Key, k) < 0 && inb(model[j].Key) {
						w = j
						break
					}
				}
				at("SeekLT("+string(k)+")", it, it.SeekLT(k), w)
				prefix := prefixOf(k)
				w = first(0, func(m []byte) bool {
					return bytes.Compare(m, k) >= 0 && bytes.Compare(m, prefix) >= 0 && hasPrefix(m, prefix) && inb(m)
				})
				got := it.SeekPrefixGE(prefix, k)
				at("SeekPrefixGE("+string(prefix)+", "+string(k)+")", it, got, w)
				if in.opts.Splitter != nil && w >= 0 && !r.MayContainPrefix(prefix) {
					t.Fatalf("MayContainPrefix(%q) = false, but %q is present", prefix, model[w].Key)
				}
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
