package codec_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/codec"
)

// kv is one block entry, as strings so cmp.Diff prints it readably.
type kv struct{ K, V string }

func buildBlock(entries []kv, interval int) []byte {
	w := codec.BlockWriter{RestartInterval: interval}
	for _, e := range entries {
		w.Add([]byte(e.K), []byte(e.V))
	}
	return append([]byte(nil), w.Finish()...)
}

func initIter(t rapid.TB, block []byte) *codec.BlockIter {
	t.Helper()
	var it codec.BlockIter
	if err := it.Init(format.SectionDataBlock, 0, block); err != nil {
		t.Fatalf("Init of a well-formed block: %v", err)
	}
	return &it
}

func cur(it *codec.BlockIter) kv { return kv{string(it.Key()), string(it.Value())} }

func forward(t rapid.TB, it *codec.BlockIter) []kv {
	t.Helper()
	var got []kv
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, cur(it))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("forward scan: %v", err)
	}
	return got
}

func backward(t rapid.TB, it *codec.BlockIter) []kv {
	t.Helper()
	var got []kv
	for ok := it.Last(); ok; ok = it.Prev() {
		got = append(got, cur(it))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("backward scan: %v", err)
	}
	return got
}

func reversed(s []kv) []kv {
	r := make([]kv, len(s))
	for i, e := range s {
		r[len(s)-1-i] = e
	}
	return r
}

// seekIndex is the model of SeekGE: the index of the first key >= target.
func seekIndex(entries []kv, target string) int {
	return sort.Search(len(entries), func(i int) bool { return entries[i].K >= target })
}

// keyByte favours bytes that make prefixes collide and that sit at the
// edges of the byte range.
var keyByte = rapid.OneOf(rapid.SampledFrom([]byte{0x00, 0x01, 'a', 'b', 0xfe, 0xff}), rapid.Byte())

// drawEntries draws sorted entries with distinct keys: sometimes the empty
// key, sometimes a long common prefix (multi-byte shared-length varints),
// values from empty to a few hundred bytes (multi-byte length varints).
func drawEntries(t *rapid.T) []kv {
	// Rapid favours short slices; drawing the lengths first spreads them.
	plen := rapid.OneOf(rapid.Just(0), rapid.IntRange(0, 20), rapid.IntRange(120, 160)).Draw(t, "prefixLen")
	prefix := rapid.SliceOfN(keyByte, plen, plen).Draw(t, "prefix")
	n := rapid.OneOf(rapid.IntRange(0, 10), rapid.IntRange(0, 150)).Draw(t, "numKeys")
	suffixes := rapid.SliceOfNDistinct(rapid.SliceOfN(keyByte, 0, 12), n, n,
		func(b []byte) string { return string(b) }).Draw(t, "suffixes")
	keys := make([]string, 0, len(suffixes)+1)
	for _, s := range suffixes {
		keys = append(keys, string(prefix)+string(s))
	}
	if rapid.Bool().Draw(t, "withEmptyKey") && len(prefix) > 0 {
		keys = append(keys, "")
	}
	sort.Strings(keys)
	vlen := rapid.OneOf(rapid.IntRange(0, 6), rapid.IntRange(0, 300))
	entries := make([]kv, len(keys))
	for i, k := range keys {
		l := vlen.Draw(t, "valueLen")
		entries[i] = kv{k, string(rapid.SliceOfN(rapid.Byte(), l, l).Draw(t, "value"))}
	}
	return entries
}

