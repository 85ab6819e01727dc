package leveldbcheck

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sstkit/sstable/bench/internal/implsetup"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// version is one internal key of a table, as written.
type version struct {
	key   []byte
	seq   uint64
	kind  leveldb.Kind
	value []byte
}

func (v version) String() string {
	return fmt.Sprintf("%x#%d,%v=%x", v.key, v.seq, v.kind, trim(v.value))
}

// setTrailer sets Pebble's InternalKeyTrailer (of an internal package)
// to seq<<8 | kind, LevelDB's trailer: Pebble's kinds Set (1) and Delete
// (0) are LevelDB's.
func setTrailer[T ~uint64](dst *T, seq uint64, kind leveldb.Kind) { *dst = T(seq<<8 | uint64(kind)) }

// pebbleVersions returns n user keys' versions in internal key order:
// each user key 1 to 4 versions, newest first, a deletion one time in
// four; values empty, small, or over 4 KiB.
func pebbleVersions(rng *rand.Rand, n int) []version {
	seen := map[string]bool{}
	var keys [][]byte
	for len(keys) < n {
		var k []byte
		switch rng.IntN(3) {
		case 0: // binary, rich in 0x00 and 0xff
			k = make([]byte, rng.IntN(20))
			for j := range k {
				k[j] = []byte{0, 0xff, byte(rng.Uint32())}[rng.IntN(3)]
			}
		case 1:
			k = fmt.Appendf(nil, "user/%08d", rng.IntN(10*n))
		default: // a prefix of a key already drawn, or one extended
			if len(keys) == 0 {
				continue
			}
			b := keys[rng.IntN(len(keys))]
			if len(b) > 0 && rng.IntN(2) == 0 {
				k = slices.Clone(b[:rng.IntN(len(b))])
			} else {
				k = append(slices.Clone(b), []byte{0, 0xff, 'x'}[rng.IntN(3)])
			}
		}
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i], keys[j]) < 0 })
	var out []version
	for _, k := range keys {
		seq := uint64(1 + rng.IntN(1<<20))
		if rng.IntN(50) == 0 {
			seq = leveldb.MaxSequence - uint64(rng.IntN(4))
		}
		for range 1 + rng.IntN(4) {
			v := version{key: k, seq: seq, kind: leveldb.KindValue}
			switch r := rng.IntN(20); {
			case r < 5:
				v.kind = leveldb.KindDeletion
			case r < 7:
				v.value = []byte{}
			case r == 7:
				v.value = bytes.Repeat([]byte{byte(r), 'p', 'e', 'b'}, 1025+rng.IntN(3000))
			default:
				v.value = make([]byte, 1+rng.IntN(200))
				for j := range v.value {
					v.value[j] = byte('a' + rng.IntN(4))
				}
			}
			out = append(out, v)
			if seq < 4 {
				break
			}
			seq -= 1 + uint64(rng.IntN(int(min(seq-1, 1000))))
		}
	}
	return out
}

// TestPebbleLevelDBTables writes tables with Pebble v2.1.7's sstable
// writer in TableFormatLevelDB (internal keys with sequence numbers,
// Sets and Deletes), snappy and uncompressed, with and without Pebble's
// whole-table bloom filter, small blocks and Pebble's default index, and
// reads every entry back with leveldb.OpenTable, both directions, then
// Gets every user key at its versions' sequence numbers and between
// them, and keys the table lacks.
func TestPebbleLevelDBTables(t *testing.T) {
	for _, comp := range []implsetup.Compression{implsetup.Snappy, implsetup.None} {
		for _, withFilter := range []bool{false, true} {
			for _, n := range []int{1, 50, 5000} {
				for _, fullSeps := range []bool{false, true} {
					name := fmt.Sprintf("%v/filter=%v/%d", comp, withFilter, n)
					if fullSeps {
						name += "/full-separators"
					}
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(n), uint64(len(comp))))
						versions := pebbleVersions(rng, n)
						path := filepath.Join(t.TempDir(), "000001.sst")
						o := sstable.WriterOptions{
							TableFormat:          sstable.TableFormatLevelDB,
							Comparer:             sstable.DefaultComparer,
							BlockSize:            512,
							BlockRestartInterval: 16,
							Compression:          sstable.SnappyCompression,
						}
						if comp == implsetup.None {
							o.Compression = sstable.NoCompression
						}
						if fullSeps {
							o.Comparer = fullSeparators
						}
						if withFilter {
							o.FilterPolicy = bloom.FilterPolicy(10)
							o.FilterType = sstable.TableFilter
						}
						w, err := implsetup.CreatePebble2(path, o)
						if err != nil {
							t.Fatal(err)
						}
						for _, v := range versions {
							ik := sstable.InternalKey{UserKey: v.key}
							setTrailer(&ik.Trailer, v.seq, v.kind)
							if err := w.Raw().Add(ik, v.value, false); err != nil {
								t.Fatalf("Pebble's Add(%v): %v", v, err)
							}
						}
						if err := w.Close(); err != nil {
							t.Fatal(err)
						}
						for _, noMmap := range []bool{false, true} {
							checkPebbleTable(t, path, noMmap, versions)
						}
					})
				}
			}
		}
	}
}

