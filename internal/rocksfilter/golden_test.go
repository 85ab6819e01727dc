package rocksfilter

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldens are small filters RocksDB 7.8.3 wrote, kept under
// testdata/golden so that the filters are checked where RocksDB is not
// installed: NAME.filter holds the filter block's contents, NAME.keys the
// keys added (hex, one a line), NAME.probes absent and present keys with
// RocksDB's own reader's answer ("HEX 0|1"). go test -update rewrites them
// from RocksDB.
var goldens = []struct {
	name string
	spec tableSpec
	n    int
	want string
}{
	{"fastlocalbloom", tableSpec{fv: 5, policy: "bloom", bpk: 9.9, wkf: true}, 100, "FastLocalBloom"},
	{"legacybloom", tableSpec{fv: 4, policy: "bloom", bpk: 10, wkf: true}, 100, "LegacyBloom"},
	{"ribbon", tableSpec{fv: 5, policy: "ribbon", bpk: 7, wkf: true}, 200, "Ribbon"},
	{"ribbon1bit", tableSpec{fv: 5, policy: "ribbon", bpk: 1, wkf: true}, 100, "Ribbon"},
}

// goldenKeys is genKeys without the long keys, to keep the files small.
func goldenKeys(n int, seed uint64) [][]byte {
	var keys [][]byte
	for _, k := range genKeys(2*n, seed) {
		if len(keys) < n && len(k) <= 16 {
			keys = append(keys, k)
		}
	}
	return keys
}

func TestGolden(t *testing.T) {
	if *update {
		writeGoldens(t)
	}
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			base := filepath.Join("testdata", "golden", g.name)
			contents, err := os.ReadFile(base + ".filter")
			if err != nil {
				t.Fatal(err)
			}
			f, known, err := Parse(contents, 0)
			if err != nil || !known || f.Name() != g.want {
				t.Fatalf("Parse: %s known %v, %v; want %s", f.Name(), known, err, g.want)
			}
			for _, k := range readHexLines(t, base+".keys") {
				if !f.MayContain(k) {
					t.Errorf("added key %x: MayContain false", k)
				}
			}
			probes := readHexLines(t, base+".probes")
			if len(probes) < 300 {
				t.Fatalf("%d probes, want at least 300", len(probes))
			}
			for _, line := range probes {
				k, ans := line[:len(line)-1], line[len(line)-1] == 1
				if got := f.MayContain(k); got != ans {
					t.Errorf("probe %x: MayContain %v, RocksDB's reader %v", k, got, ans)
				}
			}
		})
	}
}

// readHexLines reads a file of hex strings, one a line; a line
// "HEX 0|1" yields the key's bytes followed by a byte 0 or 1.
func readHexLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, ans, probe := strings.Cut(sc.Text(), " ")
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if probe {
			b = append(b, map[string]byte{"0": 0, "1": 1}[ans])
		}
		out = append(out, b)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeGoldens(t *testing.T) {
	o := newOracle(t)
	dir := filepath.Join("testdata", "golden")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, g := range goldens {
		keys := goldenKeys(g.n, uint64(1000+i))
		tb := readTable(t, o.write(t, g.spec, keys))
		if !tb.filterOK || tb.part {
			t.Fatalf("%s: no full filter", g.name)
		}
		contents := tb.raw(t, tb.filter)
		var absent [][]byte
		for _, k := range genAbsent(keys, 800, uint64(1000+i)) {
			if len(absent) < 300 && len(k) <= 16 {
				absent = append(absent, k)
			}
		}
		probes := append(absent, keys[:min(len(keys), 20)]...)
		ans := o.readerAnswers(t, contents, probes)
		var kb, pb bytes.Buffer
		for _, k := range keys {
			fmt.Fprintf(&kb, "%x\n", k)
		}
		for j, k := range probes {
			a := 0
			if ans[j] {
				a = 1
			}
			fmt.Fprintf(&pb, "%x %d\n", k, a)
		}
		base := filepath.Join(dir, g.name)
		for ext, b := range map[string][]byte{".filter": contents, ".keys": kb.Bytes(), ".probes": pb.Bytes()} {
			if err := os.WriteFile(base+ext, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %s: %d-byte filter, %d keys, %d probes", base, len(contents), len(keys), len(probes))
	}
}
