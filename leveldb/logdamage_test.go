package leveldb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/ldbtest"
	"github.com/sstkit/sstable/leveldb"
)

// damageLog is a database's write-ahead log as written: its bytes, and
// each physical record's offset.
type damageLog struct {
	data     []byte
	physical []int
}

// writeDamageDB writes a database of one level 1 table (t00..t19) and a
// log 000002.log of batches (puts, overwrites and deletions of a few
// keys, some values long enough to be cut into fragments over 32 KiB
// blocks) from seed, and returns the log.
func writeDamageDB(t testing.TB, dir string, seed uint64, batches int) damageLog {
	t.Helper()
	var es []ldbtest.Entry
	for i := range 20 {
		es = append(es, ldbtest.Entry{Key: []byte(fmt.Sprintf("t%02d", i)), Seq: uint64(100 + i), Kind: 1, Value: []byte(fmt.Sprintf("table%d", i))})
	}
	if err := ldbtest.WriteDB(dir, []ldbtest.TableFile{{Level: 1, Number: 5, Entries: es}}, nil, 1000, ldbtest.Options{}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 9))
	var l ldbtest.Log
	seq := uint64(1001)
	for range batches {
		var ops []ldbtest.Entry
		for range 1 + rng.IntN(4) {
			e := ldbtest.Entry{Key: []byte(fmt.Sprintf("%c%d", "kt"[rng.IntN(2)], rng.IntN(12))), Kind: 1}
			if e.Key[0] == 't' {
				e.Key = append(e.Key, '0')
			}
			switch r := rng.IntN(10); {
			case r < 2:
				e.Kind = 0
			case r < 3:
				e.Value = bytes.Repeat([]byte{byte('A' + rng.IntN(26))}, 20000+rng.IntN(30000))
			default:
				e.Value = []byte(fmt.Sprintf("v%d-%d", seq, rng.IntN(1000)))
			}
			ops = append(ops, e)
		}
		l.Add(ldbtest.Batch(seq, ops))
		seq += uint64(len(ops))
	}
	if err := os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return damageLog{data: l.Buf, physical: physicalRecords(l.Buf)}
}

// physicalRecords returns the offsets of a well-formed log's physical
// records.
func physicalRecords(data []byte) []int {
	var offs []int
	for off := 0; off+7 <= len(data); {
		if left := 32<<10 - off%(32<<10); left < 7 {
			off += left
			continue
		}
		offs = append(offs, off)
		off += 7 + int(binary.LittleEndian.Uint16(data[off+4:]))
	}
	return offs
}

// rechecksum recomputes the masked CRC-32C of the physical record at off.
func rechecksum(data []byte, off int) {
	n := int(binary.LittleEndian.Uint16(data[off+4:]))
	tab := crc32.MakeTable(crc32.Castagnoli)
	crc := crc32.Update(crc32.Checksum(data[off+6:off+7], tab), tab, data[off+7:off+7+n])
	binary.LittleEndian.PutUint32(data[off:], codec.MaskCRC(crc))
}

// openView opens dir, with or without SkipLogDamage, and returns its
// view and what it skipped.
func openView(dir string, skip bool) (lines []string, damage int, err error) {
	db, err := leveldb.OpenDB(dir, &leveldb.Options{SkipLogDamage: skip})
	if err != nil {
		return nil, 0, err
	}
	defer db.Close()
	damage, errs := db.LogDamage()
	for _, e := range errs {
		if !errors.Is(e, format.ErrCorrupt) || !strings.Contains(e.Error(), "000002.log") {
			return nil, 0, fmt.Errorf("skipped damage %v: not a corruption naming the log", e)
		}
	}
	lines, err = ourView(db, false)
	return lines, damage, err
}

// TestLogDamagePolicies reads a log whose second batch's record is
// damaged (a byte of its payload) under both policies: by default
// OpenDB fails with an error wrapping format.ErrCorrupt naming the log
// and offset; with SkipLogDamage, as LevelDB 1.23 with paranoid_checks
// off, the record and the rest of its 32 KiB block are dropped (the
// third batch, and the first fragment of the fourth, whose last
// fragment in the next block is dropped too), and the fifth batch reads.
func TestLogDamagePolicies(t *testing.T) {
	dir := t.TempDir()
	if err := ldbtest.WriteDB(dir, []ldbtest.TableFile{{Level: 1, Number: 5, Entries: []ldbtest.Entry{
		{Key: []byte("t1"), Seq: 5, Kind: 1, Value: []byte("table")},
		{Key: []byte("t2"), Seq: 4, Kind: 1, Value: []byte("table")},
	}}}, nil, 1000, ldbtest.Options{}); err != nil {
		t.Fatal(err)
	}
	var l ldbtest.Log
	batches := [][]ldbtest.Entry{
		{{Key: []byte("a"), Kind: 1, Value: []byte("1")}, {Key: []byte("t1"), Kind: 0}},
		{{Key: []byte("b"), Kind: 1, Value: []byte("2")}, {Key: []byte("t2"), Kind: 1, Value: []byte("x")}},
		{{Key: []byte("c"), Kind: 1, Value: []byte("3")}},
		{{Key: []byte("d"), Kind: 1, Value: bytes.Repeat([]byte("d"), 40000)}},
		{{Key: []byte("e"), Kind: 1, Value: []byte("5")}},
	}
	seq, damaged := uint64(1001), 0
	for i, b := range batches {
		if i == 1 {
			damaged = len(l.Buf)
		}
		l.Add(ldbtest.Batch(seq, b))
		seq += uint64(len(b))
	}
	l.Buf[damaged+7+14] ^= 0x20 // in the key "b"
	if err := os.WriteFile(filepath.Join(dir, "000002.log"), l.Buf, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := openView(dir, false)
	var ce *format.CorruptError
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, "000002.log") || ce.Offset != int64(damaged) {
		t.Errorf("strict: %v; want a corruption in 000002.log at offset %d", err, damaged)
	}
	got, n, err := openView(dir, true)
	want := []string{kvLine([]byte("a"), []byte("1")), kvLine([]byte("e"), []byte("5")), kvLine([]byte("t2"), []byte("table"))}
	if err != nil || diffLines(got, want) != "" || n == 0 {
		t.Errorf("SkipLogDamage: %q, %d skipped, %v; want %q and the damage reported", got, n, err, want)
	}
	// An undamaged log reads the same under both policies, nothing
	// skipped.
	dir2 := t.TempDir()
	writeDamageDB(t, dir2, 1, 30)
	strict, n1, err1 := openView(dir2, false)
	skip, n2, err2 := openView(dir2, true)
	if err1 != nil || err2 != nil || n1+n2 != 0 || diffLines(skip, strict) != "" {
		t.Errorf("undamaged log: %v, %v, %d and %d skipped, %s", err1, err2, n1, n2, diffLines(skip, strict))
	}
}

