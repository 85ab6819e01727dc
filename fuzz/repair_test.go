package fuzz

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/reader"
)

// checksumErr reports whether err is a failed checksum (a block trailer's
// or the footer's): the reader stopped before the decoders behind it.
func checksumErr(err error) bool {
	var ce *format.CorruptError
	return errors.As(err, &ce) && strings.Contains(ce.Msg, "checksum")
}

// openVerify opens data through reader.New and verifies it; the error is
// the first either reports.
func openVerify(data []byte) error {
	r, err := reader.New(bytes.NewReader(data), int64(len(data)), readerOpts)
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Verify()
}

// TestRepairIdentity checks that repairChecksums leaves every seed table
// and every golden table, all undamaged, byte for byte as it is, and that
// each passes Verify through both read paths: a repair that rewrote a
// correct trailer would write it somewhere it does not belong.
func TestRepairIdentity(t *testing.T) {
	scratch := newScratchFile(t, "identity.sst")
	goldens := 0
	for _, st := range seedTables(t) {
		if strings.HasPrefix(st.name, "golden/") {
			goldens++
		}
		fixed := repairChecksums(st.file)
		if !bytes.Equal(fixed, st.file) {
			i := 0
			for fixed[i] == st.file[i] {
				i++
			}
			t.Errorf("%s: repair of an undamaged table changed byte %d of %d", st.name, i, len(st.file))
			continue
		}
		if err := openVerify(fixed); err != nil {
			t.Errorf("%s: Verify through New after repair: %v", st.name, err)
		}
		r, err := reader.Open(scratch.write(t, fixed), readerOpts)
		if err != nil {
			t.Errorf("%s: Open: %v", st.name, err)
			continue
		}
		if err := r.Verify(); err != nil {
			t.Errorf("%s: Verify through Open after repair: %v", st.name, err)
		}
		r.Close()
	}
	if goldens == 0 {
		t.Fatalf("no golden tables in %s", goldenGlob)
	}
}

// TestRepairReachesDecoders damages one byte at a time of every seed
// table's data blocks, hash index section and (one-level tables) filter
// section, and checks that after repairChecksums the reader never stops at
// a checksum: none of these bytes moves a block, so repair must have
// found every trailer the damaged block's checksum is in. Bytes of the
// index, partitions, properties and footer can move blocks, and are left
// to TestRepairMutationCounts. Seed tables are damaged at every 3rd
// byte, golden tables at every 13th (every byte with SSTABLE_LONG_TESTS=1,
// about 10 s).
func TestRepairReachesDecoders(t *testing.T) {
	seedStride, goldenStride := 3, 13
	if os.Getenv("SSTABLE_LONG_TESTS") != "" {
		seedStride, goldenStride = 1, 1
	}
	for _, st := range seedTables(t) {
		r, err := reader.New(bytes.NewReader(st.file), int64(len(st.file)), readerOpts)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		p, ft := r.Properties(), r.Footer()
		r.Close()
		end := p.DataSize + p.HashIndexSize
		if !p.Partitioned && ft.Version != format.Version3 {
			end = ft.Filter.End() // trailer included
		}
		step := seedStride
		if strings.HasPrefix(st.name, "golden/") {
			step = goldenStride
		}
		buf := make([]byte, len(st.file))
		n := 0
		for i := 0; i < int(end); i += step {
			copy(buf, st.file)
			buf[i] ^= 0x5a
			if err := openVerify(repairChecksums(buf)); checksumErr(err) {
				t.Fatalf("%s: byte %d of %d (data, hash index and filter end at %d) damaged and repaired: %v", st.name, i, len(buf), end, err)
			}
			n++
		}
		if n == 0 && p.NumEntries > 0 {
			t.Fatalf("%s: nothing to damage", st.name)
		}
	}
}

// mutationCounts is what sampled single-byte mutations of a table did.
type mutationCounts struct {
	n        int // mutations
	checksum int // stopped by a checksum after repair
	corrupt  int // got past the checksums and failed another check
	verified int // got past the checksums and passed Verify (the byte is slack: a value, a filter bit, ...)

	inData, dataReached int // mutations in the data blocks, and those of them past the checksums
}

// mutate samples n single-byte mutations of file (a fixed PRNG: a byte
// at a uniform offset replaced by another value), repairs each one's
// checksums, and counts where the reader stopped.
func mutate(file []byte, dataSize uint64, n int, seed uint64) mutationCounts {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	buf := make([]byte, len(file))
	c := mutationCounts{n: n}
	for range n {
		copy(buf, file)
		i := rng.IntN(len(buf))
		buf[i] ^= byte(1 + rng.IntN(255))
		err := openVerify(repairChecksums(buf))
		switch {
		case err == nil:
			c.verified++
		case checksumErr(err):
			c.checksum++
		default:
			c.corrupt++
		}
		if uint64(i) < dataSize {
			c.inData++
			if !checksumErr(err) {
				c.dataReached++
			}
		}
	}
	return c
}

// TestRepairMutationCounts samples single-byte mutations of each golden
// table (500 each; 2000 with SSTABLE_LONG_TESTS=1) and logs how many get
// past the checksums after repair, to the decoders. It fails if fewer
// than half of a table's do: the bytes repair cannot help (the index,
// properties and footer, whose damage moves blocks) are a small part of
// every golden table.
func TestRepairMutationCounts(t *testing.T) {
	n := 500
	if os.Getenv("SSTABLE_LONG_TESTS") != "" {
		n = 2000
	}
	for _, st := range seedTables(t) {
		name, ok := strings.CutPrefix(st.name, "golden/")
		if !ok {
			continue
		}
		r, err := reader.New(bytes.NewReader(st.file), int64(len(st.file)), readerOpts)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		dataSize := r.Properties().DataSize
		r.Close()
		c := mutate(st.file, dataSize, n, 1)
		reached := c.corrupt + c.verified
		t.Logf("%-17s %5d bytes: %4d of %d mutations reach the decoders (%4d rejected there, %4d pass Verify), %4d stop at a checksum; in the data blocks %4d of %4d",
			name, len(st.file), reached, c.n, c.corrupt, c.verified, c.checksum, c.dataReached, c.inData)
		if 2*reached < c.n {
			t.Errorf("%s: only %d of %d mutations get past the checksums after repair", name, reached, c.n)
		}
	}
}
