package leveldb_test

// Tests against the real LevelDB (1.23, Debian's libleveldb-dev): the
// program testdata/oracle/ldboracle.cc, compiled at test time, writes
// databases by a random workload through LevelDB's own API and prints
// what LevelDB reads from them (the live view, each table's entries);
// this package's reading of the same files must match it line for line.
// Without g++ or LevelDB's headers the tests skip, unless
// SSTABLE_REQUIRE_LEVELDB=1 (as in CI) makes that a failure.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/oracletest"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
)

// oracle is the compiled ldboracle program.
type oracle struct{ bin string }

// newOracle compiles testdata/oracle/ldboracle.cc into a directory of t's,
// or skips t (fails it under SSTABLE_REQUIRE_LEVELDB=1) when it cannot.
func newOracle(t *testing.T) *oracle {
	t.Helper()
	oracletest.Gate(t, "SSTABLE_REQUIRE_LEVELDB", "LevelDB 1.23")
	missing := func(format string, args ...any) {
		t.Helper()
		oracletest.Missing(t, "SSTABLE_REQUIRE_LEVELDB", "LevelDB 1.23", "install g++ and Debian's libleveldb-dev", format, args...)
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		missing("no g++: %v", err)
	}
	if _, err := os.Stat("/usr/include/leveldb/c.h"); err != nil {
		missing("no LevelDB headers: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "oracle", "ldboracle.cc"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "ldboracle")
	start := time.Now()
	out, err := exec.Command(gxx, "-O1", "-o", bin, src, "-lleveldb").CombinedOutput()
	if err != nil {
		missing("g++ could not build %s against -lleveldb: %v\n%s", src, err, out)
	}
	t.Logf("compiled the LevelDB oracle in %v", time.Since(start).Round(time.Millisecond))
	return &oracle{bin: bin}
}

// run runs the oracle and returns its standard output; an exit status
// other than 0 is an error carrying its standard error.
func (o *oracle) run(args ...string) ([]byte, error) {
	cmd := exec.Command(o.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("ldboracle %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func (o *oracle) mustRun(t testing.TB, args ...string) []byte {
	t.Helper()
	out, err := o.run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// genStats is what ldboracle gen prints.
type genStats struct {
	lastSeq uint64
	levels  map[int]int // level -> tables
}

func (o *oracle) gen(t testing.TB, dir string, seed int, comp string, nops int) genStats {
	t.Helper()
	out := o.mustRun(t, "gen", dir, strconv.Itoa(seed), comp, strconv.Itoa(nops))
	st := genStats{levels: map[int]int{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "lastseq":
			st.lastSeq, _ = strconv.ParseUint(f[1], 10, 64)
		case len(f) == 3 && f[0] == "level":
			l, _ := strconv.Atoi(f[1])
			n, _ := strconv.Atoi(f[2])
			st.levels[l] = n
		}
	}
	return st
}

// dump returns LevelDB's live view of the database in dir, read from a
// copy (LevelDB's open writes to the directory: it flushes the log).
func (o *oracle) dump(t testing.TB, dir string) ([]string, error) {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "dumpcopy")
	copyDir(t, dir, cp, false)
	out, err := o.run("dump", cp)
	if err != nil {
		return nil, err
	}
	return splitLines(out), nil
}

// dumpTables returns each table's internal entries as LevelDB's
// leveldb::Table iterator reads them, by path.
func (o *oracle) dumpTables(t testing.TB, paths []string) map[string][]string {
	t.Helper()
	out := o.mustRun(t, append([]string{"dumptable"}, paths...)...)
	tables := map[string][]string{}
	var cur string
	for _, line := range splitLines(out) {
		if p, ok := strings.CutPrefix(line, "# "); ok {
			cur = p
			tables[cur] = []string{}
			continue
		}
		tables[cur] = append(tables[cur], line)
	}
	return tables
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// copyDir copies the regular files of src into a new directory dst, or
// hard-links them when link is set.
func copyDir(t testing.TB, src, dst string, link bool) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if link {
			if err := os.Link(from, to); err == nil {
				continue
			}
		}
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func kvLine(k, v []byte) string { return hex.EncodeToString(k) + "\t" + hex.EncodeToString(v) }

func entryLine(k []byte, seq uint64, kind leveldb.Kind, v []byte) string {
	return fmt.Sprintf("%x\t%d\t%d\t%x", k, seq, kind, v)
}

// view is a live view: sorted keys and their values.
type view struct {
	keys, vals []string
	lines      []string
	index      map[string]int
}

func parseView(t testing.TB, lines []string) *view {
	t.Helper()
	v := &view{lines: lines, index: map[string]int{}}
	for _, l := range lines {
		hk, hv, ok := strings.Cut(l, "\t")
		k, err1 := hex.DecodeString(hk)
		val, err2 := hex.DecodeString(hv)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad dump line %q", l)
		}
		v.index[string(k)] = len(v.keys)
		v.keys = append(v.keys, string(k))
		v.vals = append(v.vals, string(val))
	}
	return v
}

// ourView reads the live view of db forward, or backward (then reversed
// back into order).
func ourView(db *leveldb.DB, backward bool) ([]string, error) {
	it := db.NewIterator(nil)
	var lines []string
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			lines = append(lines, kvLine(it.Key(), it.Value()))
		}
		for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
			lines[i], lines[j] = lines[j], lines[i]
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			lines = append(lines, kvLine(it.Key(), it.Value()))
		}
	}
	return lines, it.Close()
}

// diffLines reports the first difference between got and want.
func diffLines(got, want []string) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d of %d/%d: got %.200q, want %.200q", i, len(got), len(want), got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("got %d lines, want %d", len(got), len(want))
	}
	return ""
}