// TestLogDamageAgainstLevelDB damages a database's log (bit flips
// anywhere, in record headers, zeroed stretches, record types changed
// with their checksums fixed, the log cut short) and compares the view
// OpenDB gives with SkipLogDamage with the view LevelDB 1.23 gives the
// same bytes, opened with its default options (paranoid_checks off):
// the same keys and values, line for line. The strict policy must fail
// with a corruption, or read the same view where it reads one.
func TestLogDamageAgainstLevelDB(t *testing.T) {
	o := newOracle(t)
	dir := t.TempDir()
	log := writeDamageDB(t, dir, 7, 40)
	orig, _, err := openView(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if want, err := o.dump(t, dir); err != nil || diffLines(orig, want) != "" {
		t.Fatalf("undamaged: LevelDB: %v, %s", err, diffLines(orig, want))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	cases, skipped, strictRead := 0, 0, 0
	n := 60
	if testing.Short() {
		n = 15
	}
	work := t.TempDir()
	for i := range n {
		data := bytes.Clone(log.data)
		rec := log.physical[rng.IntN(len(log.physical))]
		var what string
		switch i % 5 {
		case 0:
			p := rng.IntN(len(data))
			data[p] ^= 1 << rng.IntN(8)
			what = fmt.Sprintf("bit flip at %d", p)
		case 1:
			p := rec + rng.IntN(7)
			data[p] ^= 1 << rng.IntN(8)
			what = fmt.Sprintf("bit flip at %d, in the header at %d", p, rec)
		case 2:
			end := min(len(data), rec+7+rng.IntN(200))
			clear(data[rec:end])
			what = fmt.Sprintf("zeroed [%d, %d)", rec, end)
		case 3:
			// Another type, the checksum fixed: an unknown type, or a
			// fragment out of order, or a fragment made whole (a batch
			// cut short, whose records before the cut LevelDB applies).
			typ := []byte{0, 1, 2, 3, 4, 5, 9}[rng.IntN(7)]
			data[rec+6] = typ
			rechecksum(data, rec)
			what = fmt.Sprintf("record at %d given type %d", rec, typ)
		case 4:
			cut := rng.IntN(len(data))
			data = data[:cut]
			what = fmt.Sprintf("cut to %d bytes", cut)
		}
		d := filepath.Join(work, fmt.Sprint(i))
		copyDir(t, dir, d, true)
		target := filepath.Join(d, "000002.log")
		os.Remove(target) // a hard link: replace, not write through
		if err := os.WriteFile(target, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cases++
		got, dropped, err := openView(d, true)
		if err != nil {
			t.Errorf("%s: SkipLogDamage: %v", what, err)
			continue
		}
		if dropped > 0 {
			skipped++
		}
		want, err := o.dump(t, d)
		if err != nil {
			t.Errorf("%s: LevelDB cannot open the database: %v", what, err)
			continue
		}
		if dd := diffLines(got, want); dd != "" {
			t.Errorf("%s: our view with SkipLogDamage differs from LevelDB's: %s", what, dd)
		}
		strict, _, err := openView(d, false)
		switch {
		case err == nil:
			strictRead++
			if dd := diffLines(strict, got); dd != "" {
				t.Errorf("%s: the strict view differs from the skipping one: %s", what, dd)
			}
		case !errors.Is(err, format.ErrCorrupt):
			t.Errorf("%s: strict: %v, not a corruption", what, err)
		}
		os.RemoveAll(d)
	}
	if skipped == 0 {
		t.Errorf("no case skipped damage")
	}
	t.Logf("%d damaged logs of %d bytes: %d with damage skipped, all as LevelDB reads them; the strict policy read %d (no damage found), refused the rest", cases, len(log.data), skipped, strictRead)
}
