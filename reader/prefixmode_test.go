package reader_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// pmKey is a versioned key of the prefix mode tests: a 6-byte user key
// ("u%05d", none a prefix of another) then the 8-byte big-endian
// complement of the version, newest first, as format.Suffix(8) expects.
func pmKey(user, version int) string {
	return fmt.Sprintf("u%05d", user) + string(binary.BigEndian.AppendUint64(nil, ^uint64(version)))
}

// pmEntries returns users x versions entries, versions newest first.
func pmEntries(users, versions int) []entry {
	var es []entry
	for u := range users {
		for v := versions; v > 0; v-- {
			es = append(es, entry{pmKey(u, v), fmt.Sprintf("value %d@%d", u, v)})
		}
	}
	return es
}

// TestPrefixIterationMode checks that after SeekPrefixGE returns true, Next
// and Prev stay within the prefix, returning false (and leaving the
// iterator exhausted) where they would leave it, as in Pebble's Iterator,
// and that First, Last, SeekGE and SeekLT leave prefix iteration mode. A
// loop over a key's versions with Next reads that key's entries and stops;
// before prefix iteration mode, it walked on to the end of the table.
func TestPrefixIterationMode(t *testing.T) {
	const users, versions = 300, 7
	es := pmEntries(users, versions)
	for _, opts := range []builder.Options{
		{Splitter: format.Suffix(8), BlockSize: 256},
		{Splitter: format.Suffix(8), BlockSize: 256, HashIndex: true},
		{Splitter: format.Suffix(8), BlockSize: 256, PartitionThreshold: 1, PartitionSize: 256},
		{BlockSize: 256}, // no splitter: the prefix is a byte prefix
	} {
		data, _ := build(t, es, &opts)
		name := fmt.Sprintf("splitter=%v,hash=%v,parted=%v", opts.Splitter != nil, opts.HashIndex, opts.PartitionThreshold > 0)
		t.Run(name, func(t *testing.T) {
			sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
				it := r.NewIterator()
				defer it.Close()
				for _, u := range []int{0, 1, users / 2, users - 1} {
					prefix := []byte(fmt.Sprintf("u%05d", u))
					// From the newest version: Next walks every version, then stops.
					if !it.SeekPrefixGE(prefix, prefix) {
						t.Fatalf("SeekPrefixGE(%q) = false", prefix)
					}
					n := 1
					for it.Next() {
						n++
						if string(it.Key()[:6]) != string(prefix) {
							t.Fatalf("Next left prefix %q for %q", prefix, it.Key())
						}
					}
					if n != versions || it.Valid() || it.Err() != nil {
						t.Fatalf("prefix %q: %d entries by Next, Valid %v, Err %v; want %d, false, nil", prefix, n, it.Valid(), it.Err(), versions)
					}
					if it.Prev() || it.Next() {
						t.Fatal("a move from the exhausted iterator returned true")
					}
					// From version 3: Prev goes back to the newest, then stops.
					if !it.SeekPrefixGE(prefix, []byte(pmKey(u, 3))) || string(it.Key()) != pmKey(u, 3) {
						t.Fatalf("SeekPrefixGE(%q, version 3) at %q", prefix, it.Key())
					}
					n = 1
					for it.Prev() {
						n++
					}
					if n != versions-2 || it.Valid() {
						t.Fatalf("prefix %q: %d entries by Prev from version 3, Valid %v; want %d", prefix, n, it.Valid(), versions-2)
					}
					// Other positioning methods leave the mode.
					if !it.SeekPrefixGE(prefix, prefix) {
						t.Fatal("SeekPrefixGE failed")
					}
					for _, leave := range []struct {
						name string
						pos  func() bool
						move func() bool
						want int // user key after the move, -1 for none
					}{
						{"SeekGE", func() bool { return it.SeekGE([]byte(pmKey(u, 1))) }, it.Next, u + 1},
						{"SeekLT", func() bool { return it.SeekLT([]byte(pmKey(u, versions))) }, it.Prev, u - 1},
						{"First", it.First, it.Prev, -1},
						{"Last", it.Last, it.Next, -1},
					} {
						if !it.SeekPrefixGE(prefix, prefix) {
							t.Fatal("SeekPrefixGE failed")
						}
						ok := leave.pos()
						if leave.name == "SeekLT" && u == 0 {
							if ok {
								t.Fatalf("SeekLT before the first key = true at %q", it.Key())
							}
							continue
						}
						if !ok {
							t.Fatalf("%s after SeekPrefixGE = false", leave.name)
						}
						got := leave.move()
						switch {
						case leave.want < 0 || leave.want >= users:
							if got {
								t.Fatalf("%s then a move past the end = true at %q", leave.name, it.Key())
							}
						case !got || string(it.Key()[:6]) != fmt.Sprintf("u%05d", leave.want):
							t.Fatalf("%s then a move: %v at %q; want user key %d (prefix mode left)", leave.name, got, it.Key(), leave.want)
						}
					}
					// An absent prefix: false, and Next stays false.
					absent := []byte(fmt.Sprintf("u%05d", users+1))
					if it.SeekPrefixGE(absent, absent) || it.Next() {
						t.Fatalf("SeekPrefixGE or Next found absent prefix %q", absent)
					}
				}
				// Loop over every user key's versions: each key's entries
				// once, nothing more (the quadratic walk of before).
				seen := 0
				for u := range users {
					prefix := []byte(fmt.Sprintf("u%05d", u))
					for ok := it.SeekPrefixGE(prefix, prefix); ok; ok = it.Next() {
						seen++
					}
				}
				if seen != len(es) {
					t.Fatalf("version loops saw %d entries, want %d", seen, len(es))
				}
			})
		})
	}
}

