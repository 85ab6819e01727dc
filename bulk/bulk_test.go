package bulk_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

type kv struct{ k, v []byte }

// tb is what the helpers need of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// readTables returns every entry of the tables, in table order, checking
// each table's info against its contents.
func readTables(t tb, tables []bulk.TableInfo) []kv {
	t.Helper()
	var out []kv
	for _, ti := range tables {
		r, err := reader.Open(ti.Path, nil)
		if err != nil {
			t.Fatalf("open %s: %v", ti.Path, err)
		}
		st, err := os.Stat(ti.Path)
		if err != nil || st.Size() != ti.Size {
			t.Fatalf("%s: size %v (%v), info says %d", ti.Path, st, err, ti.Size)
		}
		it := r.NewIterator()
		var n int64
		var first, last []byte
		for ok := it.First(); ok; ok = it.Next() {
			if n == 0 {
				first = bytes.Clone(it.Key())
			}
			last = bytes.Clone(it.Key())
			out = append(out, kv{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
			n++
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Fatalf("verify %s: %v", ti.Path, err)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("close %s: %v", ti.Path, err)
		}
		if n != ti.Entries || !bytes.Equal(first, ti.Smallest) || !bytes.Equal(last, ti.Largest) {
			t.Fatalf("%s holds %d entries %q..%q, info says %d %q..%q", ti.Path, n, first, last, ti.Entries, ti.Smallest, ti.Largest)
		}
	}
	return out
}

// dirNames lists dir, or nil if it does not exist.
func dirNames(t tb, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkOutput checks that tables hold exactly want (sorted by key), in key
// order without overlap, that the manifest lists them, and that dir holds
// nothing else.
func checkOutput(t tb, dir string, tables []bulk.TableInfo, want []kv) {
	t.Helper()
	slices.SortFunc(want, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	got := readTables(t, tables)
	if len(got) != len(want) {
		t.Fatalf("tables hold %d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].k, want[i].k) || !bytes.Equal(got[i].v, want[i].v) {
			t.Fatalf("entry %d: got %q=%q, want %q=%q", i, got[i].k, got[i].v, want[i].k, want[i].v)
		}
	}
	names := []string{bulk.ManifestName}
	for i, ti := range tables {
		if i > 0 && bytes.Compare(tables[i-1].Largest, ti.Smallest) >= 0 {
			t.Fatalf("tables %d and %d overlap", i-1, i)
		}
		if want := filepath.Join(dir, fmt.Sprintf("%06d.sst", i+1)); ti.Path != want {
			t.Fatalf("table %d at %s, want %s", i, ti.Path, want)
		}
		names = append(names, filepath.Base(ti.Path))
	}
	slices.Sort(names)
	if got := dirNames(t, dir); !slices.Equal(got, names) {
		t.Fatalf("dir holds %q, want %q", got, names)
	}
	m, err := bulk.ReadManifest(filepath.Join(dir, bulk.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tables) != len(tables) {
		t.Fatalf("manifest lists %d tables, Finish returned %d", len(m.Tables), len(tables))
	}
	var entries int64
	for i := range tables {
		a, b := m.Tables[i], tables[i]
		if a.Path != b.Path || !bytes.Equal(a.Smallest, b.Smallest) || !bytes.Equal(a.Largest, b.Largest) || a.Entries != b.Entries || a.Size != b.Size {
			t.Fatalf("manifest table %d = %+v, Finish returned %+v", i, a, b)
		}
		entries += a.Entries
	}
	if m.Entries != entries || entries != int64(len(want)) {
		t.Fatalf("manifest counts %d entries, tables %d, input %d", m.Entries, entries, len(want))
	}
}

// TestProperty adds random entries in random order with small budgets
// (many spills, sometimes more runs than one merge takes) and small target
// sizes, and checks the tables hold exactly the sorted input; a repeated
// key must fail Finish and leave nothing behind.
func TestProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 1200).Draw(rt, "n")
		keyLen := rapid.IntRange(1, 12).Draw(rt, "keyLen")
		seen := map[string]bool{}
		var in []kv
		for i := 0; i < n; i++ {
			k := rapid.SliceOfN(rapid.Byte(), 0, keyLen).Draw(rt, "k")
			if seen[string(k)] {
				continue
			}
			seen[string(k)] = true
			// Values: a drawn length, bytes derived from the key and index
			// (drawing every byte would make the test slow, not stronger).
			v := make([]byte, rapid.IntRange(0, 200).Draw(rt, "vlen"))
			for j := range v {
				v[j] = byte(i*31 + j + len(k))
			}
			in = append(in, kv{k, v})
		}
		dup := len(in) > 0 && rapid.IntRange(0, 4).Draw(rt, "dup") == 0
		if dup {
			d := in[rapid.IntRange(0, len(in)-1).Draw(rt, "dupOf")]
			in = append(in, kv{d.k, []byte("again")})
			j := rapid.IntRange(0, len(in)-1).Draw(rt, "dupAt")
			in[j], in[len(in)-1] = in[len(in)-1], in[j]
		}
		opts := &bulk.Options{
			MemoryBudget:    int64(rapid.SampledFrom([]int{4 << 10, 16 << 10, 64 << 10, 1 << 20}).Draw(rt, "budget")),
			TargetTableSize: int64(rapid.SampledFrom([]int{0, 4 << 10, 16 << 10, 64 << 10}).Draw(rt, "target")),
			Builder:         &builder.Options{BlockSize: rapid.SampledFrom([]int{64, 4096}).Draw(rt, "block")},
		}
		base := t.TempDir()
		dir := filepath.Join(base, "out")
		w, err := bulk.NewWriter(dir, opts)
		if err != nil {
			rt.Fatal(err)
		}
		var addErr error
		for _, e := range in {
			if addErr = w.Add(e.k, e.v); addErr != nil {
				break
			}
		}
		var tables []bulk.TableInfo
		err = addErr
		if err == nil {
			tables, err = w.Finish()
		}
		if dup {
			if !errors.Is(err, builder.ErrDuplicateKey) {
				rt.Fatalf("duplicate key: got %v, want ErrDuplicateKey", err)
			}
			var de *bulk.DuplicateKeyError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), fmt.Sprintf("%q", de.Key)) {
				rt.Fatalf("error %v does not name the key", err)
			}
			if names := dirNames(t, base); !slices.Equal(names, []string{"out"}) {
				rt.Fatalf("failed writer left %q beside its output directory", names)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				rt.Fatalf("failed writer left %q", names)
			}
			return
		}
		if err != nil {
			rt.Fatal(err)
		}
		checkOutput(rt, dir, tables, in)
		if opts.TargetTableSize == 0 && len(tables) > 1 {
			rt.Fatalf("%d tables without a target size", len(tables))
		}
	})
}

