package filterblock_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// checkSection decodes an encoded section and checks the documented
// layout: uvarint name length, name, zero padding to a 64-byte file
// offset, then the filter, aliased.
func checkSection(t rapid.TB, fileOff uint64, name string, filter, section []byte) {
	t.Helper()
	gotName, gotFilter, err := filterblock.DecodeSection(section, fileOff)
	if err != nil {
		t.Fatalf("DecodeSection(offset %d, name %q): %v", fileOff, name, err)
	}
	if gotName != name {
		t.Fatalf("name %q, want %q", gotName, name)
	}
	if !bytes.Equal(gotFilter, filter) {
		t.Fatalf("filter %x, want %x", gotFilter, filter)
	}
	filterAt := len(section) - len(filter)
	if len(gotFilter) > 0 && &gotFilter[0] != &section[filterAt] {
		t.Fatalf("filter does not alias the section contents")
	}
	if (fileOff+uint64(filterAt))%filterblock.Alignment != 0 || filterblock.Alignment != 64 {
		t.Fatalf("filter at file offset %d is not 64-byte aligned", fileOff+uint64(filterAt))
	}
	head := append(binary.AppendUvarint(nil, uint64(len(name))), name...)
	if !bytes.HasPrefix(section, head) {
		t.Fatalf("section does not start with uvarint length and name")
	}
	pad := section[len(head):filterAt]
	if len(pad) >= 64 || !bytes.Equal(pad, make([]byte, len(pad))) {
		t.Fatalf("padding is %x, want 0 to 63 zero bytes", pad)
	}
}

func TestSectionRoundTrip(t *testing.T) {
	long := strings.Repeat("n", 256)
	for _, fileOff := range []uint64{0, 1, 2, 61, 62, 63, 64, 65, 127, 128, 1000, 4095, 1<<40 + 7} {
		for _, name := range []string{"", "x", filterblock.BloomName, strings.Repeat("a", 62), strings.Repeat("b", 127), strings.Repeat("c", 128), long} {
			for _, filter := range [][]byte{nil, {7}, bytes.Repeat([]byte{0xab}, 1000)} {
				section := filterblock.AppendSection(nil, fileOff, name, filter)
				checkSection(t, fileOff, name, filter, section)
				// Appending after other bytes does not change the section.
				out := filterblock.AppendSection([]byte("prefix"), fileOff, name, filter)
				if string(out[:6]) != "prefix" || !bytes.Equal(out[6:], section) {
					t.Fatalf("AppendSection after a prefix differs")
				}
			}
		}
	}
}

func TestSectionRoundTripRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fileOff := rapid.OneOf(rapid.Uint64Range(0, 300), rapid.Uint64Range(0, 1<<50)).Draw(t, "fileOff")
		name := string(rapid.SliceOfN(rapid.Byte(), 0, 256).Draw(t, "name"))
		filter := rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "filter")
		checkSection(t, fileOff, name, filter, filterblock.AppendSection(nil, fileOff, name, filter))
	})
}

func checkSectionErr(t *testing.T, err error, off int64, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", msg)
	}
	if !errors.Is(err, format.ErrCorrupt) {
		t.Fatalf("%v does not wrap format.ErrCorrupt", err)
	}
	var ce *format.CorruptError
	if !errors.As(err, &ce) || ce.Section != format.SectionFilter || ce.Offset != off {
		t.Fatalf("error %q: want section %q at offset %d", err, format.SectionFilter, off)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Fatalf("error %q does not mention %q", err, msg)
	}
}

func TestSectionNonzeroPadding(t *testing.T) {
	const fileOff = 1000 // name "bloom" ends at 1006: 18 padding bytes
	section := filterblock.AppendSection(nil, fileOff, "bloom", []byte{1, 2, 3})
	padStart, padEnd := 6, len(section)-3
	if padEnd-padStart != 18 {
		t.Fatalf("%d padding bytes, want 18", padEnd-padStart)
	}
	for i := padStart; i < padEnd; i++ {
		for _, v := range []byte{1, 0x80, 0xff} {
			bad := bytes.Clone(section)
			bad[i] = v
			_, _, err := filterblock.DecodeSection(bad, fileOff)
			checkSectionErr(t, err, fileOff+int64(i), "padding")
		}
	}
}

func TestSectionMalformed(t *testing.T) {
	const fileOff = 640
	tooLong := strings.Repeat("x", 257)
	cases := []struct {
		name    string
		section []byte
		errOff  int64
		msg     string
	}{
		{"empty", nil, fileOff, "varint"},
		{"unterminated varint", []byte{0x80, 0x80}, fileOff, "varint"},
		{"overlong varint", bytes.Repeat([]byte{0xff}, 11), fileOff, "varint"},
		{"name of 257 bytes", filterblock.AppendSection(nil, fileOff, tooLong, []byte{1}), fileOff, "257"},
		{"name of 2^40 bytes", binary.AppendUvarint(nil, 1<<40), fileOff, "name length"},
		{"name past the end", append(binary.AppendUvarint(nil, 10), "short"...), fileOff, "name length"},
		// "bloom" ends at 646; padding runs to 704.
		{"ends inside padding", append([]byte{5}, "bloom\x00\x00"...), fileOff + 6, "padding"},
		{"no padding at all", append([]byte{5}, "bloom"...), fileOff + 6, "padding"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := filterblock.DecodeSection(c.section, fileOff)
			checkSectionErr(t, err, c.errOff, c.msg)
		})
	}
	// 256 bytes is the longest name accepted.
	long := strings.Repeat("y", 256)
	name, _, err := filterblock.DecodeSection(filterblock.AppendSection(nil, fileOff, long, nil), fileOff)
	if err != nil || name != long {
		t.Fatalf("256-byte name: %v", err)
	}
}

// TestSectionWithFilter stores a real filter and queries it in place.
func TestSectionWithFilter(t *testing.T) {
	p := filterblock.Bloom(10)
	keys := [][]byte{[]byte("apple"), []byte("banana"), []byte("cherry")}
	f := build(p, keys)
	for _, fileOff := range []uint64{0, 17, 4096 + 33} {
		section := filterblock.AppendSection(nil, fileOff, p.Name(), f)
		name, got, err := filterblock.DecodeSection(section, fileOff)
		if err != nil || name != p.Name() {
			t.Fatalf("DecodeSection: %q, %v", name, err)
		}
		if diff := cmp.Diff(f, got); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		for _, k := range keys {
			if !p.MayContain(got, k) {
				t.Fatalf("decoded filter lost %q", k)
			}
		}
	}
}
