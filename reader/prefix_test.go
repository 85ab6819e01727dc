package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Versioned keys for the prefix tests: a user key of 1 to 3 letters from
// "abc" ended by '.', which sorts below the letters, so that no prefix is
// a proper prefix of another (the contract of format.Suffix), then a
// 2-byte suffix.
const pxSuffix = 2

func pxUserKey() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return rapid.StringOfN(rapid.RuneFrom([]rune("abc")), 1, 3, -1).Draw(t, "user") + "."
	})
}

func pxKey() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		s := rapid.SliceOfN(rapid.Byte(), pxSuffix, pxSuffix).Draw(t, "suffix")
		return pxUserKey().Draw(t, "userKey") + string(s)
	})
}

// pxLooseKey draws a key of 0 to 5 bytes over a small alphabet, for
// tables under format.Suffix(pxSuffix) in which one prefix may be a
// proper prefix of another and a key shorter than the suffix is its own
// prefix: keys that sort after a prefix but have a smaller one, which a
// seek for the prefix meets first.
func pxLooseKey() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		return string(rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x04, 'a', 'b', 0xff}), 0, 5).Draw(t, "loose"))
	})
}

// pxSplit is format.Suffix(pxSuffix)'s prefix of k.
func pxSplit(k string) string {
	if len(k) < pxSuffix {
		return k
	}
	return k[:len(k)-pxSuffix]
}

// pxMonotone keeps, of sorted keys, those whose prefixes never decrease
// from one kept key to the next (the keys a builder with format.Suffix
// accepts in order), dropping the others.
func pxMonotone(keys []string) []string {
	var out []string
	for _, k := range keys {
		if len(out) == 0 || pxSplit(k) >= pxSplit(out[len(out)-1]) {
			out = append(out, k)
		}
	}
	return out
}

// pxModel is a sorted table of versioned entries.
type pxModel struct {
	es    []entry
	loose bool // keys of pxLooseKey: SeekPrefixGE as the reader defines it
	split bool // the table has format.Suffix(pxSuffix) as its splitter
}

func (m *pxModel) keys() []string {
	out := make([]string, len(m.es))
	for i, e := range m.es {
		out[i] = e.Key
	}
	return out
}

// inBounds reports whether k lies within [lower, upper).
func inBounds(k string, lower, upper []byte) bool {
	return (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper))
}

// seekGE returns the index of the first entry >= k within bounds, or -1.
func (m *pxModel) seekGE(k string, lower, upper []byte) int {
	i := sort.Search(len(m.es), func(i int) bool { return m.es[i].Key >= k })
	for ; i < len(m.es); i++ {
		if inBounds(m.es[i].Key, lower, upper) {
			return i
		}
		if upper != nil && m.es[i].Key >= string(upper) {
			break
		}
	}
	return -1
}

// seekLT returns the index of the last entry < k within bounds, or -1.
func (m *pxModel) seekLT(k string, lower, upper []byte) int {
	i := sort.Search(len(m.es), func(i int) bool { return m.es[i].Key >= k }) - 1
	for ; i >= 0; i-- {
		if inBounds(m.es[i].Key, lower, upper) {
			return i
		}
		if lower != nil && m.es[i].Key < string(lower) {
			break
		}
	}
	return -1
}

// seekPrefixGE returns the index of the first entry >= k whose user key
// is prefix, within bounds, or -1.
func (m *pxModel) seekPrefixGE(prefix, k string, lower, upper []byte) int {
	if m.loose && !m.split {
		// A SeekGE from the greatest of k, prefix and the lower bound,
		// whose entry must start with prefix.
		from := max(k, prefix)
		if lower != nil {
			from = max(from, string(lower))
		}
		i := sort.Search(len(m.es), func(i int) bool { return m.es[i].Key >= from })
		if i < len(m.es) && strings.HasPrefix(m.es[i].Key, prefix) && inBounds(m.es[i].Key, lower, upper) {
			return i
		}
		return -1
	}
	if m.loose {
		for i, e := range m.es {
			if pxSplit(e.Key) == prefix && e.Key >= k && inBounds(e.Key, lower, upper) {
				return i
			}
		}
		return -1
	}
	for i, e := range m.es {
		if len(e.Key) == len(prefix)+pxSuffix && e.Key[:len(prefix)] == prefix && e.Key >= k && inBounds(e.Key, lower, upper) {
			return i
		}
	}
	return -1
}

