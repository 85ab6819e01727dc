package bulk_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/bulk"
)

func TestIsTempDir(t *testing.T) {
	for name, want := range map[string]bool{
		".bulk-runs-123":         true,
		".out.sst.bulk-42":       true,
		".tables.bulk-0":         true,
		".a.b.bulk-c.bulk-7":     true,
		".bulk-runs-":            false,
		".bulk-runs-12x":         false,
		".out.sst.bulk-":         false,
		".out.sst.bulk-12.old":   false,
		"out.sst.bulk-42":        false, // no leading dot
		"..bulk-1":               false, // no output name
		".bulk-1":                false,
		"000001.sst":             false,
		bulk.ManifestName:        false,
		".t.sst.1" + ".sst-tmp":  false,
		".manifest-1.json-tmp":   false,
		"":                       false,
		".out.sst.bulk-runs-123": false,
	} {
		if got := bulk.IsTempDir(name); got != want {
			t.Errorf("IsTempDir(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSpillDirRecognised checks that the directory a Writer spills into,
// which a killed process leaves behind, is recognised by IsTempDir.
func TestSpillDirRecognised(t *testing.T) {
	dir := t.TempDir()
	w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i := 0; w.Stats().Runs == 0; i++ {
		if err := w.Add(fmt.Appendf(nil, "key%06d", i), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	names := dirNames(t, dir)
	if len(names) != 1 || !bulk.IsTempDir(names[0]) {
		t.Fatalf("output directory during the build holds %q, want one directory IsTempDir recognises", names)
	}
}

// TestErrorPrefixOnce checks that an error of the builder passed on by
// Finish says "bulk: " once, without the builder's "sstable: ", names the
// table, and keeps its cause for errors.Is.
func TestErrorPrefixOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	w, err := bulk.NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Add([]byte("k"), []byte("v"))
	if err := os.Remove(dir); err != nil { // builder.Create then fails
		t.Fatal(err)
	}
	_, err = w.Finish()
	if err == nil {
		t.Fatal("Finish into a removed directory succeeded")
	}
	msg := err.Error()
	if want := "bulk: create " + filepath.Join(dir, "000001.sst") + ": "; !strings.HasPrefix(msg, want) || strings.Contains(msg, "sstable") {
		t.Errorf("error %q, want it to begin %q and not say sstable", msg, want)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %q does not match fs.ErrNotExist", msg)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "000001.sst") {
		t.Errorf("error %q: errors.As gives %+v, want the table's *fs.PathError", msg, pe)
	}
}

// TestErrFinishedAfterFailedFinish checks ErrFinished's documented meaning:
// after a failed Finish, Add and Finish return ErrFinished, which is not
// the builder's ErrClosed.
func TestErrFinishedAfterFailedFinish(t *testing.T) {
	w, err := bulk.NewWriter(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Add([]byte("k"), nil)
	w.Add([]byte("k"), nil)
	if _, err := w.Finish(); !errors.Is(err, builder.ErrDuplicateKey) {
		t.Fatalf("Finish with a duplicate key: %v", err)
	}
	err = w.Add([]byte("x"), nil)
	if !errors.Is(err, bulk.ErrFinished) || errors.Is(err, builder.ErrClosed) || errors.Is(err, bulk.ErrAborted) {
		t.Errorf("Add after a failed Finish: %v, want ErrFinished only", err)
	}
	if _, err := w.Finish(); !errors.Is(err, bulk.ErrFinished) {
		t.Errorf("Finish after a failed Finish: %v, want ErrFinished", err)
	}
}

// TestErrorsNameOutput checks that bulk's errors about the entries given
// name the output directory being written, say "bulk: " once and no
// "sstable", and still match the builder's sentinels: a duplicate key
// found in memory, in a spill and in a merge of runs (Writer), keys and
// spans out of order (SortedWriter, Writer.AddSpan).
func TestErrorsNameOutput(t *testing.T) {
	for _, budget := range []int64{0, 1 << 20} {
		dir := filepath.Join(t.TempDir(), "out")
		w, err := bulk.NewWriter(dir, &bulk.Options{MemoryBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		// With a 1 MiB budget the two "k"s land in different runs.
		w.Add([]byte("k"), nil)
		for i := range 30000 {
			w.Add(fmt.Appendf(nil, "key%06d", i), make([]byte, 40))
		}
		w.Add([]byte("k"), nil)
		_, err = w.Finish()
		var de *bulk.DuplicateKeyError
		if want := "bulk: " + dir + `: duplicate key "k"`; err == nil || err.Error() != want || !errors.As(err, &de) || de.Dir != dir {
			t.Errorf("budget %d: Finish with a duplicate key: %v, want %q", budget, err, want)
		}
		if !errors.Is(err, builder.ErrDuplicateKey) || !errors.Is(err, builder.ErrKeyOrder) {
			t.Errorf("budget %d: %v does not match ErrDuplicateKey and ErrKeyOrder", budget, err)
		}
	}

	dir := filepath.Join(t.TempDir(), "out")
	w, err := bulk.NewWriter(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	err = w.AddSpan([]byte("c"), []byte("a"), nil)
	if want := "bulk: " + dir + `: keys not in strictly increasing order: span start "c" is not below its end "a"`; err == nil || err.Error() != want || !errors.Is(err, builder.ErrKeyOrder) {
		t.Errorf("Writer.AddSpan(c, a): %v, want %q", err, want)
	}

	sdir := filepath.Join(t.TempDir(), "sorted")
	sw, err := bulk.NewSortedWriter(sdir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Abort()
	if err := sw.Add([]byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		err       error
		want      string
		sentinels []error
	}{
		{sw.Add([]byte("a"), nil), `keys not in strictly increasing order: key "a" after "b"`, []error{builder.ErrKeyOrder}},
		{sw.Add([]byte("b"), nil), `duplicate key "b"`, []error{builder.ErrDuplicateKey, builder.ErrKeyOrder}},
		{sw.AddSpan([]byte("a"), []byte("c"), nil), `keys not in strictly increasing order: span start "a" after key "b"`, []error{builder.ErrKeyOrder}},
	} {
		want := "bulk: " + sdir + ": " + c.want
		if c.err == nil || c.err.Error() != want {
			t.Errorf("SortedWriter: %v, want %q", c.err, want)
		}
		for _, s := range c.sentinels {
			if !errors.Is(c.err, s) {
				t.Errorf("SortedWriter: %v does not match %v", c.err, s)
			}
		}
	}
}
