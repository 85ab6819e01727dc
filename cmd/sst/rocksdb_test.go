package main

// Tests of sst on RocksDB's tables, against what RocksDB itself read from
// them: the golden tables of package rocksdb, written by RocksDB 7.8.3
// (rocksdb/testdata/golden/oracle-7.8.3: each table's sst_dump output,
// the views and Gets of RocksDB's own reader or database) and by RocksDB
// 10.5.1 (rocksdb/testdata/golden/native: three flushed tables per
// database, RocksDB's view of the database and its Gets); and, where
// RocksDB's sst_dump is installed, sst_dump run on the tables afresh
// (skipped without it, unless SSTABLE_REQUIRE_ROCKSDB=1).

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sstkit/sstable/internal/oracletest"
	"github.com/sstkit/sstable/rocksdb"
)

const (
	rdbGolden = "../../rocksdb/testdata/golden/oracle-7.8.3" // RocksDB 7.8.3's tables and what it read
	rdbNative = "../../rocksdb/testdata/golden/native"       // RocksDB 10.5.1's
)

// rdbKindNames are the names of RocksDB's ValueType numbers
// (db/dbformat.h), written out here rather than taken from rocksdb.Kind,
// which is what the lines compared print.
var rdbKindNames = map[int]string{
	0x0: "delete", 0x1: "value", 0x2: "merge", 0x7: "single-delete", 0x11: "blob-index",
	0x14: "delete-with-timestamp", 0x16: "entity", 0x18: "value-preferred-seqno",
}

// rdbDump is what sst_dump --command=scan --output_hex --show_properties
// printed of a table.
type rdbDump struct {
	entries []rdbEntry
	props   []string // the "Table Properties" lines, trimmed, "unique ID" left out
	raw     []string // the "Raw user collected properties" lines, trimmed
}

// rdbEntry is one internal entry of sst_dump's scan.
type rdbEntry struct {
	key, value []byte
	seq        uint64
	kind       int
}

// line is the entry as sst scan -hex prints it.
func (e rdbEntry) line() string {
	return fmt.Sprintf("%x @%d %s\t%x", e.key, e.seq, rdbKindNames[e.kind], e.value)
}

var dumpEntry = regexp.MustCompile(`^'([0-9A-F]*)' seq:(\d+), type:(\d+) => ([0-9A-F]*)$`)

// parseDump parses sst_dump's output.
func parseDump(t *testing.T, name, text string) rdbDump {
	t.Helper()
	var d rdbDump
	section := ""
	for _, l := range strings.Split(text, "\n") {
		if m := dumpEntry.FindStringSubmatch(l); m != nil {
			k, err1 := hex.DecodeString(m[1])
			v, err2 := hex.DecodeString(m[4])
			seq, err3 := strconv.ParseUint(m[2], 10, 64)
			kind, err4 := strconv.Atoi(m[3])
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				t.Fatalf("%s: bad sst_dump line %q", name, l)
			}
			d.entries = append(d.entries, rdbEntry{k, v, seq, kind})
			continue
		}
		switch trimmed := strings.TrimSpace(l); {
		case trimmed == "Table Properties:":
			section = "props"
		case trimmed == "Raw user collected properties":
			section = "raw"
		case trimmed == "" || strings.HasPrefix(trimmed, "---"):
		case section == "props" && !strings.HasPrefix(trimmed, "unique ID:"):
			// The unique ID is a hash of three properties, not one; sst
			// info leaves it out.
			d.props = append(d.props, trimmed)
		case section == "raw":
			d.raw = append(d.raw, trimmed)
		}
	}
	return d
}

// corpusTables returns the names (without .sst) of the tables of a
// corpus the RocksDB oracle (rocksdb/testdata/oracle/rdboracle.cc) wrote
// into dir: the golden one, or one written afresh.
func corpusTables(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.dump"))
	if err != nil || len(paths) < 10 {
		t.Fatalf("%s: want the RocksDB oracle's tables, found %d (%v)", dir, len(paths), err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".dump"))
	}
	return names
}

// corpusDump returns the recorded sst_dump output of the table name of
// the corpus in dir.
func corpusDump(t *testing.T, dir, name string) rdbDump {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".dump"))
	if err != nil {
		t.Fatal(err)
	}
	return parseDump(t, name, string(data))
}