// fullSeparators is Pebble's default comparer (named
// leveldb.BytewiseComparator) without shortened separators: the index
// block's keys are then the data blocks' last internal keys, kinds 0 and
// 1 only. With the default comparer, Pebble's shortened separators carry
// its kind InternalKeyKindSeparator (17) at the largest sequence number,
// which LevelDB's InternalKeyComparator orders like any other trailer.
var fullSeparators = func() *sstable.Comparer {
	c := *sstable.DefaultComparer
	c.Separator = func(dst, a, b []byte) []byte { return append(dst, a...) }
	c.Successor = func(dst, a []byte) []byte { return append(dst, a...) }
	return &c
}()

func checkPebbleTable(t *testing.T, path string, noMmap bool, versions []version) {
	tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{NoMmap: noMmap})
	if err != nil {
		t.Fatalf("OpenTable of Pebble's table: %v", err)
	}
	defer tb.Close()
	info := tb.Info()
	if info.Filter != "" {
		t.Errorf("Info().Filter = %q; Pebble's whole-table filter is not LevelDB's", info.Filter)
	}
	got := func(it *leveldb.TableIterator) version {
		return version{key: slices.Clone(it.Key()), seq: it.Seq(), kind: it.Kind(), value: slices.Clone(it.Value())}
	}
	same := func(a, b version) bool {
		return bytes.Equal(a.key, b.key) && a.seq == b.seq && a.kind == b.kind && bytes.Equal(a.value, b.value)
	}
	it := tb.NewIter(nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(versions) {
			t.Fatalf("entry %d: %v, past the %d written", i, got(it), len(versions))
		}
		if g := got(it); !same(g, versions[i]) {
			t.Fatalf("entry %d: read %v, wrote %v", i, g, versions[i])
		}
		i++
	}
	if err := it.Err(); err != nil || i != len(versions) {
		t.Fatalf("forward: %d of %d entries, %v", i, len(versions), err)
	}
	i = len(versions) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if i < 0 {
			t.Fatalf("reverse: past the first entry: %v", got(it))
		}
		if g := got(it); !same(g, versions[i]) {
			t.Fatalf("reverse, entry %d: read %v, wrote %v", i, g, versions[i])
		}
		i--
	}
	if err := it.Err(); err != nil || i != -1 {
		t.Fatalf("reverse: stopped at %d, %v", i, err)
	}
	// SeekGEAt every version lands on it.
	for j, v := range versions {
		if j%7 != 0 {
			continue
		}
		if !it.SeekGEAt(v.key, v.seq) || !same(got(it), v) {
			t.Fatalf("SeekGEAt(%x, %d): %v, want %v (%v)", v.key, v.seq, got(it), v, it.Err())
		}
	}
	it.Close()

	// Get at each version's sequence number, just below it (the next
	// older version, or nothing), and at MaxSequence.
	for j, v := range versions {
		newest := j == 0 || !bytes.Equal(versions[j-1].key, v.key)
		checkGet := func(seq uint64, want *version) {
			e, err := tb.Get(v.key, seq)
			if want == nil {
				if !errors.Is(err, reader.ErrNotFound) {
					t.Fatalf("Get(%x, %d) = %v#%d %v, %v; want not found", v.key, seq, e.Kind, e.Seq, trim(e.Value), err)
				}
				return
			}
			if err != nil || !same(version{e.Key, e.Seq, e.Kind, e.Value}, *want) {
				t.Fatalf("Get(%x, %d) = %x#%d,%v=%x, %v; want %v", v.key, seq, e.Key, e.Seq, e.Kind, trim(e.Value), err, *want)
			}
		}
		checkGet(v.seq, &versions[j])
		if newest {
			checkGet(leveldb.MaxSequence, &versions[j])
		}
		if v.seq > 0 {
			if j+1 < len(versions) && bytes.Equal(versions[j+1].key, v.key) {
				checkGet(v.seq-1, &versions[j+1])
			} else {
				checkGet(v.seq-1, nil)
			}
		}
		if newest {
			checkGet(leveldb.MaxSequence, &versions[j])
			absent := append(slices.Clone(v.key), 0x00, 0x01)
			if j+1 < len(versions) && bytes.Equal(versions[j+1].key, absent) {
				continue
			}
			if _, err := tb.Get(absent, leveldb.MaxSequence); !errors.Is(err, reader.ErrNotFound) {
				// absent may still be a written key further on.
				k := sort.Search(len(versions), func(i int) bool { return bytes.Compare(versions[i].key, absent) >= 0 })
				if k == len(versions) || !bytes.Equal(versions[k].key, absent) {
					t.Fatalf("Get(%x) of an absent key: %v", absent, err)
				}
			}
		}
	}
	if n, err := tb.Verify(); err != nil || n != int64(len(versions)) {
		t.Fatalf("Verify: %d entries, %v; want %d", n, err, len(versions))
	}
}
