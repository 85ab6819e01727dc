package lsmdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// readAll reads r to its end or its first error.
func readAll(r *LogReader) (recs [][]byte, offs []int64, err error) {
	for {
		rec, off, ok, err := r.Next()
		if err != nil || !ok {
			return recs, offs, err
		}
		recs = append(recs, append([]byte(nil), rec...))
		offs = append(offs, off)
	}
}

// testRecords returns records of sizes around the block and header
// lengths, and one over three blocks, filled with distinct bytes.
func testRecords(seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	sizes := []int{0, 1, 100, logBlockSize - 2*recyclableHeaderLen, logBlockSize - recyclableHeaderLen, logBlockSize, 3*logBlockSize + 17, 5, logBlockSize - 5, 2000}
	var recs [][]byte
	for _, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		recs = append(recs, b)
	}
	return recs
}

func writeTestLog(number uint32, recycle bool, recs [][]byte) *testLog {
	w := &testLog{number: number, recycle: recycle}
	for _, rec := range recs {
		w.add(rec)
	}
	return w
}

func checkRecords(t *testing.T, what string, got [][]byte, gotOffs []int64, want [][]byte, w *testLog) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) || gotOffs[i] != int64(w.starts[i]) {
			t.Fatalf("%s: record %d: %d bytes at %d, want %d bytes at %d", what, i, len(got[i]), gotOffs[i], len(want[i]), w.starts[i])
		}
	}
}

