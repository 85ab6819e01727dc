// Package mvccgc_test shows garbage collection of old versions during a
// compaction: merge.Compact with a CompactOptions.Drop hook that keeps
// only the versions a reader may still ask for.
//
// Keys and values are those of examples/mvcc. A stored key is the user
// key in a self-delimiting encoding (0x00 escaped as 0x00 0xff, then a
// 0x00 0x01 terminator) followed by the 8-byte big-endian inverted
// timestamp (^ts), so that the versions of one user key are adjacent and
// sort newest first. Tables are built with the format.Suffix(8)
// splitter, which records its name in each table's properties: the
// prefix it splits off is the encoded user key. A value is a kind byte
// (kindPut or kindDelete, a tombstone) then the user value. Each flushed
// table is one level of the stack merge reads, newest first.
//
// A read of user key k at timestamp ts returns the newest version of k
// at or below ts, unless that version is a tombstone: with the suffix
// inverted, that is one Iterator.SeekPrefixGE(prefix, prefix+^ts) on the
// merged view (readAt).
//
// # Garbage collection at T
//
// Collecting at a timestamp T means that reads below T are no longer
// served, while every read at a timestamp ts >= T must give the same
// answer as before. That is what "keep only the versions newer than T"
// means for a store that can still be read at T. For each user key the
// compaction keeps:
//
//   - every version newer than T, since a read at a ts above T may
//     pick it;
//   - the newest version at or below T. Every read at a ts >= T that
//     finds no newer version falls back to it: the read at T itself, and
//     the reads at every ts up to the next version. Dropping it would
//     make them find an older version, or nothing. Only a tombstone may
//     go, and only when the compaction reaches the bottom (no older table
//     is left out of it that could hold an older version): then "deleted"
//     and "no version at all" read the same.
//
// Every older version is dropped: every read at ts >= T stops at the
// newest version at or below T, or at a newer one, before reaching it.
//
// The Drop hook (gcDrop) is called in key order with each entry the
// compaction would write, so the versions of one user key come one after
// the other, newest first. It tells them apart with the tables' splitter
// (format.BuiltinSplitter of the name in the tables' properties) and
// keeps one user key's state across calls: whether its newest version
// at or below T has gone by.
//
// Tombstones are data here, not merge deletions: the merge Options set
// no IsDeletion. A tombstone at ts hides the older versions of its user
// key, which are other stored keys; merge's deletions hide only the same
// key in older levels, and Compact would hand them to no Drop call (and
// drop them outright with Bottom), so the older versions of a deleted key
// would read again.
//
// TestGC walks through one small case. TestGCModel checks the rules with
// rapid: random puts and deletes at increasing timestamps flushed to
// several tables, the newest of them compacted with GC at a random T;
// every read at every ts >= T answers the same before and after, and the
// versions at or below T other than the newest are gone.
package mvccgc_test

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
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
)

// Value kinds, the first byte of every stored value.
const (
	kindPut    = 1
	kindDelete = 2
)

// encodeUserKey appends the self-delimiting encoding of k to dst: every
// 0x00 becomes 0x00 0xff, and 0x00 0x01 ends it. It preserves order, and
// no encoding is a proper prefix of another, as format.Suffix needs.
func encodeUserKey(dst, k []byte) []byte {
	for _, c := range k {
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xff)
		}
	}
	return append(dst, 0, 1)
}

// decodeUserKey reverses encodeUserKey.
func decodeUserKey(enc []byte) []byte {
	out := make([]byte, 0, len(enc))
	for i := 0; i < len(enc)-2; i++ {
		out = append(out, enc[i])
		if enc[i] == 0 {
			i++ // skip the 0xff escape
		}
	}
	return out
}

// storedKey appends the stored key of user key k at timestamp ts.
func storedKey(dst, k []byte, ts uint64) []byte {
	return binary.BigEndian.AppendUint64(encodeUserKey(dst, k), ^ts)
}

