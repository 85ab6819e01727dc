package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/rocksblock"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// rocksSeedTables returns the RocksDB tables committed under
// ../rocksdb/testdata/golden (every *.sst at any depth but the golden
// databases': RocksDB 10.5.1's and 7.8.3's) and
// ../internal/rocksblock/testdata/golden (RocksDB 7.8.3's and 10.5.1's
// small tables of each checksum type and compression).
func rocksSeedTables(tb testing.TB) [][]byte {
	var out [][]byte
	for _, root := range []string{
		filepath.Join("..", "rocksdb", "testdata", "golden"),
		filepath.Join("..", "internal", "rocksblock", "testdata", "golden"),
	} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sst") {
				return nil
			}
			if strings.Contains(p, "db-7.8.3") || strings.Contains(p, "native-db") {
				return nil // the databases' tables add no layout the others lack
			}
			if data, err := os.ReadFile(p); err == nil && len(data) < 64<<10 {
				out = append(out, data)
			}
			return nil
		})
	}
	return out
}

// FuzzRocksDBTable feeds the bytes to rocksdb.NewTable (or OpenTable,
// mapped) as a RocksDB block-based table, with every checksum its layout
// leads to repaired or not (repairRocksDB), so that mutations reach the
// footer, metaindex, properties, index, filter, range deletion and data
// block decoders and the decompressors. Every error must wrap
// format.ErrCorrupt, rocksdb.ErrUnsupported or rocksdb.ErrUnresolved
// (reader.ErrNotFound for a lookup); nothing may panic. A table that
// passes Verify must also be consistent: its reverse scan is its forward
// scan reversed, seeks and bounded scans land where the forward scan says,
// Get finds each key's newest version (and older ones by sequence
// number), and the table as a merge level shows what RocksDB's rules make
// of the scan and the range deletions.
func FuzzRocksDBTable(f *testing.F) {
	for i, data := range rocksSeedTables(f) {
		f.Add(data, false, false)
		f.Add(data, true, true)
		f.Add(data[:len(data)-1], false, false)
		if i%4 != 0 {
			continue // the seeds run in go test ./fuzz: a quarter of the tables' mutations keep it short
		}
		// Mutations that get past the checksums: a byte changed in the
		// middle of the first block of each kind the walk meets.
		seen := map[string]bool{}
		for _, b := range walkRocksDB(bytes.Clone(data), false).blocks {
			if seen[b.what] || b.h.Length == 0 {
				continue
			}
			seen[b.what] = true
			m := bytes.Clone(data)
			m[b.h.Offset+b.h.Length/2] ^= 0x41
			f.Add(m, true, false)
		}
	}
	f.Add([]byte{}, false, false)
	scratch := newScratchFile(f, "t.sst")
	f.Fuzz(func(t *testing.T, data []byte, repair, mmap bool) {
		// The bytes as a wide-column entity too: most tables hold none.
		if v, _, err := rocksdb.DefaultColumn(data); err != nil {
			rocksClassified(t, "DefaultColumn", err)
		} else if len(v) > len(data) {
			t.Fatalf("DefaultColumn of %d bytes gave a %d-byte value", len(data), len(v))
		}
		if repair {
			data = repairRocksDB(data)
		}
		// Odd lengths scan with read-ahead, so its goroutine sees
		// damaged blocks too.
		opts := &rocksdb.TableOptions{ReadAhead: len(data)%2 == 1}
		var tb *rocksdb.Table
		var err error
		if mmap {
			tb, err = rocksdb.OpenTable(scratch.write(t, data), opts)
		} else {
			tb, err = rocksdb.NewTable(bytes.NewReader(data), int64(len(data)), opts)
		}
		if err != nil {
			rocksClassified(t, "open", err)
			return
		}
		defer func() {
			if err := tb.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}()
		checkRocksDBTable(t, tb)
	})
}

// rocksClassified fails t unless err wraps one of the errors the rocksdb
// package documents for damaged or unreadable tables.
func rocksClassified(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, format.ErrCorrupt) && !errors.Is(err, rocksdb.ErrUnsupported) && !errors.Is(err, rocksdb.ErrUnresolved) {
		t.Fatalf("%s: error wraps none of format.ErrCorrupt, rocksdb.ErrUnsupported, rocksdb.ErrUnresolved: %v", what, err)
	}
}