// checkAgainstDump compares sst scan -hex and sst info of the table at
// path with sst_dump's output of it: the same internal entries, line for
// line, and every property line sst_dump printed, as it printed it.
func checkAgainstDump(t *testing.T, path string, d rdbDump) {
	t.Helper()
	if len(d.entries) == 0 || len(d.props) < 20 {
		t.Fatalf("%s: sst_dump printed %d entries and %d properties", path, len(d.entries), len(d.props))
	}
	var want strings.Builder
	for _, e := range d.entries {
		want.WriteString(e.line() + "\n")
	}
	if got := mustSST(t, "scan", "-hex", path); got != want.String() {
		t.Errorf("%s: sst scan -hex differs from sst_dump's scan: %s", path, firstDiff(got, want.String()))
	}
	info := mustSST(t, "info", path)
	lines := map[string]bool{}
	for _, l := range strings.Split(info, "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, l := range append(slices.Clone(d.props), d.raw...) {
		if !lines[l] {
			t.Errorf("%s: sst info lacks sst_dump's property line %q", path, l)
		}
	}
}

// TestRocksDBGoldenDump checks sst scan -hex and sst info on every golden
// 7.8.3 table against the sst_dump output recorded beside it: formats 0
// to 5, every checksum and compression, the index and filter types,
// reverse bytewise order, range deletions, blob indexes, entities and an
// ingested file's global sequence number.
func TestRocksDBGoldenDump(t *testing.T) {
	checkCorpusDumps(t, rdbGolden)
}

// checkCorpusDumps runs checkAgainstDump on every table of the corpus in
// dir, with the sst_dump output recorded beside it.
func checkCorpusDumps(t *testing.T, dir string) {
	for _, name := range corpusTables(t, dir) {
		checkAgainstDump(t, filepath.Join(dir, name+".sst"), corpusDump(t, dir, name))
	}
}

// sstDump returns the sst_dump binary, or skips t (fails it under
// SSTABLE_REQUIRE_ROCKSDB=1) when it is not installed.
func sstDump(t *testing.T) string {
	t.Helper()
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB's sst_dump")
	bin, err := exec.LookPath("sst_dump")
	if err != nil {
		oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB's sst_dump", "install Debian's rocksdb-tools", "sst_dump is not installed: %v", err)
	}
	return bin
}

// TestRocksDBSstDump runs RocksDB's sst_dump on the golden 7.8.3 tables
// now, rather than reading what it printed when they were written: sst
// scan -hex must match its --command=scan --output_hex line for line, and
// sst info hold each of its --show_properties lines.
func TestRocksDBSstDump(t *testing.T) {
	bin := sstDump(t)
	for _, name := range corpusTables(t, rdbGolden) {
		path := filepath.Join(rdbGolden, name+".sst")
		out, err := exec.Command(bin, "--file="+path, "--command=scan", "--output_hex", "--show_properties").CombinedOutput()
		if err != nil {
			t.Fatalf("sst_dump %s: %v\n%s", path, err, out)
		}
		checkAgainstDump(t, path, parseDump(t, name, string(out)))
	}
}

// TestRocksDBScanBounds checks -start, -end, -limit and -keys-only on a
// bytewise and a reverse bytewise table against sst_dump's entries: the
// versions of the user keys in [start, end) (bytewise, in either table),
// in the table's order.
func TestRocksDBScanBounds(t *testing.T) {
	for _, name := range []string{"fv5-xxh3", "reverse"} {
		d := corpusDump(t, rdbGolden, name)
		path := filepath.Join(rdbGolden, name+".sst")
		n := len(d.entries)
		cuts := [][2][]byte{
			{d.entries[n/4].key, d.entries[3*n/4].key},
			{d.entries[3*n/4].key, d.entries[n/4].key},
			{[]byte{}, d.entries[n/2].key},
			{d.entries[n/2].key, nil},
			{append(bytes.Clone(d.entries[n/3].key), 0), append(bytes.Clone(d.entries[n/2].key), 0)},
		}
		for _, c := range cuts {
			lo, hi := c[0], c[1]
			if hi != nil && bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			var want, wantKeys []string
			for _, e := range d.entries {
				if bytes.Compare(e.key, lo) >= 0 && (hi == nil || bytes.Compare(e.key, hi) < 0) {
					want = append(want, e.line()+"\n")
					wantKeys = append(wantKeys, strings.Split(e.line(), "\t")[0]+"\n")
				}
			}
			if len(want) == 0 {
				t.Fatalf("%s: no entries in [%x, %x)", name, lo, hi)
			}
			args := []string{"scan", "-hex", path, "-start", hex.EncodeToString(lo)}
			if hi != nil {
				args = append(args, "-end", hex.EncodeToString(hi))
			}
			if got := mustSST(t, args...); got != strings.Join(want, "") {
				t.Errorf("sst %q: %s", args, firstDiff(got, strings.Join(want, "")))
			}
			if got := mustSST(t, append(args, "-limit", "2", "-keys-only")...); got != strings.Join(wantKeys[:min(2, len(wantKeys))], "") {
				t.Errorf("sst %q -limit 2 -keys-only: %q, want %q", args, got, wantKeys[:min(2, len(wantKeys))])
			}
		}
	}
	// Raw output: the same bytes, unencoded.
	d := corpusDump(t, rdbGolden, "fv5-xxh3")
	var want bytes.Buffer
	for _, e := range d.entries {
		fmt.Fprintf(&want, "%s @%d %s\t%s\n", e.key, e.seq, rdbKindNames[e.kind], e.value)
	}
	if got := mustSST(t, "scan", filepath.Join(rdbGolden, "fv5-xxh3.sst")); got != want.String() {
		t.Errorf("sst scan (raw): %s", firstDiff(got, want.String()))
	}
}