// seekTargets returns targets around every key: the key, just above it,
// just below it, a proper prefix, and the extremes.
func seekTargets(entries []kv) []string {
	ts := []string{"", "\x00", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"}
	for _, e := range entries {
		k := e.K
		ts = append(ts, k, k+"\x00", k+"\xff")
		if k != "" {
			ts = append(ts, k[:len(k)-1])
			if c := k[len(k)-1]; c > 0 {
				below := k[:len(k)-1] + string([]byte{c - 1})
				ts = append(ts, below, below+"\xff\xff")
			}
		}
	}
	return ts
}

func TestBlockRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := drawEntries(t)
		interval := rapid.IntRange(1, 20).Draw(t, "interval")

		w := codec.BlockWriter{RestartInterval: interval}
		for _, e := range entries {
			w.Add([]byte(e.K), []byte(e.V))
		}
		if w.Entries() != len(entries) {
			t.Fatalf("Entries() = %d, want %d", w.Entries(), len(entries))
		}
		est := w.EstimatedSize()
		block := w.Finish()
		if est != len(block) {
			t.Fatalf("EstimatedSize() = %d before Finish, block is %d bytes", est, len(block))
		}
		block = append([]byte(nil), block...)

		it := initIter(t, block)
		wantRestarts := (len(entries) + interval - 1) / interval
		if it.NumRestarts() != wantRestarts {
			t.Fatalf("NumRestarts() = %d, want %d", it.NumRestarts(), wantRestarts)
		}
		if diff := cmp.Diff(entries, forward(t, it), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("First/Next (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(reversed(entries), backward(t, it), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Last/Prev (-want +got):\n%s", diff)
		}

		// Every entry reports whether it is a restart point.
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			idx, isRestart := it.RestartIndex()
			if idx != i/interval || isRestart != (i%interval == 0) {
				t.Fatalf("entry %d: RestartIndex() = %d, %v; want %d, %v", i, idx, isRestart, i/interval, i%interval == 0)
			}
			i++
		}
		if _, ok := it.RestartIndex(); ok {
			t.Fatalf("RestartIndex() ok past the end")
		}

		for _, target := range seekTargets(entries) {
			want := seekIndex(entries, target)
			ok := it.SeekGE([]byte(target))
			if ok != (want < len(entries)) || ok != it.Valid() {
				t.Fatalf("SeekGE(%q) = %v (Valid %v), want %v", target, ok, it.Valid(), want < len(entries))
			}
			if ok {
				if diff := cmp.Diff(entries[want], cur(it)); diff != "" {
					t.Fatalf("SeekGE(%q) (-want +got):\n%s", target, diff)
				}
			}
			if err := it.Err(); err != nil {
				t.Fatalf("SeekGE(%q): %v", target, err)
			}
		}

		// Reset then rewrite gives the same bytes.
		w.Reset()
		if w.Entries() != 0 || w.EstimatedSize() != 4 {
			t.Fatalf("after Reset: Entries() = %d, EstimatedSize() = %d; want 0, 4", w.Entries(), w.EstimatedSize())
		}
		for _, e := range entries {
			w.Add([]byte(e.K), []byte(e.V))
		}
		if !bytes.Equal(w.Finish(), block) {
			t.Fatalf("block written after Reset differs from the first")
		}
	})
}

// TestBlockIterModel drives random sequences of positioning calls, with
// direction switches at random points, against a model index.
func TestBlockIterModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := drawEntries(t)
		interval := rapid.IntRange(1, 20).Draw(t, "interval")
		it := initIter(t, buildBlock(entries, interval))
		targets := seekTargets(entries)

		n := len(entries)
		pos := -2 // model: -2 unpositioned, -1 before first, n past last
		valid := func() bool { return pos >= 0 && pos < n }
		ops := rapid.OneOf(rapid.IntRange(1, 10), rapid.IntRange(10, 80)).Draw(t, "numOps")
		for step := 0; step < ops; step++ {
			var ok bool
			op := rapid.IntRange(0, 4).Draw(t, "op")
			var name string
			switch op {
			case 0:
				name = "First"
				ok = it.First()
				pos = 0
				if n == 0 {
					pos = n
				}
			case 1:
				name = "Last"
				ok = it.Last()
				pos = n - 1
				if n == 0 {
					pos = n
				}
			case 2:
				name = "Next"
				ok = it.Next()
				if valid() {
					pos++
				}
			case 3:
				name = "Prev"
				ok = it.Prev()
				if valid() {
					pos--
				}
			case 4:
				target := rapid.SampledFrom(targets).Draw(t, "target")
				name = fmt.Sprintf("SeekGE(%q)", target)
				ok = it.SeekGE([]byte(target))
				pos = seekIndex(entries, target)
			}
			if ok != valid() || it.Valid() != valid() {
				t.Fatalf("step %d %s: returned %v, Valid() %v; model position %d of %d", step, name, ok, it.Valid(), pos, n)
			}
			if ok {
				if diff := cmp.Diff(entries[pos], cur(it)); diff != "" {
					t.Fatalf("step %d %s (-want +got):\n%s", step, name, diff)
				}
			}
			if err := it.Err(); err != nil {
				t.Fatalf("step %d %s: %v", step, name, err)
			}
		}
	})
}