var oracleConfigs = func() (c []struct {
	seed int
	comp string
}) {
	for seed := 1; seed <= 6; seed++ {
		for _, comp := range []string{"snappy", "none"} {
			c = append(c, struct {
				seed int
				comp string
			}{seed, comp})
		}
	}
	return c
}()

// TestLevelDBOracle compares this package's reading of databases and
// tables written by the real LevelDB with LevelDB's own.
func TestLevelDBOracle(t *testing.T) {
	o := newOracle(t)
	var mu sync.Mutex
	var ran, levelsSeen, tablesSeen, logSeen int
	t.Run("views", func(t *testing.T) {
		for _, c := range oracleConfigs {
			t.Run(fmt.Sprintf("seed=%d/%s", c.seed, c.comp), func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), "db")
				start := time.Now()
				st := o.gen(t, dir, c.seed, c.comp, 30000)
				genTime := time.Since(start)
				nt, logEntries := checkDBAgainstOracle(t, o, dir, st)
				t.Logf("tables per level: %v; last sequence %d; gen %v, checks %v", st.levels, st.lastSeq,
					genTime.Round(time.Millisecond), (time.Since(start) - genTime).Round(time.Millisecond))
				mu.Lock()
				ran++
				if len(st.levels) >= 2 {
					levelsSeen++
				}
				tablesSeen += nt
				if logEntries > 0 {
					logSeen++
				}
				mu.Unlock()
			})
		}
	})
	if !t.Failed() && ran == len(oracleConfigs) {
		// The workload is meant to give tables on several levels and a
		// log to replay; a change in it that does not is a weaker test.
		if levelsSeen < len(oracleConfigs)/2 || logSeen < len(oracleConfigs) || tablesSeen < 4*len(oracleConfigs) {
			t.Errorf("workloads too tame: %d of %d databases with tables on two levels or more, %d with a log, %d tables in all",
				levelsSeen, len(oracleConfigs), logSeen, tablesSeen)
		}
	}
	t.Run("lock", func(t *testing.T) { testOracleLock(t, o) })
	t.Run("damage", func(t *testing.T) { testOracleDamage(t, o) })
}