// TestRocksDBSpans checks scan -spans against the range deletions RocksDB
// reads (the fragments sst_dump --command=raw printed): every key is
// covered by sst's range deletions exactly when it is by RocksDB's
// fragments, probed at every boundary and just past it.
func TestRocksDBSpans(t *testing.T) {
	checkCorpusSpans(t, rdbGolden)
}

// checkCorpusSpans runs TestRocksDBSpans's checks on the corpus in dir.
func checkCorpusSpans(t *testing.T, dir string) {
	frags, err := filepath.Glob(filepath.Join(dir, "*.frag"))
	if err != nil || len(frags) < 3 {
		t.Fatalf("want the oracle's .frag files in %s, found %d (%v)", dir, len(frags), err)
	}
	for _, frag := range frags {
		name := strings.TrimSuffix(filepath.Base(frag), ".frag")
		path := filepath.Join(dir, name+".sst")
		reverse := strings.Contains(mustSST(t, "info", path), "comparator:         "+rocksdb.ReverseBytewiseComparator)
		data, err := os.ReadFile(frag)
		if err != nil {
			t.Fatal(err)
		}
		type span struct{ start, end []byte }
		parse := func(line, sep string) span {
			a, b, ok := strings.Cut(line, sep)
			s, err1 := hex.DecodeString(strings.TrimSpace(a))
			e, err2 := hex.DecodeString(strings.TrimSpace(b))
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("%s: bad line %q", name, line)
			}
			return span{s, e}
		}
		var theirs, ours []span
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			theirs = append(theirs, parse(l, ":"))
		}
		out := mustSST(t, "scan", "-spans", "-hex", path)
		seqs := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			f := strings.Split(l, "\t")
			if len(f) != 3 || !strings.HasPrefix(f[2], "@") {
				t.Fatalf("%s: -spans line %q is not START<TAB>END<TAB>@SEQ", name, l)
			}
			ours = append(ours, parse(f[0]+"\t"+f[1], "\t"))
			seqs[f[2]] = true
		}
		if d := corpusDump(t, dir, name); !slices.Contains(d.props, fmt.Sprintf("# range deletions: %d", len(ours))) {
			t.Errorf("%s: -spans printed %d range deletions; sst_dump's properties: %q", name, len(ours), d.props)
		}
		covered := func(spans []span, k []byte) bool {
			for _, s := range spans {
				if !reverse && bytes.Compare(s.start, k) <= 0 && bytes.Compare(k, s.end) < 0 ||
					reverse && bytes.Compare(s.start, k) >= 0 && bytes.Compare(k, s.end) > 0 {
					return true
				}
			}
			return false
		}
		var probes [][]byte
		for _, s := range append(slices.Clone(theirs), ours...) {
			for _, k := range [][]byte{s.start, s.end} {
				probes = append(probes, k, append(bytes.Clone(k), 0))
				if len(k) > 0 {
					probes = append(probes, k[:len(k)-1])
				}
			}
		}
		for _, k := range probes {
			if covered(ours, k) != covered(theirs, k) {
				t.Errorf("%s: key %x: covered by sst's range deletions %v, by RocksDB's %v", name, k, covered(ours, k), covered(theirs, k))
			}
		}
	}
}