// Every mode reads what RocksDB's writer writes, whole records cut into
// fragments included; LevelDB's mode refuses recyclable records.
func TestLogRecyclableRecords(t *testing.T) {
	recs := testRecords(1)
	for _, recycle := range []bool{false, true} {
		w := writeTestLog(7, recycle, recs)
		for _, mode := range []LogMode{LevelDBLog, RocksDBManifest, RocksDBWAL} {
			what := fmt.Sprintf("recycle=%v mode=%d", recycle, mode)
			r := &LogReader{Data: w.data, Number: 7, Mode: mode}
			got, offs, err := readAll(r)
			if recycle && mode == LevelDBLog {
				if !errors.Is(err, format.ErrCorrupt) || len(got) != 0 {
					t.Errorf("%s: %d records, error %v; want none and a corruption (LevelDB has no type 5)", what, len(got), err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkRecords(t, what, got, offs, recs, w)
			if r.Stale() {
				t.Errorf("%s: Stale after a log read to its end", what)
			}
		}
		// Another log number: every recyclable record is another life's.
		r := &LogReader{Data: w.data, Number: 8, Mode: RocksDBWAL}
		if got, _, err := readAll(r); recycle && (len(got) != 0 || err != nil || !r.Stale()) {
			t.Errorf("log 7 read as log 8: %d records, error %v, stale %v; want none, no error, stale", len(got), err, r.Stale())
		}
	}
}

// A recycled log: this life's records written over an older, longer
// log's. Its first stale record ends the log.
func TestLogStaleRecords(t *testing.T) {
	old := testRecords(2)
	for _, tc := range []struct {
		name string
		live [][]byte // this life's records
		want string   // "stale", "corrupt", "torn"
	}{
		{"empty", nil, "stale"},
		// The same lengths as the old records: this life ends where an
		// old record begins.
		{"aligned", [][]byte{bytes.Repeat([]byte{'a'}, len(old[0])), bytes.Repeat([]byte{'b'}, len(old[1])), bytes.Repeat([]byte{'c'}, len(old[2]))}, "stale"},
		{"aligned-over-blocks", func() [][]byte {
			var live [][]byte
			for _, rec := range old[:7] {
				live = append(live, bytes.Repeat([]byte{'x'}, len(rec)))
			}
			return live
		}(), "stale"},
		// This life ends inside an old record: its bytes are no record.
		{"unaligned", [][]byte{make([]byte, 50)}, "corrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wOld := writeTestLog(3, true, old)
			wNew := writeTestLog(9, true, tc.live)
			data := append([]byte(nil), wOld.data...)
			copy(data, wNew.data)
			r := &LogReader{Data: data, Number: 9, Mode: RocksDBWAL}
			got, offs, err := readAll(r)
			checkRecords(t, "WAL", got, offs, tc.live, wNew)
			switch tc.want {
			case "stale":
				if err != nil || !r.Stale() {
					t.Errorf("error %v, stale %v; want no error, stale", err, r.Stale())
				}
			case "corrupt":
				if !errors.Is(err, format.ErrCorrupt) || errors.Is(err, ErrTornTail) || r.Stale() {
					t.Errorf("error %v, stale %v; want a corruption, not torn", err, r.Stale())
				}
			}
			// The MANIFEST's mode, kTolerateCorruptedTailRecords, ends a
			// recycled log silently at bad bytes too.
			m := &LogReader{Data: data, Number: 9, Mode: RocksDBManifest}
			got, offs, err = readAll(m)
			checkRecords(t, "MANIFEST", got, offs, tc.live, wNew)
			if err != nil {
				t.Errorf("MANIFEST mode: %v", err)
			}
		})
	}
	// A stale record inside this life's fragmented record: the write of
	// its next fragment was torn.
	wOld := writeTestLog(3, true, [][]byte{make([]byte, 10), make([]byte, 3*logBlockSize)})
	wNew := &testLog{number: 9, recycle: true}
	wNew.add(make([]byte, 10))
	wNew.physical(recordRecyclableFirst, make([]byte, logBlockSize-wNew.headerLen()-len(wNew.data)))
	data := append([]byte(nil), wOld.data...)
	copy(data, wNew.data)
	r := &LogReader{Data: data, Number: 9, Mode: RocksDBWAL}
	if got, _, err := readAll(r); len(got) != 1 || !errors.Is(err, ErrTornTail) || !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("stale record after a first fragment: %d records, error %v; want 1 and a torn tail", len(got), err)
	}
}

// A log cut at every offset reads the records wholly before the cut. A
// cut anywhere but a record's end (or the end of a block whose rest is
// padding after one) is a torn tail: silent for LevelDB and RocksDB's
// MANIFEST, an error wrapping ErrTornTail for RocksDB's WAL.
func TestLogTornTail(t *testing.T) {
	recs := testRecords(3)[:8]
	for _, recycle := range []bool{false, true} {
		w := writeTestLog(5, recycle, recs)
		clean := map[int]bool{0: true}
		for _, e := range w.ends {
			clean[e] = true
			if left := logBlockSize - e%logBlockSize; left < w.headerLen() {
				clean[e+left] = true // the padding, then nothing
			}
		}
		// Every offset near a record's or block's edge, and a sample of
		// the rest.
		cuts := map[int]bool{}
		near := func(x int) {
			for c := max(0, x-2*recyclableHeaderLen); c <= min(len(w.data), x+2*recyclableHeaderLen); c++ {
				cuts[c] = true
			}
		}
		for i := range w.starts {
			near(w.starts[i])
			near(w.ends[i])
		}
		for b := 0; b <= len(w.data); b += logBlockSize {
			near(b)
		}
		for c := 0; c <= len(w.data); c += 211 {
			cuts[c] = true
		}
		near(len(w.data))
		for cut := range cuts {
			n := 0
			for n < len(w.ends) && w.ends[n] <= cut {
				n++
			}
			for _, mode := range []LogMode{LevelDBLog, RocksDBManifest, RocksDBWAL} {
				if recycle && mode == LevelDBLog {
					continue
				}
				r := &LogReader{Data: w.data[:cut], Number: 5, Mode: mode}
				got, offs, err := readAll(r)
				what := fmt.Sprintf("recycle=%v mode=%d cut=%d", recycle, mode, cut)
				checkRecords(t, what, got, offs, recs[:n], w)
				wantTorn := mode == RocksDBWAL && !clean[cut]
				if wantTorn != (err != nil) || err != nil && (!errors.Is(err, ErrTornTail) || !errors.Is(err, format.ErrCorrupt)) {
					t.Fatalf("%s: error %v, want torn=%v", what, err, wantTorn)
				}
			}
		}
	}
}

// Damage within the log is an error in every RocksDB mode, the records
// before it read; it is not a torn tail.
func TestLogRocksCorruption(t *testing.T) {
	recs := testRecords(4)[:6]
	w := writeTestLog(5, true, recs)
	for _, tc := range []struct {
		name  string
		at    int // offset of the damaged byte
		n     int // records read before it
		xor   byte
		torn  bool
		clean bool // ends the log without an error
	}{
		{"payload", w.starts[2] + recyclableHeaderLen + 3, 2, 1, false, false},
		{"crc", w.starts[1], 1, 0x40, false, false},
		{"length", w.starts[2] + 4, 2, 0x10, false, false},
		// Type 5 to 2 (a non-recyclable first fragment) and the checksum
		// no longer matches.
		{"type", w.starts[3] + 6, 3, 5 ^ 2, false, false},
		// The log number: a record of another life ends the log there.
		{"number", w.starts[4] + 7, 4, 1, false, true},
	} {
		for _, mode := range []LogMode{RocksDBManifest, RocksDBWAL} {
			data := append([]byte(nil), w.data...)
			data[tc.at] ^= tc.xor
			r := &LogReader{Data: data, Number: 5, Mode: mode}
			got, offs, err := readAll(r)
			what := fmt.Sprintf("%s mode=%d", tc.name, mode)
			checkRecords(t, what, got, offs, recs[:tc.n], w)
			if tc.clean {
				if err != nil || !r.Stale() {
					t.Errorf("%s: error %v, stale %v; want a stale end", what, err, r.Stale())
				}
				continue
			}
			// RocksDB's MANIFEST mode lets a recycled log end at damage
			// (kTolerateCorruptedTailRecords); not the WAL's.
			if mode == RocksDBManifest {
				if err != nil {
					t.Errorf("%s: %v, want a silent end in a recycled log", what, err)
				}
				continue
			}
			if !errors.Is(err, format.ErrCorrupt) || errors.Is(err, ErrTornTail) {
				t.Errorf("%s: error %v, want a corruption, not torn", what, err)
			}
			if _, _, ok, err2 := r.Next(); ok || err2 != err {
				t.Errorf("%s: Next after an error gave ok=%v, %v; want the same error", what, ok, err2)
			}
		}
	}
	// Not recycled: the MANIFEST's mode reports the damage too.
	w = writeTestLog(5, false, recs)
	data := append([]byte(nil), w.data...)
	data[w.starts[2]+logHeaderSize] ^= 1
	for _, mode := range []LogMode{LevelDBLog, RocksDBManifest, RocksDBWAL} {
		got, _, err := readAll(&LogReader{Data: data, Mode: mode})
		if len(got) != 2 || !errors.Is(err, format.ErrCorrupt) || errors.Is(err, ErrTornTail) {
			t.Errorf("mode %d: %d records, error %v; want 2 and a corruption", mode, len(got), err)
		}
	}
}

// RocksDB's reader skips a block's rest at a zero type and length
// whatever the checksum bytes hold, and reads on in the next block;
// LevelDB's mode here wants the whole header zero.
func TestLogZeroType(t *testing.T) {
	w := &testLog{number: 5}
	w.add([]byte("first"))
	zeroAt := len(w.data)
	w.data = append(w.data, 1, 2, 3, 4, 0, 0, 0) // checksum bytes, length 0, type 0
	w.physical(recordFull, []byte("lost with the block's rest"))
	w.data = append(w.data, make([]byte, logBlockSize-len(w.data))...)
	w.physical(recordFull, []byte("next block"))
	for _, mode := range []LogMode{RocksDBManifest, RocksDBWAL} {
		got, _, err := readAll(&LogReader{Data: w.data, Mode: mode})
		if err != nil || len(got) != 2 || string(got[0]) != "first" || string(got[1]) != "next block" {
			t.Errorf("mode %d: %q, %v; want first and next block", mode, got, err)
		}
	}
	if _, _, err := readAll(&LogReader{Data: w.data}); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("LevelDB mode: %v, want the nonzero checksum of a zero-type header refused at %d", err, zeroAt)
	}
	// Inside a fragmented record, zeroed space is an error.
	w = &testLog{number: 5}
	w.physical(recordFirst, []byte("half"))
	w.data = append(w.data, 0, 0, 0, 0, 0, 0, 0)
	if _, _, err := readAll(&LogReader{Data: w.data, Mode: RocksDBWAL}); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("zeroed space in a record: %v, want a corruption", err)
	}
}