// checkDBAgainstOracle compares the database in dir, read mapped and
// with NoMmap, with LevelDB's view of it, and each of its tables with
// LevelDB's reading of it. It returns the number of live tables and of
// entries replayed from the log.
func checkDBAgainstOracle(t *testing.T, o *oracle, dir string, st genStats) (tables, logEntries int) {
	want, err := o.dump(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	v := parseView(t, want)
	for _, noMmap := range []bool{false, true} {
		db, err := leveldb.OpenDB(dir, &leveldb.Options{NoMmap: noMmap})
		if err != nil {
			t.Fatal(err)
		}
		if db.LastSequence() != st.lastSeq {
			t.Errorf("NoMmap=%v: LastSequence %d, LevelDB wrote %d", noMmap, db.LastSequence(), st.lastSeq)
		}
		logEntries = db.LogEntries()
		if logEntries == 0 {
			t.Errorf("NoMmap=%v: no entries replayed from the log, though the workload ends with writes left in it", noMmap)
		}
		for _, backward := range []bool{false, true} {
			got, err := ourView(db, backward)
			if err != nil {
				t.Fatalf("NoMmap=%v backward=%v: %v", noMmap, backward, err)
			}
			if d := diffLines(got, want); d != "" {
				t.Errorf("NoMmap=%v backward=%v: our view differs from LevelDB's: %s", noMmap, backward, d)
			}
		}
		files := db.Files()
		tables = len(files)
		var paths []string
		for _, f := range files {
			paths = append(paths, filepath.Join(dir, fmt.Sprintf("%06d.ldb", f.Number)))
		}
		tableLines := o.dumpTables(t, paths)
		absent := checkSeeksAndGets(t, db, v, tableLines, int64(len(want))+int64(noMmapInt(noMmap)))
		if _, err := db.Verify(); err != nil {
			t.Errorf("NoMmap=%v: Verify: %v", noMmap, err)
		}
		for i, f := range files {
			checkTableAgainstOracle(t, paths[i], f, tableLines[paths[i]], absent, noMmap)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	}
	return tables, logEntries
}

func noMmapInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkSeeksAndGets checks SeekGE, SeekLT (each followed by moves in both
// directions), bounded iterators and DB.Get against the view v. Keys the
// tables hold but the view does not (deleted, or never live) must be
// absent; it returns them.
func checkSeeksAndGets(t *testing.T, db *leveldb.DB, v *view, tableLines map[string][]string, seed int64) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(seed), 42))
	var absent []string
	seen := map[string]bool{}
	for _, lines := range tableLines {
		for _, l := range lines {
			hk, _, _ := strings.Cut(l, "\t")
			k, _ := hex.DecodeString(hk)
			if _, live := v.index[string(k)]; !live && !seen[string(k)] {
				seen[string(k)] = true
				absent = append(absent, string(k))
			}
		}
	}
	sort.Strings(absent)
	if len(absent) == 0 {
		t.Errorf("no deleted keys in the tables: the workload deletes")
	}

	// Get: every live key, every deleted key, a few never written.
	for i, k := range v.keys {
		got, err := db.Get([]byte(k))
		if err != nil || string(got) != v.vals[i] {
			t.Fatalf("Get(%x) = %.100x, %v; LevelDB reads %.100x", k, got, err, v.vals[i])
		}
	}
	probes := append([]string(nil), absent...)
	for i := 0; i < 200; i++ {
		k := make([]byte, rng.IntN(12))
		for j := range k {
			k[j] = byte(rng.IntN(256))
		}
		probes = append(probes, string(k))
	}
	for _, k := range v.keys[:min(len(v.keys), 300)] {
		probes = append(probes, k+"\x00", k+"\xff")
		if k != "" {
			probes = append(probes, k[:len(k)-1])
		}
	}
	for _, k := range probes {
		if _, live := v.index[k]; live {
			continue
		}
		if got, err := db.Get([]byte(k)); !errors.Is(err, reader.ErrNotFound) {
			t.Fatalf("Get(%x) of a key LevelDB does not hold = %.100x, %v; want reader.ErrNotFound", k, got, err)
		}
	}

	// Seeks, each followed by moves in both directions.
	for i := 0; i < 100 && len(v.keys) > 0; i++ {
		probes = append(probes, v.keys[rng.IntN(len(v.keys))])
	}
	probes = append(probes, "", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
	it := db.NewIterator(nil)
	defer it.Close()
	at := func(what string, ok bool, i int) {
		t.Helper()
		if i < 0 || i >= len(v.keys) {
			if ok {
				t.Fatalf("%s: on %x, want exhausted", what, it.Key())
			}
			return
		}
		if !ok {
			t.Fatalf("%s: exhausted (err %v), want %x", what, it.Err(), v.keys[i])
		}
		if string(it.Key()) != v.keys[i] || string(it.Value()) != v.vals[i] {
			t.Fatalf("%s: on %x = %.60x, want %x = %.60x", what, it.Key(), it.Value(), v.keys[i], v.vals[i])
		}
	}
	for _, p := range probes {
		ge := sort.SearchStrings(v.keys, p) // first key >= p
		what := fmt.Sprintf("SeekGE(%x)", p)
		at(what, it.SeekGE([]byte(p)), ge)
		if ge < len(v.keys) {
			at(what+".Next", it.Next(), ge+1)
			if ge+1 < len(v.keys) {
				at(what+".Next.Prev", it.Prev(), ge)
				at(what+".Next.Prev.Prev", it.Prev(), ge-1)
			}
		}
		what = fmt.Sprintf("SeekLT(%x)", p)
		at(what, it.SeekLT([]byte(p)), ge-1)
		if ge-1 >= 0 {
			at(what+".Prev", it.Prev(), ge-2)
			if ge-2 >= 0 {
				at(what+".Prev.Next", it.Next(), ge-1)
				at(what+".Prev.Next.Next", it.Next(), ge)
			}
		}
	}

	// Bounded iterators.
	for i := 0; i < 10 && len(probes) > 1; i++ {
		lo, hi := probes[rng.IntN(len(probes))], probes[rng.IntN(len(probes))]
		if hi < lo {
			lo, hi = hi, lo
		}
		a, b := sort.SearchStrings(v.keys, lo), sort.SearchStrings(v.keys, hi)
		bit := db.NewIterator(&leveldb.IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)})
		var got []string
		for ok := bit.First(); ok; ok = bit.Next() {
			got = append(got, kvLine(bit.Key(), bit.Value()))
		}
		var back []string
		for ok := bit.Last(); ok; ok = bit.Prev() {
			back = append(back, kvLine(bit.Key(), bit.Value()))
		}
		if err := bit.Close(); err != nil {
			t.Fatal(err)
		}
		slices := v.lines[a:b]
		if d := diffLines(got, slices); d != "" {
			t.Fatalf("iterator bounded [%x, %x) forward: %s", lo, hi, d)
		}
		for i, j := 0, len(back)-1; i < j; i, j = i+1, j-1 {
			back[i], back[j] = back[j], back[i]
		}
		if d := diffLines(back, slices); d != "" {
			t.Fatalf("iterator bounded [%x, %x) backward: %s", lo, hi, d)
		}
	}
	return absent
}