// rdbSection is one "@max" or "@SEQ" section of a .gets or .views file.
type rdbSection struct {
	seq   string // "max" or the snapshot's sequence number
	lines []string
}

// readSections parses a golden .gets or .views file.
func readSections(t *testing.T, path string) []rdbSection {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []rdbSection
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "@"):
			out = append(out, rdbSection{seq: l[1:]})
		case strings.HasPrefix(l, "!"):
			if l != "!ok" {
				out[len(out)-1].seq = "" // RocksDB failed: not compared
			}
		case len(out) > 0:
			out[len(out)-1].lines = append(out[len(out)-1].lines, l)
		}
	}
	return out
}

// corpusStacks returns the stacks of the manifest of the corpus in dir:
// name -> tables, newest first.
func corpusStacks(t *testing.T, dir string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "manifest.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stacks := map[string][]string{}
	for _, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "stack" {
			continue
		}
		for _, kv := range f[2:] {
			if v, ok := strings.CutPrefix(kv, "tables="); ok {
				stacks[f[1]] = strings.Split(v, ",")
			}
		}
	}
	if len(stacks) < 5 {
		t.Fatalf("%s/manifest.txt: %d stacks", dir, len(stacks))
	}
	return stacks
}

// TestRocksDBGet checks sst get -hex on every golden one-table stack
// against RocksDB's Gets of the same keys (its SstFileReader, or the
// database holding only that table), at the newest sequence number and,
// with -seq, at each snapshot the database held: the same value, or "-"
// for a key RocksDB did not find (absent, deleted, or under a range
// deletion of the table). Where RocksDB found a value that it merged
// from operands or read from a blob file, sst must refuse with an error
// naming the key, and the key's version there must be a merge operand
// or a blob index; an entity reads as its default column.
func TestRocksDBGet(t *testing.T) {
	n := checkCorpusGets(t, rdbGolden)
	if n.present < 100 || n.absent < 100 || n.rangeDeleted == 0 || n.refused == 0 || n.seqSections == 0 {
		t.Errorf("too few cases of a kind: %+v", n)
	}
}

// getCounts counts the Gets checkCorpusGets compared, by RocksDB's
// answer.
type getCounts struct {
	present, absent, rangeDeleted, refused, seqSections int
}

// checkCorpusGets runs TestRocksDBGet's checks on the corpus in dir.
func checkCorpusGets(t *testing.T, dir string) getCounts {
	var n getCounts
	for stack, tables := range corpusStacks(t, dir) {
		if len(tables) != 1 {
			continue
		}
		path := filepath.Join(dir, tables[0]+".sst")
		d := corpusDump(t, dir, tables[0])
		for _, sec := range readSections(t, filepath.Join(dir, stack+".gets")) {
			if sec.seq == "" {
				continue
			}
			var seqArgs []string
			var at uint64 = rocksdb.MaxSequence
			if sec.seq != "max" {
				seqArgs = []string{"-seq", sec.seq}
				seq, err := strconv.ParseUint(sec.seq, 10, 64)
				if err != nil {
					t.Fatalf("%s.gets: section @%s", stack, sec.seq)
				}
				at = seq
				n.seqSections++
			}
			for _, l := range sec.lines {
				hk, want, _ := strings.Cut(l, "\t")
				args := append(append([]string{"get", "-hex"}, seqArgs...), path, hk)
				out, errs, status := sst(t, args...)
				if seqArgs == nil {
					// -seq at the largest sequence number reads through
					// Table.Get rather than the table's merge level:
					// the same answers.
					seqMax := []string{"get", "-hex", "-seq", strconv.FormatUint(rocksdb.MaxSequence, 10), path, hk}
					if out2, errs2, status2 := sst(t, seqMax...); out2 != out || status2 != status || (errs2 == "") != (errs == "") {
						t.Errorf("sst %q: %q, status %d (%s); without -seq: %q, status %d (%s)", seqMax, out2, status2, errs2, out, status, errs)
					}
				}
				switch {
				case want == "-":
					if out != "-\n" || status != 1 {
						t.Errorf("sst %q: %q, status %d (%s); RocksDB found nothing", args, out, status, errs)
					}
					n.absent++
					if strings.Contains(errs, "range deletion") {
						n.rangeDeleted++
					}
				case status == 0:
					if out != want+"\n" {
						t.Errorf("sst %q: %q; RocksDB: %q", args, out, want)
					}
					n.present++
				default:
					// Refused: the version must be one a table alone
					// cannot resolve.
					kind := -1
					for _, e := range d.entries {
						if hex.EncodeToString(e.key) == hk && e.seq <= at {
							kind = e.kind
							break
						}
					}
					if out != "" || status != 1 || kind != 0x2 && kind != 0x11 && kind != 0x16 ||
						!strings.Contains(errs, "merge operand") && !strings.Contains(errs, "blob index") || !strings.Contains(errs, strconv.Quote(hk)) {
						t.Errorf("sst %q: %q, status %d, stderr %q (the version's kind %#x); RocksDB: %q", args, out, status, errs, kind, want)
					}
					n.refused++
				}
			}
		}
	}
	t.Logf("%s: gets: %+v", dir, n)
	return n
}