// rocksEntry is one point entry of a table, as its iterator shows it.
type rocksEntry struct {
	key   []byte
	seq   uint64
	kind  rocksdb.Kind
	value []byte
}

func (e rocksEntry) String() string {
	return fmt.Sprintf("%q#%d,%v=%q", e.key, e.seq, e.kind, e.value)
}

func rocksEntryAt(it *rocksdb.TableIterator) rocksEntry {
	return rocksEntry{bytes.Clone(it.Key()), it.Seq(), it.Kind(), bytes.Clone(it.Value())}
}

func rocksEqual(a, b rocksEntry) bool {
	return bytes.Equal(a.key, b.key) && a.seq == b.seq && a.kind == b.kind && bytes.Equal(a.value, b.value)
}

// rocksScanLimit bounds the entries a scan collects: a mutated block can
// claim many tiny entries, and the checks below are quadratic in places.
const rocksScanLimit = 5000

func checkRocksDBTable(t *testing.T, tb *rocksdb.Table) {
	info := tb.Info()
	props := tb.Properties()
	names := map[string]int{}
	for _, p := range props {
		names[p.Name]++
	}
	for _, p := range props {
		v, ok := tb.Property(p.Name)
		// A name twice comes from a damaged block (RocksDB writes each
		// once); which value Property gives then is not specified.
		if !ok || names[p.Name] == 1 && !bytes.Equal(v, p.Value) {
			t.Fatalf("Property(%q) = %q, %v; Properties lists %q", p.Name, v, ok, p.Value)
		}
		tb.NumericProperty(p.Name)
	}
	rds, err := tb.RangeDeletions()
	if err != nil {
		t.Fatalf("RangeDeletions of an open table: %v", err)
	}
	if len(rds) != info.RangeDeletions {
		t.Fatalf("Info says %d range deletions, RangeDeletions gives %d", info.RangeDeletions, len(rds))
	}
	reverse := info.Comparator == rocksdb.ReverseBytewiseComparator
	cmp := func(a, b []byte) int {
		if reverse {
			return bytes.Compare(b, a)
		}
		return bytes.Compare(a, b)
	}

	it := tb.NewIter(nil)
	defer it.Close()
	var fwd []rocksEntry
	for ok := it.First(); ok && len(fwd) < rocksScanLimit; ok = it.Next() {
		fwd = append(fwd, rocksEntryAt(it))
	}
	fwdErr := it.Err()
	if fwdErr != nil {
		rocksClassified(t, "forward scan", fwdErr)
	}
	n, verr := tb.Verify()
	if verr != nil {
		rocksClassified(t, "Verify", verr)
	}
	var bwd []rocksEntry
	for ok := it.Last(); ok && len(bwd) < rocksScanLimit; ok = it.Prev() {
		bwd = append(bwd, rocksEntryAt(it))
	}
	if err := it.Err(); err != nil {
		rocksClassified(t, "backward scan", err)
	}
	if verr != nil || len(fwd) == rocksScanLimit {
		// Damaged: what remains is that nothing panics and every error
		// is classified.
		rocksProbe(t, tb, fwd, cmp, false)
		return
	}
	if fwdErr != nil {
		t.Fatalf("Verify passed where a scan failed: %v", fwdErr)
	}
	if n != int64(len(fwd)) {
		t.Fatalf("Verify checked %d entries; the scan has %d", n, len(fwd))
	}
	if len(bwd) != len(fwd) {
		t.Fatalf("backward scan has %d entries, forward %d (%v)", len(bwd), len(fwd), it.Err())
	}
	for i := range fwd {
		if !rocksEqual(bwd[len(bwd)-1-i], fwd[i]) {
			t.Fatalf("backward scan differs at %d: %v, forward %v", i, bwd[len(bwd)-1-i], fwd[i])
		}
		if i > 0 {
			c := cmp(fwd[i-1].key, fwd[i].key)
			if c > 0 || c == 0 && fwd[i-1].seq <= fwd[i].seq {
				t.Fatalf("Verify passed, but entry %d %v does not follow %v in internal key order", i, fwd[i], fwd[i-1])
			}
		}
	}
	rocksProbe(t, tb, fwd, cmp, true)
}