// tableEntry is one internal entry of a table.
type tableEntry struct {
	key   string
	seq   uint64
	kind  leveldb.Kind
	value string
}

func parseEntries(t testing.TB, lines []string) []tableEntry {
	t.Helper()
	es := make([]tableEntry, 0, len(lines))
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 4 {
			t.Fatalf("bad table dump line %q", l)
		}
		k, err1 := hex.DecodeString(f[0])
		seq, err2 := strconv.ParseUint(f[1], 10, 64)
		kind, err3 := strconv.ParseUint(f[2], 10, 8)
		val, err4 := hex.DecodeString(f[3])
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatalf("bad table dump line %q: %v", l, err)
		}
		es = append(es, tableEntry{string(k), seq, leveldb.Kind(kind), string(val)})
	}
	return es
}

// tableLines reads every internal entry of tb, forward or backward
// (then reversed back into order).
func tableLines(tb *leveldb.Table, backward bool) ([]string, error) {
	it := tb.NewIter(nil)
	var lines []string
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			lines = append(lines, entryLine(it.Key(), it.Seq(), it.Kind(), it.Value()))
		}
		for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
			lines[i], lines[j] = lines[j], lines[i]
		}
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			lines = append(lines, entryLine(it.Key(), it.Seq(), it.Kind(), it.Value()))
		}
	}
	return lines, it.Close()
}

// internalLess orders entries as LevelDB does: user key ascending, then
// sequence number descending.
func internalLess(ak string, aseq uint64, bk string, bseq uint64) bool {
	if ak != bk {
		return ak < bk
	}
	return aseq > bseq
}