// TestPrefixIterationBounds checks that prefix iteration mode and the
// iterator's bounds both apply: Next stops at the upper bound inside a
// prefix, Prev at the lower bound.
func TestPrefixIterationBounds(t *testing.T) {
	es := pmEntries(3, 9)
	data, _ := build(t, es, &builder.Options{Splitter: format.Suffix(8), BlockSize: 128})
	sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
		it := r.NewIter(&reader.IterOptions{LowerBound: []byte(pmKey(1, 7)), UpperBound: []byte(pmKey(1, 2))})
		defer it.Close()
		prefix := []byte("u00001")
		var got []string
		for ok := it.SeekPrefixGE(prefix, prefix); ok; ok = it.Next() {
			got = append(got, string(it.Key()))
		}
		if len(got) != 5 { // versions 7 down to 3
			t.Fatalf("bounded prefix loop saw %d entries, want 5", len(got))
		}
		n := 0
		for ok := it.SeekPrefixGE(prefix, []byte(pmKey(1, 3))); ok; ok = it.Prev() {
			n++
		}
		if n != 5 {
			t.Fatalf("bounded backward prefix loop saw %d entries, want 5", n)
		}
	})
}

// TestPrefixIterationAllocs checks that a loop over a key's versions
// allocates nothing, through the hash index and without.
func TestPrefixIterationAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	es := pmEntries(200, 5)
	for _, hash := range []bool{false, true} {
		data, _ := build(t, es, &builder.Options{Splitter: format.Suffix(8), HashIndex: hash})
		sources(t, data, nil, func(t *testing.T, r *reader.Reader) {
			it := r.NewIterator()
			defer it.Close()
			prefixes := make([][]byte, 200)
			for u := range prefixes {
				prefixes[u] = []byte(fmt.Sprintf("u%05d", u))
			}
			u := 0
			loop := func() {
				p := prefixes[u%len(prefixes)]
				u++
				n := 0
				for ok := it.SeekPrefixGE(p, p); ok; ok = it.Next() {
					n++
				}
				if n != 5 {
					t.Fatalf("%d versions of %q", n, p)
				}
			}
			loop() // warm the cache and the iterator's buffers
			if a := testing.AllocsPerRun(500, loop); a != 0 {
				t.Errorf("hash=%v: %v allocations per version loop, want 0", hash, a)
			}
		})
	}
}
