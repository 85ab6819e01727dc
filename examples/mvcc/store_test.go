// Package mvcc_test is a small versioned key/value store built on this
// module: what a storage engine asks of its table layer, in one place.
//
// Keys. A user key is stored in an order-preserving, self-delimiting
// encoding (0x00 escaped as 0x00 0xff, then a 0x00 0x01 terminator), so
// that no encoded user key is a proper prefix of another, followed by the
// 8-byte big-endian inverted version (^version), so that newer versions
// sort first. Tables are built with format.Suffix(8): the filter (and the
// hash index) hold encoded user keys, and a lookup of the newest version
// is one Iterator.SeekPrefixGE per table, which the filter answers for
// tables without the key.
//
// Values. One kind byte (kindPut or kindDelete, a tombstone) then the
// value. Each table counts its tombstones in the user property
// "mvcc.tombstones"; Compact merges every table into new ones, dropping
// shadowed versions and tombstones, when tombstones make up more than a
// quarter of the entries, cutting tables at a target size with
// Builder.EstimatedSize.
//
// Scans take user-key bounds [lower, upper) and turn them into iterator
// bounds over the encoded keys, merging tables: each table keeps a scan
// iterator whose bounds Iterator.SetBounds changes per scan, so a scan
// makes no iterator. Whole-table reads range over Reader.All. Errors
// from the reader name the table's file already.
//
// TestStoreMachine checks the store against a map with rapid: puts,
// deletes, flushes to new tables, compactions, gets and bounded scans.
package mvcc_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// Value kinds, the first byte of every stored value.
const (
	kindPut    = 1
	kindDelete = 2
)

// tombstonesProp is the user property counting a table's tombstones, a
// uvarint.
const tombstonesProp = "mvcc.tombstones"

// encodeUserKey appends the self-delimiting encoding of k to dst: every
// 0x00 becomes 0x00 0xff, and 0x00 0x01 ends it. It preserves order, and
// no encoding is a proper prefix of another.
func encodeUserKey(dst, k []byte) []byte {
	for _, c := range k {
		dst = append(dst, c)
		if c == 0 {
			dst = append(dst, 0xff)
		}
	}
	return append(dst, 0, 1)
}

// decodeUserKey reverses encodeUserKey on an encoded user key (the prefix
// of a stored key).
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

// storedKey appends the stored key of user key k at version v.
func storedKey(dst, k []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(encodeUserKey(dst, k), ^v)
}

// version returns the version of a stored key.
func version(key []byte) uint64 { return ^binary.BigEndian.Uint64(key[len(key)-8:]) }

// memEntry is one version in the memtable.
type memEntry struct {
	version uint64
	kind    byte
	value   []byte
}

// table is one flushed table.
type table struct {
	r          *reader.Reader
	it         *reader.Iterator // for point lookups; the store is single-goroutine
	scan       *reader.Iterator // for Scan, under per-scan bounds (SetBounds)
	tombstones uint64
	path       string
}

// Store is a versioned key/value store: a memtable of recent writes and
// tables, newest first. It is not safe for concurrent use.
type Store struct {
	dir      string
	seq      int    // table file number
	version  uint64 // the last version written
	mem      map[string][]memEntry
	tables   []*table // newest first
	hashIdx  bool
	maxTable uint64 // target table size for compactions, bytes
}

// Open returns an empty store writing tables to dir.
func Open(dir string, hashIndex bool) *Store {
	return &Store{dir: dir, mem: map[string][]memEntry{}, hashIdx: hashIndex, maxTable: 4 << 10}
}

// Put writes k = v at a new version.
func (s *Store) Put(k, v []byte) { s.write(k, kindPut, v) }

// Delete writes a tombstone for k at a new version.
func (s *Store) Delete(k []byte) { s.write(k, kindDelete, nil) }

func (s *Store) write(k []byte, kind byte, v []byte) {
	s.version++
	s.mem[string(k)] = append(s.mem[string(k)], memEntry{s.version, kind, bytes.Clone(v)})
}

