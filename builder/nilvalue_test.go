package builder_test

import (
	"bytes"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestNilValueReadsEmpty pins what Add's documentation says: a nil value
// and an empty one are stored alike and read back alike, as an empty,
// non-nil slice from Get and Iterator.Value, with nothing appended by
// GetAppend.
func TestNilValueReadsEmpty(t *testing.T) {
	var nilTable, emptyTable bytes.Buffer
	for _, c := range []struct {
		buf   *bytes.Buffer
		value []byte
	}{{&nilTable, nil}, {&emptyTable, []byte{}}} {
		b := builder.New(c.buf, nil)
		if err := b.Add([]byte("k"), c.value); err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(nilTable.Bytes(), emptyTable.Bytes()) {
		t.Fatal("tables with a nil and an empty value differ")
	}
	data := nilTable.Bytes()
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v, err := r.Get([]byte("k"))
	if err != nil || v == nil || len(v) != 0 {
		t.Fatalf("Get = %#v, %v; want an empty, non-nil slice", v, err)
	}
	dst := []byte("x")
	if v, err := r.GetAppend(dst, []byte("k")); err != nil || string(v) != "x" {
		t.Fatalf("GetAppend = %q, %v; want dst unchanged", v, err)
	}
	it := r.NewIterator()
	defer it.Close()
	if !it.First() || it.Value() == nil || len(it.Value()) != 0 {
		t.Fatalf("Iterator.Value = %#v; want an empty, non-nil slice", it.Value())
	}
}