// TestTargetSize checks that tables come out near the target size.
func TestTargetSize(t *testing.T) {
	dir := t.TempDir()
	const target = 256 << 10
	w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: 1 << 20, TargetTableSize: target, Builder: &builder.Options{Compression: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var in []kv
	for i := range 40000 {
		k := fmt.Appendf(nil, "%016x", uint64(i)*0x9e3779b97f4a7c15)
		v := bytes.Repeat([]byte{byte(i)}, 60)
		in = append(in, kv{k, v})
		if err := w.Add(k, v); err != nil {
			t.Fatal(err)
		}
	}
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 3 {
		t.Fatalf("%d tables", len(tables))
	}
	for i, ti := range tables[:len(tables)-1] {
		if ti.Size < target*9/10 || ti.Size > target*11/10 {
			t.Errorf("table %d: %d bytes, target %d", i, ti.Size, target)
		}
	}
	checkOutput(t, dir, tables, in)
}

func TestAbort(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "out")
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: 4 << 10, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if err := w.Add(fmt.Appendf(nil, "k%d", i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if w.Stats().Runs == 0 {
		t.Fatal("no spills")
	}
	if len(dirNames(t, tmp)) == 0 {
		t.Fatal("runs not under TempDir")
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if names := dirNames(t, base); !slices.Equal(names, []string{"out", "tmp"}) {
		t.Fatalf("aborted writer left %q", names)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Fatalf("aborted writer left %q in its output directory", names)
	}
	if names := dirNames(t, tmp); len(names) != 0 {
		t.Fatalf("aborted writer left %q in TempDir", names)
	}
	if err := w.Add([]byte("x"), nil); !errors.Is(err, bulk.ErrAborted) {
		t.Fatalf("Add after Abort: %v", err)
	}
	if _, err := w.Finish(); !errors.Is(err, bulk.ErrAborted) {
		t.Fatalf("Finish after Abort: %v", err)
	}
}

func TestFinishTwiceAndEmpty(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := w.Finish()
	if err != nil || len(tables) != 0 {
		t.Fatalf("empty Finish: %v, %v", tables, err)
	}
	if _, err := w.Finish(); !errors.Is(err, bulk.ErrFinished) {
		t.Fatalf("second Finish: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Finish: %v", err)
	}
	m, err := bulk.ReadManifest(filepath.Join(dir, bulk.ManifestName))
	if err != nil || len(m.Tables) != 0 || m.Builder.Filter == "" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		opts *bulk.Options
		want string
	}{
		{"", nil, "empty output directory"},
		{filepath.Join(dir, "a"), &bulk.Options{MemoryBudget: -1}, "negative MemoryBudget"},
		{filepath.Join(dir, "a"), &bulk.Options{TargetTableSize: -1}, "negative TargetTableSize"},
		{file, nil, "not a directory"},
		{filepath.Join(dir, "b"), &bulk.Options{TempDir: filepath.Join(dir, "missing")}, "TempDir"},
	} {
		_, err := bulk.NewWriter(c.dir, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewWriter(%q, %+v) = %v, want %q", c.dir, c.opts, err, c.want)
		}
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"file"}) {
		t.Errorf("failed NewWriter left %q", names)
	}
	// A directory holding an earlier build is refused.
	out := filepath.Join(dir, "out")
	w, err := bulk.NewWriter(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add([]byte("k"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := bulk.NewWriter(out, nil); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Errorf("NewWriter over an earlier build: %v", err)
	}
	// A damaged manifest is an error, not a panic.
	for _, data := range []string{"", "{", `{"version":2}`, `{"version":1,"tables":[{"path":"a","smallest":"Yg==","largest":"YQ==","entries":1,"size":1}]}`,
		`{"version":1,"tables":[{"path":"../a","smallest":"YQ==","largest":"YQ==","entries":1,"size":1}]}`} {
		p := filepath.Join(dir, "m.json")
		if err := os.WriteFile(p, []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
		if _, err := bulk.ReadManifest(p); err == nil {
			t.Errorf("ReadManifest(%q) succeeded", data)
		}
	}
}

// TestManyRuns spills more runs than one merge takes, so that Finish
// merges in passes.
func TestManyRuns(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: 2 << 10, TargetTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var in []kv
	for i := range 10000 {
		k := fmt.Appendf(nil, "%08x", uint32(i)*2654435761)
		v := fmt.Appendf(nil, "v%d", i)
		in = append(in, kv{k, v})
		if err := w.Add(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if runs := w.Stats().Runs; runs <= 64 {
		t.Fatalf("%d runs, want more than one merge takes", runs)
	}
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, dir, tables, in)
}

// TestOneEntryPerTable: a target of one byte cuts a table after every
// entry.
func TestOneEntryPerTable(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewWriter(dir, &bulk.Options{TargetTableSize: 1, MemoryBudget: 256})
	if err != nil {
		t.Fatal(err)
	}
	var in []kv
	for i := range 20 {
		k := fmt.Appendf(nil, "%02d", (i*7)%20)
		in = append(in, kv{k, k})
		if err := w.Add(k, k); err != nil {
			t.Fatal(err)
		}
	}
	tables, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 20 {
		t.Fatalf("%d tables, want 20", len(tables))
	}
	checkOutput(t, dir, tables, in)
}

// gatePolicy is Bloom(10) under a name of its own, whose generator for
// the stop-th table a writer writes (1-based) stops at that table's first
// key until release is closed, having closed reached: a hook in Finish's
// merge, the one place where a Writer runs a caller's code, so that a
// test can act while the merge is surely under way.
type gatePolicy struct {
	filterblock.Policy
	stop             int
	tables           *int
	reached, release chan struct{}
}

func (p gatePolicy) Name() string { return "bulk_test.gate" }

func (p gatePolicy) NewGenerator() filterblock.Generator {
	*p.tables++
	g := &gateGenerator{Generator: p.Policy.NewGenerator()}
	if *p.tables == p.stop {
		g.reached, g.release = p.reached, p.release
	}
	return g
}

type gateGenerator struct {
	filterblock.Generator
	reached, release chan struct{}
}

func (g *gateGenerator) Add(key []byte) {
	if g.reached != nil {
		close(g.reached)
		g.reached = nil
		<-g.release
	}
	g.Generator.Add(key)
}

// TestAbortDuringFinish calls Abort from another goroutine while Finish
// merges spilled runs into tables: while it writes the first table, and
// while it writes the third, the first two finished and in place under
// their final names. Finish is held at the table's first key (gatePolicy)
// until Abort has returned, so the abort surely lands in the merge, and
// then the one outcome is ErrAborted with nothing left behind: no table,
// no temporary file, no manifest, no run.
func TestAbortDuringFinish(t *testing.T) {
	const guard = 2 * time.Minute // a failing test's bound, not a measurement
	for _, stop := range []int{1, 3} {
		t.Run(fmt.Sprintf("table%d", stop), func(t *testing.T) {
			base := t.TempDir()
			dir, tmp := filepath.Join(base, "out"), filepath.Join(base, "tmp")
			if err := os.Mkdir(tmp, 0o777); err != nil {
				t.Fatal(err)
			}
			var tables int
			gate := gatePolicy{Policy: filterblock.Bloom(10), stop: stop, tables: &tables, reached: make(chan struct{}), release: make(chan struct{})}
			w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: 64 << 10, TargetTableSize: 64 << 10, TempDir: tmp, Builder: &builder.Options{Filter: gate}})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20000 {
				if err := w.Add(fmt.Appendf(nil, "%08x", uint32(i)*2654435761), []byte("some value bytes")); err != nil {
					t.Fatal(err)
				}
			}
			if w.Stats().Runs == 0 {
				t.Fatal("no spills: Finish would not merge")
			}
			done := make(chan error, 1)
			go func() {
				_, err := w.Finish()
				done <- err
			}()
			select {
			case <-gate.reached:
			case err := <-done:
				t.Fatalf("Finish returned %v before writing table %d", err, stop)
			case <-time.After(guard):
				t.Fatalf("Finish did not reach table %d within %v", stop, guard)
			}
			// Held at the first key of table stop: the tables before it
			// are in place, and it is being written to a temporary file.
			if s := w.Stats(); s.Phase != bulk.PhaseMerging || s.Tables != int64(stop-1) {
				t.Fatalf("held in phase %v with %d tables finished, want merging with %d", s.Phase, s.Tables, stop-1)
			}
			var finished, temp int
			for _, name := range dirNames(t, dir) {
				switch {
				case builder.IsTempFile(name):
					temp++
				case strings.HasSuffix(name, ".sst"):
					finished++
				}
			}
			if finished != stop-1 || temp != 1 {
				t.Fatalf("while table %d is written: %d tables and %d temporary files in %q", stop, finished, temp, dirNames(t, dir))
			}
			if err := w.Abort(); err != nil {
				t.Fatalf("Abort while Finish merges: %v", err)
			}
			close(gate.release)
			select {
			case err = <-done:
			case <-time.After(guard):
				t.Fatalf("Finish did not return within %v of the abort", guard)
			}
			if !errors.Is(err, bulk.ErrAborted) {
				t.Fatalf("Finish aborted while merging: %v, want ErrAborted", err)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Fatalf("aborted Finish left %q in the output directory", names)
			}
			if names := dirNames(t, tmp); len(names) != 0 {
				t.Fatalf("aborted Finish left %q in TempDir", names)
			}
			if s := w.Stats(); s.Phase != bulk.PhaseDone {
				t.Fatalf("phase %v after the aborted Finish", s.Phase)
			}
		})
	}
}

// TestManifestFormatVersion checks the format version the manifest
// records: 4 for the builder's defaults, the version asked for otherwise.
func TestManifestFormatVersion(t *testing.T) {
	for _, c := range []struct {
		opts *builder.Options
		want uint32
	}{
		{nil, format.Version4},
		{&builder.Options{}, format.Version4},
		{&builder.Options{FormatVersion: format.Version1}, format.Version1},
		{&builder.Options{HashIndex: true}, format.Version2},
	} {
		if got := bulk.RecordOptions(c.opts).FormatVersion; got != c.want {
			t.Errorf("RecordOptions(%+v).FormatVersion = %d, want %d", c.opts, got, c.want)
		}
	}
}