var unresolvedKey = regexp.MustCompile(`key ("(?:[^"\\]|\\.)*")(?: @\d+)? is a (merge|blob-index)`)

// checkCorpusBuilds builds each stack of the corpus in dir with build
// -rocksdb and compares the table written with RocksDB's view of the
// stack (@max): the same entries. A stack whose view holds a merge
// operand or blob index must fail with an error naming a key whose
// newest version in the stack is one (or an entity, whose default
// column may be a blob index), and leave no table; so must a reverse
// bytewise table, which merge cannot order. It returns the stacks built
// and refused.
func checkCorpusBuilds(t *testing.T, dir string) (built, refused int) {
	for stack, tables := range corpusStacks(t, dir) {
		args := []string{"build", "-rocksdb"}
		for _, tb := range tables {
			args = append(args, filepath.Join(dir, tb+".sst"))
		}
		out := filepath.Join(t.TempDir(), "view.sst")
		got, errs, status := sst(t, append(args, "-o", out)...)
		if status != 0 {
			if _, err := os.Lstat(out); err == nil {
				t.Errorf("sst %q failed and left %s", args, out)
			}
			refused++
			if status == 1 && strings.Contains(errs, rocksdb.ReverseBytewiseComparator) {
				continue
			}
			m := unresolvedKey.FindStringSubmatch(errs)
			if status != 1 || m == nil {
				t.Errorf("sst %q: status %d: %s", args, status, errs)
				continue
			}
			key, err := strconv.Unquote(m[1])
			if err != nil {
				t.Fatal(err)
			}
			kind := -1
			for _, tb := range tables {
				for _, e := range corpusDump(t, dir, tb).entries {
					if string(e.key) == key {
						kind = e.kind
						break
					}
				}
				if kind >= 0 {
					break
				}
			}
			if kind != 0x2 && kind != 0x11 && kind != 0x16 {
				t.Errorf("sst %q: %s: but that key's newest version is of kind %#x", args, errs, kind)
			}
			continue
		}
		if !strings.HasPrefix(got, "wrote "+out) {
			t.Errorf("sst %q: %q", args, got)
		}
		var view []string
		for _, sec := range readSections(t, filepath.Join(dir, stack+".views")) {
			if sec.seq == "max" {
				view = sec.lines
			}
		}
		want := strings.Join(view, "\n") + "\n"
		if len(view) == 0 {
			want = ""
		}
		if got := mustSST(t, "scan", "-hex", out); got != want {
			t.Errorf("%s: the view built from %q: %s", dir, tables, firstDiff(got, want))
		}
		built++
	}
	return built, refused
}

