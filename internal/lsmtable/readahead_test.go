package lsmtable

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
	"github.com/sstkit/sstable/internal/ldbtest"
)

// aheadTable writes a table of n entries in blocks of about 256 bytes
// (snappy) and returns its entries and bytes.
func aheadTable(n int) ([]ldbtest.Entry, []byte) {
	es := make([]ldbtest.Entry, n)
	for i := range es {
		v := bytes.Repeat([]byte{byte(i)}, 20+i%50)
		es[i] = ldbtest.Entry{Key: []byte(fmt.Sprintf("key%06d", i)), Seq: uint64(i + 1), Kind: 1, Value: v}
	}
	return es, ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 256, Snappy: true, RestartInterval: 4})
}

// scanAll scans tb forward and returns what it read and the error. It
// pauses 20 µs at each block, as a scan whose caller does work on each
// entry would, so that the worker keeps ahead of it.
func scanAll(tb *Table) (keys, values [][]byte, ra *readAhead, err error) {
	it := tb.NewIter(nil)
	block := -1
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
		values = append(values, bytes.Clone(it.Value()))
		if it.i != block {
			block = it.i
			for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
			}
		}
	}
	ra = it.ahead
	return keys, values, ra, it.Close()
}

// openAhead opens data, mapped from a file of its own in dir (the same
// file for the same bytes), or over ReaderAt.
func openAhead(t *testing.T, dir string, data []byte, mapped bool) *Table {
	t.Helper()
	var tb *Table
	var err error
	if mapped {
		path := filepath.Join(dir, fmt.Sprintf("%08x.ldb", crc32.ChecksumIEEE(data)))
		if _, err := os.Stat(path); err != nil {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tb, err = OpenTable(path, nil)
	} else {
		tb, err = NewTable(bytes.NewReader(data), int64(len(data)), &TableOptions{Name: "t.ldb"})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

// TestReadAheadScan checks that a forward scan read through the
// read-ahead worker returns every entry, and that the worker decoded a
// good part of its blocks for it, mapped and over ReaderAt; with
// GOMAXPROCS 1 it does not start and the scan reads the same.
func TestReadAheadScan(t *testing.T) {
	es, data := aheadTable(3000)
	dir := t.TempDir()
	for _, mapped := range []bool{true, false} {
		tb := openAhead(t, dir, data, mapped)
		if tb.Index.Len() < 4*aheadSlots {
			t.Fatalf("%d data blocks: too few to test the read-ahead", tb.Index.Len())
		}
		// The worker runs when the scheduler gives it a CPU: on a loaded
		// machine a scan may outrun it, so a few scans are allowed.
		var keys, values [][]byte
		var ra *readAhead
		var err error
		for try := 0; try < 5; try++ {
			if keys, values, ra, err = scanAll(tb); err != nil {
				t.Fatal(err)
			}
			if ra != nil && ra.taken >= tb.Index.Len()/4 {
				break
			}
		}
		if len(keys) != len(es) {
			t.Fatalf("mapped %v: %d entries, want %d", mapped, len(keys), len(es))
		}
		for i, e := range es {
			if !bytes.Equal(keys[i], e.Key) || !bytes.Equal(values[i], e.Value) {
				t.Fatalf("mapped %v: entry %d = %q %x, want %q %x", mapped, i, keys[i], values[i], e.Key, e.Value)
			}
		}
		if runtime.GOMAXPROCS(0) > 1 && (ra == nil || ra.taken < tb.Index.Len()/4) {
			t.Fatalf("mapped %v: the scan took too few of its %d blocks from the read-ahead (%d)", mapped, tb.Index.Len(), ra.taken)
		}
		if ra != nil && ra.active.Load() {
			t.Fatalf("mapped %v: a worker still runs after Close", mapped)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	keys, _, ra, err := scanAll(openAhead(t, dir, data, true))
	if err != nil || len(keys) != len(es) || ra != nil {
		t.Fatalf("GOMAXPROCS 1: %d entries, %v, read-ahead %v", len(keys), err, ra)
	}
}

// TestReadAheadCorrupt checks that a damaged block ahead of a scan gives
// the error, and the entries before it, that a scan reading every block
// itself gives.
func TestReadAheadCorrupt(t *testing.T) {
	dir := t.TempDir()
	_, data := aheadTable(3000)
	tb := openAhead(t, dir, data, false)
	h := tb.Index.handles[tb.Index.Len()/2]
	bad := bytes.Clone(data)
	bad[h.Offset+h.Length/2] ^= 0x40
	for _, mapped := range []bool{true, false} {
		keys, _, ra, err := scanAll(openAhead(t, dir, bad, mapped))
		if !errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("mapped %v: scan error %v, want a corruption", mapped, err)
		}
		if runtime.GOMAXPROCS(0) > 1 && ra == nil {
			t.Fatalf("mapped %v: the read-ahead did not start", mapped)
		}
		prev := runtime.GOMAXPROCS(1)
		keys1, _, _, err1 := scanAll(openAhead(t, dir, bad, mapped))
		runtime.GOMAXPROCS(prev)
		if err.Error() != err1.Error() || len(keys) != len(keys1) {
			t.Fatalf("mapped %v: %d entries then %v; reading every block itself: %d then %v", mapped, len(keys), err, len(keys1), err1)
		}
	}
}

// TestReadAheadAbandoned checks that a scan left without Close leaves no
// worker running, and that Close in the middle of a scan stops it.
func TestReadAheadAbandoned(t *testing.T) {
	if runtime.GOMAXPROCS(0) == 1 {
		t.Skip("no read-ahead with GOMAXPROCS 1")
	}
	_, data := aheadTable(3000)
	tb := openAhead(t, t.TempDir(), data, true)
	it := tb.NewIter(nil)
	for ok, n := it.First(), 0; ok && n < 200; ok, n = it.Next(), n+1 {
	}
	ra := it.ahead
	if ra == nil {
		t.Fatal("the read-ahead did not start")
	}
	deadline := time.Now().Add(10 * time.Second)
	for ra.active.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the worker of an abandoned scan still runs after 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if got := ra.next.Load(); got > int64(it.i+aheadSlots) {
		t.Fatalf("the worker decoded up to block %d, past the scan's block %d and %d slots", got, it.i, aheadSlots)
	}
	it.Next()
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if ra.active.Load() {
		t.Fatal("a worker runs after Close")
	}
}

// TestReadAheadStopRace puts the worker, through aheadHook, in the
// window where it has caught up with the scan and cleared active just
// after the scan raised its limit (so it would go on decoding), and
// there makes the scan seek, move back or Close: each must stop the
// worker and wait for it, or the worker decodes for an iterator that has
// moved on or closed, and then for a closed table. The interleaving is
// forced, so the outcome does not depend on the scheduler; every wait
// has a deadline.
func TestReadAheadStopRace(t *testing.T) {
	if runtime.GOMAXPROCS(0) == 1 {
		t.Skip("no read-ahead with GOMAXPROCS 1")
	}
	es, data := aheadTable(3000)
	dir := t.TempDir()
	// armed: 1 pauses the worker once caught up, 2 once idle, 3 reports
	// the stop; 0 lets everything run.
	var armed atomic.Int32
	caught, idle, resume := make(chan struct{}), make(chan struct{}), make(chan struct{})
	stopping := make(chan struct{}, 1)
	aheadHook = func(p aheadPoint) {
		switch {
		case p == aheadCaughtUp && armed.CompareAndSwap(1, 2):
			caught <- struct{}{}
			<-resume
		case p == aheadIdle && armed.CompareAndSwap(2, 3):
			idle <- struct{}{}
			<-resume
		case p == aheadStopping && armed.CompareAndSwap(3, 0):
			stopping <- struct{}{}
		}
	}
	t.Cleanup(func() { aheadHook = nil })
	wait := func(c <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not within 10 s", what)
		}
	}
	at := len(es) / 3
	ops := []struct {
		name string
		do   func(*TableIterator)
		want int // the entry the iterator is on after do; -1 none
	}{
		{"Close", func(it *TableIterator) { it.Close() }, -1},
		{"SeekGE", func(it *TableIterator) { it.SeekGE(es[at].Key) }, at},
		{"SeekLT", func(it *TableIterator) { it.SeekLT(es[at].Key) }, at - 1},
		{"First", func(it *TableIterator) { it.First() }, 0},
		{"Prev", func(it *TableIterator) { it.Prev() }, -2}, // the entry before the scan's
	}
	failed := map[string]bool{}
	for round := range 20 {
		for _, op := range ops {
			if failed[op.name] {
				continue
			}
			tb := openAhead(t, dir, data, round%2 == 0)
			it := tb.NewIter(nil)
			// The scan starts somewhere new each time and crosses two
			// block boundaries: the second starts the worker, which
			// decodes aheadSlots-1 blocks and pauses, caught up.
			pos := (round*397 + 11) % (len(es) / 2)
			armed.Store(1)
			ok := it.SeekGE(es[pos].Key)
			for b := it.i; ok && it.i < b+scanLoads; pos++ {
				ok = it.Next()
			}
			if !ok || it.ahead == nil {
				t.Fatalf("%s: the scan did not start the read-ahead (%v, %v)", op.name, ok, it.Err())
			}
			wait(caught, op.name+": the worker catching up")
			// The scan moves on a block, raising the worker's limit while
			// the worker is still active; then the worker clears active.
			for b := it.i; ok && it.i == b; pos++ {
				ok = it.Next()
			}
			if !ok {
				t.Fatalf("%s: scan ended at entry %d: %v", op.name, pos, it.Err())
			}
			resume <- struct{}{}
			wait(idle, op.name+": the worker going idle")
			done := make(chan struct{})
			go func() {
				op.do(it)
				close(done)
			}()
			select {
			case <-stopping:
			case <-done:
				resume <- struct{}{} // the worker goes on, after the scan's move
				it.ahead.stop()
				<-stopping // reported by the stop just above
				t.Errorf("round %d: %s returned while the worker, idle but free to decode on, still ran", round, op.name)
				failed[op.name] = true
				it.Close()
				tb.Close()
				continue
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: %s neither returned nor stopped the worker within 10 s", round, op.name)
			}
			resume <- struct{}{}
			wait(done, op.name+" waiting for the worker")
			if it.ahead.active.Load() {
				t.Fatalf("round %d: %s returned with the worker active", round, op.name)
			}
			want := op.want
			if want == -2 {
				want = pos - 1
			}
			if want >= 0 {
				if !it.Valid() || !bytes.Equal(it.Key(), es[want].Key) {
					t.Fatalf("round %d: after %s at entry %d, the iterator is on %q (valid %v), want %q", round, op.name, pos, it.Key(), it.Valid(), es[want].Key)
				}
				// The scan goes on, with a new worker.
				for i := want + 1; i < min(want+500, len(es)); i++ {
					if !it.Next() || !bytes.Equal(it.Key(), es[i].Key) {
						t.Fatalf("round %d: after %s, entry %d is %q, want %q (%v)", round, op.name, i, it.Key(), es[i].Key, it.Err())
					}
				}
			}
			if err := it.Close(); err != nil {
				t.Fatal(err)
			}
			if err := tb.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReadAheadSeekClose seeks, moves back and closes iterators, and
// then closes their tables, while the workers run wherever the scheduler
// has put them: under -race it checks the slots' hand-over between the
// worker and the scan. Every entry read must be the table's, and no
// worker may be active after Close. The whole run has a deadline.
func TestReadAheadSeekClose(t *testing.T) {
	es, data := aheadTable(3000)
	dir := t.TempDir()
	var tables []*Table
	for _, mapped := range []bool{true, false} {
		tables = append(tables, openAhead(t, dir, data, mapped))
	}
	rng := rand.New(rand.NewPCG(49, 1))
	check := func(it *TableIterator, i int, what string) error {
		if !it.Valid() || !bytes.Equal(it.Key(), es[i].Key) || !bytes.Equal(it.Value(), es[i].Value) {
			return fmt.Errorf("%s: on %q (valid %v, %v), want entry %d %q", what, it.Key(), it.Valid(), it.Err(), i, es[i].Key)
		}
		return nil
	}
	started, taken := 0, 0 // rounds whose scans started the read-ahead; blocks they took from it
	run := func() error {
		for round := range 400 {
			tb := tables[round%2]
			if round%50 == 49 {
				// A table of its own, closed right after its iterator.
				tb = openAhead(t, dir, data, round%100 == 49)
			}
			it := tb.NewIter(nil)
			pos := rng.IntN(len(es))
			it.SeekGE(es[pos].Key)
			for range 4 {
				if err := check(it, pos, "seek"); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
				for n := rng.IntN(1500); n > 0 && pos+1 < len(es); n-- {
					pos++
					if !it.Next() {
						return fmt.Errorf("round %d: Next to entry %d: %v", round, pos, it.Err())
					}
				}
				if err := check(it, pos, "scan"); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
				switch rng.IntN(3) {
				case 0:
					pos = rng.IntN(len(es))
					it.SeekGE(es[pos].Key)
				case 1:
					if pos > 0 {
						pos--
						it.Prev()
					}
				case 2:
					k := 1 + rng.IntN(len(es)-1)
					it.SeekLT(es[k].Key)
					pos = k - 1
				}
			}
			if err := it.Close(); err != nil {
				return err
			}
			if ra := it.ahead; ra != nil {
				if ra.active.Load() {
					return fmt.Errorf("round %d: a worker is active after Close", round)
				}
				started++
				taken += ra.taken
			}
			if tb != tables[round%2] {
				if err := tb.Close(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d of 400 rounds started the read-ahead; their scans took %d blocks from it", started, taken)
		if runtime.GOMAXPROCS(0) > 1 && started < 100 {
			t.Fatalf("only %d of 400 rounds started the read-ahead", started)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("400 rounds of seeks and closes did not end within 2 minutes")
	}
}

// TestReadAheadChecksum damages a value in an uncompressed data block,
// so that its checksum fails but its entries still decode, and has the
// worker reach that block before the scan does: the worker must check
// the checksum and leave the block to the scan, which reports the
// corruption after the entries before the block. A worker that skipped
// the checksum would hand over the damaged entries (or, mapped, mark the
// block verified) and the scan would end without an error.
func TestReadAheadChecksum(t *testing.T) {
	if runtime.GOMAXPROCS(0) == 1 {
		t.Skip("no read-ahead with GOMAXPROCS 1")
	}
	es := make([]ldbtest.Entry, 3000)
	for i := range es {
		v := bytes.Repeat([]byte{byte(i)}, 20+i%50)
		es[i] = ldbtest.Entry{Key: []byte(fmt.Sprintf("key%06d", i)), Seq: uint64(i + 1), Kind: 1, Value: v}
	}
	data := ldbtest.WriteTable(es, ldbtest.Options{BlockSize: 256, RestartInterval: 4})
	dir := t.TempDir()
	// The worker starts at block scanLoads, and decodes the next
	// aheadSlots-1 blocks before it catches up: bad is among them.
	const bad = scanLoads + aheadSlots/2
	tb := openAhead(t, dir, data, false)
	h := tb.Index.handles[bad]
	block := data[h.Offset : h.Offset+h.Length]
	if typ := data[h.Offset+h.Length]; typ != format.BlockTypeRaw {
		t.Fatalf("block %d has type %d, want an uncompressed block", bad, typ)
	}
	// The value of block bad's first entry, a run of one byte (at least
	// 20), is flipped in its middle.
	var blk codec.BlockIter
	if err := blk.Init(format.SectionDataBlock, int64(h.Offset), block); err != nil || !blk.First() {
		t.Fatalf("block %d: %v", bad, err)
	}
	user, _, _, _ := SplitKey(blk.Key(), KindsMask(KindValue))
	first := slices.IndexFunc(es, func(e ldbtest.Entry) bool { return bytes.Equal(e.Key, user) })
	if first < 0 || bytes.Index(block, es[first].Value) < 0 {
		t.Fatalf("block %d's first entry (%q) not found", bad, user)
	}
	at := bytes.Index(block, es[first].Value)
	damaged := bytes.Clone(data)
	damaged[int(h.Offset)+at+len(es[first].Value)/2] ^= 0x01
	// The damage is invisible to the block's decoding: only the
	// checksum finds it.
	if err := blk.Init(format.SectionDataBlock, int64(h.Offset), damaged[h.Offset:h.Offset+h.Length]); err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := blk.First(); ok; ok = blk.Next() {
		n++
	}
	if blk.Err() != nil || n < 2 {
		t.Fatalf("the damaged block no longer decodes: %d entries, %v", n, blk.Err())
	}
	if _, _, err := codec.CheckBlock(format.SectionDataBlock, int64(h.Offset), damaged[h.Offset:h.Offset+h.Length+format.BlockTrailerLen]); !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("the damaged block's checksum: %v, want a corruption", err)
	}

	caught := make(chan struct{}, 1)
	aheadHook = func(p aheadPoint) {
		if p == aheadCaughtUp {
			select {
			case caught <- struct{}{}:
			default:
			}
		}
	}
	t.Cleanup(func() { aheadHook = nil })
	for _, mapped := range []bool{true, false} {
		select {
		case <-caught: // from the workers of the last scan, all stopped
		default:
		}
		tb := openAhead(t, dir, damaged, mapped)
		it := tb.NewIter(nil)
		i := 0
		ok := it.First()
		for ; ok && it.i < scanLoads; ok = it.Next() {
			i++
		}
		if !ok || it.ahead == nil {
			t.Fatalf("mapped %v: the scan did not start the read-ahead (%v)", mapped, it.Err())
		}
		select {
		case <-caught:
		case <-time.After(10 * time.Second):
			t.Fatalf("mapped %v: the worker did not catch up within 10 s", mapped)
		}
		// The worker has been past block bad, and has checked the
		// blocks before it for the scan.
		if got := it.ahead.next.Load(); got <= bad {
			t.Fatalf("mapped %v: the worker stopped at block %d, before block %d", mapped, got, bad)
		}
		if done := (mapped && tb.verified[bad-1].Load()) || (!mapped && it.ahead.slots[(bad-1)%aheadSlots].block.Load() == bad-1); !done {
			t.Fatalf("mapped %v: the worker has not read block %d", mapped, bad-1)
		}
		for ; ok; ok = it.Next() {
			if !bytes.Equal(it.Key(), es[i].Key) || !bytes.Equal(it.Value(), es[i].Value) {
				t.Fatalf("mapped %v: entry %d is %q %x, want %q %x", mapped, i, it.Key(), it.Value(), es[i].Key, es[i].Value)
			}
			i++
		}
		err := it.Close()
		var ce *format.CorruptError
		if !errors.As(err, &ce) || ce.Offset != int64(h.Offset) || i != first {
			t.Fatalf("mapped %v: %d entries, then %v; want %d entries, then the corruption of block %d at offset %d", mapped, i, err, first, bad, h.Offset)
		}
	}
}