// Record types RocksDB added: compression and timestamp sizes are
// refused as unsupported, the predecessor WAL record and unknown types
// with the safe-to-ignore bit are skipped, other unknown types are
// corruption. An empty first fragment before a whole record (a bug of old
// RocksDB writers) is no error for RocksDB, one for LevelDB's mode.
func TestLogRocksRecordTypes(t *testing.T) {
	for _, tc := range []struct {
		typ  byte
		want string // "unsupported", "skip", "corrupt"
	}{
		{recordSetCompression, "unsupported"}, {recordTimestampSize, "unsupported"}, {recordRecyclableTSSize, "unsupported"},
		{recordPredecessorWAL, "skip"}, {recordRecyclablePredWAL, "skip"}, {0x85, "skip"}, {0xff, "skip"},
		{12, "corrupt"}, {0x7f, "corrupt"},
	} {
		w := &testLog{number: 5}
		w.physical(tc.typ, []byte("payload"))
		w.add([]byte("after"))
		got, _, err := readAll(&LogReader{Data: w.data, Number: 5, Mode: RocksDBWAL})
		switch tc.want {
		case "unsupported":
			if !errors.Is(err, ErrUnsupportedLog) || len(got) != 0 {
				t.Errorf("type %d: %q, %v; want unsupported", tc.typ, got, err)
			}
		case "skip":
			if err != nil || len(got) != 1 || string(got[0]) != "after" {
				t.Errorf("type %d: %q, %v; want it skipped", tc.typ, got, err)
			}
		case "corrupt":
			if !errors.Is(err, format.ErrCorrupt) || len(got) != 0 {
				t.Errorf("type %d: %q, %v; want a corruption", tc.typ, got, err)
			}
		}
	}
	w := &testLog{number: 5}
	w.physical(recordFirst, nil)
	w.add([]byte("whole"))
	if got, _, err := readAll(&LogReader{Data: w.data, Mode: RocksDBWAL}); err != nil || len(got) != 1 || string(got[0]) != "whole" {
		t.Errorf("empty first fragment, RocksDB: %q, %v; want the whole record", got, err)
	}
	if _, _, err := readAll(&LogReader{Data: w.data}); !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("empty first fragment, LevelDB: %v, want a corruption", err)
	}
	// A recyclable record after a log's non-recyclable first record.
	w = &testLog{number: 5}
	w.add([]byte("plain"))
	w.recycle = true
	w.add([]byte("recyclable"))
	if got, _, err := readAll(&LogReader{Data: w.data, Number: 5, Mode: RocksDBWAL}); len(got) != 1 || !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("recyclable after plain: %q, %v; want one record and a corruption", got, err)
	}
}

