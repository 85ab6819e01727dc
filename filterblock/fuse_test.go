package filterblock_test

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/FastFilter/xorfilter"
	"github.com/cespare/xxhash/v2"
	"pgregory.net/rapid"

	"github.com/sstkit/sstable/filterblock"
)

// fuseFields splits a BinaryFuse8 filter as its documentation lays it out.
func fuseFields(f []byte) (seed uint64, segLen, segCount uint32, fp []byte) {
	return binary.LittleEndian.Uint64(f), binary.LittleEndian.Uint32(f[8:]), binary.LittleEndian.Uint32(f[12:]), f[16:]
}

// TestFuseNoFalseNegatives: every key added matches, through the policy,
// the plain function and the hash entry point, for any key set (duplicates
// and empty keys included); the layout is the documented one; and the
// answers agree with the xorfilter package's own Contains on the same
// fields, for members and non-members.
func TestFuseNoFalseNegatives(t *testing.T) {
	p := filterblock.BinaryFuse8()
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 24), 0, 3000).Draw(t, "keys")
		g := p.NewGenerator()
		var buf []byte
		for i, k := range keys {
			buf = append(buf[:0], k...)
			if i%2 == 0 {
				g.Add(buf)
			} else {
				g.(filterblock.HashAdder).AddHash(xxhash.Sum64(buf))
			}
			for j := range buf {
				buf[j] ^= 0x5a // the generator must not keep the key bytes
			}
		}
		f := g.Generate(nil)
		if used := g.(filterblock.FallbackReporter).GeneratedPolicy(); used.Name() != filterblock.BinaryFuse8Name {
			t.Fatalf("construction fell back to %s for %d keys", used.Name(), len(keys))
		}
		seed, segLen, segCount, fp := fuseFields(f)
		if len(keys) == 0 {
			if len(f) != 16 || segLen != 0 || segCount != 0 {
				t.Fatalf("empty set: %d-byte filter %x", len(f), f)
			}
		} else if segLen == 0 || segLen&(segLen-1) != 0 || uint64(len(fp)) != (uint64(segCount)+2)*uint64(segLen) {
			t.Fatalf("%d keys: segment length %d, count %d, %d fingerprints", len(keys), segLen, segCount, len(fp))
		}
		for _, k := range keys {
			if !p.MayContain(f, k) || !filterblock.FuseMayContain(f, k) || !filterblock.FuseMayContainHash(f, xxhash.Sum64(k)) {
				t.Fatalf("%d keys: false negative for %q", len(keys), k)
			}
		}
		if len(keys) == 0 {
			if p.MayContain(f, []byte("x")) {
				t.Fatalf("empty filter matched")
			}
			return
		}
		lib := xorfilter.BinaryFuse8{Seed: seed, SegmentLength: segLen, SegmentLengthMask: segLen - 1,
			SegmentCount: segCount, SegmentCountLength: segCount * segLen, Fingerprints: fp}
		for i := range 200 {
			h := xxhash.Sum64(append([]byte("probe"), byte(i), byte(i>>8)))
			if i < len(keys) {
				h = xxhash.Sum64(keys[i])
			}
			if got, want := filterblock.FuseMayContainHash(f, h), lib.Contains(h); got != want {
				t.Fatalf("hash %#x: FuseMayContainHash %v, xorfilter Contains %v", h, got, want)
			}
		}
	})
}

