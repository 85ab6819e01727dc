package reader_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/reader"
)

// TestLifetimes checks the lifetimes the package documentation promises:
// Add keeps nothing of its arguments; Get and GetAppend results belong to
// the caller and outlive Close; Properties' keys outlive Close; a cloned
// Key stays correct while the iterator moves on.
func TestLifetimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sst")
	b, err := builder.Create(path, &builder.Options{BlockSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	// One key buffer and one value buffer, overwritten after every Add.
	var key, value []byte
	const n = 300
	for i := range n {
		key = fmt.Appendf(key[:0], "key%04d", i)
		value = fmt.Appendf(value[:0], "value%d", i)
		if err := b.Add(key, value); err != nil {
			t.Fatal(err)
		}
		copy(key, "XXXXXXX")
		copy(value, "YYYYYYY")
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	bp := b.Properties()

	for _, opts := range []*reader.Options{nil, cacheOpts(t, 0), {NoMmap: true}} {
		r, err := reader.Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		it := r.NewIterator()
		var keys [][]byte
		for ok := it.First(); ok; ok = it.Next() {
			keys = append(keys, bytes.Clone(it.Key()))
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if len(keys) != n {
			t.Fatalf("scan found %d entries, want %d", len(keys), n)
		}
		for i, k := range keys {
			if want := fmt.Sprintf("key%04d", i); string(k) != want {
				t.Fatalf("entry %d: cloned key %q, want %q", i, k, want)
			}
		}

		got, err := r.Get([]byte("key0007"))
		if err != nil {
			t.Fatal(err)
		}
		dst := []byte("prefix:")
		appended, err := r.GetAppend(dst, []byte("key0123"))
		if err != nil {
			t.Fatal(err)
		}
		// Writing into the results changes nothing the reader returns later.
		copy(got, "ZZZZ")
		copy(appended[len(dst):], "ZZZZ")
		if v, err := r.Get([]byte("key0007")); err != nil || string(v) != "value7" {
			t.Errorf("Get after modifying an earlier result = %q, %v", v, err)
		}
		if v, err := r.GetAppend(nil, []byte("key0123")); err != nil || string(v) != "value123" {
			t.Errorf("GetAppend after modifying an earlier result = %q, %v", v, err)
		}
		p := r.Properties()
		got, _ = r.Get([]byte("key0042"))
		appended, _ = r.GetAppend(dst[:len(dst):len(dst)], []byte("key0042"))
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		// After Close: results and properties are still the caller's.
		if string(got) != "value42" || string(appended) != "prefix:value42" {
			t.Errorf("after Close: Get result %q, GetAppend result %q", got, appended)
		}
		if string(p.SmallestKey) != "key0000" || string(p.LargestKey) != fmt.Sprintf("key%04d", n-1) {
			t.Errorf("after Close: properties keys %q .. %q", p.SmallestKey, p.LargestKey)
		}
	}
	if string(bp.SmallestKey) != "key0000" || string(bp.LargestKey) != fmt.Sprintf("key%04d", n-1) {
		t.Errorf("builder properties keys %q .. %q", bp.SmallestKey, bp.LargestKey)
	}
}