// Get returns the newest value of k and whether it exists: from the
// memtable, else from the newest table holding any version of k. Each
// table answers with one SeekPrefixGE from the newest possible version;
// the filter rules out tables without k without reading a data block.
func (s *Store) Get(k []byte) ([]byte, bool, error) {
	if vs := s.mem[string(k)]; len(vs) > 0 {
		e := vs[len(vs)-1]
		return e.value, e.kind == kindPut, nil
	}
	prefix := encodeUserKey(nil, k)
	seek := binary.BigEndian.AppendUint64(bytes.Clone(prefix), 0) // ^MaxUint64: the newest
	for _, t := range s.tables {
		if !t.it.SeekPrefixGE(prefix, seek) {
			if err := t.it.Err(); err != nil {
				return nil, false, err
			}
			continue
		}
		v := t.it.Value()
		if len(v) == 0 {
			return nil, false, fmt.Errorf("mvcc: %s: empty value at %q", t.path, t.it.Key())
		}
		if v[0] == kindDelete {
			return nil, false, nil
		}
		return bytes.Clone(v[1:]), true, nil
	}
	return nil, false, nil
}

// Flush writes the memtable to a new table, versions newest first, with
// its tombstone count as a user property.
func (s *Store) Flush() error {
	if len(s.mem) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.mem))
	for k := range s.mem {
		keys = append(keys, k)
	}
	sort.Strings(keys) // encoding preserves the order
	w, err := s.newWriter()
	if err != nil {
		return err
	}
	for _, k := range keys {
		vs := s.mem[k]
		for i := len(vs) - 1; i >= 0; i-- {
			if err := w.add(storedKey(nil, []byte(k), vs[i].version), vs[i].kind, vs[i].value); err != nil {
				w.b.Abort()
				return err
			}
		}
	}
	t, err := w.finish()
	if err != nil {
		return err
	}
	s.tables = append([]*table{t}, s.tables...)
	s.mem = map[string][]memEntry{}
	return nil
}

// writer builds one table, counting tombstones.
type writer struct {
	b          *builder.Builder
	path       string
	tombstones uint64
	s          *Store
}

func (s *Store) newWriter() (*writer, error) {
	s.seq++
	path := filepath.Join(s.dir, fmt.Sprintf("%06d.sst", s.seq))
	b, err := builder.Create(path, &builder.Options{
		Splitter:  format.Suffix(8),
		HashIndex: s.hashIdx,
		BlockSize: 256, // small blocks: many blocks even in small tests
	})
	if err != nil {
		return nil, err
	}
	return &writer{b: b, path: path, s: s}, nil
}

func (w *writer) add(key []byte, kind byte, value []byte) error {
	if kind == kindDelete {
		w.tombstones++
	}
	return w.b.Add(key, append([]byte{kind}, value...))
}

func (w *writer) finish() (*table, error) {
	if err := w.b.SetUserProperty(tombstonesProp, binary.AppendUvarint(nil, w.tombstones)); err != nil {
		w.b.Abort()
		return nil, err
	}
	if err := w.b.Finish(); err != nil {
		return nil, err
	}
	return openTable(w.path)
}

func openTable(path string) (*table, error) {
	r, err := reader.Open(path, nil)
	if err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(r.Properties().User[tombstonesProp])
	if k <= 0 {
		r.Close()
		return nil, fmt.Errorf("mvcc: %s: no %s property", path, tombstonesProp)
	}
	return &table{r: r, it: r.NewIter(nil), scan: r.NewIter(nil), tombstones: n, path: path}, nil
}

// TombstoneRatio returns the tables' tombstones over their entries, from
// their properties alone.
func (s *Store) TombstoneRatio() float64 {
	var dead, all uint64
	for _, t := range s.tables {
		dead += t.tombstones
		all += t.r.Properties().NumEntries
	}
	if all == 0 {
		return 0
	}
	return float64(dead) / float64(all)
}

// Close closes every table.
func (s *Store) Close() error {
	var errs []error
	for _, t := range s.tables {
		errs = append(errs, t.it.Close(), t.scan.Close(), t.r.Close())
	}
	s.tables = nil
	return errors.Join(errs...)
}

// KV is one live key and its newest value.
type KV struct{ Key, Value string }