// rocksProbe seeks, looks up and merges over tb. With exact set, fwd is
// the table's whole forward scan (Verify passed) and every answer must
// agree with it; otherwise only errors are checked.
func rocksProbe(t *testing.T, tb *rocksdb.Table, fwd []rocksEntry, cmp func(a, b []byte) int, exact bool) {
	// The user keys, each with its versions' range in fwd.
	type userKey struct {
		key   []byte
		first int // fwd index of the newest version
		end   int // past the oldest
	}
	var users []userKey
	for i, e := range fwd {
		if len(users) > 0 && bytes.Equal(users[len(users)-1].key, e.key) {
			users[len(users)-1].end = i + 1
			continue
		}
		users = append(users, userKey{e.key, i, i + 1})
	}
	present := map[string]bool{}
	for _, u := range users {
		present[string(u.key)] = true
	}
	// Seek probes: every user key (about 64 of them in a bigger table),
	// and keys between and around them.
	stride := 1 + len(users)/64
	var probes [][]byte
	for i := 0; i < len(users); i += stride {
		k := users[i].key
		probes = append(probes, k, append(bytes.Clone(k), 0))
		if len(k) > 0 {
			probes = append(probes, k[:len(k)-1])
		}
	}
	probes = append(probes, []byte{}, []byte("\xff\xff\xff\xff"))
	// firstAtOrAbove returns the fwd index of the first entry whose user
	// key is at or above k in the table's order.
	firstAtOrAbove := func(k []byte) int {
		i, _ := slices.BinarySearchFunc(fwd, k, func(e rocksEntry, k []byte) int {
			if cmp(e.key, k) < 0 {
				return -1
			}
			return 1
		})
		return i
	}

	it := tb.NewIter(nil)
	defer it.Close()
	for _, k := range probes {
		ok := it.SeekGE(k)
		if !ok {
			if err := it.Err(); err != nil {
				rocksClassified(t, "SeekGE", err)
			}
		}
		if exact {
			i := firstAtOrAbove(k)
			if ok != (i < len(fwd)) || ok && !rocksEqual(rocksEntryAt(it), fwd[i]) {
				t.Fatalf("SeekGE(%q) = %v; the scan says entry %d of %d", k, ok, i, len(fwd))
			}
			if ok && i+1 < len(fwd) && (!it.Next() || !rocksEqual(rocksEntryAt(it), fwd[i+1])) {
				t.Fatalf("SeekGE(%q), Next: not the scan's entry %d", k, i+1)
			}
		}
		ok = it.SeekLT(k)
		if !ok {
			if err := it.Err(); err != nil {
				rocksClassified(t, "SeekLT", err)
			}
		}
		if exact {
			i := firstAtOrAbove(k) - 1
			if ok != (i >= 0) || ok && !rocksEqual(rocksEntryAt(it), fwd[i]) {
				t.Fatalf("SeekLT(%q) = %v; the scan says entry %d of %d", k, ok, i, len(fwd))
			}
			if ok && i > 0 && (!it.Prev() || !rocksEqual(rocksEntryAt(it), fwd[i-1])) {
				t.Fatalf("SeekLT(%q), Prev: not the scan's entry %d", k, i-1)
			}
		}
	}
	for ui, u := range users {
		// SeekGEAt at each version's sequence number, and between them,
		// for the probed keys.
		for i := u.first; ui%stride == 0 && i < u.end && i < u.first+4; i++ {
			for _, seq := range []uint64{fwd[i].seq, fwd[i].seq + 1} {
				if seq > rocksdb.MaxSequence {
					continue
				}
				ok := it.SeekGEAt(u.key, seq)
				if !ok && it.Err() != nil {
					rocksClassified(t, "SeekGEAt", it.Err())
				}
				if !exact {
					continue
				}
				want := u.first
				for want < u.end && fwd[want].seq > seq {
					want++
				}
				if ok != (want < len(fwd)) || ok && !rocksEqual(rocksEntryAt(it), fwd[want]) {
					t.Fatalf("SeekGEAt(%q, %d) = %v; the scan says entry %d of %d", u.key, seq, ok, want, len(fwd))
				}
			}
		}
		// Get of every key's newest version, of the one below each of
		// its first few, and of a key just after it.
		e, err := tb.Get(u.key, rocksdb.MaxSequence)
		checkRocksGet(t, u.key, e, err, fwd, u.first, u.end, exact)
		for i := u.first; i < u.end && i < u.first+3; i++ {
			if fwd[i].seq == 0 {
				break
			}
			e, err := tb.Get(u.key, fwd[i].seq-1)
			checkRocksGet(t, u.key, e, err, fwd, i+1, u.end, exact)
		}
		absent := append(bytes.Clone(u.key), 0)
		if present[string(absent)] {
			continue
		}
		e, err = tb.Get(absent, rocksdb.MaxSequence)
		checkRocksGet(t, absent, e, err, fwd, 0, 0, exact)
	}
	// A bounded scan between two of the keys.
	if len(users) >= 2 {
		lo, hi := users[len(users)/3].key, users[2*len(users)/3].key
		bit := tb.NewIter(&rocksdb.IterOptions{LowerBound: lo, UpperBound: hi})
		var got []rocksEntry
		for ok := bit.First(); ok && len(got) <= len(fwd); ok = bit.Next() {
			got = append(got, rocksEntryAt(bit))
		}
		if err := bit.Err(); err != nil {
			rocksClassified(t, "bounded scan", err)
		} else if exact {
			want := fwd[firstAtOrAbove(lo):firstAtOrAbove(hi)]
			if !slices.EqualFunc(got, want, rocksEqual) {
				t.Fatalf("scan of [%q, %q) gives %d entries, the whole scan %d there", lo, hi, len(got), len(want))
			}
		}
		bit.Close()
	}
	keys := make([][]byte, len(users))
	for i, u := range users {
		keys[i] = u.key
	}
	checkRocksLevel(t, tb, fwd, keys, exact)
}

