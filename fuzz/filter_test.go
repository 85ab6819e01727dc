package fuzz

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/sstkit/sstable/filterblock"
	"github.com/sstkit/sstable/format"
)

// FuzzFilter decodes arbitrary bytes as a filter section stored at several
// file offsets, probes the filter with keys drawn from the input, and
// checks that a filter built from those keys matches all of them.
func FuzzFilter(f *testing.F) {
	for _, p := range seedParts(f) {
		if p.filter != nil {
			f.Add(p.filter, p.filterOff)
		}
		// A partition's filter has no name: probed as a filter, and as a
		// section it is refused.
		if len(p.filterParts) > 0 {
			f.Add(p.filterParts[0], p.filterOff)
		}
	}
	f.Add([]byte{}, uint64(0))
	f.Add(filterblock.AppendSection(nil, 5, "x", []byte{1, 2, 3}), uint64(5))
	f.Add(filterblock.AppendSection(nil, math.MaxUint64-3, filterblock.BloomName, make([]byte, 65)), uint64(math.MaxUint64-3))
	f.Fuzz(func(t *testing.T, contents []byte, fileOff uint64) {
		keys := keysFrom(contents, 24)
		for _, off := range []uint64{fileOff, 0, 1, 63, 64, fileOff + 1, math.MaxUint64} {
			name, filter, err := filterblock.DecodeSection(contents, off)
			if err != nil {
				wantErr(t, "DecodeSection", err, format.ErrCorrupt)
				continue
			}
			if len(name) > len(contents) || len(filter) > len(contents) {
				t.Fatalf("DecodeSection returned more than it was given")
			}
			if len(filter) > 0 && &filter[len(filter)-1] != &contents[len(contents)-1] {
				t.Fatal("filter does not end the section")
			}
			// The section re-encodes to something that decodes the same.
			again := filterblock.AppendSection(nil, off, name, filter)
			name2, filter2, err := filterblock.DecodeSection(again, off)
			if err != nil || name2 != name || !bytes.Equal(filter2, filter) {
				t.Fatalf("section (%q, %d filter bytes) does not round-trip: %v", name, len(filter), err)
			}
			probeFilter(t, filter, keys)
		}
		probeFilter(t, contents, keys)

		// No false negatives from a filter built over the keys, at
		// several sizes, by the three policies.
		for i, bits := range []int{0, 1, 10, 23, 0, 1, 10, 23, 0} {
			p := filterblock.Bloom(float64(bits))
			if i >= 4 {
				p = filterblock.LevelDBBloom(bits)
			}
			if i == 8 {
				p = filterblock.BinaryFuse8()
			}
			g := p.NewGenerator()
			for _, k := range keys {
				g.Add(k)
			}
			filter := g.Generate(nil)
			for _, k := range keys {
				if !p.MayContain(filter, k) || (i < 4 && !filterblock.BloomMayContain(filter, k)) || (i == 8 && !filterblock.FuseMayContain(filter, k)) {
					t.Fatalf("%s(%d) filter of %d keys does not match %q", p.Name(), bits, len(keys), k)
				}
			}
			sec := filterblock.AppendSection(nil, fileOff, p.Name(), filter)
			name, got, err := filterblock.DecodeSection(sec, fileOff)
			if err != nil || name != p.Name() || !bytes.Equal(got, filter) {
				t.Fatalf("section at %d does not round-trip: %v", fileOff, err)
			}
			if (fileOff+uint64(len(sec)-len(filter)))%filterblock.Alignment != 0 {
				t.Fatalf("filter at section offset %d of a section at %d is not aligned", len(sec)-len(filter), fileOff)
			}
		}
	})
}

var (
	bloom10   = filterblock.Bloom(10)
	leveldb10 = filterblock.LevelDBBloom(10)
	fuse      = filterblock.BinaryFuse8()
)