// TestRocksDBGetMany checks get's output of several keys at once: a line
// per key, "-" for the absent, exit status 1 with a report per absent
// key; and its errors for a merge operand.
func TestRocksDBGetMany(t *testing.T) {
	path := filepath.Join(rdbGolden, "db-entity-t1.sst")
	var sec rdbSection
	for _, s := range readSections(t, filepath.Join(rdbGolden, "db-entity.gets")) {
		if s.seq == "max" {
			sec = s
		}
	}
	if len(sec.lines) == 0 {
		t.Fatal("db-entity.gets has no @max section")
	}
	args := []string{"get", "-hex", path}
	var want strings.Builder
	missing := 0
	for _, l := range sec.lines {
		hk, v, _ := strings.Cut(l, "\t")
		args = append(args, hk)
		want.WriteString(v + "\n")
		if v == "-" {
			missing++
		}
	}
	out, errs, status := sst(t, args...)
	if out != want.String() || status != 1 || strings.Count(errs, "not found") != missing {
		t.Errorf("sst get -hex of %d keys: status %d, %d reports (want %d): %s", len(args)-3, status, strings.Count(errs, "not found"), missing, firstDiff(out, want.String()))
	}

	// A merge operand: an error naming the key, nothing printed for it.
	d := corpusDump(t, rdbGolden, "fv5-xxh3")
	for _, e := range d.entries {
		if e.kind == 0x2 {
			hk := hex.EncodeToString(e.key)
			out, _, _ := sst(t, "get", "-hex", filepath.Join(rdbGolden, "fv5-xxh3.sst"), hk)
			if out != "" {
				t.Errorf("get of merge operand %s printed %q", hk, out)
			}
			wantError(t, []string{"get", "-hex", filepath.Join(rdbGolden, "fv5-xxh3.sst"), hk}, 1, "merge operand", strconv.Quote(hk), "fv5-xxh3.sst")
			return
		}
	}
	t.Fatal("fv5-xxh3 holds no merge operand")
}

// TestRocksDBVerify checks verify on every golden table (the entry count
// sst_dump saw, the data blocks its properties give) and on damaged
// copies: a flipped bit in a data block, the index and the properties is
// an error naming the file, the section and its offset, exit status 1.
func TestRocksDBVerify(t *testing.T) {
	for _, name := range corpusTables(t, rdbGolden) {
		d := corpusDump(t, rdbGolden, name)
		var blocks string
		for _, p := range d.props {
			if v, ok := strings.CutPrefix(p, "# data blocks: "); ok {
				blocks = v
			}
		}
		want := fmt.Sprintf("ok: %d entries, %s data blocks\n", len(d.entries), blocks)
		if got := mustSST(t, "verify", filepath.Join(rdbGolden, name+".sst")); got != want {
			t.Errorf("%s: verify: %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"fv5-xxh3", "fv0-crc32c-none", "comp-fv2-zstd"} {
		src := filepath.Join(rdbGolden, name+".sst")
		tbl, err := rocksdb.OpenTable(src, nil)
		if err != nil {
			t.Fatal(err)
		}
		in := tbl.Info()
		tbl.Close()
		for _, c := range []struct {
			section string
			off     int64
		}{
			{"data block", 7},
			{"index", int64(in.Index.Offset + in.Index.Length/2)},
		} {
			path := filepath.Join(t.TempDir(), name+".sst")
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, data)
			damage(t, path, c.off)
			errs := wantError(t, []string{"verify", path}, 1, path, c.section, "corrupt")
			if !regexp.MustCompile(`offset \d+`).MatchString(errs) {
				t.Errorf("verify of %s damaged in its %s: %q names no offset", name, c.section, errs)
			}
			// The other commands fail too, rather than show other bytes.
			if _, _, status := sst(t, "scan", "-hex", path); status != 1 {
				t.Errorf("scan of %s damaged in its %s: status %d", name, c.section, status)
			}
		}
	}
}

// TestRocksDBBuild checks build -rocksdb on RocksDB 10.5.1's databases
// (format_version 6 and 7, three flushed tables each, range deletions
// and deletions over older tables): the table written reads as RocksDB
// read the database, entry for entry (scan) and key for key (get). A
// stack whose view holds a merge operand or blob index fails, leaving no
// table behind.
func TestRocksDBBuild(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(rdbNative, "fv*"))
	if err != nil || len(dirs) < 4 {
		t.Fatalf("want the native golden databases, found %d (%v)", len(dirs), err)
	}
	for _, dir := range dirs {
		files, err := os.ReadFile(filepath.Join(dir, "files.txt"))
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"build", "-rocksdb"}
		for _, l := range strings.Split(strings.TrimSpace(string(files)), "\n") {
			f := strings.Fields(l)
			if f[0] != "0" {
				t.Fatalf("%s/files.txt: %q is not on level 0", dir, l)
			}
			args = append(args, filepath.Join(dir, f[len(f)-1])) // newest first, as RocksDB lists level 0
		}
		out := filepath.Join(t.TempDir(), "view.sst")
		mustSST(t, append(args, "-o", out)...)
		view, err := os.ReadFile(filepath.Join(dir, "view.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := mustSST(t, "scan", "-hex", out); got != string(view) {
			t.Errorf("%s: the view built: %s", dir, firstDiff(got, string(view)))
		}
		gets, err := os.ReadFile(filepath.Join(dir, "gets.txt"))
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{"get", "-hex", out}
		var want strings.Builder
		for _, l := range strings.Split(strings.TrimSpace(string(gets)), "\n") {
			k, v, _ := strings.Cut(l, "\t")
			keys = append(keys, k)
			want.WriteString(v + "\n")
		}
		if got, _, _ := sst(t, keys...); got != want.String() {
			t.Errorf("%s: gets of the view built: %s", dir, firstDiff(got, want.String()))
		}
		// -split writes the same view as tables and a manifest.
		split := filepath.Join(t.TempDir(), "split")
		mustSST(t, append(args, "-split", "4KiB", "-o", split)...)
		parts, _ := filepath.Glob(filepath.Join(split, "*.sst"))
		if got := mustSST(t, append([]string{"scan", "-hex", "-merge"}, parts...)...); len(parts) < 2 || got != string(view) {
			t.Errorf("%s: -split wrote %d tables: %s", dir, len(parts), firstDiff(got, string(view)))
		}
	}

	// The golden 7.8.3 databases of several tables.
	// (Most hold merges, which only their database can resolve.)
	if built, refused := checkCorpusBuilds(t, rdbGolden); built < 1 || refused < 3 {
		t.Errorf("%d golden stacks built, %d refused: want 1 and 3 at least", built, refused)
	}

	// The 7.8.3 blob database: its view holds blob indexes.
	out := filepath.Join(t.TempDir(), "blob.sst")
	wantError(t, []string{"build", "-rocksdb", filepath.Join(rdbGolden, "db-blob-t2.sst"), filepath.Join(rdbGolden, "db-blob-t1.sst"), "-o", out}, 1, "blob")
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("a failed build -rocksdb left %s", out)
	}
	if names := dirNames(t, filepath.Dir(out)); len(names) != 0 {
		t.Errorf("a failed build -rocksdb left %q", names)
	}
	wantError(t, []string{"build", "-rocksdb", "-o", out}, 2, "at least one")
	wantError(t, []string{"build", "-rocksdb", filepath.Join(rdbGolden, "reverse.sst"), "-o", out}, 1, "reverse", "reverse.sst")
	wantError(t, []string{"build", "-rocksdb", ldbTable, "-o", out}, 2, "not a RocksDB table")
	wantError(t, []string{"build", "-rocksdb", "-leveldb", ldbTable, "-o", out}, 2, "-leveldb")
}

