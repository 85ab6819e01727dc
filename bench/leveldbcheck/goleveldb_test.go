package leveldbcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sstkit/sstable/cache"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	gldb "github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	gliter "github.com/syndtr/goleveldb/leveldb/iterator"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/storage"
	"github.com/syndtr/goleveldb/leveldb/table"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// seeds are the workloads each compression is tried with.
var seeds = []uint64{1, 2, 3, 4, 5, 6}

// maxProbes caps the keys each database is probed with (Seek, Get).
var maxProbes = 2000

// workload is a random history of writes to a goleveldb database, and the
// live view it must leave: model maps each live user key to its value.
type workload struct {
	rng     *rand.Rand
	pool    [][]byte          // the keys writes draw from
	model   map[string][]byte // live keys
	deleted map[string]bool   // keys deleted at least once
}

// newKeyPool returns the keys a workload writes: binary keys rich in 0x00
// and 0xff bytes, the empty key, chains of keys that are prefixes of
// each other (k[:1], k[:2], ..., k, k+"\x00", k+"\xff"), and decimal
// keys.
func newKeyPool(rng *rand.Rand) [][]byte {
	seen := map[string]bool{}
	var pool [][]byte
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			pool = append(pool, k)
		}
	}
	add([]byte{})
	add([]byte{0})
	add([]byte{0xff})
	add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	randByte := func() byte {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return 0xff
		default:
			return byte(rng.Uint32())
		}
	}
	for i := 0; i < 2000; i++ {
		k := make([]byte, rng.IntN(25))
		for j := range k {
			k[j] = randByte()
		}
		add(k)
	}
	for i := 0; i < 40; i++ {
		k := make([]byte, 4+rng.IntN(12))
		for j := range k {
			k[j] = randByte()
		}
		for n := 1; n <= len(k); n++ {
			add(slices.Clone(k[:n]))
		}
		add(append(slices.Clone(k), 0))
		add(append(slices.Clone(k), 0xff))
	}
	for i := 0; i < 2000; i++ {
		add(fmt.Appendf(nil, "key%06d", rng.IntN(100000)))
	}
	return pool
}

// value returns a value: empty one time in ten, over 4 KiB one time in
// twenty, otherwise up to 300 bytes, half of them compressible.
func (w *workload) value() []byte {
	var n int
	switch r := w.rng.IntN(20); {
	case r < 2:
		return []byte{}
	case r == 2:
		n = 4097 + w.rng.IntN(12000)
	default:
		n = 1 + w.rng.IntN(300)
	}
	v := make([]byte, n)
	for i := range v {
		if i%8 < 4 {
			v[i] = byte('a' + i%26)
		} else {
			v[i] = byte(w.rng.Uint32())
		}
	}
	return v
}

func (w *workload) key() []byte { return w.pool[w.rng.IntN(len(w.pool))] }

// liveKey returns a live key, or a pool key when none is live.
func (w *workload) liveKey() []byte {
	if len(w.model) == 0 {
		return w.key()
	}
	// Map iteration order is random but not seeded: pick from the pool
	// instead, trying a few times.
	for range 20 {
		if k := w.key(); w.model[string(k)] != nil {
			return k
		}
	}
	return w.key()
}

// dbOptions are the writer's options: tiny memtables and tables so that a
// few thousand writes make many tables over several levels.
func dbOptions(compress bool) *opt.Options {
	o := &opt.Options{
		WriteBuffer:                 24 << 10,
		CompactionTableSize:         16 << 10,
		CompactionTotalSize:         16 << 10, // level 1 holds 160 KiB, level 2 1.6 MiB, ...
		BlockSize:                   1 << 10,
		Filter:                      filter.NewBloomFilter(10),
		Compression:                 opt.SnappyCompression,
		DisableSeeksCompaction:      true,
		NoSync:                      true,
		CompactionL0Trigger:         4,
		WriteL0SlowdownTrigger:      64,
		WriteL0PauseTrigger:         128,
		BlockCacheCapacity:          1 << 20,
		OpenFilesCacheCapacity:      50,
		CompactionSourceLimitFactor: 2,
	}
	if !compress {
		o.Compression = opt.NoCompression
	}
	return o
}