// Scan returns the live keys k with lower <= k < upper (nil: unbounded)
// and their newest values, in order, merging the memtable and the tables.
// The bounds become iterator bounds over encoded keys: lower's encoding
// with version MaxUint64 (the first stored key of lower), and upper's
// encoding likewise.
func (s *Store) Scan(lower, upper []byte) ([]KV, error) {
	var lo, hi []byte // nil: unbounded
	if lower != nil {
		lo = storedKey(nil, lower, ^uint64(0))
	}
	if upper != nil {
		hi = storedKey(nil, upper, ^uint64(0))
	}
	// One source per table, and the memtable as a sorted slice.
	type source struct {
		it *reader.Iterator
		ok bool
	}
	var srcs []*source
	for _, t := range s.tables {
		t.scan.SetBounds(lo, hi) // unpositioned until First
		srcs = append(srcs, &source{it: t.scan, ok: t.scan.First()})
	}
	var mem []memKV
	for k, vs := range s.mem {
		if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
			e := vs[len(vs)-1]
			mem = append(mem, memKV{storedKey(nil, []byte(k), e.version), e})
		}
	}
	slices.SortFunc(mem, func(a, b memKV) int { return bytes.Compare(a.key, b.key) })

	var out []KV
	var lastUser []byte // encoded user key last decided on
	for {
		// The smallest head: the newest version of the smallest user key.
		var best []byte
		var bestVal []byte
		bestSrc := -1
		for i, src := range srcs {
			if src.ok && (best == nil || bytes.Compare(src.it.Key(), best) < 0) {
				best, bestVal, bestSrc = src.it.Key(), src.it.Value(), i
			}
		}
		if len(mem) > 0 && (best == nil || bytes.Compare(mem[0].key, best) < 0) {
			best = mem[0].key
			bestVal = append([]byte{mem[0].e.kind}, mem[0].e.value...)
			bestSrc = len(srcs)
		}
		if bestSrc < 0 {
			break
		}
		user := best[:len(best)-8]
		if lastUser == nil || !bytes.Equal(user, lastUser) {
			lastUser = bytes.Clone(user)
			if bestVal[0] == kindPut {
				out = append(out, KV{string(decodeUserKey(user)), string(bestVal[1:])})
			}
		}
		if bestSrc == len(srcs) {
			mem = mem[1:]
		} else {
			srcs[bestSrc].ok = srcs[bestSrc].it.Next()
		}
	}
	for _, src := range srcs {
		if err := src.it.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type memKV struct {
	key []byte
	e   memEntry
}

// Compact merges every table into new ones, keeping only each key's
// newest version and dropping keys whose newest version is a tombstone
// (no older table remains to shadow), when the tombstone ratio exceeds
// 1/4 or force is set; it reports whether it did. It cuts a new table
// once its EstimatedSize reaches s.maxTable. The memtable is left alone.
func (s *Store) Compact(force bool) (bool, error) {
	if len(s.tables) == 0 || (!force && s.TombstoneRatio() <= 0.25) {
		return false, nil
	}
	all, err := s.scanNewest()
	if err != nil {
		return false, err
	}
	var outs []*table
	var w *writer
	for _, e := range all {
		if e.kind == kindDelete {
			continue
		}
		if w == nil {
			if w, err = s.newWriter(); err != nil {
				return false, err
			}
		}
		if err := w.add(e.key, e.kind, e.value); err != nil {
			w.b.Abort()
			return false, err
		}
		if w.b.EstimatedSize() >= int64(s.maxTable) {
			t, err := w.finish()
			if err != nil {
				return false, err
			}
			outs = append(outs, t)
			w = nil
		}
	}
	if w != nil {
		t, err := w.finish()
		if err != nil {
			return false, err
		}
		outs = append(outs, t)
	}
	old := s.tables
	s.tables = outs
	// The outputs hold disjoint key ranges at their original versions;
	// any order works for lookups, since each key is in one table. The
	// inputs are closed and removed.
	var errs []error
	for _, t := range old {
		errs = append(errs, t.it.Close(), t.scan.Close(), t.r.Close(), os.Remove(t.path))
	}
	return true, errors.Join(errs...)
}

// newest is a key's newest stored version, as Compact copies it.
type newest struct {
	key   []byte
	kind  byte
	value []byte
}

// scanNewest returns every user key's newest version across the tables,
// tombstones included, in key order.
func (s *Store) scanNewest() ([]newest, error) {
	byUser := map[string]newest{}
	var err error
	for _, t := range s.tables {
		for k, v := range t.r.All(&err) {
			user := string(k[:len(k)-8])
			if old, seen := byUser[user]; seen && version(old.key) > version(k) {
				continue
			}
			byUser[user] = newest{bytes.Clone(k), v[0], bytes.Clone(v[1:])} // k and v live for one iteration
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]newest, 0, len(byUser))
	for _, n := range byUser {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b newest) int { return bytes.Compare(a.key, b.key) })
	return out, nil
}

