package bulk_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/reader"
)

// frag is a span fragment: [start, end) with its values in order.
type frag struct {
	start, end string
	values     []string
}

// tableContents is what the reader finds in one table.
type tableContents struct {
	points []kv
	frags  []frag
}

// readTable reads every point and span fragment of the table at path,
// checking it with Verify and its properties' fragment count against
// the span iterator.
func readTable(t tb, path string) tableContents {
	t.Helper()
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	if err := r.Verify(); err != nil {
		t.Fatalf("verify %s: %v", path, err)
	}
	var c tableContents
	it := r.NewIterator()
	for ok := it.First(); ok; ok = it.Next() {
		c.points = append(c.points, kv{append([]byte{}, it.Key()...), bytes.Clone(it.Value())})
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	si := r.NewSpanIterator()
	for ok := si.First(); ok; ok = si.Next() {
		sp := si.Span()
		f := frag{start: string(sp.Start), end: string(sp.End)}
		for _, v := range sp.Values {
			f.values = append(f.values, string(v))
		}
		c.frags = append(c.frags, f)
	}
	if err := si.Close(); err != nil {
		t.Fatal(err)
	}
	if got := r.Properties().NumSpanFragments; got != uint64(len(c.frags)) {
		t.Fatalf("%s: properties count %d span fragments, the iterator %d", path, got, len(c.frags))
	}
	return c
}

// sortedKeys are the keys of the property test: every string of up to
// three letters from "abc", in order ("" first).
func sortedKeys() []string {
	keys := []string{""}
	for i := 0; i < len(keys); i++ {
		if len(keys[i]) < 3 {
			for _, c := range "abc" {
				keys = append(keys, keys[i]+string(c))
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// TestSortedWriterProperty writes random sorted points and random
// non-overlapping span fragments (some with several values, some sharing
// a bound with a key or another fragment, some covering no key or lying
// past the last key, or spans alone) through a SortedWriter with small
// target sizes and blocks, so that tables are cut often, and checks:
// the tables hold exactly the points, in order; their fragments, joined
// back, tile exactly the input fragments with their values; each table's
// points and spans lie within [its first position, the next table's
// first position), above the previous table's Largest and at or below
// the next table's Smallest; each TableInfo is what the reader finds;
// the manifest lists the same tables; the directory holds nothing else;
// and the output is Writer's for the same input, byte for byte.
func TestSortedWriterProperty(t *testing.T) {
	keys := sortedKeys()
	bounds := append(slices.Clone(keys), "ab\x00", "b\x00", "d", "dd", "e")
	slices.Sort(bounds)
	var clipped, multi, spansOnly int
	defer func() {
		t.Logf("cases: %d with fragments clipped at a cut, %d with several tables, %d spans-only", clipped, multi, spansOnly)
		if clipped == 0 || multi == 0 || spansOnly == 0 {
			t.Error("the cases drawn missed clipped fragments, several tables or spans alone")
		}
	}()
	rapid.Check(t, func(rt *rapid.T) {
		// Points.
		var points []kv
		if rapid.IntRange(0, 9).Draw(rt, "spansOnly") > 0 {
			ks := rapid.SliceOfNDistinct(rapid.SampledFrom(keys), 1, -1, func(s string) string { return s }).Draw(rt, "points")
			slices.Sort(ks)
			for i, k := range ks {
				v := make([]byte, rapid.IntRange(0, 60).Draw(rt, "vlen"))
				for j := range v {
					v[j] = byte('A' + (i+j)%26)
				}
				points = append(points, kv{[]byte(k), v})
			}
		}
		// Fragments, in order, over the sorted bounds.
		var frags []frag
		for i := 0; i+1 < len(bounds); {
			if rapid.IntRange(0, 2).Draw(rt, "span here") > 0 {
				i++
				continue
			}
			j := min(i+rapid.IntRange(1, 6).Draw(rt, "span length"), len(bounds)-1)
			f := frag{start: bounds[i], end: bounds[j]}
			for n := range rapid.IntRange(1, 3).Draw(rt, "values") {
				f.values = append(f.values, fmt.Sprintf("v%d.%d", len(frags), n))
			}
			frags = append(frags, f)
			i = j
		}
		if len(points) == 0 && len(frags) > 0 {
			spansOnly++
		}
		target := int64(rapid.SampledFrom([]int{0, 200, 600, 1000}).Draw(rt, "target"))
		opts := &bulk.Options{TargetTableSize: target, Builder: &builder.Options{BlockSize: 256}}

		dir := filepath.Join(t.TempDir(), "out")
		w, err := bulk.NewSortedWriter(dir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		defer w.Abort()
		wdir := filepath.Join(t.TempDir(), "writer")
		ww, err := bulk.NewWriter(wdir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		defer ww.Abort()
		// Calls in position order; at equal positions, either first.
		for pi, fi := 0, 0; pi < len(points) || fi < len(frags); {
			spanNext := fi < len(frags) && (pi == len(points) || frags[fi].start < string(points[pi].k) ||
				frags[fi].start == string(points[pi].k) && rapid.Bool().Draw(rt, "span first"))
			if spanNext {
				f := frags[fi]
				for _, v := range f.values {
					if err := w.AddSpan([]byte(f.start), []byte(f.end), []byte(v)); err != nil {
						rt.Fatal(err)
					}
					if err := ww.AddSpan([]byte(f.start), []byte(f.end), []byte(v)); err != nil {
						rt.Fatal(err)
					}
				}
				fi++
			} else {
				p := points[pi]
				if err := w.Add(p.k, p.v); err != nil {
					rt.Fatal(err)
				}
				if err := ww.Add(p.k, p.v); err != nil {
					rt.Fatal(err)
				}
				pi++
			}
		}
		tables, err := w.Finish()
		if err != nil {
			rt.Fatal(err)
		}

		if len(points)+len(frags) == 0 && len(tables) != 0 {
			rt.Fatalf("no input, %d tables", len(tables))
		}
		if target == 0 && len(points)+len(frags) > 0 && len(tables) != 1 {
			rt.Fatalf("no target size, %d tables", len(tables))
		}
		if len(tables) > 1 {
			multi++
		}
		contents := make([]tableContents, len(tables))
		for i, ti := range tables {
			if want := filepath.Join(dir, fmt.Sprintf("%06d.sst", i+1)); ti.Path != want {
				rt.Fatalf("table %d at %s, want %s", i, ti.Path, want)
			}
			c := readTable(rt, ti.Path)
			contents[i] = c
			st, err := os.Stat(ti.Path)
			if err != nil {
				rt.Fatal(err)
			}
			want := bulk.TableInfo{Path: ti.Path, Entries: int64(len(c.points)), Spans: int64(len(c.frags)), Size: st.Size()}
			if len(c.points) > 0 {
				want.Smallest, want.Largest = c.points[0].k, c.points[len(c.points)-1].k
			}
			if diff := cmp.Diff(want, ti); diff != "" {
				rt.Fatalf("table %d: info (-read back +returned):\n%s", i, diff)
			}
			if ti.Entries == 0 && len(tables) > 1 {
				rt.Fatalf("table %d of %d has no points", i, len(tables))
			}
		}

		// Points: all, in order.
		var gotPoints []kv
		for _, c := range contents {
			gotPoints = append(gotPoints, c.points...)
		}
		if len(gotPoints) != len(points) {
			rt.Fatalf("tables hold %d points, want %d", len(gotPoints), len(points))
		}
		for i := range points {
			if !bytes.Equal(gotPoints[i].k, points[i].k) || !bytes.Equal(gotPoints[i].v, points[i].v) {
				rt.Fatalf("point %d: got %q=%q, want %q=%q", i, gotPoints[i].k, gotPoints[i].v, points[i].k, points[i].v)
			}
		}

		// Spans: the tables' fragments, in order, tile the input's.
		var got []frag
		for _, c := range contents {
			got = append(got, c.frags...)
		}
		gi := 0
		for _, f := range frags {
			at, pieces := f.start, 0
			for at != f.end {
				if gi == len(got) {
					rt.Fatalf("fragment %q..%q: covered only up to %q", f.start, f.end, at)
				}
				g := got[gi]
				if g.start != at || g.end > f.end || !slices.Equal(g.values, f.values) {
					rt.Fatalf("fragment %q..%q %q: at %q the tables have %q..%q %q", f.start, f.end, f.values, at, g.start, g.end, g.values)
				}
				at = g.end
				gi++
				pieces++
			}
			if pieces > 1 {
				clipped++
			}
		}
		if gi != len(got) {
			rt.Fatalf("tables hold %d fragments beyond the input's: first %+v", len(got)-gi, got[gi])
		}

		// Tables do not overlap.
		first := make([]string, len(tables))
		for i, c := range contents {
			switch {
			case len(c.points) > 0 && (len(c.frags) == 0 || string(c.points[0].k) <= c.frags[0].start):
				first[i] = string(c.points[0].k)
			case len(c.frags) > 0:
				first[i] = c.frags[0].start
			default:
				rt.Fatalf("table %d is empty", i)
			}
		}
		for i, c := range contents {
			if i > 0 && first[i] <= first[i-1] {
				rt.Fatalf("table %d begins at %q, table %d at %q", i, first[i], i-1, first[i-1])
			}
			for _, f := range c.frags {
				if i > 0 && f.start <= string(tables[i-1].Largest) {
					rt.Fatalf("table %d: fragment %q..%q not above the previous table's largest %q", i, f.start, f.end, tables[i-1].Largest)
				}
				if i+1 < len(tables) && (f.end > first[i+1] || f.end > string(tables[i+1].Smallest)) {
					rt.Fatalf("table %d: fragment %q..%q past the next table's start %q", i, f.start, f.end, first[i+1])
				}
			}
			if len(c.points) > 0 && i+1 < len(tables) && string(c.points[len(c.points)-1].k) >= first[i+1] {
				rt.Fatalf("table %d: key %q not below the next table's start %q", i, c.points[len(c.points)-1].k, first[i+1])
			}
		}

		// The manifest, and nothing else in dir.
		m, err := bulk.ReadManifest(filepath.Join(dir, bulk.ManifestName))
		if err != nil {
			rt.Fatal(err)
		}
		wantTables := tables
		if wantTables == nil {
			wantTables = []bulk.TableInfo{}
		}
		if diff := cmp.Diff(wantTables, m.Tables); diff != "" {
			rt.Fatalf("manifest tables (-Finish +manifest):\n%s", diff)
		}
		if m.Entries != int64(len(points)) || m.Builder != bulk.RecordOptions(opts.Builder) {
			rt.Fatalf("manifest: %d entries, builder %+v; want %d, %+v", m.Entries, m.Builder, len(points), bulk.RecordOptions(opts.Builder))
		}
		names := []string{bulk.ManifestName}
		for _, ti := range tables {
			names = append(names, filepath.Base(ti.Path))
		}
		slices.Sort(names)
		if got := dirNames(rt, dir); !slices.Equal(got, names) {
			rt.Fatalf("dir holds %q, want %q", got, names)
		}

		// Writer's output for the same input.
		wtables, err := ww.Finish()
		if err != nil {
			rt.Fatal(err)
		}
		if len(wtables) != len(tables) {
			rt.Fatalf("Writer wrote %d tables, SortedWriter %d", len(wtables), len(tables))
		}
		for i := range tables {
			a, b := tables[i], wtables[i]
			b.Path = filepath.Join(dir, filepath.Base(b.Path))
			if diff := cmp.Diff(b, a); diff != "" {
				rt.Fatalf("table %d (-Writer +SortedWriter):\n%s", i, diff)
			}
			da, err1 := os.ReadFile(tables[i].Path)
			db, err2 := os.ReadFile(wtables[i].Path)
			if err1 != nil || err2 != nil || !bytes.Equal(da, db) {
				rt.Fatalf("table %d differs from Writer's (%v, %v)", i, err1, err2)
			}
		}
	})
}

// TestSortedWriterOrder checks that calls out of order are refused with
// builder.ErrKeyOrder, naming the keys, and leave the writer unchanged:
// it goes on, and its tables hold exactly the calls accepted.
func TestSortedWriterOrder(t *testing.T) {
	dir := t.TempDir()
	// A tiny target: every Add fills the table, so that a refused call
	// comes while a cut is pending.
	w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	type call struct {
		span       bool
		a, b       string // key, or span start and end
		ok         bool
		wantInMsg  []string
		duplicated bool
	}
	calls := []call{
		{a: "b", ok: true},
		{a: "b", wantInMsg: []string{`"b"`}, duplicated: true},
		{a: "a", wantInMsg: []string{`"a"`, `"b"`}},
		{span: true, a: "a", b: "c", wantInMsg: []string{`"a"`, `"b"`}}, // start below the last key
		{span: true, a: "d", b: "d", wantInMsg: []string{`"d"`}},        // empty
		{span: true, a: "e", b: "d", wantInMsg: []string{`"e"`, `"d"`}}, // reversed
		{span: true, a: "b", b: "f", ok: true},                          // starts at the last key
		{span: true, a: "b", b: "f", ok: true},                          // a second value
		{span: true, a: "b", b: "g", wantInMsg: []string{`"b"`, `"g"`, `"f"`}},
		{span: true, a: "c", b: "g", wantInMsg: []string{`"c"`, `"g"`, `"b"`, `"f"`}},
		{span: true, a: "e", b: "f", wantInMsg: []string{`"e"`, `"f"`, `"b"`}},
		{a: "c", ok: true}, // inside the span: cuts the table at "c"
		{span: true, a: "b", b: "f", wantInMsg: []string{`"b"`, `"c"`}}, // the same span, no longer at the position
		{a: "c", wantInMsg: []string{`"c"`}, duplicated: true},
		{span: true, a: "f", b: "h", ok: true},
		{a: "e", wantInMsg: []string{`"e"`, `"f"`}}, // below the last span's start
		{span: true, a: "g", b: "i", wantInMsg: []string{`"g"`, `"i"`, `"f"`, `"h"`}},
		{a: "f", ok: true},
		{span: true, a: "h", b: "i", ok: true},
		{a: "z", ok: true},
	}
	for i, c := range calls {
		var err error
		if c.span {
			err = w.AddSpan([]byte(c.a), []byte(c.b), []byte(fmt.Sprint("v", i)))
		} else {
			err = w.Add([]byte(c.a), []byte(fmt.Sprint("v", i)))
		}
		if c.ok {
			if err != nil {
				t.Fatalf("call %d %+v: %v", i, c, err)
			}
			continue
		}
		if !errors.Is(err, builder.ErrKeyOrder) || errors.Is(err, builder.ErrDuplicateKey) != c.duplicated {
			t.Fatalf("call %d %+v: %v, want ErrKeyOrder (duplicate: %v)", i, c, err, c.duplicated)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "bulk: ") || strings.Count(msg, "bulk: ") != 1 || strings.Contains(msg, "sstable") {
			t.Errorf("call %d: error %q does not begin \"bulk: \" once", i, msg)
		}
		for _, s := range c.wantInMsg {
			if !strings.Contains(msg, s) {
				t.Errorf("call %d: error %q does not name %s", i, msg, s)
			}
		}
	}
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var points []string
	var frags []frag
	for _, ti := range tables {
		c := readTable(t, ti.Path)
		for _, p := range c.points {
			points = append(points, string(p.k)+"="+string(p.v))
		}
		frags = append(frags, c.frags...)
	}
	if want := []string{"b=v0", "c=v11", "f=v17", "z=v19"}; !slices.Equal(points, want) {
		t.Errorf("points %q, want %q", points, want)
	}
	wantFrags := []frag{
		{"b", "c", []string{"v6", "v7"}},
		{"c", "f", []string{"v6", "v7"}},
		{"f", "h", []string{"v14"}},
		{"h", "i", []string{"v18"}},
	}
	if diff := cmp.Diff(wantFrags, frags, cmp.AllowUnexported(frag{})); diff != "" {
		t.Errorf("fragments (-want +got):\n%s", diff)
	}
	if len(tables) != 4 {
		t.Errorf("%d tables, want 4 (one per key)", len(tables))
	}
}

// TestSortedWriterSpanFormat checks that AddSpan refuses a builder format
// without spans, leaving the writer usable.
func TestSortedWriterSpanFormat(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewSortedWriter(dir, &bulk.Options{Builder: &builder.Options{HashIndex: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddSpan([]byte("a"), []byte("b"), nil); err == nil || errors.Is(err, builder.ErrKeyOrder) || !strings.HasPrefix(err.Error(), "bulk: ") {
		t.Fatalf("AddSpan with a hash index: %v", err)
	}
	if err := w.Add([]byte("a"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	tables, err := w.Finish()
	if err != nil || len(tables) != 1 || tables[0].Entries != 1 || tables[0].Spans != 0 {
		t.Fatalf("Finish: %+v, %v", tables, err)
	}
}

// TestNewSortedWriter checks the output directory checks, shared with
// NewWriter, and that an empty build writes a manifest listing no table.
func TestNewSortedWriter(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bulk.ManifestName, "000001.sst"} {
		d := filepath.Join(base, "has-"+name)
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := bulk.NewSortedWriter(d, nil); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("NewSortedWriter over %s: %v", name, err)
		}
	}
	for _, c := range []struct {
		dir  string
		opts *bulk.Options
	}{
		{"", nil},
		{file, nil},
		{filepath.Join(base, "neg"), &bulk.Options{TargetTableSize: -1}},
		{filepath.Join(base, "badopts"), &bulk.Options{Builder: &builder.Options{BlockSize: 1 << 31}}},
	} {
		if _, err := bulk.NewSortedWriter(c.dir, c.opts); err == nil || !strings.HasPrefix(err.Error(), "bulk: ") || strings.Contains(err.Error(), "sstable") {
			t.Errorf("NewSortedWriter(%q, %+v): %v, want a bulk error", c.dir, c.opts, err)
		}
	}
	// MemoryBudget and TempDir are ignored; a missing dir is created.
	dir := filepath.Join(base, "new", "out")
	w, err := bulk.NewSortedWriter(dir, &bulk.Options{MemoryBudget: -1, TempDir: filepath.Join(base, "missing")})
	if err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("new writer's dir holds %q", names)
	}
	tables, err := w.Finish()
	if err != nil || len(tables) != 0 {
		t.Fatalf("empty Finish: %v, %v", tables, err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{bulk.ManifestName}) {
		t.Fatalf("dir holds %q after an empty build", names)
	}
	m, err := bulk.ReadManifest(filepath.Join(dir, bulk.ManifestName))
	if err != nil || len(m.Tables) != 0 || m.Entries != 0 {
		t.Fatalf("manifest of an empty build: %+v, %v", m, err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Finish: %v", err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{bulk.ManifestName}) {
		t.Fatalf("Abort after Finish left %q", names)
	}
}

// writeSorted adds n entries of about 100 bytes and a span every tenth
// key, with a target size making many tables.
func writeSorted(t tb, w *bulk.SortedWriter, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		k := fmt.Appendf(nil, "key%08d", i)
		if i%10 == 0 {
			if err := w.AddSpan(k, fmt.Appendf(nil, "key%08d", i+5), []byte("span")); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Add(k, bytes.Repeat([]byte{byte(i)}, 100)); err != nil {
			t.Fatal(err)
		}
	}
}

// stagingDir returns the single entry of dir, which must be a staging
// directory IsTempDir recognises, and the .sst files in it.
func stagingDir(t tb, dir string) (string, []string) {
	t.Helper()
	names := dirNames(t, dir)
	if len(names) != 1 || !bulk.IsTempDir(names[0]) || !strings.HasPrefix(names[0], ".bulk-sorted-") {
		t.Fatalf("dir holds %q, want one staging directory", names)
	}
	stage := filepath.Join(dir, names[0])
	var tables []string
	for _, n := range dirNames(t, stage) {
		if strings.HasSuffix(n, ".sst") {
			tables = append(tables, n)
		}
	}
	return stage, tables
}

// checkEmpty checks that dir holds no table and no manifest, nor
// anything else but want.
func checkEmpty(t tb, dir string, want ...string) {
	t.Helper()
	if names := dirNames(t, dir); !slices.Equal(names, want) {
		t.Fatalf("dir holds %q, want %q", names, want)
	}
}

// TestSortedWriterAbort checks that Abort removes the tables written and
// the staging directory, and that calls after it return ErrAborted.
func TestSortedWriterAbort(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	writeSorted(t, w, 0, 500)
	if _, tables := stagingDir(t, dir); len(tables) < 5 {
		t.Fatalf("staging directory holds %q, want several tables", tables)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	checkEmpty(t, dir)
	if err := w.Add([]byte("zz"), nil); !errors.Is(err, bulk.ErrAborted) {
		t.Errorf("Add after Abort: %v", err)
	}
	if err := w.AddSpan([]byte("zz"), []byte("zzz"), nil); !errors.Is(err, bulk.ErrAborted) {
		t.Errorf("AddSpan after Abort: %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, bulk.ErrAborted) {
		t.Errorf("Finish after Abort: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}

	// After a successful Finish: Abort does nothing, calls return
	// ErrFinished.
	dir = t.TempDir()
	w, err = bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	writeSorted(t, w, 0, 100)
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, dir)
	if len(before) != len(tables)+1 {
		t.Fatalf("dir holds %q for %d tables", before, len(tables))
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Finish: %v", err)
	}
	checkEmpty(t, dir, before...)
	if err := w.Add([]byte("zz"), nil); !errors.Is(err, bulk.ErrFinished) {
		t.Errorf("Add after Finish: %v", err)
	}
	if err := w.AddSpan([]byte("zz"), []byte("zzz"), nil); !errors.Is(err, bulk.ErrFinished) {
		t.Errorf("AddSpan after Finish: %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, bulk.ErrFinished) {
		t.Errorf("Finish after Finish: %v", err)
	}
}

// TestSortedWriterFailedFinish makes Finish fail at two places, while
// moving the tables (one of them gone from the staging directory) and
// writing the manifest (a directory in its place), and checks that it
// removes every table, those moved already included, and the staging
// directory, and writes no manifest.
func TestSortedWriterFailedFinish(t *testing.T) {
	t.Run("rename", func(t *testing.T) {
		dir := t.TempDir()
		w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		writeSorted(t, w, 0, 500)
		stage, tables := stagingDir(t, dir)
		if len(tables) < 5 {
			t.Fatalf("staging directory holds %q", tables)
		}
		if err := os.Remove(filepath.Join(stage, "000004.sst")); err != nil {
			t.Fatal(err)
		}
		_, err = w.Finish()
		if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "bulk: ") || !strings.Contains(err.Error(), "000004.sst") {
			t.Fatalf("Finish: %v, want an error naming 000004.sst", err)
		}
		checkEmpty(t, dir)
		if _, err := w.Finish(); !errors.Is(err, bulk.ErrFinished) {
			t.Errorf("Finish after a failed Finish: %v", err)
		}
		if err := w.Abort(); err != nil {
			t.Errorf("Abort after a failed Finish: %v", err)
		}
	})
	t.Run("manifest", func(t *testing.T) {
		dir := t.TempDir()
		w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		writeSorted(t, w, 0, 500)
		// A non-empty directory where the manifest goes.
		if err := os.MkdirAll(filepath.Join(dir, bulk.ManifestName, "x"), 0o777); err != nil {
			t.Fatal(err)
		}
		_, err = w.Finish()
		if err == nil || !strings.HasPrefix(err.Error(), "bulk: writing manifest: ") {
			t.Fatalf("Finish: %v, want a manifest error", err)
		}
		checkEmpty(t, dir, bulk.ManifestName) // the directory put there
		if st, err := os.Stat(filepath.Join(dir, bulk.ManifestName)); err != nil || !st.IsDir() {
			t.Fatalf("the directory in the manifest's place: %v, %v", st, err)
		}
	})
	t.Run("add", func(t *testing.T) {
		// The staging directory gone: the Add that cuts a table fails,
		// and the writer cleans up.
		dir := t.TempDir()
		w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		writeSorted(t, w, 0, 100)
		stage, _ := stagingDir(t, dir)
		if err := os.RemoveAll(stage); err != nil {
			t.Fatal(err)
		}
		var addErr error
		for i := 100; addErr == nil && i < 10000; i++ {
			addErr = w.Add(fmt.Appendf(nil, "key%08d", i), make([]byte, 100))
		}
		if addErr == nil || errors.Is(addErr, builder.ErrKeyOrder) || !strings.HasPrefix(addErr.Error(), "bulk: ") || strings.Contains(addErr.Error(), "sstable") {
			t.Fatalf("Add into a removed staging directory: %v", addErr)
		}
		checkEmpty(t, dir)
		if err := w.Add([]byte("zzz"), nil); !errors.Is(err, bulk.ErrFinished) {
			t.Errorf("Add after a failed Add: %v", err)
		}
	})
}

const killEnv = "BULK_SORTED_KILL_DIR"

// TestSortedWriterKilled kills a process writing tables with a
// SortedWriter (SIGKILL, once it has finished several) and checks that
// its output directory holds no table and no manifest, only the staging
// directory, which IsTempDir recognises, with the finished tables in it.
// The child is this test binary, run with killEnv set.
func TestSortedWriterKilled(t *testing.T) {
	if dir := os.Getenv(killEnv); dir != "" {
		killedChild(t, dir)
		return
	}
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1", "ios", "android":
		t.Skipf("no child process killed with SIGKILL on %s", runtime.GOOS)
	}
	dir := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSortedWriterKilled$", "-test.count=1")
	cmd.Env = append(os.Environ(), killEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(2 * time.Minute)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				t.Fatal("the child ended without saying it had written tables")
			}
			if strings.HasPrefix(l, "tables written:") {
				break wait
			}
		case <-timeout:
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the child said nothing in 2 minutes")
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the child was not killed")
	}
	_, tables := stagingDir(t, dir)
	if len(tables) < 5 {
		t.Fatalf("the staging directory holds %q, want the tables finished before the kill", tables)
	}
	// The staging directory does not stop a new build there.
	w, err := bulk.NewSortedWriter(dir, nil)
	if err != nil {
		t.Fatalf("NewSortedWriter beside a killed build's staging directory: %v", err)
	}
	w.Abort()
}

// killedChild writes into dir until its staging directory holds five
// tables, says so on stdout, then goes on writing slowly until killed.
func killedChild(t *testing.T, dir string) {
	w, err := bulk.NewSortedWriter(dir, &bulk.Options{TargetTableSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for i := 0; i < 1_000_000; i++ {
		if i%10 == 0 {
			if err := w.AddSpan(fmt.Appendf(nil, "key%08d", i), fmt.Appendf(nil, "key%08d", i+5), nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Add(fmt.Appendf(nil, "key%08d", i), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 && !said {
			ents, _ := os.ReadDir(dir)
			if len(ents) == 1 {
				tables, _ := filepath.Glob(filepath.Join(dir, ents[0].Name(), "*.sst"))
				if len(tables) >= 5 {
					fmt.Printf("tables written: %d\n", len(tables))
					said = true
				}
			}
		}
		if said {
			time.Sleep(time.Millisecond) // a table open, while waiting for the kill
		}
	}
	time.Sleep(time.Hour)
}

// TestStagingDirName checks IsTempDir on SortedWriter staging directory
// names, and two fixes to Writer made with SortedWriter: a table whose
// only key is the empty key has a non-nil Largest, and AddSpan's order
// error says "bulk: " once.
func TestStagingDirName(t *testing.T) {
	for name, want := range map[string]bool{
		".bulk-sorted-123":  true,
		".bulk-sorted-":     false,
		".bulk-sorted-12x":  false,
		"bulk-sorted-12":    false,
		".x.bulk-sorted-12": false,
	} {
		if got := bulk.IsTempDir(name); got != want {
			t.Errorf("IsTempDir(%q) = %v, want %v", name, got, want)
		}
	}

	w, err := bulk.NewWriter(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = w.AddSpan([]byte("b"), []byte("a"), nil)
	if !errors.Is(err, builder.ErrKeyOrder) || strings.Count(err.Error(), "bulk: ") != 1 || strings.Contains(err.Error(), "sstable") {
		t.Errorf("Writer.AddSpan(b, a): %v", err)
	}
	if err := w.Add([]byte{}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	tables, err := w.Finish()
	if err != nil || len(tables) != 1 || tables[0].Smallest == nil || tables[0].Largest == nil {
		t.Fatalf("Writer with the empty key: %+v, %v; want Smallest and Largest empty, not nil", tables, err)
	}
}