// TestBlockDirectionSwitch checks a fixed walk by hand, at and away from
// restart points.
func TestBlockDirectionSwitch(t *testing.T) {
	var entries []kv
	for i := 0; i < 10; i++ {
		entries = append(entries, kv{fmt.Sprintf("key%02d", i), fmt.Sprintf("v%d", i)})
	}
	it := initIter(t, buildBlock(entries, 3))
	must := func(ok bool, want int, what string) {
		t.Helper()
		if !ok || string(it.Key()) != entries[want].K || string(it.Value()) != entries[want].V {
			t.Fatalf("%s: ok=%v at %q/%q, want %q/%q", what, ok, it.Key(), it.Value(), entries[want].K, entries[want].V)
		}
	}
	must(it.SeekGE([]byte("key04")), 4, "SeekGE key04")
	must(it.Prev(), 3, "Prev to restart point 3")
	must(it.Prev(), 2, "Prev across restart boundary")
	must(it.Next(), 3, "Next")
	must(it.Next(), 4, "Next")
	must(it.SeekGE([]byte("key055")), 6, "SeekGE between keys")
	must(it.Prev(), 5, "Prev")
	must(it.Next(), 6, "Next")
	must(it.Last(), 9, "Last")
	must(it.Prev(), 8, "Prev from last")
	must(it.Next(), 9, "Next to last")
	if it.Next() || it.Valid() {
		t.Fatalf("Next past the last entry is valid")
	}
	if it.Prev() {
		t.Fatalf("Prev from past-the-end should not reposition")
	}
	must(it.First(), 0, "First")
	if it.Prev() || it.Valid() {
		t.Fatalf("Prev before the first entry is valid")
	}
	if it.Next() {
		t.Fatalf("Next from before-the-first should not reposition")
	}
	if it.SeekGE([]byte("key10")) {
		t.Fatalf("SeekGE past the last key found %q", it.Key())
	}
	must(it.SeekGE(nil), 0, "SeekGE(nil)")
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestBlockEmpty(t *testing.T) {
	var w codec.BlockWriter
	block := w.Finish()
	if diff := cmp.Diff([]byte{0, 0, 0, 0}, block); diff != "" {
		t.Fatalf("empty block (-want +got):\n%s", diff)
	}
	it := initIter(t, block)
	if it.NumRestarts() != 0 {
		t.Fatalf("NumRestarts() = %d", it.NumRestarts())
	}
	if it.Valid() {
		t.Fatalf("fresh iterator is valid")
	}
	for name, ok := range map[string]func() bool{
		"First":        it.First,
		"Last":         it.Last,
		"Next":         it.Next,
		"Prev":         it.Prev,
		"SeekGE(\"\")": func() bool { return it.SeekGE(nil) },
		"SeekGE(a)":    func() bool { return it.SeekGE([]byte("a")) },
	} {
		if ok() || it.Valid() {
			t.Errorf("%s on an empty block returned true", name)
		}
		if err := it.Err(); err != nil {
			t.Errorf("%s on an empty block: %v", name, err)
		}
	}
}

// TestBlockEncoding pins the documented byte layout on a small block.
func TestBlockEncoding(t *testing.T) {
	block := buildBlock([]kv{{"", "x"}, {"ab", "1"}, {"abc", ""}, {"b", "22"}}, 2)
	want := []byte{
		0, 0, 1, 'x', // offset 0, restart 0: shared 0, unshared 0, value 1
		0, 2, 1, 'a', 'b', '1', // offset 4: shares nothing with ""
		0, 3, 0, 'a', 'b', 'c', // offset 10, restart 1: stored whole
		0, 1, 2, 'b', '2', '2', // offset 16: shares nothing with "abc"
	}
	want = binary.LittleEndian.AppendUint32(want, 0)
	want = binary.LittleEndian.AppendUint32(want, 10)
	want = binary.LittleEndian.AppendUint32(want, 2)
	if diff := cmp.Diff(want, block); diff != "" {
		t.Fatalf("block bytes (-want +got):\n%s", diff)
	}

	block = buildBlock([]kv{{"apple", "1"}, {"apply", "2"}}, 16)
	want = []byte{0, 5, 1, 'a', 'p', 'p', 'l', 'e', '1', 4, 1, 1, 'y', '2', 0, 0, 0, 0, 1, 0, 0, 0}
	if diff := cmp.Diff(want, block); diff != "" {
		t.Fatalf("prefix-compressed block bytes (-want +got):\n%s", diff)
	}
}

func TestBlockDefaultRestartInterval(t *testing.T) {
	for _, interval := range []int{0, -3} {
		var entries []kv
		for i := 0; i < 40; i++ {
			entries = append(entries, kv{fmt.Sprintf("k%03d", i), ""})
		}
		it := initIter(t, buildBlock(entries, interval))
		if it.NumRestarts() != 3 { // entries 0, 16, 32
			t.Errorf("RestartInterval %d: NumRestarts() = %d, want 3 (interval 16)", interval, it.NumRestarts())
		}
		if diff := cmp.Diff(entries, forward(t, it), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("RestartInterval %d (-want +got):\n%s", interval, diff)
		}
	}
}

// TestBlockIterReinit checks that Init fully resets an iterator that was
// positioned on, or failed on, another block.
func TestBlockIterReinit(t *testing.T) {
	a := []kv{{"aaaaaaaa", "1"}, {"aaaaaaab", "2"}}
	b := []kv{{"b", "3"}}
	var it codec.BlockIter
	if err := it.Init(format.SectionDataBlock, 0, buildBlock(a, 2)); err != nil {
		t.Fatal(err)
	}
	it.Last()
	if err := it.Init(format.SectionDataBlock, 0, []byte{1, 2}); err == nil {
		t.Fatal("Init of a 2-byte block succeeded")
	}
	if it.Valid() || it.First() {
		t.Fatal("iterator usable after a failed Init")
	}
	if err := it.Init(format.SectionDataBlock, 0, buildBlock(b, 2)); err != nil {
		t.Fatal(err)
	}
	if it.Err() != nil || it.Valid() {
		t.Fatalf("after re-Init: Err %v, Valid %v", it.Err(), it.Valid())
	}
	if diff := cmp.Diff(b, forward(t, &it)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// checkCorruptErr fails unless err is nil or a *CorruptError wrapping
// ErrCorrupt for the given section and file offset.
func checkCorruptErr(t rapid.TB, err error, section string, off int64) {
	t.Helper()
	if err == nil {
		return
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("error %q does not wrap ErrCorrupt", err)
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %q is not a *CorruptError", err)
	}
	if ce.Section != section || ce.Offset != off {
		t.Fatalf("error %q names %q at %d, want %q at %d", err, ce.Section, ce.Offset, section, off)
	}
}

// exercise runs every positioning method over a possibly corrupt block.
// Any call may fail, but none may panic, loop forever or report an error
// that is not a corruption; and a call returns true exactly when the
// iterator is then valid, which never happens after an error.
func exercise(t rapid.TB, block []byte, targets [][]byte) {
	t.Helper()
	const section, fileOff = format.SectionIndex, 7777
	var it codec.BlockIter
	err := it.Init(section, fileOff, block)
	checkCorruptErr(t, err, section, fileOff)
	if err != nil {
		if it.Err() != err || it.Valid() || it.First() || it.Last() || it.SeekGE(nil) {
			t.Fatalf("iterator usable after Init error %v", err)
		}
		return
	}
	check := func(ok bool, what string) {
		t.Helper()
		if ok != it.Valid() {
			t.Fatalf("%s returned %v but Valid() is %v", what, ok, it.Valid())
		}
		if e := it.Err(); e != nil {
			checkCorruptErr(t, e, section, fileOff)
			if ok {
				t.Fatalf("%s returned true with error %v", what, e)
			}
		}
		if ok {
			_, _ = it.RestartIndex()
			_ = append(append([]byte(nil), it.Key()...), it.Value()...)
		}
	}
	// Each entry takes at least 3 bytes, so a scan longer than the block
	// is a loop.
	limit := len(block)
	n := 0
	for ok := it.First(); ; ok = it.Next() {
		check(ok, "First/Next")
		if !ok {
			break
		}
		if n++; n > limit {
			t.Fatalf("forward scan of a %d-byte block did not end", len(block))
		}
	}
	// Errors are sticky, so each phase starts on a fresh iterator and
	// reaches its own error paths.
	reinit := func() {
		t.Helper()
		if err := it.Init(section, fileOff, block); err != nil {
			t.Fatalf("second Init of the same block failed: %v", err)
		}
	}
	reinit()
	n = 0
	for ok := it.Last(); ; ok = it.Prev() {
		check(ok, "Last/Prev")
		if !ok {
			break
		}
		if n++; n > limit {
			t.Fatalf("backward scan of a %d-byte block did not end", len(block))
		}
	}
	for _, target := range targets {
		reinit()
		ok := it.SeekGE(target)
		check(ok, fmt.Sprintf("SeekGE(%q)", target))
		check(it.Next(), "Next after SeekGE")
		check(it.Prev(), "Prev after SeekGE")
		check(it.Prev(), "Prev after SeekGE")
	}
}

// TestBlockIterGarbage feeds random blocks: pure noise, and noise entries
// under a plausible restart array so that decoding gets past Init.
func TestBlockIterGarbage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var block []byte
		if rapid.Bool().Draw(t, "pureNoise") {
			l := rapid.IntRange(0, 200).Draw(t, "blockLen")
			block = rapid.SliceOfN(rapid.Byte(), l, l).Draw(t, "block")
		} else {
			// Small bytes make plausible varints and lengths.
			l := rapid.IntRange(0, 120).Draw(t, "entriesLen")
			block = rapid.SliceOfN(rapid.OneOf(rapid.ByteRange(0, 4), rapid.Byte()), l, l).Draw(t, "entries")
			nr := rapid.IntRange(0, 8).Draw(t, "numRestarts")
			for i := 0; i < nr; i++ {
				r := uint32(rapid.IntRange(0, len(block)+8).Draw(t, "restart"))
				if i == 0 && rapid.Bool().Draw(t, "firstIsZero") {
					r = 0
				}
				block = binary.LittleEndian.AppendUint32(block, r)
			}
			block = binary.LittleEndian.AppendUint32(block, uint32(nr))
		}
		targets := rapid.SliceOfN(rapid.SliceOfN(keyByte, 0, 6), 0, 8).Draw(t, "targets")
		exercise(t, block, targets)
	})
}