func checkTableAgainstOracle(t *testing.T, path string, f leveldb.FileInfo, want []string, absent []string, noMmap bool) {
	t.Helper()
	name := filepath.Base(path)
	if len(want) == 0 {
		t.Fatalf("%s: LevelDB reads no entries", name)
	}
	tb, err := leveldb.OpenTable(path, &leveldb.TableOptions{NoMmap: noMmap})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if info := tb.Info(); info.Size != f.Size {
		t.Errorf("%s: Info().Size %d, the MANIFEST says %d", name, info.Size, f.Size)
	}
	for _, backward := range []bool{false, true} {
		got, err := tableLines(tb, backward)
		if err != nil {
			t.Fatalf("%s backward=%v: %v", name, backward, err)
		}
		if d := diffLines(got, want); d != "" {
			t.Fatalf("%s NoMmap=%v backward=%v: our entries differ from leveldb::Table's: %s", name, noMmap, backward, d)
		}
	}
	if n, err := tb.Verify(); err != nil || n != int64(len(want)) {
		t.Errorf("%s: Verify = %d, %v; want %d entries", name, n, err, len(want))
	}
	es := parseEntries(t, want)
	// The MANIFEST's smallest and largest keys are the table's first and last.
	ik := func(e tableEntry) string {
		b := []byte(e.key)
		var tr [8]byte
		x := e.seq<<8 | uint64(e.kind)
		for i := range tr {
			tr[i] = byte(x >> (8 * i))
		}
		return string(append(b, tr[:]...))
	}
	if string(f.Smallest) != ik(es[0]) || string(f.Largest) != ik(es[len(es)-1]) {
		t.Errorf("%s: MANIFEST range [%x, %x], the table holds [%x, %x]", name, f.Smallest, f.Largest, ik(es[0]), ik(es[len(es)-1]))
	}
	// Get at each entry's sequence number finds it; just below it, the
	// key's next older version (or nothing).
	checkGet := func(k string, seq uint64, want *tableEntry) {
		t.Helper()
		e, err := tb.Get([]byte(k), seq)
		if want == nil {
			if !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("%s: Get(%x, %d) = %+v, %v; want reader.ErrNotFound", name, k, seq, e, err)
			}
			return
		}
		if err != nil || string(e.Key) != want.key || e.Seq != want.seq || e.Kind != want.kind || string(e.Value) != want.value {
			t.Fatalf("%s: Get(%x, %d) = {%x %d %v %.60x}, %v; want {%x %d %v %.60x}", name, k, seq, e.Key, e.Seq, e.Kind, e.Value, err, want.key, want.seq, want.kind, want.value)
		}
	}
	for i := range es {
		e := &es[i]
		if i == 0 || es[i-1].key != e.key {
			checkGet(e.key, leveldb.MaxSequence, e)
		}
		checkGet(e.key, e.seq, e)
		var older *tableEntry
		if i+1 < len(es) && es[i+1].key == e.key {
			older = &es[i+1]
		}
		if e.seq > 0 {
			checkGet(e.key, e.seq-1, older)
		}
	}
	inTable := map[string]bool{}
	for _, e := range es {
		inTable[e.key] = true
	}
	for _, k := range absent {
		if !inTable[k] {
			checkGet(k, leveldb.MaxSequence, nil)
		}
	}
	// Seeks: SeekGE to a user key lands on its newest version, SeekGEAt
	// to (key, seq) on the first entry at or after it, SeekLT on the
	// oldest version of the key before.
	it := tb.NewIter(nil)
	defer it.Close()
	rng := rand.New(rand.NewPCG(uint64(len(es)), 7))
	for i := 0; i < 200; i++ {
		e := es[rng.IntN(len(es))]
		k := e.key
		switch rng.IntN(3) {
		case 1:
			k += "\x00"
		case 2:
			if k != "" {
				k = k[:len(k)-1]
			}
		}
		ge := sort.Search(len(es), func(j int) bool { return es[j].key >= k })
		check := func(what string, ok bool, j int) {
			t.Helper()
			if j >= len(es) || j < 0 {
				if ok {
					t.Fatalf("%s: %s on %x@%d, want exhausted", name, what, it.Key(), it.Seq())
				}
				return
			}
			if !ok || string(it.Key()) != es[j].key || it.Seq() != es[j].seq || string(it.Value()) != es[j].value {
				t.Fatalf("%s: %s = %v on %x@%d = %.40x (err %v), want %x@%d = %.40x", name, what, ok, it.Key(), it.Seq(), it.Value(), it.Err(), es[j].key, es[j].seq, es[j].value)
			}
		}
		check(fmt.Sprintf("SeekGE(%x)", k), it.SeekGE([]byte(k)), ge)
		check(fmt.Sprintf("SeekLT(%x)", k), it.SeekLT([]byte(k)), ge-1)
		seq := e.seq + uint64(rng.IntN(3)) - 1
		at := sort.Search(len(es), func(j int) bool { return !internalLess(es[j].key, es[j].seq, e.key, seq) })
		check(fmt.Sprintf("SeekGEAt(%x, %d)", e.key, seq), it.SeekGEAt([]byte(e.key), seq), at)
		if at < len(es) { // from past the end, Prev stays there
			check(fmt.Sprintf("SeekGEAt(%x, %d).Prev", e.key, seq), it.Prev(), at-1)
		}
	}
}