// gcDrop returns a CompactOptions.Drop hook that garbage-collects at
// timestamp gcTS: it keeps every version newer than gcTS and the newest
// version at or below gcTS of each user key, and drops the older ones.
// That newest version is dropped too when it is a tombstone and bottom
// says the compaction includes every table holding the key's versions.
// split is the tables' splitter: key[:split.Split(key)] is the encoded
// user key, the 8 bytes after it the inverted timestamp.
//
// The hook relies on Compact calling it in key order with every entry:
// one user key's versions in a row, newest first. Use one hook per
// compaction.
func gcDrop(gcTS uint64, split format.Splitter, bottom bool) func(key, value []byte) bool {
	var user []byte  // the user key of the last call (a copy: key is valid only during a call)
	started := false // user is set
	var below bool   // user's newest version at or below gcTS has gone by
	return func(key, value []byte) bool {
		n := split.Split(key)
		if !started || !bytes.Equal(key[:n], user) {
			user, started, below = append(user[:0], key[:n]...), true, false
		}
		if ts := ^binary.BigEndian.Uint64(key[n:]); ts > gcTS {
			return false // a read above gcTS may pick it
		}
		if below {
			return true // hidden from every read at or above gcTS by a newer version
		}
		below = true
		// The version a read at gcTS sees: kept, unless a tombstone with
		// nothing older left outside the compaction.
		return bottom && value[0] == kindDelete
	}
}

// tablesSplitter returns the splitter the tables were built with, from
// the name in their properties; an error when they disagree or it is not
// a built-in one.
func tablesSplitter(rs []*reader.Reader) (format.Splitter, error) {
	if len(rs) == 0 {
		return nil, errors.New("mvccgc: no table")
	}
	name := rs[0].Properties().Splitter
	for _, r := range rs[1:] {
		if n := r.Properties().Splitter; n != name {
			return nil, fmt.Errorf("mvccgc: tables split keys with %q and %q", name, n)
		}
	}
	s := format.BuiltinSplitter(name)
	if s == nil || s.Name() != format.Suffix(8).Name() {
		return nil, fmt.Errorf("mvccgc: tables split keys with %q, not an 8-byte version suffix", name)
	}
	return s, nil
}

// tableOptions configure every table: the version suffix split off, so
// that filters hold user keys; small blocks, so that small tests have
// many.
var tableOptions = &builder.Options{Splitter: format.Suffix(8), BlockSize: 128}