// TestFuseFPR builds a BinaryFuse8 filter over 1M keys of each family of
// TestFPR and probes 4M absent keys: the rate must be at most 0.45% (the
// design rate is 2^-8 = 0.391%; the binomial standard deviation at 4M
// probes is 0.003%), at no more than 9.2 bits per key.
func TestFuseFPR(t *testing.T) {
	if testing.Short() {
		t.Skip("1M-key filters")
	}
	const n, m = 1_000_000, 4_000_000
	p := filterblock.BinaryFuse8()
	for _, fam := range families {
		t.Run(fam.name, func(t *testing.T) {
			g := p.NewGenerator()
			buf := make([]byte, 0, 128)
			for i := 0; i < n; i++ {
				buf = fam.key(buf, 2*uint64(i))
				g.Add(buf)
			}
			f := g.Generate(nil)
			for i := 0; i < n; i++ {
				buf = fam.key(buf, 2*uint64(i))
				if !filterblock.FuseMayContain(f, buf) {
					t.Fatalf("false negative for key %d (%q)", 2*i, buf)
				}
			}
			hits := 0
			for i := 0; i < m; i++ {
				buf = fam.key(buf, 2*uint64(i)+1)
				if filterblock.FuseMayContain(f, buf) {
					hits++
				}
			}
			fpr := float64(hits) / m
			bpk := float64(8*len(f)) / n
			t.Logf("%s: %d keys: FPR %.4f%%, %.3f bits/key", fam.name, n, 100*fpr, bpk)
			if fpr > 0.0045 || fpr < 0.0035 {
				t.Errorf("FPR %.4f%%, want 0.35%% to 0.45%%", 100*fpr)
			}
			if bpk > 9.2 {
				t.Errorf("%.3f bits/key, want at most 9.2", bpk)
			}
		})
	}
}

// TestFuseMalformed: filters that break the documented rules match every
// key and never panic; the empty set's filter matches none.
func TestFuseMalformed(t *testing.T) {
	p := filterblock.BinaryFuse8()
	g := p.NewGenerator()
	for i := range 100 {
		g.Add([]byte{byte(i)})
	}
	good := g.Generate(nil)
	hdr := func(segLen, segCount uint32, fp int) []byte {
		f := binary.LittleEndian.AppendUint64(nil, 42)
		f = binary.LittleEndian.AppendUint32(f, segLen)
		f = binary.LittleEndian.AppendUint32(f, segCount)
		return append(f, make([]byte, fp)...)
	}
	bad := map[string][]byte{
		"nil":                  nil,
		"15 bytes":             make([]byte, 15),
		"truncated":            good[:len(good)-1],
		"one byte too many":    append(append([]byte{}, good...), 0),
		"segment length 3":     hdr(3, 1, 9),
		"segment length 2^19":  hdr(1<<19, 1, 3<<19),
		"segment count 0":      hdr(4, 0, 8),
		"fingerprints, no seg": hdr(0, 0, 5),
		"count overflow":       hdr(1<<18, 1<<14, 0),
		"empty with count":     hdr(0, 1, 0),
	}
	for name, f := range bad {
		for i := range 50 {
			if !p.MayContain(f, []byte{byte(i), 'k'}) {
				t.Errorf("%s: malformed filter rejected a key", name)
				break
			}
		}
	}
	empty := hdr(0, 0, 0)
	for i := range 50 {
		if p.MayContain(empty, []byte{byte(i)}) {
			t.Fatalf("the empty set's filter matched")
		}
	}
}

// TestFuseMayContainNoAlloc: probing reads the filter in place.
func TestFuseMayContainNoAlloc(t *testing.T) {
	p := filterblock.BinaryFuse8()
	g := p.NewGenerator()
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		g.Add(binary.LittleEndian.AppendUint64(nil, r.Uint64()))
	}
	f := g.Generate(nil)
	key := []byte("some key")
	if a := testing.AllocsPerRun(1000, func() { p.MayContain(f, key) }); a != 0 {
		t.Fatalf("MayContain made %v allocations", a)
	}
}

// TestFuseGeneratorReuse: Generate resets the generator.
func TestFuseGeneratorReuse(t *testing.T) {
	p := filterblock.BinaryFuse8()
	g := p.NewGenerator()
	g.Add([]byte("a"))
	g.Generate(nil)
	g.Add([]byte("b"))
	f := g.Generate([]byte("prefix"))
	if string(f[:6]) != "prefix" {
		t.Fatalf("Generate did not append to dst")
	}
	f = f[6:]
	if !p.MayContain(f, []byte("b")) {
		t.Fatalf("second filter lacks its key")
	}
	if _, _, segCount, fp := fuseFields(f); segCount != 1 || len(fp) != 12 {
		t.Fatalf("one key: segment count %d, %d fingerprints (xorfilter's minimum: 3 segments of 4)", segCount, len(fp))
	}
}