// TestBlockIterMutations checks every truncation and many single-byte
// changes of a valid block.
func TestBlockIterMutations(t *testing.T) {
	var entries []kv
	for i := 0; i < 40; i++ {
		v := fmt.Sprint(i)
		if i == 17 {
			v = string(bytes.Repeat([]byte{'v'}, 200)) // 2-byte length varint
		}
		entries = append(entries, kv{fmt.Sprintf("prefix/%03d/%s", i*7, bytes.Repeat([]byte{'z'}, i%5)), v})
	}
	block := buildBlock(entries, 4)
	var targets [][]byte
	for _, ts := range seekTargets(entries[:10]) {
		targets = append(targets, []byte(ts))
	}
	targets = append(targets, []byte("prefix/150"), []byte("prefix/999"), []byte("q"))

	exercise(t, block, targets) // the intact block passes too
	for i := 0; i < len(block); i++ {
		exercise(t, block[:i:i], targets)
	}
	mutated := make([]byte, len(block))
	for i := range block {
		for _, f := range []func(byte) byte{
			func(b byte) byte { return b ^ 0x01 },
			func(b byte) byte { return b ^ 0x80 },
			func(b byte) byte { return b ^ 0xff },
			func(b byte) byte { return b + 3 },
			func(byte) byte { return 0 },
			func(byte) byte { return 0x7f },
			func(byte) byte { return 0xff },
		} {
			copy(mutated, block)
			mutated[i] = f(block[i])
			exercise(t, mutated, targets)
		}
	}

	// A smaller block gets every one of the 255 other values at every byte.
	small := []kv{{"", "e"}, {"a", ""}, {"ab", "1"}, {"abc", "22"}, {"abd", "333"}, {"b", "4"}, {"b\x00", ""}, {"ba", "5"}}
	block = buildBlock(small, 3)
	targets = [][]byte{nil, []byte("a"), []byte("abb"), []byte("abd"), []byte("b\x00"), []byte("bb")}
	mutated = make([]byte, len(block))
	for i := range block {
		for v := 0; v < 256; v++ {
			if byte(v) == block[i] {
				continue
			}
			copy(mutated, block)
			mutated[i] = byte(v)
			exercise(t, mutated, targets)
		}
	}
}