// buildDB runs seed's workload through goleveldb's DB API in dir and
// returns it, its model the live view the database must hold.
func buildDB(t testing.TB, dir string, seed uint64, compress bool) *workload {
	rng := rand.New(rand.NewPCG(seed, seed*0x9e3779b97f4a7c15+1))
	w := &workload{rng: rng, pool: newKeyPool(rng), model: map[string][]byte{}, deleted: map[string]bool{}}
	db, err := gldb.OpenFile(dir, dbOptions(compress))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	put := func(k, v []byte) { w.model[string(k)] = v }
	del := func(k []byte) { delete(w.model, string(k)); w.deleted[string(k)] = true }
	const ops = 6000
	for i := 0; i < ops; i++ {
		if i == ops/2 { // reopen: goleveldb replays its journal into a table
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = gldb.OpenFile(dir, dbOptions(compress)); err != nil {
				t.Fatal(err)
			}
		}
		switch r := rng.IntN(100); {
		case r < 55:
			k, v := w.key(), w.value()
			if err := db.Put(k, v, nil); err != nil {
				t.Fatal(err)
			}
			put(k, v)
		case r < 62: // overwrite a live key
			k, v := w.liveKey(), w.value()
			if err := db.Put(k, v, nil); err != nil {
				t.Fatal(err)
			}
			put(k, v)
		case r < 80:
			k := w.liveKey()
			if rng.IntN(4) == 0 {
				k = w.key() // perhaps absent, perhaps never written
			}
			if err := db.Delete(k, nil); err != nil {
				t.Fatal(err)
			}
			del(k)
		case r < 99 || rng.IntN(2) == 0: // a batch, perhaps writing one key several times
			var b gldb.Batch
			for range 1 + rng.IntN(30) {
				k := w.key()
				if rng.IntN(3) == 0 {
					b.Delete(k)
					del(k)
				} else {
					v := w.value()
					b.Put(k, v)
					put(k, v)
				}
			}
			if err := db.Write(&b, nil); err != nil {
				t.Fatal(err)
			}
		default:
			var r util.Range
			if rng.IntN(8) > 0 {
				a, b := w.key(), w.key()
				if bytes.Compare(a, b) > 0 {
					a, b = b, a
				}
				r = util.Range{Start: a, Limit: b}
			}
			if err := db.CompactRange(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The last writes stay in the journal: goleveldb's Close does not
	// flush the memtable.
	k, v := []byte("the last write"), []byte("in the journal")
	if err := db.Put(k, v, nil); err != nil {
		t.Fatal(err)
	}
	put(k, v)
	k = w.liveKey()
	if err := db.Delete(k, nil); err != nil {
		t.Fatal(err)
	}
	del(k)
	err = db.Close()
	db = nil
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// kv is one entry of a view.
type kv struct{ k, v []byte }

func (e kv) String() string { return fmt.Sprintf("%x=%x", e.k, trim(e.v)) }

func trim(v []byte) []byte {
	if len(v) > 16 {
		return v[:16]
	}
	return v
}

// scanOurs reads our view forward or backward.
func scanOurs(t testing.TB, it *merge.Iterator, reverse bool) []kv {
	var out []kv
	ok := it.First()
	if reverse {
		ok = it.Last()
	}
	for ; ok; ok = step(it, reverse) {
		out = append(out, kv{slices.Clone(it.Key()), slices.Clone(it.Value())})
	}
	if err := it.Err(); err != nil {
		t.Fatalf("our iterator: %v", err)
	}
	return out
}

func step(it *merge.Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

// scanTheirs reads goleveldb's view forward or backward.
func scanTheirs(t testing.TB, it gliter.Iterator, reverse bool) []kv {
	var out []kv
	ok := it.First()
	if reverse {
		ok = it.Last()
	}
	for ok {
		out = append(out, kv{slices.Clone(it.Key()), slices.Clone(it.Value())})
		if reverse {
			ok = it.Prev()
		} else {
			ok = it.Next()
		}
	}
	if err := it.Error(); err != nil {
		t.Fatalf("goleveldb's iterator: %v", err)
	}
	return out
}

// diffViews fails on the first line where two scans differ.
func diffViews(t testing.TB, what string, ours, theirs []kv) {
	t.Helper()
	for i := 0; i < len(ours) || i < len(theirs); i++ {
		switch {
		case i >= len(ours):
			t.Fatalf("%s: ours ends after %d entries; goleveldb goes on with %v", what, i, theirs[i])
		case i >= len(theirs):
			t.Fatalf("%s: goleveldb ends after %d entries; ours goes on with %v", what, i, ours[i])
		case !bytes.Equal(ours[i].k, theirs[i].k) || !bytes.Equal(ours[i].v, theirs[i].v):
			t.Fatalf("%s: line %d: ours %v, goleveldb %v", what, i, ours[i], theirs[i])
		}
	}
}

// modelView is the model's live view in key order.
func (w *workload) modelView() []kv {
	out := make([]kv, 0, len(w.model))
	for k, v := range w.model {
		out = append(out, kv{[]byte(k), v})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].k, out[j].k) < 0 })
	return out
}

// pos renders an iterator's position.
func posOurs(it *merge.Iterator, ok bool) string {
	if !ok {
		if it.Err() != nil {
			return "error: " + it.Err().Error()
		}
		return "invalid"
	}
	return kv{it.Key(), it.Value()}.String()
}

func posTheirs(it gliter.Iterator, ok bool) string {
	if !ok {
		if it.Error() != nil {
			return "error: " + it.Error().Error()
		}
		return "invalid"
	}
	return kv{it.Key(), it.Value()}.String()
}

// probes returns keys to seek and get: every pool key, each with 0x00
// and 0xff appended and its last byte dropped, and random keys.
func (w *workload) probes() [][]byte {
	var out [][]byte
	for _, k := range w.pool {
		out = append(out, k, append(slices.Clone(k), 0), append(slices.Clone(k), 0xff))
		if len(k) > 0 {
			out = append(out, k[:len(k)-1])
		}
	}
	for range 200 {
		k := make([]byte, w.rng.IntN(10))
		for j := range k {
			k[j] = byte(w.rng.Uint32())
		}
		out = append(out, k)
	}
	w.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	out = out[:min(len(out), maxProbes)]
	out = append(out, []byte("the last write"), []byte("the last writ"), []byte("the last write\x00"), []byte{}, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	return out
}

// checkSeeks compares, at each probe, SeekGE and SeekLT, each followed
// by moves in both directions, with where the view (ref, the checked
// forward scan) says they land, and with goleveldb's iterator. Ours must
// match the view; goleveldb's departures are counted, and the first few
// logged.
func checkSeeks(t testing.TB, probes [][]byte, ref []kv, ours *merge.Iterator, theirs gliter.Iterator) (n, theirsWrong int) {
	at := func(i int) string {
		if i < 0 || i >= len(ref) {
			return "invalid"
		}
		return ref[i].String()
	}
	for i, k := range probes {
		ge := sort.Search(len(ref), func(j int) bool { return bytes.Compare(ref[j].k, k) >= 0 })
		type seq struct {
			moves []string
			start int
			seek  func() (bool, bool)
		}
		seqs := []seq{
			{[]string{"SeekGE", "Next", "Next", "Prev"}, ge, func() (bool, bool) { return ours.SeekGE(k), theirs.Seek(k) }},
			{[]string{"SeekGE", "Prev", "Prev", "Next"}, ge, func() (bool, bool) { return ours.SeekGE(k), theirs.Seek(k) }},
			// goleveldb has no SeekLT: Seek then Prev, or Last.
			{[]string{"SeekLT", "Prev", "Next", "Next"}, ge - 1, func() (bool, bool) {
				g := theirs.Seek(k)
				if g {
					g = theirs.Prev()
				} else {
					g = theirs.Last()
				}
				return ours.SeekLT(k), g
			}},
			{[]string{"SeekLT", "Next", "Prev", "Prev"}, ge - 1, func() (bool, bool) {
				g := theirs.Seek(k)
				if g {
					g = theirs.Prev()
				} else {
					g = theirs.Last()
				}
				return ours.SeekLT(k), g
			}},
		}
		s := seqs[i%len(seqs)]
		idx := s.start
		o, g := s.seek()
		theirsOK := true
		for j, m := range s.moves {
			switch m {
			case "Next":
				o, g = ours.Next(), theirs.Next()
				idx++
			case "Prev":
				o, g = ours.Prev(), theirs.Prev()
				idx--
			}
			want := at(idx)
			if po := posOurs(ours, o); po != want {
				t.Fatalf("%x: %s: ours %s, want %s (goleveldb %s)", k, strings.Join(s.moves[:j+1], "+"), po, want, posTheirs(theirs, g))
			}
			if pg := posTheirs(theirs, g); theirsOK && pg != want {
				theirsOK = false
				if theirsWrong < 3 {
					t.Logf("goleveldb's iterator departs from its own scan: %x: %s: goleveldb %s, want %s", k, strings.Join(s.moves[:j+1], "+"), pg, want)
				}
			}
			if want == "invalid" { // exhausted: ours stays so, goleveldb's steps back
				break
			}
		}
		if !theirsOK {
			theirsWrong++
		}
		n++
	}
	return n, theirsWrong
}

// checkGets compares Get of every probe (live, deleted and absent keys)
// with goleveldb's and the model's.
func checkGets(t testing.TB, w *workload, probes [][]byte, db *leveldb.DB, theirs *gldb.DB) (live, deleted, absent int) {
	for _, k := range probes {
		got, err := db.Get(k)
		want, terr := theirs.Get(k, nil)
		model, inModel := w.model[string(k)]
		switch {
		case errors.Is(terr, gldb.ErrNotFound):
			if !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("Get(%x): ours %x, %v; goleveldb not found", k, trim(got), err)
			}
			if inModel {
				t.Fatalf("Get(%x): both not found; the model has %x", k, trim(model))
			}
			if w.deleted[string(k)] {
				deleted++
			} else {
				absent++
			}
		case terr != nil:
			t.Fatalf("goleveldb Get(%x): %v", k, terr)
		default:
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("Get(%x): ours %x, %v; goleveldb %x", k, trim(got), err, trim(want))
			}
			if !inModel || !bytes.Equal(model, want) {
				t.Fatalf("Get(%x): both %x; the model %x (%v)", k, trim(want), trim(model), inModel)
			}
			live++
		}
	}
	return
}

// tablePath is a live table's file: goleveldb writes NNNNNN.ldb.
func tablePath(dir string, num uint64) string {
	p := filepath.Join(dir, fmt.Sprintf("%06d.ldb", num))
	if _, err := os.Stat(p); err != nil {
		return filepath.Join(dir, fmt.Sprintf("%06d.sst", num))
	}
	return p
}

// checkTables opens every live table on its own and compares all its
// internal keys and values with goleveldb's table reader's, and checks
// the table's layout: goleveldb compresses the index and metaindex blocks
// of a snappy database.
func checkTables(t testing.TB, dir string, files []leveldb.FileInfo, compress bool, noMmap bool) (metaCompressed int) {
	for _, f := range files {
		path := tablePath(dir, f.Number)
		tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{NoMmap: noMmap})
		if err != nil {
			t.Fatal(err)
		}
		info := tb.Info()
		if info.MetaindexCompressed {
			metaCompressed++
		}
		if compress && (!info.MetaindexCompressed || !info.IndexCompressed) {
			t.Errorf("%s: goleveldb compresses its index and metaindex blocks; Info says %+v", path, info)
		}
		if !compress && (info.MetaindexCompressed || info.IndexCompressed) {
			t.Errorf("%s: uncompressed database, yet Info says %+v", path, info)
		}
		if info.Filter != "leveldb.BuiltinBloomFilter" {
			t.Errorf("%s: filter %q, want goleveldb's", path, info.Filter)
		}
		if _, err := tb.Verify(); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := table.NewReader(fh, info.Size, storage.FileDesc{Type: storage.TypeTable, Num: int64(f.Number)}, nil, nil, &opt.Options{Strict: opt.StrictAll})
		if err != nil {
			t.Fatal(err)
		}
		theirs := r.NewIterator(nil, nil)
		ours := tb.NewIter(nil)
		n := 0
		o, g := ours.First(), theirs.First()
		for ; o && g; o, g = ours.Next(), theirs.Next() {
			if !bytes.Equal(ours.InternalKey(), theirs.Key()) || !bytes.Equal(ours.Value(), theirs.Value()) {
				t.Fatalf("%s: entry %d: ours %x=%x, goleveldb %x=%x", path, n, ours.InternalKey(), trim(ours.Value()), theirs.Key(), trim(theirs.Value()))
			}
			n++
		}
		if o != g || ours.Err() != nil || theirs.Error() != nil {
			t.Fatalf("%s: after %d entries: ours %v (%v), goleveldb %v (%v)", path, n, o, ours.Err(), g, theirs.Error())
		}
		if !bytes.Equal(f.Smallest, firstKey(tb)) {
			t.Errorf("%s: MANIFEST's smallest %x, table's first %x", path, f.Smallest, firstKey(tb))
		}
		ours.Close()
		theirs.Release()
		r.Release()
		fh.Close()
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return metaCompressed
}

func firstKey(tb *leveldb.Table) []byte {
	it := tb.NewIter(nil)
	defer it.Close()
	if !it.First() {
		return nil
	}
	return slices.Clone(it.InternalKey())
}

// TestGoleveldbDatabases builds a database per seed and compression with
// goleveldb's DB API and compares our live view of it, mapped, without a
// mapping and through a tiny cache, with goleveldb's own (opened
// read-only at the same time: both take shared locks) and with the model.
func TestGoleveldbDatabases(t *testing.T) {
	levelsSeen := map[int]int{}
	metaCompressed := 0
	for _, compress := range []bool{true, false} {
		for _, seed := range seeds {
			name := fmt.Sprintf("seed%d/none", seed)
			if compress {
				name = fmt.Sprintf("seed%d/snappy", seed)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				w := buildDB(t, dir, seed, compress)
				want := w.modelView()
				probes := w.probes()

				theirs := openTheirs(t, dir, compress)
				defer theirs.Close()
				tfwd := scanTheirs(t, theirs.NewIterator(nil, nil), false)
				diffViews(t, "goleveldb against the model", tfwd, want)
				trev := scanTheirs(t, theirs.NewIterator(nil, nil), true)
				slices.Reverse(want)
				diffViews(t, "goleveldb's reverse scan against the model", trev, want)

				small, err := cache.New(cache.MinCapacity * 4)
				if err != nil {
					t.Fatal(err)
				}
				defer small.Close()
				for _, mode := range []struct {
					name string
					o    *leveldb.Options
				}{
					{"mapped", nil},
					{"NoMmap", &leveldb.Options{NoMmap: true}},
					{"NoMmap, small cache", &leveldb.Options{NoMmap: true, Cache: small}},
				} {
					db, err := leveldb.OpenDB(dir, mode.o)
					if err != nil {
						t.Fatalf("%s: OpenDB: %v", mode.name, err)
					}
					it := db.NewIterator(nil)
					diffViews(t, mode.name+": forward scan", scanOurs(t, it, false), tfwd)
					diffViews(t, mode.name+": reverse scan", scanOurs(t, it, true), trev)
					git := theirs.NewIterator(nil, nil)
					seeks, theirsWrong := checkSeeks(t, probes, tfwd, it, git)
					git.Release()
					if err := it.Close(); err != nil {
						t.Fatal(err)
					}
					live, deleted, absent := checkGets(t, w, probes, db, theirs)
					if live == 0 || deleted == 0 || absent == 0 {
						t.Errorf("Gets: %d live, %d deleted, %d absent: want some of each", live, deleted, absent)
					}
					entries, err := db.Verify()
					if err != nil {
						t.Fatalf("%s: Verify: %v", mode.name, err)
					}
					if db.LogEntries() == 0 {
						t.Errorf("%s: no writes replayed from the journal", mode.name)
					}
					files := db.Files()
					if mode.o == nil {
						perLevel := make([]int, leveldb.NumLevels)
						for _, f := range files {
							perLevel[f.Level]++
						}
						levels := 0
						for l, n := range perLevel {
							if n > 0 {
								levels++
								levelsSeen[l]++
							}
						}
						if levels < 2 || len(files) < 5 {
							t.Errorf("only %d tables over %d levels (%v)", len(files), levels, perLevel)
						}
						t.Logf("%d live keys; tables per level %v; %d entries verified; %d log entries; %d probes seeked (goleveldb wrong at %d); Gets: %d live, %d deleted, %d absent",
							len(w.model), perLevel, entries, db.LogEntries(), seeks, theirsWrong, live, deleted, absent)
					}
					if err := db.Close(); err != nil {
						t.Fatal(err)
					}
					if mode.o == nil {
						metaCompressed += checkTables(t, dir, files, compress, seed%2 == 0)
					}
				}
			})
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			if metaCompressed == 0 {
				t.Errorf("no table with a compressed metaindex was read")
			}
			if levelsSeen[2] == 0 {
				t.Errorf("no database reached level 2: levels seen %v", levelsSeen)
			}
			t.Logf("levels holding tables, by databases: %v; tables with a compressed metaindex: %d", levelsSeen, metaCompressed)
		}
	})
}