// itAt checks that the iterator's answer ok and position match model
// index want (-1: not positioned).
func itAt(t *rapid.T, op string, it *reader.Iterator, ok bool, m *pxModel, want int) {
	t.Helper()
	if err := it.Err(); err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if ok != (want >= 0) || it.Valid() != ok {
		t.Fatalf("%s: returned %v, Valid %v; model index %d", op, ok, it.Valid(), want)
	}
	if want >= 0 && (string(it.Key()) != m.es[want].Key || string(it.Value()) != m.es[want].Value) {
		t.Fatalf("%s: at %q=%q, want %q=%q", op, it.Key(), it.Value(), m.es[want].Key, m.es[want].Value)
	}
}

// drawBound draws nil, an empty bound, a key of the table or another key.
func drawBound(t *rapid.T, m *pxModel, label string) []byte {
	if m.loose {
		if rapid.IntRange(0, 2).Draw(t, label+"Kind") == 0 {
			return nil
		}
		return []byte(pxLooseKey().Draw(t, label))
	}
	switch rapid.IntRange(0, 4).Draw(t, label+"Kind") {
	case 0, 1:
		return nil
	case 2:
		if len(m.es) > 0 {
			return []byte(rapid.SampledFrom(m.keys()).Draw(t, label))
		}
		return []byte{}
	case 3:
		return []byte(pxUserKey().Draw(t, label))
	default:
		return []byte(pxKey().Draw(t, label))
	}
}

// TestPropertyPrefixesAndBounds builds random tables of versioned keys,
// with and without a splitter and a hash index, and checks MayContainPrefix,
// Has, Get, SeekPrefixGE, bounds, SeekLT and user properties against a
// sorted model.
func TestPropertyPrefixesAndBounds(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) { prefixesAndBounds(t, dir, false) })
}

// TestPropertyPrefixesPartitioned is TestPropertyPrefixesAndBounds with
// partitioning forced (format version 3 unless the table is empty; with a
// hash index over prefixes in half the tables), partitions down to one
// data block, zstd among the
// compressions, reader.Open with NoMmap among the ways to open, and, in
// half the tables, loose keys (pxLooseKey): prefixes that are proper
// prefixes of others and keys shorter than the suffix, kept in an order
// the builder accepts (pxMonotone), so that a prefix's keys may come
// after keys of smaller prefixes that sort after the prefix itself.
func TestPropertyPrefixesPartitioned(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) { prefixesAndBounds(t, dir, true) })
}