// checkRocksGet checks Get's answer for key against fwd[first:end], the
// versions at or below the sequence number asked (none: not found).
func checkRocksGet(t *testing.T, key []byte, e rocksdb.Entry, err error, fwd []rocksEntry, first, end int, exact bool) {
	t.Helper()
	if err != nil && err != reader.ErrNotFound {
		rocksClassified(t, "Get", err)
	}
	if !exact {
		return
	}
	if first >= end {
		if err != reader.ErrNotFound {
			t.Fatalf("Get(%q) = %+v, %v; the scan has no such version", key, e, err)
		}
		return
	}
	w := fwd[first]
	if err != nil && !(errors.Is(err, rocksdb.ErrUnresolved) && (w.kind == rocksdb.KindMerge || w.kind == rocksdb.KindBlobIndex)) {
		t.Fatalf("Get(%q): %v; the scan has %v", key, err, w)
	}
	if !rocksEqual(rocksEntry{e.Key, e.Seq, e.Kind, e.Value}, w) {
		t.Fatalf("Get(%q) = %q#%d,%v=%q; the scan has %v", key, e.Key, e.Seq, e.Kind, e.Value, w)
	}
}

// rocksView is one key of what a table shows as a merge level: its value,
// or the error resolving it gives.
type rocksView struct {
	key, value []byte
	err        bool
}