// testOracleLock: while LevelDB holds a database open, OpenDB refuses it
// with ErrLocked; while OpenDB holds it, LevelDB cannot open it.
func testOracleLock(t *testing.T, o *oracle) {
	dir := filepath.Join(t.TempDir(), "db")
	o.gen(t, dir, 11, "snappy", 2000)
	cmd := exec.Command(o.bin, "hold", dir, "60")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("ldboracle hold: %q, %v; stderr %s", line, err, stderr.String())
	}
	db, err := leveldb.OpenDB(dir, nil)
	if !errors.Is(err, leveldb.ErrLocked) {
		if db != nil {
			db.Close()
		}
		t.Errorf("OpenDB of a database LevelDB holds open: %v; want ErrLocked", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ldboracle hold: %v; stderr %s", err, stderr.String())
	}
	want, err := o.dump(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err = leveldb.OpenDB(dir, nil)
	if err != nil {
		t.Fatalf("OpenDB once LevelDB closed the database: %v", err)
	}
	got, err := ourView(db, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffLines(got, want); d != "" {
		t.Errorf("view once LevelDB closed the database: %s", d)
	}
	// LevelDB cannot open the database while we hold it.
	if out, err := o.run("dump", dir); err == nil || !strings.Contains(strings.ToLower(err.Error()), "lock") {
		t.Errorf("LevelDB opened a database OpenDB holds: %v (%d bytes of output); want a lock error", err, len(out))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.run("dump", dir); err != nil {
		t.Errorf("LevelDB after Close: %v", err)
	}
}

// checkCorrupt checks that err is a corruption error naming name.
func checkCorrupt(t *testing.T, what, name string, err error) {
	t.Helper()
	if !errors.Is(err, format.ErrCorrupt) {
		t.Errorf("%s: error %v (%T) does not wrap format.ErrCorrupt", what, err, err)
	} else if !strings.Contains(err.Error(), name) {
		t.Errorf("%s: error %q does not name %s", what, err, name)
	}
}

// damagePositions returns the byte offsets of data to damage: every byte
// of files up to 2 KiB, else every byte of the last 2 KiB before the
// metaindex block to the end (the filter's tail, metaindex, index,
// footer) minus a sampling, and a sampling of the rest.
func damagePositions(rng *rand.Rand, size int, tail int, n int) []int {
	if size <= 2048 {
		ps := make([]int, size)
		for i := range ps {
			ps[i] = i
		}
		return ps
	}
	var ps []int
	for p := max(0, tail); p < size; p++ {
		if size-p <= 64 || rng.IntN(max(1, (size-tail)/n)) == 0 {
			ps = append(ps, p)
		}
	}
	for range n {
		ps = append(ps, rng.IntN(max(1, tail)))
	}
	return ps
}

func truncateLengths(rng *rand.Rand, size int, marks ...int) []int {
	ls := []int{0, 1, 7, 8, 47, 48, 49, size / 2, size - 49, size - 48, size - 47, size - 8, size - 1}
	for _, m := range marks {
		ls = append(ls, m-1, m, m+1)
	}
	for range 6 {
		ls = append(ls, rng.IntN(size))
	}
	var out []int
	seen := map[int]bool{}
	for _, l := range ls {
		if l >= 0 && l < size && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	sort.Ints(out)
	return out
}

// testOracleDamage flips bits in and truncates every table, the MANIFEST
// and the log of one database: each read must give an error wrapping
// format.ErrCorrupt that names the file, or the original entries (for
// the MANIFEST and the log, the view LevelDB reads from the damaged
// copy) — never a panic, never a different value.
func testOracleDamage(t *testing.T, o *oracle) {
	dir := filepath.Join(t.TempDir(), "db")
	st := o.gen(t, dir, 5, "snappy", 16000)
	t.Logf("tables per level: %v", st.levels)
	want, err := o.dump(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := leveldb.OpenDB(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := db.Files()
	db.Close()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("%06d.ldb", f.Number)))
	}
	tableDumps := o.dumpTables(t, paths)
	for i, path := range paths {
		t.Run("table/"+filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			damageTable(t, path, parseEntries(t, tableDumps[path]), int64(i))
		})
	}
	t.Run("manifest", func(t *testing.T) {
		t.Parallel()
		cur, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
		if err != nil {
			t.Fatal(err)
		}
		damageDBFile(t, o, dir, strings.TrimSpace(string(cur)), want)
	})
	t.Run("log", func(t *testing.T) {
		t.Parallel()
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(logs) != 1 {
			t.Fatalf("logs %v, want one", logs)
		}
		damageDBFile(t, o, dir, filepath.Base(logs[0]), want)
	})
}

// damageTable reads every damaged version of the table at path.
func damageTable(t *testing.T, path string, orig []tableEntry, seed int64) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := leveldb.OpenTable(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	info := tb.Info()
	tb.Close()
	rng := rand.New(rand.NewPCG(uint64(seed), 99))
	origLines := make([]string, len(orig))
	newest := map[string]*tableEntry{}
	var keys []string
	for i := range orig {
		e := &orig[i]
		origLines[i] = entryLine([]byte(e.key), e.seq, e.kind, []byte(e.value))
		if newest[e.key] == nil {
			newest[e.key] = e
			keys = append(keys, e.key)
		}
	}
	scratch := t.TempDir()
	name := filepath.Base(path)
	cases := 0
	try := func(what string, b []byte) {
		cases++
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: panic: %v", what, r)
			}
		}()
		var tb *leveldb.Table
		var err error
		var tname string
		if cases%3 == 0 { // mapped, from a file
			tname = filepath.Join(scratch, fmt.Sprintf("d%d-%s", cases, name))
			if err := os.WriteFile(tname, b, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(tname)
			tb, err = leveldb.OpenTable(tname, nil)
		} else {
			tname = fmt.Sprintf("damaged-%d-%s", cases, name)
			tb, err = leveldb.NewTable(bytes.NewReader(b), int64(len(b)), &leveldb.TableOptions{Name: tname})
		}
		if err != nil {
			checkCorrupt(t, what+": open", tname, err)
			return
		}
		defer tb.Close()
		if n, err := tb.Verify(); err != nil {
			checkCorrupt(t, what+": Verify", tname, err)
		} else if n != int64(len(orig)) {
			t.Errorf("%s: Verify passes with %d entries, want %d", what, n, len(orig))
		}
		for _, backward := range []bool{false, true} {
			got, err := tableLines(tb, backward)
			if err != nil {
				checkCorrupt(t, fmt.Sprintf("%s: iterate (backward %v)", what, backward), tname, err)
				// What came before the error must be the original's.
				if backward {
					if d := diffLines(got, origLines[len(origLines)-len(got):]); len(got) > len(origLines) || d != "" {
						t.Errorf("%s: backward before the error: %s", what, d)
					}
				} else if len(got) > len(origLines) || diffLines(got, origLines[:len(got)]) != "" {
					t.Errorf("%s: forward before the error: %s", what, diffLines(got, origLines[:min(len(got), len(origLines))]))
				}
				continue
			}
			if d := diffLines(got, origLines); d != "" {
				t.Errorf("%s: iteration (backward %v) without an error gives other entries: %s", what, backward, d)
			}
		}
		for j := 0; j < 60; j++ {
			k := keys[rng.IntN(len(keys))]
			want := newest[k]
			if j%10 == 9 {
				k += "\x00\x01"
				want = newest[k]
			}
			e, err := tb.Get([]byte(k), leveldb.MaxSequence)
			switch {
			case err != nil && !errors.Is(err, reader.ErrNotFound):
				checkCorrupt(t, fmt.Sprintf("%s: Get(%x)", what, k), tname, err)
			case want == nil:
				if err == nil {
					t.Errorf("%s: Get(%x) of a key the table lacks = %+v", what, k, e)
				}
			case err != nil:
				t.Errorf("%s: Get(%x) = ErrNotFound, want seq %d", what, k, want.seq)
			case string(e.Key) != want.key || e.Seq != want.seq || e.Kind != want.kind || string(e.Value) != want.value:
				t.Errorf("%s: Get(%x) = {%d %v %.40x}, want {%d %v %.40x}", what, k, e.Seq, e.Kind, e.Value, want.seq, want.kind, want.value)
			}
		}
	}
	tail := int(min(info.Metaindex.Offset, info.Index.Offset)) - 2048
	for _, p := range damagePositions(rng, len(data), tail, 250) {
		b := bytes.Clone(data)
		bit := byte(1) << rng.IntN(8)
		b[p] ^= bit
		try(fmt.Sprintf("%s with byte %d ^= %#x", name, p, bit), b)
		if t.Failed() {
			return
		}
	}
	for _, n := range truncateLengths(rng, len(data), int(info.Metaindex.Offset), int(info.Index.Offset)) {
		try(fmt.Sprintf("%s cut to %d of %d bytes", name, n, len(data)), data[:n:n])
		if t.Failed() {
			return
		}
	}
	t.Logf("%s: %d damaged versions of %d bytes, %d entries", name, cases, len(data), len(orig))
}

// damageDBFile damages file (the MANIFEST or the log) of the database in
// dir: OpenDB and reading the view must fail with a corruption error
// naming the file (or, for a MANIFEST cut short that names deleted
// tables, a missing file), or give LevelDB's own view of the damaged
// database.
func damageDBFile(t *testing.T, o *oracle, dir, file string, orig []string) {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(data)), 5))
	work := t.TempDir()
	cases, oracleRuns, errs := 0, 0, 0
	try := func(what string, b []byte, truncated bool) {
		cases++
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: panic: %v", what, r)
			}
		}()
		d := filepath.Join(work, strconv.Itoa(cases))
		copyDir(t, dir, d, true)
		defer os.RemoveAll(d)
		target := filepath.Join(d, file)
		os.Remove(target) // a hard link: replace, not write through
		if err := os.WriteFile(target, b, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := leveldb.OpenDB(d, nil)
		var got []string
		if err == nil {
			got, err = ourView(db, false)
			if err == nil {
				_, err = db.Verify()
			}
			db.Close()
		}
		if err != nil {
			errs++
			if errors.Is(err, fs.ErrNotExist) {
				// The MANIFEST's end lost (cut, or a record's length
				// damaged so that it seems torn by a crash): an older
				// version, naming tables since deleted. LevelDB reads
				// the same edits and must refuse the database too.
				oracleRuns++
				if _, oerr := o.dump(t, d); oerr == nil {
					t.Errorf("%s: OpenDB: %v, but LevelDB opens the damaged database", what, err)
				}
				return
			}
			checkCorrupt(t, what, target, err)
			return
		}
		if !truncated && diffLines(got, orig) == "" {
			return
		}
		oracleRuns++
		want, oerr := o.dump(t, d)
		if oerr != nil {
			t.Errorf("%s: OpenDB reads %d keys, LevelDB cannot open the damaged database: %v", what, len(got), oerr)
			return
		}
		if dd := diffLines(got, want); dd != "" {
			t.Errorf("%s: our view of the damaged database differs from LevelDB's: %s", what, dd)
		}
	}
	for _, p := range damagePositions(rng, len(data), len(data)-1024, 150) {
		b := bytes.Clone(data)
		bit := byte(1) << rng.IntN(8)
		b[p] ^= bit
		try(fmt.Sprintf("%s with byte %d ^= %#x", file, p, bit), b, false)
		if t.Failed() {
			return
		}
	}
	for _, n := range truncateLengths(rng, len(data)) {
		try(fmt.Sprintf("%s cut to %d of %d bytes", file, n, len(data)), data[:n:n], true)
		if t.Failed() {
			return
		}
	}
	t.Logf("%s: %d damaged versions of %d bytes: %d refused, %d compared with LevelDB's view", file, cases, len(data), errs, oracleRuns)
}