// A record fragmented across blocks whose file ends before its last
// fragment (a write torn by a crash) is dropped whole, as LevelDB 1.23's
// reader drops it (kEof in a fragmented record): the records before it
// read, no error in LevelDB's modes (strict or skipping damage) nor in
// RocksDB's MANIFEST mode, a torn tail in RocksDB's WAL mode. The cuts:
// at the first fragment's end (its block's), inside the next header,
// inside a middle fragment, at its end, inside the last fragment, a byte
// short of the end; the first fragment begins mid-block, or at a block's
// start after the padding of the block before.
func TestLogTornFragmentedRecord(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before int // bytes of the whole record before the fragmented one
	}{
		{"first fragment mid-block", 100},
		{"first fragment after padding", logBlockSize - logHeaderSize - 3},
	} {
		w := &testLog{}
		w.add(bytes.Repeat([]byte{'a'}, tc.before))
		big := make([]byte, 2*logBlockSize+500)
		for i := range big {
			big[i] = byte(i * 7)
		}
		start := w.add(big)
		end := len(w.data)
		b1 := start - start%logBlockSize + logBlockSize // the first fragment's end
		b2 := b1 + logBlockSize                         // the middle fragment's
		if end <= b2 {
			t.Fatalf("%s: the record [%d, %d) has no last fragment after %d", tc.name, start, end, b2)
		}
		for _, cut := range []int{b1, b1 + 3, b1 + logHeaderSize, b1 + 1000, b2, b2 + 5, b2 + logHeaderSize + 10, end - 1} {
			for _, mode := range []LogMode{LevelDBLog, RocksDBManifest, RocksDBWAL} {
				for _, skip := range []bool{false, true} {
					if skip && mode != LevelDBLog {
						continue
					}
					what := fmt.Sprintf("%s: cut at %d, mode %d, skip %v", tc.name, cut, mode, skip)
					r := &LogReader{Data: w.data[:cut], Mode: mode}
					var dropped []error
					if skip {
						r.Dropped = func(err error) { dropped = append(dropped, err) }
					}
					got, offs, err := readAll(r)
					checkRecords(t, what, got, offs, [][]byte{w.data[logHeaderSize : logHeaderSize+tc.before]}, &testLog{starts: []int{0}})
					if mode == RocksDBWAL {
						if !errors.Is(err, ErrTornTail) {
							t.Errorf("%s: %v, want a torn tail", what, err)
						}
					} else if err != nil || len(dropped) > 0 {
						t.Errorf("%s: error %v, dropped %v; want a silent end", what, err, dropped)
					}
				}
			}
		}
	}
}