// TestRocksDBDetect checks that tables are told apart by their footers:
// a RocksDB table of format_version 0 ends in LevelDB's magic number but
// reads as RocksDB's (its range deletions and merges shown), LevelDB's
// own table as LevelDB's, and a RocksDB table no longer reads as "not an
// sstkit table".
func TestRocksDBDetect(t *testing.T) {
	fv0 := filepath.Join(rdbGolden, "fv0-crc32c-none.sst")
	data, err := os.ReadFile(fv0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte{0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb}) {
		t.Fatalf("%s does not end in LevelDB's magic number", fv0)
	}
	if info := mustSST(t, "info", fv0); !strings.Contains(info, "RocksDB block-based table, format_version 0") {
		t.Errorf("info of a format_version 0 table:\n%s", info)
	}
	if spans := mustSST(t, "scan", "-spans", fv0); spans == "" {
		t.Errorf("scan -spans of a format_version 0 table with range deletions printed nothing")
	}
	if info := mustSST(t, "info", ldbTable); !strings.Contains(info, "format: LevelDB table") {
		t.Errorf("info of LevelDB's table:\n%s", info)
	}
	for _, f := range []string{filepath.Join(rdbGolden, "fv5-xxh3.sst"), filepath.Join(rdbNative, "fv7-ribbon10", "000009.sst")} {
		if info := mustSST(t, "info", f); strings.Contains(info, "not an sstkit table") || !strings.Contains(info, "RocksDB block-based table") {
			t.Errorf("info of %s:\n%s", f, info)
		}
	}
}