// gc compacts levels (newest first) with garbage collection at gcTS into
// new tables in dir, and opens them. bottom says levels are every level
// of the store.
func gc(levels []merge.Level, split format.Splitter, gcTS uint64, bottom bool, dir string) ([]*reader.Reader, error) {
	infos, err := merge.Compact(levels, &merge.CompactOptions{
		// No IsDeletion: tombstones are versions, for Drop to judge.
		Dir:     dir,
		Bottom:  bottom,
		Builder: tableOptions,
		Drop:    gcDrop(gcTS, split, bottom),
	})
	if err != nil {
		return nil, err
	}
	var rs []*reader.Reader
	for _, ti := range infos {
		r, err := reader.Open(ti.Path, nil)
		if err != nil {
			closeAll(rs)
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// readAt returns the value user key k has at timestamp ts, and whether
// it has one, from the view it iterates: the newest version at or below
// ts, unless a tombstone. One iterator serves many reads.
func readAt(it *merge.Iterator, k []byte, ts uint64) ([]byte, bool, error) {
	prefix := encodeUserKey(nil, k)
	if !it.SeekPrefixGE(prefix, storedKey(nil, k, ts)) {
		return nil, false, it.Err()
	}
	if v := it.Value(); v[0] == kindPut {
		return bytes.Clone(v[1:]), true, nil
	}
	return nil, false, nil
}

// write is one version: a put of value, or a delete, of user key key at
// timestamp ts.
type write struct {
	key   string
	ts    uint64
	del   bool
	value string
}

// flush writes a table of writes (any order) to path and opens it.
func flush(path string, ws []write) (*reader.Reader, error) {
	type entry struct{ k, v []byte }
	var es []entry
	for _, w := range ws {
		v := []byte{kindPut}
		if w.del {
			v[0] = kindDelete
		}
		es = append(es, entry{storedKey(nil, []byte(w.key), w.ts), append(v, w.value...)})
	}
	slices.SortFunc(es, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
	b, err := builder.Create(path, tableOptions)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if err := b.Add(e.k, e.v); err != nil {
			b.Abort()
			return nil, err
		}
	}
	if err := b.Finish(); err != nil {
		return nil, err
	}
	return reader.Open(path, nil)
}

func closeAll(rs []*reader.Reader) {
	for _, r := range rs {
		r.Close()
	}
}

// dump lists the entries of levels as "key@ts=value" or "key@ts deleted".
func dump(levels []merge.Level) ([]string, error) {
	it := merge.NewIterator(levels, nil)
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		e := fmt.Sprintf("%s@%d", decodeUserKey(k[:len(k)-8]), ^binary.BigEndian.Uint64(k[len(k)-8:]))
		if v[0] == kindDelete {
			e += " deleted"
		} else {
			e += "=" + string(v[1:])
		}
		out = append(out, e)
	}
	return out, it.Close()
}

// TestGC collects three tables at T = 4. Key a keeps its versions 7 and
// 5 (newer than T) and 3 (what a read at 4 sees), and loses version 1;
// key b's newest version at or below 4 is a tombstone, so b goes
// entirely; c, written at 6, stays.
func TestGC(t *testing.T) {
	dir := t.TempDir()
	var rs []*reader.Reader // newest first
	for i, ws := range [][]write{
		{{key: "a", ts: 1, value: "a1"}, {key: "b", ts: 2, value: "b2"}, {key: "a", ts: 3, value: "a3"}},
		{{key: "b", ts: 4, del: true}, {key: "a", ts: 5, del: true}},
		{{key: "c", ts: 6, value: "c6"}, {key: "a", ts: 7, value: "a7"}},
	} {
		r, err := flush(filepath.Join(dir, fmt.Sprintf("%d.sst", i)), ws)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs = append([]*reader.Reader{r}, rs...)
	}
	var levels []merge.Level
	for _, r := range rs {
		levels = append(levels, merge.Tables(r))
	}
	split, err := tablesSplitter(rs)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := gc(levels, split, 4, true, filepath.Join(dir, "gc"))
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(outs)
	after := []merge.Level{merge.Tables(outs...)}

	got, err := dump(after)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a@7=a7", "a@5 deleted", "a@3=a3", "c@6=c6"}; !slices.Equal(got, want) {
		t.Fatalf("after GC at 4: %q; want %q", got, want)
	}
	it := merge.NewIterator(after, nil)
	defer it.Close()
	for _, r := range []struct {
		key  string
		ts   uint64
		want string // "" for none
	}{
		{"a", 4, "a3"}, {"a", 5, ""}, {"a", 6, ""}, {"a", 7, "a7"}, {"a", 100, "a7"},
		{"b", 4, ""}, {"b", 100, ""}, {"c", 5, ""}, {"c", 6, "c6"},
	} {
		v, ok, err := readAt(it, []byte(r.key), r.ts)
		if err != nil || ok != (r.want != "") || string(v) != r.want {
			t.Errorf("read %s at %d = %q, %v, %v; want %q", r.key, r.ts, v, ok, err, r.want)
		}
	}
}

// caseNum numbers rapid's cases, for their directories.
var caseNum int

func TestGCModel(t *testing.T) {
	root := t.TempDir()
	// User keys with zero bytes and keys that are prefixes of others,
	// which the encoding keeps apart.
	keys := []string{"", "a", "a\x00", "a\x00b", "ab", "b", "\xff"}
	rapid.Check(t, func(rt *rapid.T) {
		caseNum++
		dir := filepath.Join(root, fmt.Sprint(caseNum))
		if err := os.Mkdir(dir, 0o755); err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir) // runs last, after the readers' Close

		// Writes at timestamps 1, 2, 3, ..., flushed to n tables.
		n := rapid.IntRange(1, 4).Draw(rt, "tables")
		var tables [][]write // oldest first
		var ts uint64
		for range n {
			var ws []write
			for range rapid.IntRange(1, 12).Draw(rt, "writes") {
				ts++
				w := write{key: rapid.SampledFrom(keys).Draw(rt, "key"), ts: ts}
				if w.del = rapid.IntRange(0, 3).Draw(rt, "kind") == 0; !w.del {
					w.value = fmt.Sprint("v", ts)
				}
				ws = append(ws, w)
			}
			tables = append(tables, ws)
		}
		lastTS := ts
		var rs []*reader.Reader // newest first
		for i, ws := range tables {
			r, err := flush(filepath.Join(dir, fmt.Sprintf("%d.sst", i)), ws)
			if err != nil {
				rt.Fatal(err)
			}
			defer r.Close()
			rs = append([]*reader.Reader{r}, rs...)
		}
		var levels []merge.Level
		for _, r := range rs {
			levels = append(levels, merge.Tables(r))
		}

		// Collect the newest m tables at T; at the bottom when m is all.
		gcTS := rapid.Uint64Range(0, lastTS+1).Draw(rt, "T")
		m := rapid.IntRange(1, n).Draw(rt, "compacted")
		bottom := m == n
		split, err := tablesSplitter(rs[:m])
		if err != nil {
			rt.Fatal(err)
		}

		// Every read at every ts >= T, before the GC.
		type read struct {
			key string
			ts  uint64
		}
		type answer struct {
			value string
			ok    bool
		}
		before := map[read]answer{}
		it := merge.NewIterator(levels, nil)
		for _, k := range slices.Concat(keys, []string{"never written"}) {
			for ts := gcTS; ts <= lastTS+1; ts++ {
				v, ok, err := readAt(it, []byte(k), ts)
				if err != nil {
					rt.Fatal(err)
				}
				before[read{k, ts}] = answer{string(v), ok}
			}
		}
		if err := it.Close(); err != nil {
			rt.Fatal(err)
		}

		outs, err := gc(levels[:m], split, gcTS, bottom, filepath.Join(dir, "gc"))
		if err != nil {
			rt.Fatal(err)
		}
		defer closeAll(outs)
		after := append([]merge.Level{merge.Tables(outs...)}, levels[m:]...)

		it = merge.NewIterator(after, nil)
		defer it.Close()
		for r, want := range before {
			v, ok, err := readAt(it, []byte(r.key), r.ts)
			if err != nil {
				rt.Fatal(err)
			}
			if got := (answer{string(v), ok}); got != want {
				rt.Fatalf("read %q at %d after GC at %d = %+v; before %+v", r.key, r.ts, gcTS, got, want)
			}
		}

		// The versions left: per user key, those newer than T and the
		// newest at or below T (not a tombstone, at the bottom).
		var wantEntries int64
		for _, k := range keys {
			var newestBelow *write
			for _, ws := range tables[n-m:] {
				for i, w := range ws {
					switch {
					case w.key != k:
					case w.ts > gcTS:
						wantEntries++
					default:
						newestBelow = &ws[i] // timestamps increase
					}
				}
			}
			if newestBelow != nil && !(bottom && newestBelow.del) {
				wantEntries++
			}
		}
		var entries int64
		perKey := map[string]int{} // versions at or below T
		for _, r := range outs {
			entries += int64(r.Properties().NumEntries)
			for k, v := range r.All(&err) {
				if ^binary.BigEndian.Uint64(k[len(k)-8:]) > gcTS {
					continue
				}
				user := string(decodeUserKey(k[:len(k)-8]))
				if perKey[user]++; perKey[user] > 1 {
					rt.Fatalf("user key %q keeps %d versions at or below T = %d", user, perKey[user], gcTS)
				}
				if bottom && v[0] == kindDelete {
					rt.Fatalf("user key %q keeps a tombstone at or below T = %d at the bottom", user, gcTS)
				}
			}
			if err != nil {
				rt.Fatal(err)
			}
		}
		if entries != wantEntries {
			rt.Fatalf("GC at %d of %d tables left %d entries; want %d", gcTS, m, entries, wantEntries)
		}
	})
}
