package rocksfilter

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/hash.txt and testdata/golden/* from RocksDB itself (needs the oracle)")

// hashSeeds are the seeds, besides 0, at which the tests compare
// RocksDB's Hash64 (filters use seed 0 only; the others exercise the
// seeded paths, the long one's derived secret in particular).
var hashSeeds = []uint64{1, 12345, 1<<63 + 7, 1<<64 - 1}

// hashInput returns the test input number i of length n: splitmix64
// bytes, except every fifth input all 0xff and every seventh all 0x00.
func hashInput(n, i int) []byte {
	b := make([]byte, n)
	switch {
	case i%5 == 4:
		for j := range b {
			b[j] = 0xff
		}
	case i%7 == 6:
	default:
		x := uint64(n)*0x9e3779b97f4a7c15 + uint64(i)
		for j := range b {
			x += 0x9e3779b97f4a7c15
			z := x
			z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
			z = (z ^ z>>27) * 0x94d049bb133111eb
			b[j] = byte(z ^ z>>31)
		}
	}
	return b
}

// hashLengths covers every length class of XXPH3 (0, 1-3, 4-8, 9-16,
// 17-128, 129-240, over 240) and, for the long path, lengths around its
// 64-byte stripes and 1 KiB blocks.
func hashLengths() []int {
	var ls []int
	for n := 0; n <= 260; n++ {
		ls = append(ls, n)
	}
	return append(ls, 319, 320, 321, 511, 512, 513, 1023, 1024, 1025, 1087, 1088, 2047, 2048, 2049, 3000, 4096, 4097, 10000)
}

type hashCase struct {
	n, i   int
	seeded []uint64 // seed 0, then hashSeeds
	legacy uint32
}

func (c hashCase) check(t *testing.T) {
	t.Helper()
	in := hashInput(c.n, c.i)
	if got := keyHash(in); got != c.seeded[0] {
		t.Errorf("len %d input %d: keyHash = %016x, RocksDB's GetSliceHash64 = %016x", c.n, c.i, got, c.seeded[0])
	}
	for j, s := range hashSeeds {
		if got := xxph3(in, s); got != c.seeded[j+1] {
			t.Errorf("len %d input %d: xxph3(seed %d) = %016x, RocksDB's Hash64 = %016x", c.n, c.i, s, got, c.seeded[j+1])
		}
	}
	if got := legacyHash(in); got != c.legacy {
		t.Errorf("len %d input %d: legacyHash = %08x, RocksDB's BloomHash = %08x", c.n, c.i, got, c.legacy)
	}
}

func parseHashLine(t *testing.T, n, i int, fields []string) hashCase {
	t.Helper()
	if len(fields) != 2+len(hashSeeds) {
		t.Fatalf("hash line %q: want %d fields", strings.Join(fields, " "), 2+len(hashSeeds))
	}
	c := hashCase{n: n, i: i}
	for _, f := range fields[:1+len(hashSeeds)] {
		v, err := strconv.ParseUint(f, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		c.seeded = append(c.seeded, v)
	}
	v, err := strconv.ParseUint(fields[len(fields)-1], 16, 32)
	if err != nil {
		t.Fatal(err)
	}
	c.legacy = uint32(v)
	return c
}

// TestHashAgainstRocksDB compares the hashes with RocksDB's own
// Hash64 (with and without seed) and BloomHash, called from C++, over
// every length class, three inputs of each length.
func TestHashAgainstRocksDB(t *testing.T) {
	o := newOracle(t)
	var inputs [][]byte
	var idx [][2]int
	for _, n := range hashLengths() {
		for i := 0; i < 3; i++ {
			inputs = append(inputs, hashInput(n, i+3*n))
			idx = append(idx, [2]int{n, i + 3*n})
		}
	}
	args := []string{"hash"}
	for _, s := range hashSeeds {
		args = append(args, strconv.FormatUint(s, 10))
	}
	lines := strings.Split(strings.TrimSpace(string(o.run(t, inputs, args...))), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("oracle hashed %d inputs, want %d", len(lines), len(inputs))
	}
	var golden strings.Builder
	for j, l := range lines {
		c := parseHashLine(t, idx[j][0], idx[j][1], strings.Fields(l))
		c.check(t)
		if n := idx[j][0]; idx[j][1]%3 == 0 && (n <= 40 || n%7 == 0 || n > 260) {
			fmt.Fprintf(&golden, "%d %d %s\n", idx[j][0], idx[j][1], l)
		}
	}
	t.Logf("%d inputs of %d lengths, %d hashes each: equal to RocksDB's", len(inputs), len(hashLengths()), 2+len(hashSeeds))
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", "hash.txt"), []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHashGolden checks the hashes against values RocksDB computed
// (testdata/hash.txt, written by TestHashAgainstRocksDB -update), so that
// they are checked where RocksDB is not installed.
func TestHashGolden(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "hash.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			t.Fatalf("bad line %q", sc.Text())
		}
		n, err1 := strconv.Atoi(fields[0])
		i, err2 := strconv.Atoi(fields[1])
		if err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		parseHashLine(t, n, i, fields[2:]).check(t)
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 80 {
		t.Fatalf("testdata/hash.txt has %d cases, want at least 80", lines)
	}
}