// TestRocksDBNative checks the commands on RocksDB 10.5.1's tables of
// format_version 6 and 7, which 7.8.3's sst_dump cannot read: verify
// counts every entry its properties count, info labels them, and each
// table's entries, merged newest first, give RocksDB's view (which
// TestRocksDBBuild checks through build): here the scan of each table
// must hold the view's newest values.
func TestRocksDBNative(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(rdbNative, "fv*", "*.sst"))
	if len(paths) < 12 {
		t.Fatalf("want the native golden tables, found %d", len(paths))
	}
	for _, p := range paths {
		info := mustSST(t, "info", p)
		var entries, dels int
		for _, l := range strings.Split(info, "\n") {
			l = strings.TrimSpace(l)
			if v, ok := strings.CutPrefix(l, "# entries: "); ok {
				entries, _ = strconv.Atoi(v)
			}
			if v, ok := strings.CutPrefix(l, "# range deletions: "); ok {
				dels, _ = strconv.Atoi(v)
			}
		}
		scan := strings.Count(mustSST(t, "scan", "-hex", p), "\n")
		spans := strings.Count(mustSST(t, "scan", "-hex", "-spans", p), "\n")
		if scan+spans != entries || spans != dels || entries == 0 {
			t.Errorf("%s: scan printed %d entries and %d range deletions; the properties: %d entries, %d range deletions", p, scan, spans, entries, dels)
		}
		if got, want := mustSST(t, "verify", p), fmt.Sprintf("ok: %d entries, ", scan); !strings.HasPrefix(got, want) {
			t.Errorf("%s: verify: %q, want %q...", p, got, want)
		}
		for _, label := range []string{"# data blocks: ", "raw key size: ", "filter policy name: ", "comparator name: leveldb.BytewiseComparator", "SST file compression algo: "} {
			if !strings.Contains(info, "\n  "+label) {
				t.Errorf("%s: info lacks %q", p, label)
			}
		}
	}
}

// buildRocksOracle compiles package rocksdb's oracle,
// rocksdb/testdata/oracle/rdboracle.cc, against RocksDB 7.8.3 into a
// directory of t's and returns the program's path, or skips t (fails it
// under SSTABLE_REQUIRE_ROCKSDB=1) when it cannot.
func buildRocksOracle(t *testing.T) string {
	t.Helper()
	oracletest.Gate(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8")
	missing := func(format string, args ...any) {
		t.Helper()
		oracletest.Missing(t, "SSTABLE_REQUIRE_ROCKSDB", "RocksDB 7.8", "install g++ and Debian's librocksdb-dev", format, args...)
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		missing("no g++: %v", err)
	}
	if _, err := os.Stat("/usr/include/rocksdb/sst_file_writer.h"); err != nil {
		missing("no RocksDB headers: %v", err)
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "rocksdb", "testdata", "oracle", "rdboracle.cc"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rdboracle")
	if out, err := exec.Command(gxx, "-O1", "-std=c++17", "-o", bin, src, "-lrocksdb").CombinedOutput(); err != nil {
		missing("g++ could not build %s against -lrocksdb: %v\n%s", src, err, out)
	}
	return bin
}

// TestRocksDBOracle has RocksDB 7.8.3 write databases afresh (the
// oracle's db- cases: flushes over snapshots, merges, single deletes,
// range deletions over older points of the same table, blob indexes,
// entities, an ingested file, a reverse bytewise database) and runs the
// checks of the golden tests on them: scan and info against sst_dump,
// the range deletions against RocksDB's fragments, get (at the
// snapshots too) against RocksDB's Gets, build -rocksdb against the
// database's view.
func TestRocksDBOracle(t *testing.T) {
	bin := buildRocksOracle(t)
	dir := t.TempDir()
	if out, err := exec.Command(bin, "-small", dir, "db-").CombinedOutput(); err != nil {
		t.Fatalf("rdboracle: %v\n%s", err, out)
	}
	stacks := corpusStacks(t, dir)
	if _, ok := stacks["db-reverse"]; !ok {
		t.Fatalf("the oracle wrote no db-reverse stack: %v", stacks)
	}
	checkCorpusDumps(t, dir)
	checkCorpusSpans(t, dir)
	n := checkCorpusGets(t, dir)
	if n.present < 100 || n.absent < 100 || n.rangeDeleted == 0 || n.refused == 0 || n.seqSections < 5 {
		t.Errorf("too few cases of a kind: %+v", n)
	}
	built, refused := checkCorpusBuilds(t, dir)
	t.Logf("stacks: %d built, %d refused", built, refused)
	if built < 2 || refused < 3 {
		t.Errorf("%d stacks built, %d refused: want 2 and 3 at least", built, refused)
	}
}
