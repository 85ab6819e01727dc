package rocksdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/rocksblock"
	"github.com/sstkit/sstable/merge"
)

// What RocksDB 7.8.3 and 10.5.1 cannot be made to write here (a custom
// compressor's block, the kinds of TimedPut and of user-defined
// timestamps) is crafted from a real table: a data block's bytes changed
// in place and its trailer's checksum recomputed, context modifier
// included, so that only the change itself is new.

const craftSource = "testdata/golden/native/fv6-bloom10/000013.sst" // raw blocks, XXH3, format_version 6

// reseal recomputes the trailer checksum of the block at h in data.
func reseal(t *testing.T, tb *Table, data []byte, h format.BlockHandle) {
	t.Helper()
	end := h.Offset + h.Length
	sum, err := rocksblock.TrailerChecksum(tb.footer.checksum, data[h.Offset:end], data[end])
	if err != nil {
		t.Fatal(err)
	}
	sum += rocksblock.ContextModifier(tb.footer.base, h.Offset)
	binary.LittleEndian.PutUint32(data[end+1:], sum)
}

func craftOpen(t *testing.T, data []byte) *Table {
	t.Helper()
	tb, err := NewTable(bytes.NewReader(data), int64(len(data)), &TableOptions{Name: "crafted.sst"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func craftSourceBytes(t *testing.T) ([]byte, *Table, format.BlockHandle) {
	t.Helper()
	data, err := os.ReadFile(craftSource)
	if err != nil {
		t.Fatal(err)
	}
	tb := craftOpen(t, data)
	if tb.codec.checksum != rocksblock.XXH3 || tb.footer.version != 6 || tb.core.Index.Len() == 0 {
		t.Fatalf("%s is not the format_version 6 XXH3 table this test needs", craftSource)
	}
	return append([]byte(nil), data...), tb, tb.core.Index.Handle(0)
}

// TestCustomCompressionRefused: a block of a custom compressor's type
// (0x80 and up, format_version 7's) is an ErrUnsupported error naming
// the type, not a corruption and not garbage.
func TestCustomCompressionRefused(t *testing.T) {
	for _, typ := range []byte{rocksblock.Xpress, 0x80, 0xfe} {
		data, tb, h := craftSourceBytes(t)
		data[h.Offset+h.Length] = typ
		reseal(t, tb, data, h)
		it := craftOpen(t, data).NewIter(nil)
		if it.First() {
			t.Fatalf("type %#x: the first block read", typ)
		}
		err := it.Close()
		if !errors.Is(err, ErrUnsupported) || errors.Is(err, format.ErrCorrupt) {
			t.Fatalf("type %#x: %v, want ErrUnsupported only", typ, err)
		}
		if name := rocksblock.CompressionName(typ); !strings.Contains(err.Error(), name) {
			t.Fatalf("type %#x: %q does not name %q", typ, err, name)
		}
	}
}

// TestCraftedKinds: the kinds of RocksDB 9's TimedPut (a value with a
// preferred sequence number: the value, then 8 bytes) and of user-defined
// timestamps' deletions are read and shown by name, and a merge level
// shows the first as its value and the second as a deletion.
func TestCraftedKinds(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		name string
	}{{KindValuePreferredSeqno, "value-preferred-seqno"}, {KindDeletionWithTimestamp, "delete-with-timestamp"}} {
		data, tb, h := craftSourceBytes(t)
		// The first entry of the first block shares nothing: shared (0),
		// key length, value length, key, value.
		b := data[h.Offset:]
		p := 1
		klen, n := binary.Uvarint(b[p:])
		p += n
		vlen, n := binary.Uvarint(b[p:])
		p += n
		key := b[p : p+int(klen)]
		value := append([]byte(nil), b[p+int(klen):p+int(klen)+int(vlen)]...)
		user := append([]byte(nil), key[:len(key)-8]...)
		key[len(key)-8] = byte(c.kind)
		reseal(t, tb, data, h)
		ct := craftOpen(t, data)
		it := ct.NewIter(nil)
		if !it.First() || !bytes.Equal(it.Key(), user) || it.Kind() != c.kind || it.Kind().String() != c.name {
			t.Fatalf("%s: first entry %q %v (%v)", c.name, it.Key(), it.Kind(), it.Err())
		}
		it.Close()
		if _, err := ct.Verify(); err != nil {
			t.Fatalf("%s: Verify: %v", c.name, err)
		}
		lvl, err := ct.Level()
		if err != nil {
			t.Fatal(err)
		}
		got, err := merge.Get([]merge.Level{lvl}, user, MergeOptions())
		switch {
		case c.kind == KindDeletionWithTimestamp:
			if err == nil {
				t.Fatalf("%s: merge.Get = %q, want the key deleted", c.name, got)
			}
		case len(value) >= 8:
			if err != nil || !bytes.Equal(got, value[:len(value)-8]) {
				t.Fatalf("%s: merge.Get = %q, %v; want %q", c.name, got, err, value[:len(value)-8])
			}
		default:
			if !errors.Is(err, format.ErrCorrupt) {
				t.Fatalf("%s: a %d-byte value: merge.Get = %q, %v; want a corruption", c.name, len(value), got, err)
			}
		}
	}
}

// TestOtherComparatorRefused: a table of a comparator this package does
// not know (a user-defined timestamp's, a custom one) is refused at open
// with ErrUnsupported naming it, rather than read in the wrong order.
func TestOtherComparatorRefused(t *testing.T) {
	for _, name := range []string{"leveldb.BytewiseComparator.u64ts"[:len(BytewiseComparator)], "my.OwnComparator.keyorder!!"[:len(BytewiseComparator)]} {
		data, tb, _ := craftSourceBytes(t)
		h := tb.meta[metaProperties]
		block := data[h.Offset : h.Offset+h.Length]
		i := bytes.Index(block, []byte(BytewiseComparator))
		if i < 0 {
			t.Fatal("no comparator name in the properties block")
		}
		alt := []byte(strings.Replace(name, ".", "_", 0))
		alt[len(alt)-1] = 'X' // a name of the same length, not bytewise's
		copy(block[i:], alt)
		reseal(t, tb, data, h)
		_, err := NewTable(bytes.NewReader(data), int64(len(data)), nil)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), string(alt)) {
			t.Fatalf("comparator %q: %v, want ErrUnsupported naming it", alt, err)
		}
	}
}