// checkRocksLevel reads tb as the one level of a merge stack, both ways
// and by merge.Get. With exact set, the view must be RocksDB's reading
// of fwd and the range deletions: each user key's newest version, absent
// when a deletion or under a range deletion of larger sequence number,
// a wide-column entity as its default column, a value with a preferred
// sequence number without it, and a merge operand or blob index an
// error that stops the scan.
func checkRocksLevel(t *testing.T, tb *rocksdb.Table, fwd []rocksEntry, users [][]byte, exact bool) {
	l, err := tb.Level()
	if err != nil {
		rocksClassified(t, "Level", err)
		return
	}
	var want []rocksView
	if exact {
		rds, _ := tb.RangeDeletions()
		for i, e := range fwd {
			if i > 0 && bytes.Equal(fwd[i-1].key, e.key) {
				continue
			}
			if e.kind == rocksdb.KindDeletion || e.kind == rocksdb.KindSingleDeletion || e.kind == rocksdb.KindDeletionWithTimestamp {
				continue
			}
			covered := false
			for _, d := range rds {
				if bytes.Compare(d.Start, e.key) <= 0 && bytes.Compare(e.key, d.End) < 0 && d.Seq > e.seq {
					covered = true
				}
			}
			if covered {
				continue
			}
			v := rocksView{key: e.key}
			switch e.kind {
			case rocksdb.KindValue:
				v.value = e.value
			case rocksdb.KindWideColumnEntity:
				dv, blob, err := rocksdb.DefaultColumn(e.value)
				v.value, v.err = dv, err != nil || blob
			case rocksdb.KindValuePreferredSeqno:
				if len(e.value) < 8 {
					v.err = true
				} else {
					v.value = e.value[:len(e.value)-8]
				}
			default:
				v.err = true
			}
			want = append(want, v)
		}
	}
	levels := []merge.Level{l}
	opts := rocksdb.MergeOptions()
	mit := merge.NewIterator(levels, opts)
	defer mit.Close()
	// compare checks a scan's views against want taken in order, up to
	// the first that fails to resolve, where the scan must have stopped
	// with an error.
	compare := func(dir string, got []rocksView, scanErr error, want []rocksView) {
		if scanErr != nil {
			rocksClassified(t, "merge "+dir+" scan", scanErr)
		}
		if !exact {
			return
		}
		for i, g := range got {
			if i >= len(want) || want[i].err || !bytes.Equal(g.key, want[i].key) || !bytes.Equal(g.value, want[i].value) {
				t.Fatalf("merge %s scan: view %d is %q=%q; RocksDB's rules give %v", dir, i, g.key, g.value, want[min(i, len(want)-1):])
			}
		}
		switch {
		case len(got) < len(want) && !want[len(got)].err:
			t.Fatalf("merge %s scan stopped after %d of %d views (%v); the next is %q", dir, len(got), len(want), scanErr, want[len(got)].key)
		case len(got) < len(want) && scanErr == nil:
			t.Fatalf("merge %s scan ended without an error at %q, which cannot resolve", dir, want[len(got)].key)
		}
	}
	var got []rocksView
	for ok := mit.First(); ok && len(got) <= len(fwd); ok = mit.Next() {
		got = append(got, rocksView{key: bytes.Clone(mit.Key()), value: bytes.Clone(mit.Value())})
	}
	compare("forward", got, mit.Err(), want)
	// A new iterator: an error (an unresolvable key among them) stops
	// an iterator for good.
	bmit := merge.NewIterator(levels, opts)
	defer bmit.Close()
	got = got[:0]
	for ok := bmit.Last(); ok && len(got) <= len(fwd); ok = bmit.Prev() {
		got = append(got, rocksView{key: bytes.Clone(bmit.Key()), value: bytes.Clone(bmit.Value())})
	}
	rwant := slices.Clone(want)
	slices.Reverse(rwant)
	compare("backward", got, bmit.Err(), rwant)

	for i, k := range users {
		if i%(1+len(users)/64) != 0 {
			continue
		}
		v, err := merge.Get(levels, k, opts)
		if err != nil && err != reader.ErrNotFound {
			rocksClassified(t, "merge.Get", err)
		}
		if !exact {
			continue
		}
		j := slices.IndexFunc(want, func(w rocksView) bool { return bytes.Equal(w.key, k) })
		switch {
		case j < 0 && err != reader.ErrNotFound:
			t.Fatalf("merge.Get(%q) = %q, %v; the key is deleted", k, v, err)
		case j >= 0 && want[j].err && err == nil:
			t.Fatalf("merge.Get(%q) = %q; the key cannot resolve", k, v)
		case j >= 0 && !want[j].err && (err != nil || !bytes.Equal(v, want[j].value)):
			t.Fatalf("merge.Get(%q) = %q, %v; want %q", k, v, err, want[j].value)
		}
	}
}

// rocksBlock is one block a walk of a RocksDB table met: what it is and
// where.
type rocksBlock struct {
	what string
	h    format.BlockHandle
}