// openTheirs opens dir with goleveldb read-only. goleveldb's read-only
// open fails with io.EOF on a database left with two journals (its
// recoverJournalRO reuses one journal.Reader, and Reset returns the
// previous journal's io.EOF); then it opens a copy of dir for writing,
// which replays the journals alike.
func openTheirs(t testing.TB, dir string, compress bool) *gldb.DB {
	db, err := gldb.OpenFile(dir, &opt.Options{ReadOnly: true, Strict: opt.StrictAll})
	if err == nil {
		return db
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if !errors.Is(err, io.EOF) || len(logs) < 2 {
		t.Fatalf("goleveldb read-only: %v", err)
	}
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cp, "LOCK"))
	t.Logf("goleveldb's read-only open fails with %v (%d journals): reading a copy opened for writing", err, len(logs))
	o := dbOptions(compress)
	o.Strict = opt.StrictAll
	db, err = gldb.OpenFile(cp, o)
	if err != nil {
		t.Fatalf("goleveldb, a copy opened for writing: %v", err)
	}
	return db
}

// TestGoleveldbLocked checks that OpenDB refuses a database goleveldb has
// open for writing, with an error wrapping ErrLocked, and that goleveldb
// cannot open for writing a database we have open.
func TestGoleveldbLocked(t *testing.T) {
	dir := t.TempDir()
	w, err := gldb.OpenFile(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Put([]byte("k"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	db, err := leveldb.OpenDB(dir, nil)
	if !errors.Is(err, leveldb.ErrLocked) {
		if db != nil {
			db.Close()
		}
		w.Close()
		t.Fatalf("OpenDB of a database goleveldb has open: %v, want an error wrapping ErrLocked", err)
	}
	t.Logf("OpenDB while goleveldb writes: %v", err)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = leveldb.OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Errorf("Get(k) = %q, %v", v, err)
	}
	if w, err := gldb.OpenFile(dir, nil); err == nil {
		w.Close()
		t.Errorf("goleveldb opened for writing a database we hold open")
	}
	ro, err := gldb.OpenFile(dir, &opt.Options{ReadOnly: true})
	if err != nil {
		t.Errorf("goleveldb could not open read-only a database we hold open: %v", err)
	} else {
		ro.Close()
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = gldb.OpenFile(dir, nil)
	if err != nil {
		t.Fatalf("goleveldb after our Close: %v", err)
	}
	w.Close()
}