// probeFilter queries filter with keys through both entry points of Bloom,
// which must agree, and through LevelDBBloom, and checks the documented
// empty and malformed cases.
func probeFilter(t *testing.T, filter []byte, keys [][]byte) {
	for _, k := range keys {
		got := filterblock.BloomMayContain(filter, k)
		if viaPolicy := bloom10.MayContain(filter, k); viaPolicy != got {
			t.Fatalf("BloomMayContain %v, Bloom(10).MayContain %v", got, viaPolicy)
		}
		n := len(filter) - 1
		malformed := n < 0 || n%64 != 0 || filter[n] == 0 || filter[n] > 30
		if malformed && !got {
			t.Fatalf("malformed %d-byte filter rejected %q", len(filter), k)
		}
		if !malformed && n == 0 && got {
			t.Fatalf("filter without lines matched %q", k)
		}
		// BinaryFuse8: never panics; under its 16-byte header matches
		// everything, and so does a header whose fields do not describe
		// the fingerprints that follow.
		fm := fuse.MayContain(filter, k)
		if fm != filterblock.FuseMayContain(filter, k) {
			t.Fatalf("BinaryFuse8().MayContain and FuseMayContain disagree")
		}
		if len(filter) < 16 && !fm {
			t.Fatalf("%d-byte filter rejected by BinaryFuse8", len(filter))
		}
		if len(filter) >= 16 && !fm && !fuseWellFormed(filter) {
			t.Fatalf("malformed fuse filter %x rejected %q", filter[:16], k)
		}
		// LevelDB's layout: bits, then k; under 2 bytes matches nothing,
		// k over 30 everything.
		ldb := leveldb10.MayContain(filter, k)
		if len(filter) < 2 && ldb || len(filter) >= 2 && filter[len(filter)-1] > 30 && !ldb {
			t.Fatalf("LevelDB policy on a %d-byte filter ending %x: %v", len(filter), filter[max(len(filter)-1, 0):], ldb)
		}
	}
}

// fuseWellFormed reports whether filter follows BinaryFuse8's documented
// layout, the empty set's 16-byte header included (written independently
// of package filterblock).
func fuseWellFormed(filter []byte) bool {
	segLen := binary.LittleEndian.Uint32(filter[8:])
	segCount := binary.LittleEndian.Uint32(filter[12:])
	n := uint64(len(filter) - 16)
	if segLen == 0 && segCount == 0 && n == 0 {
		return true
	}
	return segLen != 0 && segLen&(segLen-1) == 0 && segLen <= 1<<18 && segCount != 0 &&
		n == (uint64(segCount)+2)*uint64(segLen) && n < 1<<32
}

// FuzzBinaryFuse builds BinaryFuse8 filters from hashes taken from the
// input (so duplicates and adversarial values occur, which distinct keys
// rarely give), through HashAdder as a builder does: every hash must
// match, and the filter follows its documented layout or, if the
// construction fell back, is a Bloom filter that matches every hash. The
// input is also probed as a filter, which must never panic.
func FuzzBinaryFuse(f *testing.F) {
	f.Add([]byte{}, uint16(0))
	f.Add([]byte("0123456789abcdef0123456789abcdef"), uint16(3))
	f.Add(bytes.Repeat([]byte{7}, 800), uint16(50))
	for _, p := range seedParts(f) {
		if p.filter != nil {
			f.Add(p.filter, uint16(len(p.filter)))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, dups uint16) {
		var hashes []uint64
		for i := 0; i+8 <= len(data); i += 8 {
			hashes = append(hashes, binary.LittleEndian.Uint64(data[i:]))
		}
		// Repeat some hashes: the construction must cope with duplicates.
		for i := 0; i < int(dups%512) && len(hashes) > 0; i++ {
			hashes = append(hashes, hashes[i%len(hashes)])
		}
		g := fuse.NewGenerator()
		for _, h := range hashes {
			g.(filterblock.HashAdder).AddHash(h)
		}
		filter := g.Generate(nil)
		used := g.(filterblock.FallbackReporter).GeneratedPolicy()
		for _, h := range hashes {
			ok := filterblock.FuseMayContainHash(filter, h)
			if used.Name() == filterblock.BloomName {
				ok = filterblock.BloomMayContainHash(filter, h)
			}
			if !ok {
				t.Fatalf("%s filter of %d hashes does not match %#x", used.Name(), len(hashes), h)
			}
		}
		if used.Name() == filterblock.BinaryFuse8Name && !fuseWellFormed(filter) {
			t.Fatalf("built filter breaks the documented layout: %x", filter[:16])
		}
		probeFilter(t, data, keysFrom(data, 8))
		for _, h := range hashes {
			filterblock.FuseMayContainHash(data, h)
		}
	})
}