// rocksWalk is the layout walkRocksDB found.
type rocksWalk struct {
	data    []byte
	fix     bool
	version uint32
	sum     rocksblock.ChecksumType
	base    uint32 // the base context checksum, format_version 6 and up
	limit   uint64 // the footer's offset: blocks lie before it
	dict    *rocksblock.Dict
	blocks  []rocksBlock
}

// repairRocksDB returns a copy of data with the checksum of every block
// its layout leads to recomputed (and, from format_version 6, the
// footer's), so that damage gets past the checksums into the decoders.
func repairRocksDB(data []byte) []byte {
	return walkRocksDB(bytes.Clone(data), true).data
}

// walkRocksDB follows a RocksDB table's layout from its footer: the
// metaindex, the properties (for the index's encoding), the compression
// dictionary, the index (a two-level index's partitions too), the data
// blocks the index names, and every other meta block (a partitioned
// filter's partitions too). With fix set it rewrites each block's
// trailer checksum, in place, before reading the block. It is its own
// reading of RocksDB's table/format.cc and block_builder.cc, not the
// package's, so that a bug in one is not repeated in the other.
func walkRocksDB(data []byte, fix bool) *rocksWalk {
	w := &rocksWalk{data: data, fix: fix}
	n := len(data)
	if n < rocksdb.LegacyFooterLen {
		return w
	}
	var meta, index format.BlockHandle
	switch binary.LittleEndian.Uint64(data[n-8:]) {
	case rocksdb.LegacyMagic:
		w.limit, w.sum = uint64(n-rocksdb.LegacyFooterLen), rocksblock.CRC32c
		var ok bool
		if meta, index, ok = footerHandles(data[w.limit : w.limit+40]); !ok {
			return w
		}
	case rocksdb.Magic:
		if n < rocksdb.FooterLen {
			return w
		}
		w.limit = uint64(n - rocksdb.FooterLen)
		foot := data[w.limit:]
		w.sum, w.version = rocksblock.ChecksumType(foot[0]), binary.LittleEndian.Uint32(foot[41:])
		if w.sum > rocksblock.XXH3 {
			return w
		}
		if w.version < 6 {
			var ok bool
			if meta, index, ok = footerHandles(foot[1:41]); !ok {
				return w
			}
			break
		}
		w.base = binary.LittleEndian.Uint32(foot[9:])
		size := uint64(binary.LittleEndian.Uint32(foot[13:]))
		if size+rocksblock.TrailerLen > w.limit {
			return w
		}
		meta = format.BlockHandle{Offset: w.limit - rocksblock.TrailerLen - size, Length: size}
		if fix && w.sum != rocksblock.NoChecksum {
			var cp [rocksdb.FooterLen]byte
			copy(cp[:], foot)
			binary.LittleEndian.PutUint32(cp[5:], 0)
			if s, err := rocksblock.Checksum(w.sum, cp[:]); err == nil {
				binary.LittleEndian.PutUint32(foot[5:], s+rocksblock.ContextModifier(w.base, w.limit))
			}
		}
	default:
		return w
	}
	metas := map[string]format.BlockHandle{}
	var names []string
	eachRocksEntry(w.block("metaindex", meta, true), func(k, v []byte) {
		if h, m := codec.DecodeHandle(v); m > 0 {
			metas[string(k)] = h
			names = append(names, string(k))
		}
	})
	props := map[string][]byte{}
	if h, ok := metas["rocksdb.properties"]; ok {
		eachRocksEntry(w.block("properties", h, true), func(k, v []byte) { props[string(k)] = bytes.Clone(v) })
	}
	if h, ok := metas["rocksdb.compression_dict"]; ok {
		if d := w.block("compression dictionary", h, true); len(d) > 0 {
			w.dict = rocksblock.NewDict(d)
		}
	}
	delta, _ := binary.Uvarint(props["rocksdb.index.value.is.delta.encoded"])
	var indexType uint32
	if v := props["rocksdb.block.based.table.index.type"]; len(v) == 4 {
		indexType = binary.LittleEndian.Uint32(v)
	}
	if w.version >= 6 {
		index = metas["rocksdb.index"]
	}
	firstKey := indexType == 3
	for _, h := range rocksIndexHandles(w.block("index", index, true), delta != 0, firstKey) {
		if indexType == 2 {
			for _, dh := range rocksIndexHandles(w.block("index partition", h, true), delta != 0, false) {
				w.block("data", dh, false)
			}
		} else {
			w.block("data", h, false)
		}
	}
	for _, name := range names {
		if name == "rocksdb.properties" || name == "rocksdb.compression_dict" || name == "rocksdb.index" {
			continue
		}
		what := name
		if i := strings.IndexByte(name, '.'); i > 0 {
			what = name[:i] // "fullfilter", "partitionedfilter", "rocksdb"
		}
		contents := w.block(what, metas[name], true)
		if strings.HasPrefix(name, "partitionedfilter.") {
			for _, h := range rocksIndexHandles(contents, delta != 0, false) {
				w.block("filter partition", h, false)
			}
		}
	}
	return w
}