// prefixesAndBounds is one check of TestPropertyPrefixesAndBounds, with
// parted that of TestPropertyPrefixesPartitioned.
func prefixesAndBounds(t *rapid.T, dir string, parted bool) {
	{
		gen := pxKey()
		loose := parted && rapid.Bool().Draw(t, "looseKeys")
		if loose {
			gen = pxLooseKey()
		}
		minKeys := 0
		if parted {
			// Rapid favours small slices; a size class makes tables of
			// many partitions common.
			minKeys = rapid.SampledFrom([]int{0, 20, 80}).Draw(t, "minKeys")
		}
		keys := rapid.SliceOfNDistinct(gen, minKeys, 120, func(s string) string { return s }).Draw(t, "keys")
		sort.Strings(keys)
		opts := &builder.Options{
			BlockSize:       rapid.SampledFrom([]int{32, 100, 400, 4096}).Draw(t, "blockSize"),
			RestartInterval: rapid.IntRange(1, 8).Draw(t, "restartInterval"),
			Compression:     drawCompression(t, parted),
			HashIndex:       rapid.Bool().Draw(t, "hashIndex"),
		}
		drawFormatVersion(t, opts)
		split := rapid.Bool().Draw(t, "splitter")
		if split {
			opts.Splitter = format.Suffix(pxSuffix)
			if loose {
				keys = pxMonotone(keys)
			}
		}
		if parted {
			drawPartitioning(t, opts)
		}
		m := &pxModel{loose: loose, split: split}
		for i, k := range keys {
			m.es = append(m.es, entry{k, fmt.Sprintf("v%d", i)})
		}
		user := rapid.MapOfN(rapid.StringN(1, 8, -1), rapid.SliceOfN(rapid.Byte(), 0, 20), 0, 5).Draw(t, "user")

		var buf bytes.Buffer
		b := builder.New(&buf, opts)
		for _, e := range m.es {
			if err := b.Add([]byte(e.Key), []byte(e.Value)); err != nil {
				t.Fatalf("Add(%q): %v", e.Key, err)
			}
		}
		for k, v := range user {
			if err := b.SetUserProperty(k, v); err != nil {
				t.Fatalf("SetUserProperty(%q): %v", k, err)
			}
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		if p := b.Properties(); p.FormatVersion != wantVersion(opts, len(keys)) || p.Partitioned != (p.FormatVersion == format.Version4 && wantPartitioned(opts, len(keys))) {
			t.Fatalf("format version %d (partitioned %v), want %d", p.FormatVersion, p.Partitioned, wantVersion(opts, len(keys)))
		}
		if got := b.EstimatedSize(); got != int64(buf.Len()) {
			t.Fatalf("EstimatedSize after Finish = %d, table is %d bytes", got, buf.Len())
		}
		data := buf.Bytes()

		var r *reader.Reader
		ropts := &reader.Options{}
		if rapid.Bool().Draw(t, "ownCache") {
			c := newCache(t, rapid.SampledFrom([]int64{0, 64, 16 << 10}).Draw(t, "cacheCapacity"))
			defer c.Close()
			ropts.Cache = c
		}
		if rapid.Bool().Draw(t, "mapped") {
			if parted {
				ropts.NoMmap = rapid.IntRange(0, 3).Draw(t, "noMmap") == 0
			}
			var err error
			if r, err = reader.Open(writeFile(t, dir, data), ropts); err != nil {
				t.Fatal(err)
			}
		} else {
			r = openMem(t, data, ropts)
		}
		defer r.Close()
		if err := r.Verify(); err != nil {
			t.Fatalf("Verify: %v", err)
		}

		p := r.Properties()
		if len(user) == 0 && p.User != nil {
			t.Fatalf("no user properties set, read %v", p.User)
		}
		if len(user) > 0 {
			if diff := cmp.Diff(user, p.User, cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })); diff != "" {
				t.Fatalf("user properties (-set +read):\n%s", diff)
			}
		}
		if split != (p.Splitter == format.Suffix(pxSuffix).Name()) {
			t.Fatalf("splitter property %q with splitter %v", p.Splitter, split)
		}

		// Point lookups of every key, and of absent ones.
		for _, e := range m.es {
			if ok, err := r.Has([]byte(e.Key)); !ok || err != nil {
				t.Fatalf("Has(%q) = %v, %v", e.Key, ok, err)
			}
			if v, err := r.Get([]byte(e.Key)); err != nil || string(v) != e.Value {
				t.Fatalf("Get(%q) = %q, %v", e.Key, v, err)
			}
			pre := pxSplit(e.Key)
			if !r.MayContainPrefix([]byte(pre)) || !r.MayContain([]byte(e.Key)) {
				t.Fatalf("MayContainPrefix(%q) or MayContain(%q) = false for a present key", pre, e.Key)
			}
		}
		for range 10 {
			k := gen.Draw(t, "absent")
			i := sort.SearchStrings(keys, k)
			present := i < len(keys) && keys[i] == k
			ok, err := r.Has([]byte(k))
			if ok != present || err != nil {
				t.Fatalf("Has(%q) = %v, %v; want %v", k, ok, err, present)
			}
			if _, err := r.Get([]byte(k)); !present && !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%q) of an absent key: %v", k, err)
			}
		}
		if !split && !r.MayContainPrefix([]byte("zzz")) {
			t.Fatalf("MayContainPrefix = false on a table without a splitter")
		}

		lower, upper := drawBound(t, m, "lower"), drawBound(t, m, "upper")
		it := r.NewIter(&reader.IterOptions{LowerBound: lower, UpperBound: upper})
		defer it.Close()

		// A full scan each way.
		var want []entry
		for _, e := range m.es {
			if inBounds(e.Key, lower, upper) {
				want = append(want, e)
			}
		}
		var got []entry
		for ok := it.First(); ok; ok = it.Next() {
			got = append(got, entry{string(it.Key()), string(it.Value())})
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("bounded scan [%q, %q) (-want +got):\n%s", lower, upper, diff)
		}
		got = got[:0]
		for ok := it.Last(); ok; ok = it.Prev() {
			got = append(got, entry{string(it.Key()), string(it.Value())})
		}
		if diff := cmp.Diff(reversed(want), got); len(want)+len(got) > 0 && diff != "" {
			t.Fatalf("bounded backward scan [%q, %q) (-want +got):\n%s", lower, upper, diff)
		}

		// Seeks, each followed by a few steps.
		for range rapid.IntRange(1, 12).Draw(t, "seeks") {
			var k string
			if len(keys) > 0 && rapid.Bool().Draw(t, "seekPresent") {
				k = rapid.SampledFrom(keys).Draw(t, "seekKey")
			} else {
				k = gen.Draw(t, "seekKey")
			}
			var pos int
			var ok bool
			var op string
			switch rapid.IntRange(0, 2).Draw(t, "seekKind") {
			case 0:
				op, ok, pos = "SeekGE("+k+")", it.SeekGE([]byte(k)), m.seekGE(k, lower, upper)
			case 1:
				op, ok, pos = "SeekLT("+k+")", it.SeekLT([]byte(k)), m.seekLT(k, lower, upper)
			default:
				pre := pxSplit(k)
				if rapid.Bool().Draw(t, "seekAtPrefix") {
					k = pre // the first version
				}
				op, ok = "SeekPrefixGE("+pre+", "+k+")", it.SeekPrefixGE([]byte(pre), []byte(k))
				pos = m.seekPrefixGE(pre, k, lower, upper)
				if split && !r.MayContainPrefix([]byte(pre)) && pos >= 0 {
					t.Fatalf("MayContainPrefix(%q) = false, but %q is present", pre, m.es[pos].Key)
				}
				itAt(t, op, it, ok, m, pos)
				continue // the iterator is exhausted or at a prefix's entry: no steps
			}
			itAt(t, op, it, ok, m, pos)
			for _, fwd := range rapid.SliceOfN(rapid.Bool(), 0, 6).Draw(t, "steps") {
				if pos < 0 {
					if it.Next() || it.Prev() {
						t.Fatalf("move from an exhausted iterator returned true")
					}
					break
				}
				if fwd {
					ok = it.Next()
					if pos++; pos >= len(m.es) || !inBounds(m.es[pos].Key, lower, upper) {
						pos = -1
					}
					itAt(t, op+" Next", it, ok, m, pos)
				} else {
					ok = it.Prev()
					if pos--; pos < 0 || !inBounds(m.es[pos].Key, lower, upper) {
						pos = -1
					}
					itAt(t, op+" Prev", it, ok, m, pos)
				}
			}
		}
	}
}
