package reader_test

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestOpenCloseMessages checks that Open and a second Close give one-line
// errors naming the operation and the file once, and that they still
// classify as before.
func TestOpenCloseMessages(t *testing.T) {
	dir := t.TempDir()
	oneLine := func(what string, err error, subs ...string) {
		t.Helper()
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is not one line", what, msg)
		}
		for _, s := range subs {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: %q does not mention %q", what, msg, s)
			}
		}
	}

	missing := filepath.Join(dir, "missing.sst")
	_, err := reader.Open(missing, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want fs.ErrNotExist", err)
	}
	oneLine("Open(missing)", err, "sstable: open "+missing+": ")
	if n := strings.Count(err.Error(), "open"); n != 1 {
		t.Errorf("Open(missing): %q says open %d times", err, n)
	}

	_, err = reader.Open(dir, nil)
	if err == nil {
		t.Fatal("Open(directory) succeeded")
	}
	oneLine("Open(directory)", err, "sstable: open "+dir+": is a directory")
	if strings.Contains(err.Error(), "offset") {
		t.Errorf("Open(directory): %q gives an offset", err)
	}

	path := filepath.Join(dir, "t.sst")
	b, err := builder.Create(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err := reader.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	err = r.Close()
	if !errors.Is(err, reader.ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	oneLine("second Close", err, "sstable: close "+path+": ")
	if n := strings.Count(err.Error(), "sstable"); n != 1 {
		t.Errorf("second Close: %q says sstable %d times", err, n)
	}

	// A Reader from New has no file name; the message still names the
	// operation.
	var buf bytes.Buffer
	bb := builder.New(&buf, nil)
	if err := bb.Finish(); err != nil {
		t.Fatal(err)
	}
	r, err = reader.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if err := r.Close(); !errors.Is(err, reader.ErrClosed) || err.Error() != "sstable: close: reader already closed" {
		t.Errorf("second Close of a Reader from New = %q", err)
	}
}