// footerHandles decodes the metaindex and index handles of a footer
// before format_version 6.
func footerHandles(b []byte) (meta, index format.BlockHandle, ok bool) {
	meta, n := codec.DecodeHandle(b)
	if n <= 0 {
		return meta, index, false
	}
	index, m := codec.DecodeHandle(b[n:])
	return meta, index, m > 0
}

// block fixes (with w.fix) the trailer of the block at h and, if decode,
// returns a copy of its contents, decompressed; nil when the block lies
// outside the file or does not decode.
func (w *rocksWalk) block(what string, h format.BlockHandle, decode bool) []byte {
	if h.Length > w.limit || h.Offset > w.limit-h.Length || w.limit-h.Length-h.Offset < rocksblock.TrailerLen {
		return nil
	}
	w.blocks = append(w.blocks, rocksBlock{what, h})
	end := h.Offset + h.Length
	stored, typ := w.data[h.Offset:end], w.data[end]
	if w.fix {
		if s, err := rocksblock.TrailerChecksum(w.sum, stored, typ); err == nil {
			binary.LittleEndian.PutUint32(w.data[end+1:], s+rocksblock.ContextModifier(w.base, h.Offset))
		}
	}
	if !decode {
		return nil
	}
	out, err := rocksblock.Decompress(what, int64(h.Offset), typ, w.version, stored, w.dict, 1<<20, nil)
	if err != nil {
		return nil
	}
	return bytes.Clone(out)
}

// eachRocksEntry calls fn with each entry of a block in LevelDB's entry
// layout (RocksDB's meta blocks), as far as it parses.
func eachRocksEntry(contents []byte, fn func(k, v []byte)) {
	var it codec.BlockIter
	if len(contents) < 8 || it.Init("", 0, contents) != nil {
		return
	}
	for ok := it.First(); ok; ok = it.Next() {
		fn(it.Key(), it.Value())
	}
}

// rocksIndexHandles returns the block handles of an index block's
// entries, as far as they parse: RocksDB's block entries (shared and
// non-shared key lengths, the value length unless values are
// delta-encoded, the key's bytes, the value), whose value is a handle
// (offset, size), or with delta encoding and a key sharing bytes with
// the one before, the size's zigzag difference from the previous
// handle's, the block following it; with firstKey, a length-prefixed key
// after the handle.
func rocksIndexHandles(contents []byte, delta, firstKey bool) []format.BlockHandle {
	n := len(contents)
	if n < 4 {
		return nil
	}
	restarts := uint64(binary.LittleEndian.Uint32(contents[n-4:]) &^ (1 << 31))
	if 4*restarts+4 > uint64(n) {
		return nil
	}
	end := n - 4 - int(4*restarts)
	var out []format.BlockHandle
	var prev format.BlockHandle
	uv := func(p *int, limit int) (uint64, bool) {
		v, m := binary.Uvarint(contents[*p:limit])
		if m <= 0 {
			return 0, false
		}
		*p += m
		return v, true
	}
	for p := 0; p < end; {
		shared, ok1 := uv(&p, end)
		unshared, ok2 := uv(&p, end)
		vlen, ok3 := uint64(end), true
		if !delta {
			vlen, ok3 = uv(&p, end)
		}
		if !ok1 || !ok2 || !ok3 || unshared > uint64(end-p) {
			return out
		}
		p += int(unshared)
		vend := end
		if !delta {
			if vlen > uint64(end-p) {
				return out
			}
			vend = p + int(vlen)
		}
		var h format.BlockHandle
		if delta && shared > 0 {
			u, ok := uv(&p, vend)
			if !ok || len(out) == 0 {
				return out
			}
			h = format.BlockHandle{Offset: prev.Offset + prev.Length + rocksblock.TrailerLen, Length: prev.Length + uint64(int64(u>>1)^-int64(u&1))}
		} else {
			o, ok1 := uv(&p, vend)
			s, ok2 := uv(&p, vend)
			if !ok1 || !ok2 {
				return out
			}
			h = format.BlockHandle{Offset: o, Length: s}
		}
		if firstKey {
			kl, ok := uv(&p, vend)
			if !ok || kl > uint64(vend-p) {
				return out
			}
			p += int(kl)
		}
		if !delta {
			p = vend
		}
		out, prev = append(out, h), h
	}
	return out
}

