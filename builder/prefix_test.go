package builder_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sstkit/sstable/builder"
	"github.com/sstkit/sstable/format"
)

func TestDuplicateKey(t *testing.T) {
	b := builder.New(io.Discard, nil)
	if err := b.Add([]byte("b"), nil); err != nil {
		t.Fatal(err)
	}
	err := b.Add([]byte("b"), []byte("again"))
	if !errors.Is(err, builder.ErrDuplicateKey) || !errors.Is(err, builder.ErrKeyOrder) {
		t.Fatalf("Add of a duplicate: %v; want ErrDuplicateKey and ErrKeyOrder", err)
	}
	err = b.Add([]byte("a"), nil)
	if !errors.Is(err, builder.ErrKeyOrder) || errors.Is(err, builder.ErrDuplicateKey) {
		t.Fatalf("Add of a smaller key: %v; want ErrKeyOrder only", err)
	}
	if err := b.Add([]byte("c"), nil); err != nil {
		t.Fatalf("builder unusable after the errors: %v", err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if b.EntryCount() != 2 {
		t.Fatalf("%d entries, want 2", b.EntryCount())
	}
}

// badSplitter returns a prefix length outside the key.
type badSplitter struct{}

func (badSplitter) Name() string         { return "test.bad" }
func (badSplitter) Split(key []byte) int { return len(key) + 1 }

func TestSplitterErrors(t *testing.T) {
	// Suffix(1) with user keys "a" and "ab": "ab"+"\x00" sorts before
	// "a"+"\xff", but its prefix "ab" is above "a".
	b := builder.New(io.Discard, &builder.Options{Splitter: format.Suffix(1)})
	if err := b.Add([]byte("a\x00"), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Add([]byte("ab\x00"), nil); err != nil {
		t.Fatal(err)
	}
	err := b.Add([]byte("a\xff"), nil)
	if !errors.Is(err, builder.ErrPrefixOrder) {
		t.Fatalf("Add with a decreasing prefix: %v; want ErrPrefixOrder", err)
	}
	if err := b.Add([]byte("ab\x01"), nil); err != nil {
		t.Fatalf("builder unusable after ErrPrefixOrder: %v", err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}

	b = builder.New(io.Discard, &builder.Options{Splitter: badSplitter{}})
	if err := b.Add([]byte("k"), nil); err == nil || !strings.Contains(err.Error(), "prefix length 2") {
		t.Fatalf("Add with a splitter answering past the key: %v", err)
	}
	b = builder.New(io.Discard, &builder.Options{Splitter: format.Suffix(-1)})
	if err := b.Add([]byte("k"), nil); err == nil {
		t.Fatalf("Suffix(-1) accepted")
	}
}

func TestSetUserPropertyLimits(t *testing.T) {
	b := builder.New(io.Discard, nil)
	for _, c := range []struct {
		name  string
		value []byte
	}{
		{"", nil},
		{strings.Repeat("n", format.MaxUserPropertyNameLen+1), nil},
		{"big", make([]byte, format.MaxUserPropertyValueLen+1)},
	} {
		if err := b.SetUserProperty(c.name, c.value); err == nil {
			t.Errorf("SetUserProperty(%d-byte name, %d-byte value) accepted", len(c.name), len(c.value))
		}
	}
	for i := range format.MaxUserProperties {
		if err := b.SetUserProperty(fmt.Sprint(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SetUserProperty("one too many", nil); err == nil {
		t.Fatalf("property %d accepted", format.MaxUserProperties+1)
	}
	if err := b.SetUserProperty("0", []byte("replaced")); err != nil {
		t.Fatalf("replacing a property at the count limit: %v", err)
	}
	// The size limit: 64 KiB values fill 512 KiB after 7.
	b = builder.New(io.Discard, nil)
	var err error
	n := 0
	for ; err == nil; n++ {
		err = b.SetUserProperty(fmt.Sprint(n), make([]byte, format.MaxUserPropertyValueLen))
	}
	if n != 8 {
		t.Fatalf("size limit hit at property %d, want 8", n)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := b.SetUserProperty("late", nil); !errors.Is(err, builder.ErrClosed) {
		t.Fatalf("SetUserProperty after Finish: %v", err)
	}
}

// TestEstimatedSize checks the estimate while building tables over 1 MiB
// against their final size, and its exactness after Finish.
func TestEstimatedSize(t *testing.T) {
	for _, opts := range []builder.Options{
		{},
		{Compression: format.NoCompression},
		{HashIndex: true},
		{HashIndex: true, Compression: format.NoCompression, Splitter: format.Suffix(8)},
		{Compression: format.ZstdCompression},
		{PartitionThreshold: 1},
		{PartitionThreshold: 1, PartitionSize: 1024, Splitter: format.Suffix(8)},
	} {
		t.Run(fmt.Sprintf("%+v", opts), func(t *testing.T) {
			var buf bytes.Buffer
			b := builder.New(&buf, &opts)
			var ests []int64
			rng := rand.New(rand.NewPCG(1, 2))
			val := make([]byte, 100)
			for i := range 40000 {
				k := binary.BigEndian.AppendUint64([]byte(fmt.Sprintf("user%08d", i/2)), ^uint64(2-i%2)) // newer versions first
				for j := range val[:60] {
					val[j] = byte(rng.Uint32()) // the rest stays zero: compresses somewhat
				}
				if err := b.Add(k, val); err != nil {
					t.Fatal(err)
				}
				if i%5000 == 4999 {
					ests = append(ests, b.EstimatedSize())
				}
			}
			final := b.EstimatedSize()
			if err := b.Finish(); err != nil {
				t.Fatal(err)
			}
			size := int64(buf.Len())
			if got := b.EstimatedSize(); got != size {
				t.Fatalf("EstimatedSize after Finish = %d, table is %d bytes", got, size)
			}
			if size < 1<<20 {
				t.Fatalf("table of %d bytes: the test wants over 1 MiB", size)
			}
			d := float64(final) / float64(size)
			t.Logf("estimate %d, table %d bytes: ratio %.4f", final, size, d)
			if d < 0.95 || d > 1.05 {
				t.Fatalf("EstimatedSize before Finish = %d, table is %d bytes (ratio %.3f)", final, size, d)
			}
			for i := 1; i < len(ests); i++ {
				if ests[i] <= ests[i-1] {
					t.Fatalf("estimates do not grow: %v", ests)
				}
			}
		})
	}
}
