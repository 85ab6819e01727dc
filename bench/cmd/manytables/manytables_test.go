package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sstkit/sstable/bench/internal/implsetup"
)

// TestMain runs a measuring child when the parent (a test below)
// re-executes the test binary as one.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "manytables child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestWorkloadKeys checks that present keys are sorted, that every absent
// key lies strictly between its neighbours, and that everything is
// deterministic.
func TestWorkloadKeys(t *testing.T) {
	for _, n := range []int{1, 2, 3, 2000, 50_000} {
		w := newWorkload(3, n)
		for tb := 0; tb < 3; tb++ {
			var prev, k, a, k2 [keyLen]byte
			for j := 0; j < n; j++ {
				w.presentKey(k[:], tb, j)
				w.absentKey(a[:], tb, j)
				if j > 0 && bytes.Compare(prev[:], k[:]) >= 0 {
					t.Fatalf("n=%d table %d: key %d %x not after key %d %x", n, tb, j, k, j-1, prev)
				}
				if bytes.Compare(k[:], a[:]) >= 0 {
					t.Fatalf("n=%d table %d: absent key %x not after key %d %x", n, tb, a, j, k)
				}
				if j+1 < n {
					w.presentKey(k2[:], tb, j+1)
					if bytes.Compare(a[:], k2[:]) >= 0 {
						t.Fatalf("n=%d table %d: absent key %x not before key %d %x", n, tb, a, j+1, k2)
					}
				}
				prev = k
			}
		}
	}
	w := newWorkload(2, 1000)
	var k0, k1 [keyLen]byte
	var v0, v1 [valueLen]byte
	w.presentKey(k0[:], 0, 500)
	w.presentKey(k1[:], 1, 500)
	if k0 == k1 {
		t.Errorf("tables 0 and 1 share key %x", k0)
	}
	w.value(v0[:], 0, 500)
	w.value(v1[:], 0, 500)
	if v0 != v1 || bytes.Count(v0[:randomPrefix], []byte{0}) > 10 || !strings.Contains(text, string(v0[randomPrefix:])) {
		t.Errorf("value not deterministic or not shaped as expected: %q / %q", v0, v1)
	}
	if binary.BigEndian.Uint64(k0[8:]) == binary.BigEndian.Uint64(k1[8:]) {
		t.Errorf("low words equal")
	}
}

func TestNoAllocsPerKey(t *testing.T) {
	w := newWorkload(200, 50_000)
	var k [keyLen]byte
	var v [valueLen]byte
	if n := testing.AllocsPerRun(100, func() {
		w.presentKey(k[:], 7, 123)
		w.absentKey(k[:], 7, 123)
		w.value(v[:], 7, 123)
	}); n != 0 {
		t.Errorf("%v allocations per key and value", n)
	}
	m := newMemReader()
	defer m.close()
	if a, _, h := m.read(); (a == 0 && m.fd >= 0) || h == 0 {
		t.Errorf("memReader: RssAnon %d, HeapInuse %d", a, h)
	}
	if n := testing.AllocsPerRun(100, func() { m.read() }); n != 0 {
		t.Errorf("memReader.read: %v allocations", n)
	}
}

// lyingGetter answers from the workload itself; unless honest, it returns
// a wrong value for table 0's keys and finds table 1's absent keys, so
// that the worker can be shown to notice.
type lyingGetter struct {
	w      workload
	honest bool
}

func (g lyingGetter) get(t int, key []byte) ([]byte, bool, error) {
	// Entry j's keys, present and absent, have hi in [j*spacing, (j+1)*spacing).
	hi := binary.BigEndian.Uint64(key)
	j := int(hi / g.w.spacing)
	absent := hi%g.w.spacing >= g.w.spacing/2
	var v [valueLen]byte
	g.w.value(v[:], t, j)
	switch {
	case !g.honest && t == 0 && !absent:
		v[valueLen-1] ^= 1
		return v[:], true, nil
	case !g.honest && t == 1 && absent:
		return v[:], true, nil
	case absent:
		return nil, false, nil
	}
	return v[:], true, nil
}

func (lyingGetter) close() error { return nil }

func TestWorkerNoticesWrongValues(t *testing.T) {
	w := newWorkload(3, 100)
	w.presentPct = 75
	for _, honest := range []bool{false, true} {
		var stop atomic.Bool
		go func() { time.Sleep(20 * time.Millisecond); stop.Store(true) }()
		c := worker(lyingGetter{w, honest}, w, 1, &stop)
		if c.present == 0 || c.absent == 0 || c.errors != 0 {
			t.Fatalf("honest %v: counts %+v", honest, c)
		}
		if share := float64(c.present) / float64(c.present+c.absent); c.present+c.absent > 1000 && (share < 0.72 || share > 0.78) {
			t.Errorf("honest %v: %.3f of the Gets were of present keys, want 0.75", honest, share)
		}
		if honest && c.wrong != 0 {
			t.Errorf("honest getter: %d wrong values (%s)", c.wrong, c.firstWrong)
		}
		if !honest && (c.wrong == 0 || !strings.Contains(c.firstWrong, "table 0") && !strings.Contains(c.firstWrong, "table 1")) {
			t.Errorf("lying getter: %d wrong values, first %q", c.wrong, c.firstWrong)
		}
	}
}