// TestBlockIterCorruptErrors checks that specific damage is reported, with
// the section and file offset given to Init.
func TestBlockIterCorruptErrors(t *testing.T) {
	valid := buildBlock([]kv{{"a", "1"}, {"b", "2"}, {"c", "3"}}, 2)
	cases := []struct {
		name     string
		block    []byte
		initFail bool
	}{
		{"too short", []byte{0, 0, 0}, true},
		{"nil", nil, true},
		{"restart count too large", []byte{0, 0, 0, 0, 5, 0, 0, 0}, true},
		{"restart count huge", []byte{0xff, 0xff, 0xff, 0xff}, true},
		{"entries but no restarts", []byte{0, 1, 0, 'a', 0, 0, 0, 0}, true},
		{"first restart not 0", []byte{0, 1, 0, 'a', 1, 0, 0, 0, 1, 0, 0, 0}, true},
		{"restart past entries", []byte{0, 1, 0, 'a', 0, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0}, false},
		{"key overruns", []byte{0, 9, 0, 'a', 0, 0, 0, 0, 1, 0, 0, 0}, false},
		{"value overruns", []byte{0, 1, 9, 'a', 0, 0, 0, 0, 1, 0, 0, 0}, false},
		{"shared at restart", []byte{1, 1, 0, 'a', 0, 0, 0, 0, 1, 0, 0, 0}, false},
		{"shared longer than previous key", []byte{0, 1, 0, 'a', 3, 1, 0, 'b', 0, 0, 0, 0, 1, 0, 0, 0}, false},
		{"unterminated varint", []byte{0x80, 0x80, 0x80, 0, 0, 0, 0, 1, 0, 0, 0}, false},
		{"overlong varint", append(bytes.Repeat([]byte{0xff}, 11), 1, 0, 0, 0, 0, 1, 0, 0, 0), false},
		{"restart inside entry", append(append([]byte(nil), valid[:len(valid)-8]...), 3, 0, 0, 0, 2, 0, 0, 0), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var it codec.BlockIter
			err := it.Init(format.SectionIndex, 1234, c.block)
			if c.initFail != (err != nil) {
				t.Fatalf("Init error = %v, want failure %v", err, c.initFail)
			}
			if err == nil {
				for ok := it.First(); ok; ok = it.Next() {
				}
				if it.Err() == nil {
					for ok := it.Last(); ok; ok = it.Prev() {
					}
				}
				if it.Err() == nil {
					it.SeekGE([]byte("b"))
				}
				err = it.Err()
			}
			if err == nil {
				t.Fatal("no error reported")
			}
			checkCorruptErr(t, err, format.SectionIndex, 1234)
			if it.Valid() {
				t.Fatal("iterator valid after an error")
			}
		})
	}
}