// With Dropped set, LevelDB's mode skips damage as LevelDB 1.23's
// log::Reader does (db/log_reader.cc) for a database opened with
// paranoid_checks off: each case's records are those LevelDB's
// ReadRecord returns, and damage it reports is reported. Without
// Dropped, the same damage is an error, after the records before it.
func TestLogDropped(t *testing.T) {
	pad := func(w *testLog) { // to the next block
		w.data = append(w.data, make([]byte, logBlockSize-len(w.data)%logBlockSize)...)
	}
	big := bytes.Repeat([]byte("fragmented "), 4000) // 44,000 bytes: first and last fragments
	// plain appends a physical record with a 7-byte header whatever its
	// type (testLog.physical gives types 5 to 8 RocksDB's 11 bytes).
	plain := func(w *testLog, typ byte, payload []byte) {
		h := []byte{0, 0, 0, 0, byte(len(payload)), byte(len(payload) >> 8), typ}
		crc := crc32.Update(crc32.Checksum(h[6:], castagnoli), castagnoli, payload)
		binary.LittleEndian.PutUint32(h, codec.MaskCRC(crc))
		w.data = append(append(w.data, h...), payload...)
	}
	for _, tc := range []struct {
		name    string
		build   func(w *testLog)
		want    []string // what the skipping reader returns
		dropped bool     // whether it reports damage
		strict  int      // records the strict reader returns before its error; -1: no error
	}{
		{"checksum mismatch drops the block's rest", func(w *testLog) {
			w.add([]byte("one"))
			at := len(w.data)
			w.add([]byte("two"))
			w.add([]byte("three"))
			w.data[at+logHeaderSize] ^= 1
			pad(w)
			w.add([]byte("four"))
		}, []string{"one", "four"}, true, 1},
		{"damaged length drops the block's rest", func(w *testLog) {
			w.add([]byte("one"))
			at := len(w.data)
			w.add([]byte("two"))
			w.add([]byte("three"))
			w.data[at+5] = 0x90 // 36,866 bytes: past the block
			pad(w)
			w.add([]byte("four"))
		}, []string{"one", "four"}, true, 1},
		{"damaged length in the last partial block ends the log", func(w *testLog) {
			w.add([]byte("one"))
			at := len(w.data)
			w.add([]byte("two"))
			w.data[at+5] = 0x90
		}, []string{"one"}, false, 1},
		{"damage in a first fragment drops the record and its last fragment", func(w *testLog) {
			w.add([]byte("one"))
			at := len(w.data)
			w.add(big)
			w.add([]byte("after"))
			w.data[at+logHeaderSize+10] ^= 1
		}, []string{"one", "after"}, true, 1},
		{"damage in a last fragment drops the record", func(w *testLog) {
			w.add([]byte("one"))
			w.add(big)
			w.data[logBlockSize+logHeaderSize+10] ^= 1
			pad(w)
			w.add([]byte("next block"))
		}, []string{"one", "next block"}, true, 1},
		{"zero type and length skip the block's rest, whatever the checksum", func(w *testLog) {
			w.add([]byte("one"))
			w.data = append(w.data, 9, 9, 9, 9, 0, 0, 0)
			w.add([]byte("lost"))
			pad(w)
			w.add([]byte("two"))
		}, []string{"one", "two"}, false, 1},
		{"zeroed space inside a fragmented record", func(w *testLog) {
			w.add([]byte("one"))
			w.physical(recordFirst, []byte("half"))
			w.data = append(w.data, make([]byte, 7)...)
			pad(w)
			w.physical(recordLast, []byte("rest"))
			w.add([]byte("two"))
		}, []string{"one", "two"}, true, 1},
		{"unknown type", func(w *testLog) {
			w.add([]byte("one"))
			w.physical(9, []byte("nine"))
			w.add([]byte("two"))
		}, []string{"one", "two"}, true, 1},
		{"type 5, LevelDB's code for the end, ends the log", func(w *testLog) {
			w.add([]byte("one"))
			plain(w, levelDBEOF, []byte("five"))
			w.add([]byte("two"))
		}, []string{"one"}, false, 1},
		{"type 6, LevelDB's code for a bad record, is dropped silently", func(w *testLog) {
			w.add([]byte("one"))
			plain(w, levelDBBadRecord, []byte("six"))
			w.add([]byte("two"))
		}, []string{"one", "two"}, false, 1},
		{"type 6 inside a fragmented record", func(w *testLog) {
			w.physical(recordFirst, []byte("half"))
			plain(w, levelDBBadRecord, []byte("six"))
			w.physical(recordLast, []byte("rest"))
			w.add([]byte("two"))
		}, []string{"two"}, true, 0},
		{"zero type with a length", func(w *testLog) {
			w.add([]byte("one"))
			w.physical(recordZero, []byte("zero"))
			w.add([]byte("two"))
		}, []string{"one", "two"}, true, 1},
		{"a whole record ends a fragmented one", func(w *testLog) {
			w.physical(recordFirst, []byte("half"))
			w.add([]byte("whole"))
		}, []string{"whole"}, true, 0},
		{"a first fragment ends a fragmented one", func(w *testLog) {
			w.physical(recordFirst, []byte("half"))
			w.physical(recordFirst, []byte("new "))
			w.physical(recordLast, []byte("record"))
		}, []string{"new record"}, true, 0},
		{"an empty first fragment before a whole record", func(w *testLog) {
			w.physical(recordFirst, nil)
			w.add([]byte("whole"))
		}, []string{"whole"}, false, 0},
		{"fragments without a first", func(w *testLog) {
			w.physical(recordMiddle, []byte("mid"))
			w.physical(recordLast, []byte("last"))
			w.add([]byte("whole"))
		}, []string{"whole"}, true, 0},
	} {
		w := &testLog{}
		tc.build(w)
		var dropped []error
		r := &LogReader{Data: w.data, Dropped: func(err error) {
			if !errors.Is(err, format.ErrCorrupt) {
				t.Errorf("%s: dropped %v, not a corruption", tc.name, err)
			}
			dropped = append(dropped, err)
		}}
		got, _, err := readAll(r)
		var gotS []string
		for _, g := range got {
			gotS = append(gotS, string(g))
		}
		if err != nil || fmt.Sprint(gotS) != fmt.Sprint(tc.want) || (len(dropped) > 0) != tc.dropped {
			t.Errorf("%s: skipping: %q, %v, dropped %v; want %q, dropped %v", tc.name, gotS, err, dropped, tc.want, tc.dropped)
		}
		got, _, err = readAll(&LogReader{Data: w.data})
		if tc.strict < 0 && err != nil || tc.strict >= 0 && (!errors.Is(err, format.ErrCorrupt) || len(got) != tc.strict) {
			t.Errorf("%s: strict: %d records, %v; want %d and a corruption", tc.name, len(got), err, tc.strict)
		}
	}
}