// storeMachine checks a Store against a map model.
type storeMachine struct {
	s     *Store
	model map[string]string
	keys  *rapid.Generator[string]
}

func (m *storeMachine) Put(t *rapid.T) {
	k := m.keys.Draw(t, "k")
	v := rapid.StringN(0, 12, -1).Draw(t, "v")
	m.s.Put([]byte(k), []byte(v))
	m.model[k] = v
}

func (m *storeMachine) Delete(t *rapid.T) {
	k := m.keys.Draw(t, "k")
	m.s.Delete([]byte(k))
	delete(m.model, k)
}

func (m *storeMachine) Flush(t *rapid.T) {
	if err := m.s.Flush(); err != nil {
		t.Fatal(err)
	}
}

func (m *storeMachine) Compact(t *rapid.T) {
	did, err := m.s.Compact(rapid.Bool().Draw(t, "force"))
	if err != nil {
		t.Fatal(err)
	}
	if r := m.s.TombstoneRatio(); did && r != 0 {
		t.Fatalf("tombstone ratio %v after a compaction", r)
	}
}

func (m *storeMachine) Get(t *rapid.T) {
	k := m.keys.Draw(t, "k")
	v, ok, err := m.s.Get([]byte(k))
	want, wantOK := m.model[k]
	if err != nil || ok != wantOK || string(v) != want {
		t.Fatalf("Get(%q) = %q, %v, %v; model %q, %v", k, v, ok, err, want, wantOK)
	}
}

func (m *storeMachine) Scan(t *rapid.T) {
	var lower, upper []byte
	if rapid.Bool().Draw(t, "hasLower") {
		lower = []byte(m.keys.Draw(t, "lower"))
	}
	if rapid.Bool().Draw(t, "hasUpper") {
		upper = []byte(m.keys.Draw(t, "upper"))
	}
	got, err := m.s.Scan(lower, upper)
	if err != nil {
		t.Fatal(err)
	}
	var want []KV
	for k, v := range m.model {
		if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
			want = append(want, KV{k, v})
		}
	}
	slices.SortFunc(want, func(a, b KV) int { return bytes.Compare([]byte(a.Key), []byte(b.Key)) })
	if !slices.Equal(got, want) {
		t.Fatalf("Scan(%q, %q) = %q, model %q", lower, upper, got, want)
	}
}

// Check is the invariant: the tombstone counts in the tables' user
// properties match their contents.
func (m *storeMachine) Check(t *rapid.T) {
	for _, tb := range m.s.tables {
		var dead uint64
		var err error
		for _, v := range tb.r.All(&err) {
			if v[0] == kindDelete {
				dead++
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if dead != tb.tombstones {
			t.Fatalf("%s: %d tombstones, property says %d", tb.path, dead, tb.tombstones)
		}
	}
}

func TestStoreMachine(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(t *rapid.T) {
		// User keys with zero bytes and keys that are prefixes of others,
		// which the encoding must keep apart.
		keys := rapid.SampledFrom([]string{"", "a", "a\x00", "a\x00b", "ab", "b", "\x00", "\xff", "key", "key2"})
		runs++
		s := Open(filepath.Join(dir, fmt.Sprint(runs)), rapid.Bool().Draw(t, "hashIndex"))
		if err := mkdir(s.dir); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		m := &storeMachine{s: s, model: map[string]string{}, keys: rapid.OneOf(keys, rapid.StringN(0, 4, -1))}
		t.Repeat(rapid.StateMachineActions(m))
	})
}

// TestStoreReadsTablesNewestFirst writes a key in three tables and reads
// the newest version back through SeekPrefixGE.
func TestStoreReadsTablesNewestFirst(t *testing.T) {
	s := Open(t.TempDir(), false)
	defer s.Close()
	for i, v := range []string{"one", "two", "three"} {
		s.Put([]byte("k"), []byte(v))
		s.Put([]byte(fmt.Sprint("other", i)), []byte(v))
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	s.Delete([]byte("other0"))
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get([]byte("k")); err != nil || !ok || string(v) != "three" {
		t.Fatalf("Get(k) = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := s.Get([]byte("other0")); err != nil || ok {
		t.Fatalf("Get(other0) after its delete = %v, %v", ok, err)
	}
	if r := s.TombstoneRatio(); r != 1.0/7 {
		t.Fatalf("tombstone ratio %v, want 1/7", r)
	}
}

func mkdir(dir string) error { return os.MkdirAll(dir, 0o755) }