// TestManyTablesSmoke runs the whole pipeline tiny, every implementation
// and both compressions, in child processes: every row must exist, with
// lookups done and no errors or wrong values.
func TestManyTablesSmoke(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"-tables", "4", "-entries", "2000", "-duration", "300ms", "-rounds", "2", "-warmup", "100ms", "-goroutines", "4",
		"-cache", "256KiB", "-dir", dir, "-json"}
	if err := mainErr(args, &stdout, &stderr); err != nil {
		t.Fatalf("manytables: %v\n%s", err, stderr.String())
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("JSON output: %v\n%s", err, stdout.String())
	}
	for _, c := range []implsetup.Compression{implsetup.Snappy, implsetup.None} {
		for _, name := range implNames {
			x := rep.find(name, string(c))
			if x == nil {
				t.Errorf("no row for %s/%s", name, c)
				continue
			}
			if x.Errors != 0 || x.Wrong != 0 {
				t.Errorf("%s/%s: %d errors (%s), %d wrong values (%s)", name, c, x.Errors, x.FirstError, x.Wrong, x.FirstWrong)
			}
			if x.Gets == 0 || x.WarmupGets == 0 || x.Present == 0 || x.Absent == 0 || x.GetsPerSec <= 0 || x.FileBytes <= 0 {
				t.Errorf("%s/%s: implausible row %+v", name, c, *x)
			}
			if x.RssAnonPeak <= 0 && x.Samples > 0 {
				t.Logf("%s/%s: no RssAnon (no /proc?)", name, c)
			}
			if x.HeapInusePeak <= 0 || x.Samples < 2 {
				t.Errorf("%s/%s: %d memory samples, peak HeapInuse %d", name, c, x.Samples, x.HeapInusePeak)
			}
			if isOurs(name) && c == implsetup.Snappy && (x.Cache.Misses == 0 || x.Cache.Size > x.Cache.Capacity || x.CacheSizePeak > x.Cache.Capacity) {
				t.Errorf("%s/%s: cache %+v, peak size %d", name, c, x.Cache, x.CacheSizePeak)
			}
		}
	}
	if len(rep.Rows) != 2*len(implNames) {
		t.Errorf("%d rows, want %d", len(rep.Rows), 2*len(implNames))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("temporary directory left behind: %v", entries)
	}

	var md bytes.Buffer
	writeMarkdown(&md, &rep)
	for _, want := range []string{"| ours | snappy |", "| ours-v1 | none |", "| pebble | snappy |", "| pebble2 | none |", "| goleveldb | none |",
		"### Target checks (ours)", "### Thrashing check"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	t.Logf("\n%s", md.String())
}

// TestPebble2TablesApartInCache reads every key of table 0, then of table
// 1, through one pebble2 store whose cache holds both tables: had the
// readers shared a file number under the one cache handle, table 1's
// lookups would be served table 0's blocks at the same offsets.
func TestPebble2TablesApartInCache(t *testing.T) {
	dir := t.TempDir()
	w := newWorkload(2, 3000)
	im := newImpl("pebble2")
	for _, c := range []implsetup.Compression{implsetup.Snappy, implsetup.None} {
		sub := dir + "/" + string(c)
		if _, err := buildAll(im, sub, w, c, 2); err != nil {
			t.Fatal(err)
		}
		st, err := im.open(sub, w, 64<<20)
		if err != nil {
			t.Fatal(err)
		}
		g := st.getter()
		var k [keyLen]byte
		var want [valueLen]byte
		for tb := 0; tb < w.tables; tb++ {
			for j := 0; j < w.entries; j++ {
				w.presentKey(k[:], tb, j)
				w.value(want[:], tb, j)
				v, found, err := g.get(tb, k[:])
				if err != nil || !found || !bytes.Equal(v, want[:]) {
					t.Fatalf("%s: table %d entry %d: %q, %v, %v", c, tb, j, v, found, err)
				}
				w.absentKey(k[:], tb, j)
				if _, found, err := g.get(tb, k[:]); err != nil || found {
					t.Fatalf("%s: table %d absent key after entry %d: found %v, %v", c, tb, j, found, err)
				}
			}
		}
		if cs, ok := st.cacheStats(); !ok || cs.Hits == 0 || cs.Misses == 0 || cs.Size == 0 || cs.Capacity != 64<<20 {
			t.Errorf("%s: cache %+v", c, cs)
		}
		if err := g.close(); err != nil {
			t.Error(err)
		}
		if err := st.close(); err != nil {
			t.Error(err)
		}
	}
}