// TestRepairRocksDB checks repairRocksDB on the seed tables: it changes
// nothing in an undamaged table (so it computes RocksDB's checksums, with
// format_version 6's context, at the places RocksDB wrote them), its walk
// reaches every data block the table's index lists, and a byte changed
// in the middle of any block it walks but those of block handles (the
// metaindex, the index and its partitions, a partitioned filter's index)
// gets past the checksums: whatever error follows is not a block
// trailer's checksum mismatch. (A changed handle leads the walk to other
// places, where it may rewrite bytes of a block it already fixed.)
// It also accepts the one change RocksDB's own tables need: a checksum
// for the properties block of an ingested table whose global sequence
// number RocksDB wrote in place.
func TestRepairRocksDB(t *testing.T) {
	tables := rocksSeedTables(t)
	if len(tables) == 0 {
		t.Skip("no RocksDB tables under ../rocksdb/testdata/golden or ../internal/rocksblock/testdata/golden")
	}
	// Blocks whose entries are block handles: changed, they lead the
	// walk elsewhere.
	handleBlocks := map[string]bool{"metaindex": true, "index": true, "index partition": true, "partitionedfilter": true}
	var mutated, passed int
	for i, data := range tables {
		tb, err := rocksdb.NewTable(bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatalf("table %d: %v", i, err)
		}
		info := tb.Info()
		tb.Close()
		w := walkRocksDB(bytes.Clone(data), false)
		if got := repairRocksDB(data); !bytes.Equal(got, data) {
			// RocksDB's ingestion writes a global sequence number into
			// the properties block without a new checksum: repair gives
			// it one, and changes nothing else.
			var props format.BlockHandle
			for _, b := range w.blocks {
				if b.what == "properties" {
					props = b.h
				}
			}
			at := int(props.Offset + props.Length + 1)
			if info.GlobalSeqno == 0 || !bytes.Equal(got[:at], data[:at]) || !bytes.Equal(got[at+4:], data[at+4:]) {
				t.Fatalf("table %d: repair changed an undamaged table", i)
			}
		}
		var dataBlocks int
		for _, b := range w.blocks {
			if b.what == "data" {
				dataBlocks++
			}
		}
		if dataBlocks != info.DataBlocks {
			t.Fatalf("table %d: the walk met %d data blocks; the index lists %d", i, dataBlocks, info.DataBlocks)
		}
		for _, b := range w.blocks {
			if b.h.Length == 0 {
				continue
			}
			m := bytes.Clone(data)
			m[b.h.Offset+b.h.Length/2] ^= 0x41
			m = repairRocksDB(m)
			mutated++
			tb, err := rocksdb.NewTable(bytes.NewReader(m), int64(len(m)), nil)
			if err == nil {
				_, err = tb.Verify()
				tb.Close()
			}
			if err != nil && strings.Contains(err.Error(), "checksum mismatch: trailer") && !handleBlocks[b.what] {
				t.Errorf("table %d: a byte changed in the %s block at %d, repaired: %v", i, b.what, b.h.Offset, err)
			}
			if err == nil {
				passed++
			}
		}
	}
	t.Logf("%d tables; %d repaired mutations, %d of them pass Verify", len(tables), mutated, passed)
}
