package rocksdb_test

// Tests against the real RocksDB 7.8.3 (Debian's librocksdb-dev): the
// program testdata/oracle/rdboracle.cc, compiled at test time, writes
// tables over issue 47's matrix (SstFileWriter over every format
// version, checksum, compression, index, filter and comparator it takes;
// databases flushed and compacted for real sequence numbers, merges,
// single deletes, range deletions over older points, blob indexes,
// entities and an ingested file) and records what RocksDB reads from
// them: sst_dump's entries and properties, the range deletions as
// RocksDB fragments them, and the user-visible view and Gets at each
// snapshot. This package's reading of the same files must match it.
// Without g++ or RocksDB's headers the tests skip, unless
// SSTABLE_REQUIRE_ROCKSDB=1 (as in CI) makes that a failure.
//
// The checks (checkOracleCorpus) also run over the small corpus the same
// program wrote into testdata/golden/rocksdb-7.8.3 (golden_test.go),
// without RocksDB.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstkit/sstable/internal/oracletest"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// buildRocksOracle compiles testdata/oracle/rdboracle.cc into a
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
	src, err := filepath.Abs(filepath.Join("testdata", "oracle", "rdboracle.cc"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rdboracle")
	start := time.Now()
	out, err := exec.Command(gxx, "-O1", "-std=c++17", "-o", bin, src, "-lrocksdb").CombinedOutput()
	if err != nil {
		missing("g++ could not build %s against -lrocksdb: %v\n%s", src, err, out)
	}
	t.Logf("compiled the RocksDB oracle in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// TestRocksDBOracle writes the whole matrix with RocksDB and compares
// this package's reading of every table, and of every stack of them,
// with RocksDB's.
func TestRocksDBOracle(t *testing.T) {
	bin := buildRocksOracle(t)
	dir := t.TempDir()
	start := time.Now()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, dir)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rdboracle: %v: %s", err, stderr.String())
	}
	t.Logf("%s in %v", strings.TrimSpace(string(out)), time.Since(start).Round(time.Millisecond))
	tables, stacks := readOracleManifest(t, dir)
	// The matrix is the point: a change to the oracle that loses a part
	// of it is a weaker test.
	if len(tables) < 60 || len(stacks) < 50 {
		t.Fatalf("the oracle wrote %d tables and %d stacks; want at least 60 and 50", len(tables), len(stacks))
	}
	checkOracleCorpus(t, dir)
}

// ---------------------------------------------------------------- the oracle's files

// oracleTable is a manifest "table" line: the table's name and the
// options it was written with.
type oracleTable struct {
	name string
	opt  map[string]string
}

// oracleStack is a manifest "stack" line: tables read as one, newest
// first, and the snapshots its views were taken at.
type oracleStack struct {
	name, src string
	tables    []string
	snaps     []uint64
}

func readOracleManifest(t testing.TB, dir string) ([]oracleTable, []oracleStack) {
	t.Helper()
	var tables []oracleTable
	var stacks []oracleStack
	for _, line := range oracleLines(t, filepath.Join(dir, "manifest.txt")) {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("manifest line %q", line)
		}
		opt := map[string]string{}
		for _, kv := range f[2:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("manifest line %q: %q", line, kv)
			}
			opt[k] = v
		}
		switch f[0] {
		case "table":
			tables = append(tables, oracleTable{name: f[1], opt: opt})
		case "stack":
			st := oracleStack{name: f[1], src: opt["src"], tables: strings.Split(opt["tables"], ",")}
			if opt["snaps"] != "-" {
				for _, s := range strings.Split(opt["snaps"], ",") {
					n, err := strconv.ParseUint(s, 10, 64)
					if err != nil {
						t.Fatalf("manifest line %q: %v", line, err)
					}
					st.snaps = append(st.snaps, n)
				}
			}
			stacks = append(stacks, st)
		default:
			t.Fatalf("manifest line %q", line)
		}
	}
	return tables, stacks
}

func oracleLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func oracleUnhex(t testing.TB, s string) string {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return string(b)
}

// oracleEntry is one internal entry as sst_dump prints it.
type oracleEntry struct {
	key   string
	seq   uint64
	kind  rocksdb.Kind
	value string
}

func (e oracleEntry) String() string {
	return fmt.Sprintf("%x @%d %v\t%x", e.key, e.seq, e.kind, e.value)
}

// oracleDump is a NAME.dump file: sst_dump --command=scan --output_hex
// --show_properties.
type oracleDump struct {
	entries []oracleEntry
	props   []oracleProp      // "Table Properties": label and printed value
	user    map[string]string // "Raw user collected properties": name -> raw bytes
}

type oracleProp struct{ label, value string }

// sst_dump's entry line: 'HEXKEY' seq:N, type:T => HEXVALUE (hex in
// capitals, the value of every kind printed raw: blob indexes and
// entities too, without --decode_blob_index).
var dumpEntryRE = regexp.MustCompile(`^'([0-9A-F]*)' seq:([0-9]+), type:([0-9]+) => ([0-9A-F]*)$`)

func readOracleDump(t testing.TB, path string) oracleDump {
	t.Helper()
	d := oracleDump{user: map[string]string{}}
	section := "head"
	for _, line := range oracleLines(t, path) {
		switch {
		case line == "Table Properties:":
			section = "props"
			continue
		case line == "  Raw user collected properties":
			section = "user"
			continue
		case strings.HasPrefix(line, "------"):
			continue
		}
		switch section {
		case "head":
			if m := dumpEntryRE.FindStringSubmatch(line); m != nil {
				seq, _ := strconv.ParseUint(m[2], 10, 64)
				kind, _ := strconv.ParseUint(m[3], 10, 8)
				d.entries = append(d.entries, oracleEntry{oracleUnhex(t, m[1]), seq, rocksdb.Kind(kind), oracleUnhex(t, m[4])})
			} else if strings.HasPrefix(line, "'") {
				t.Fatalf("%s: unparsed entry line %.200q", path, line)
			}
		case "props":
			label, value, ok := strings.Cut(strings.TrimPrefix(line, "  "), ": ")
			if !ok {
				label, ok = strings.CutSuffix(strings.TrimPrefix(line, "  "), ":")
				if !ok {
					t.Fatalf("%s: property line %q", path, line)
				}
			}
			d.props = append(d.props, oracleProp{label, value})
		case "user":
			name, value, ok := strings.Cut(strings.TrimPrefix(line, "  # "), ": 0x")
			if !ok {
				t.Fatalf("%s: user property line %q", path, line)
			}
			d.user[name] = oracleUnhex(t, value)
		}
	}
	if section != "user" {
		t.Fatalf("%s: no properties in sst_dump's output", path)
	}
	return d
}

func (d oracleDump) prop(label string) (string, bool) {
	for _, p := range d.props {
		if p.label == label {
			return p.value, true
		}
	}
	return "", false
}

// oracleSection is one "@max" or "@SEQ" section of a .views or .gets
// file.
type oracleSection struct {
	at     uint64
	lines  []string
	status string // views: "ok" or "error ..."
}

func readOracleSections(t testing.TB, path string) []oracleSection {
	t.Helper()
	var ss []oracleSection
	for _, line := range oracleLines(t, path) {
		switch {
		case strings.HasPrefix(line, "@"):
			at := uint64(rocksdb.MaxSequence)
			if line != "@max" {
				n, err := strconv.ParseUint(line[1:], 10, 64)
				if err != nil {
					t.Fatalf("%s: %q", path, line)
				}
				at = n
			}
			ss = append(ss, oracleSection{at: at})
		case len(ss) == 0:
			t.Fatalf("%s: %q before a section", path, line)
		case strings.HasPrefix(line, "!"):
			ss[len(ss)-1].status = line[1:]
		default:
			ss[len(ss)-1].lines = append(ss[len(ss)-1].lines, line)
		}
	}
	return ss
}

// ---------------------------------------------------------------- comparators

// oracleCompare returns the order of a table's comparator.
func oracleCompare(t testing.TB, name string) func(a, b string) int {
	switch name {
	case "leveldb.BytewiseComparator":
		return strings.Compare
	case "rocksdb.ReverseBytewiseComparator":
		return func(a, b string) int { return strings.Compare(b, a) }
	}
	t.Fatalf("unexpected comparator %q", name)
	return nil
}

// ---------------------------------------------------------------- the checks

// checkOracleCorpus checks every table and stack of an oracle directory.
func checkOracleCorpus(t *testing.T, dir string) {
	tables, stacks := readOracleManifest(t, dir)
	byName := map[string]oracleTable{}
	for _, tb := range tables {
		byName[tb.name] = tb
	}
	t.Run("tables", func(t *testing.T) {
		for _, tb := range tables {
			t.Run(tb.name, func(t *testing.T) {
				t.Parallel()
				d := readOracleDump(t, filepath.Join(dir, tb.name+".dump"))
				for _, noMmap := range []bool{false, true} {
					checkOracleTable(t, dir, tb, d, noMmap)
				}
			})
		}
	})
	t.Run("stacks", func(t *testing.T) {
		for _, st := range stacks {
			t.Run(st.name, func(t *testing.T) {
				t.Parallel()
				checkOracleStack(t, dir, st, byName)
			})
		}
	})
}

func tableEntryLines(tab *rocksdb.Table, o *rocksdb.IterOptions, backward bool) ([]string, error) {
	it := tab.NewIter(o)
	var lines []string
	add := func() {
		lines = append(lines, oracleEntry{string(it.Key()), it.Seq(), it.Kind(), string(it.Value())}.String())
	}
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			add()
		}
		slices.Reverse(lines)
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			add()
		}
	}
	return lines, it.Close()
}

// oracleDiff reports the first difference between got and want.
func oracleDiff(got, want []string) string {
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

// expectedFormat returns the format_version and checksum a table
// written with the manifest's options has: RocksDB 7.8.3 writes
// format_version 1 for 0 unless the checksum is CRC32c, and a
// format_version 0 footer (LevelDB's) records no checksum type: CRC32c.
func expectedFormat(tb oracleTable) (uint32, string) {
	fv, _ := strconv.Atoi(tb.opt["fv"])
	if fv == 0 && tb.opt["checksum"] != "crc32c" {
		fv = 1
	}
	return uint32(fv), tb.opt["checksum"]
}

func checkOracleTable(t *testing.T, dir string, tb oracleTable, d oracleDump, noMmap bool) {
	path := filepath.Join(dir, tb.name+".sst")
	name := fmt.Sprintf("%s (NoMmap=%v)", tb.name, noMmap)
	tab, err := rocksdb.OpenTable(path, &rocksdb.TableOptions{NoMmap: noMmap})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer tab.Close()
	cmpName, _ := d.prop("comparator name")
	cmp := oracleCompare(t, cmpName)

	// Every internal entry, both ways.
	want := make([]string, len(d.entries))
	for i, e := range d.entries {
		want[i] = e.String()
	}
	if len(want) == 0 {
		t.Fatalf("%s: sst_dump shows no entries", name)
	}
	for _, backward := range []bool{false, true} {
		got, err := tableEntryLines(tab, nil, backward)
		if err != nil {
			t.Fatalf("%s backward=%v: %v", name, backward, err)
		}
		if diff := oracleDiff(got, want); diff != "" {
			t.Fatalf("%s backward=%v: our entries differ from sst_dump's: %s", name, backward, diff)
		}
	}

	// Range deletions: fragmented as RocksDB fragments them on open.
	dels, err := tab.RangeDeletions()
	if err != nil {
		t.Fatalf("%s: RangeDeletions: %v", name, err)
	}
	nr, _ := d.prop("# range deletions")
	if strconv.Itoa(len(dels)) != nr {
		t.Errorf("%s: %d range deletions, sst_dump's properties say %s", name, len(dels), nr)
	}
	var wantFrags []string
	if _, err := os.Stat(filepath.Join(dir, tb.name+".frag")); err == nil {
		for _, l := range oracleLines(t, filepath.Join(dir, tb.name+".frag")) {
			s, e, ok := strings.Cut(l, ": ")
			if !ok {
				t.Fatalf("%s.frag: %q", tb.name, l)
			}
			wantFrags = append(wantFrags, fmt.Sprintf("%x\t%x", oracleUnhex(t, s), oracleUnhex(t, e)))
		}
	}
	if diff := oracleDiff(fragmentDels(dels, cmp), wantFrags); diff != "" {
		t.Errorf("%s: our range deletions, fragmented, differ from RocksDB's fragments: %s", name, diff)
	}

	if n, err := tab.Verify(); err != nil || (n != int64(len(want)) && n != int64(len(want)+len(dels))) {
		t.Errorf("%s: Verify = %d, %v; want %d entries (or %d with the range deletions)", name, n, err, len(want), len(want)+len(dels))
	}
	checkOracleProperties(t, name, tab.Properties(), d)
	checkOracleInfo(t, name, path, tab.Info(), tb, d)
	checkOracleGets(t, dir, name, tb, tab, d.entries, cmp)
	checkOracleSeeks(t, name, tab, d.entries, cmp, cmpName == "leveldb.BytewiseComparator")
}

// fragmentDels splits range deletions at every start and end key, as
// RocksDB's FragmentedRangeTombstoneList does, and lists each fragment
// once per deletion covering it, in key order ("hexstart<TAB>hexend").
// Deletions with the same end key and sequence number count once: the
// fragmenter keeps the deletions in force in a set ordered by (end key,
// sequence number), where such two are one.
func fragmentDels(dels []rocksdb.RangeDeletion, cmp func(a, b string) int) []string {
	var bounds []string
	for _, d := range dels {
		bounds = append(bounds, string(d.Start), string(d.End))
	}
	slices.SortFunc(bounds, cmp)
	bounds = slices.CompactFunc(bounds, func(a, b string) bool { return cmp(a, b) == 0 })
	type endSeq struct {
		end string
		seq uint64
	}
	var out []string
	for i := 0; i+1 < len(bounds); i++ {
		in := map[endSeq]bool{}
		for _, d := range dels {
			if cmp(string(d.Start), bounds[i]) <= 0 && cmp(bounds[i+1], string(d.End)) <= 0 {
				in[endSeq{string(d.End), d.Seq}] = true
			}
		}
		for range in {
			out = append(out, fmt.Sprintf("%x\t%x", bounds[i], bounds[i+1]))
		}
	}
	return out
}

// The properties sst_dump prints by label (TableProperties::ToString)
// and the names they have in the rocksdb.properties block; numeric ones
// are varints there.
var oraclePropNames = []struct {
	label, name string
	numeric     bool
}{
	{"# data blocks", "rocksdb.num.data.blocks", true},
	{"# entries", "rocksdb.num.entries", true},
	{"# deletions", "rocksdb.deleted.keys", true},
	{"# merge operands", "rocksdb.merge.operands", true},
	{"# range deletions", "rocksdb.num.range-deletions", true},
	{"raw key size", "rocksdb.raw.key.size", true},
	{"raw value size", "rocksdb.raw.value.size", true},
	{"data block size", "rocksdb.data.size", true},
	{"# index partitions", "rocksdb.index.partitions", true},
	{"top-level index size", "rocksdb.top-level.index.size", true},
	{"filter block size", "rocksdb.filter.size", true},
	{"# entries for filter", "rocksdb.num.filter_entries", true},
	{"column family ID", "rocksdb.column.family.id", true},
	{"creation time", "rocksdb.creation.time", true},
	{"time stamp of earliest key", "rocksdb.oldest.key.time", true},
	{"file creation time", "rocksdb.file.creation.time", true},
	{"original file number", "rocksdb.original.file.number", true},
	{"filter policy name", "rocksdb.filter.policy", false},
	{"prefix extractor name", "rocksdb.prefix.extractor.name", false},
	{"column family name", "rocksdb.column.family.name", false},
	{"comparator name", "rocksdb.comparator", false},
	{"merge operator name", "rocksdb.merge.operator", false},
	{"property collectors names", "rocksdb.property.collectors", false},
	{"SST file compression algo", "rocksdb.compression", false},
	{"SST file compression options", "rocksdb.compression_options", false},
	{"DB identity", "rocksdb.creating.db.identity", false},
	{"DB session identity", "rocksdb.creating.session.identity", false},
	{"DB host id", "rocksdb.creating.host.identity", false},
}

// The index size line carries two more properties in its label.
var indexSizeRE = regexp.MustCompile(`^index block size \(user-key\? ([01]), delta-value\? ([01])\)$`)

func checkOracleProperties(t *testing.T, name string, props []rocksdb.Property, d oracleDump) {
	t.Helper()
	ours := map[string][]byte{}
	for _, p := range props {
		if _, dup := ours[p.Name]; dup {
			t.Errorf("%s: property %s twice", name, p.Name)
		}
		ours[p.Name] = p.Value
	}
	num := func(label, pname, want string) {
		t.Helper()
		v, ok := ours[pname]
		if !ok {
			if want != "0" {
				t.Errorf("%s: no property %s; sst_dump prints %s: %s", name, pname, label, want)
			}
			return
		}
		n, k := binary.Uvarint(v)
		if k != len(v) || strconv.FormatUint(n, 10) != want {
			t.Errorf("%s: property %s = %x (varint %d); sst_dump prints %s: %s", name, pname, v, n, label, want)
		}
	}
	checked := 0
	for _, p := range d.props {
		if m := indexSizeRE.FindStringSubmatch(p.label); m != nil {
			num(p.label, "rocksdb.index.size", p.value)
			num(p.label, "rocksdb.index.key.is.user.key", m[1])
			num(p.label, "rocksdb.index.value.is.delta.encoded", m[2])
			checked++
			continue
		}
		for _, pn := range oraclePropNames {
			if pn.label != p.label {
				continue
			}
			checked++
			switch {
			case p.value == "N/A":
				// sst_dump's mark for an unknown column family: an
				// absent or empty property, or the "unknown" id.
			case pn.numeric:
				num(p.label, pn.name, p.value)
			default:
				if v, ok := ours[pn.name]; !ok || string(v) != p.value {
					t.Errorf("%s: property %s = %q (present %v); sst_dump prints %s: %q", name, pn.name, v, ok, p.label, p.value)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("%s: only %d of sst_dump's property lines recognised: has its format changed?", name, checked)
	}
	for pname, want := range d.user {
		if v, ok := ours[pname]; !ok || string(v) != want {
			t.Errorf("%s: property %s = %x (present %v); sst_dump prints 0x%X", name, pname, v, ok, want)
		}
	}
}

func checkOracleInfo(t *testing.T, name, path string, info rocksdb.TableInfo, tb oracleTable, d oracleDump) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fv, checksum := expectedFormat(tb)
	cmpName, _ := d.prop("comparator name")
	if info.Size != st.Size() || info.FormatVersion != fv || info.Checksum != checksum || info.Comparator != cmpName || info.IndexType != tb.opt["index"] {
		t.Errorf("%s: Info {Size %d FormatVersion %d Checksum %q Comparator %q IndexType %q}; want {%d %d %q %q %q}",
			name, info.Size, info.FormatVersion, info.Checksum, info.Comparator, info.IndexType, st.Size(), fv, checksum, cmpName, tb.opt["index"])
	}
	if (tb.opt["filter"] == "none") != (info.Filter == "") {
		t.Errorf("%s: Info.Filter %q; the table was written with filter %s", name, info.Filter, tb.opt["filter"])
	}
	var wantSeqno uint64
	if g, ok := d.user["rocksdb.external_sst_file.global_seqno"]; ok && len(g) == 8 {
		wantSeqno = binary.LittleEndian.Uint64([]byte(g))
	}
	if info.GlobalSeqno != wantSeqno {
		t.Errorf("%s: Info.GlobalSeqno %d; the properties hold %d", name, info.GlobalSeqno, wantSeqno)
	}
	if tb.opt["ingested"] == "1" {
		if wantSeqno == 0 || !strings.HasPrefix(tb.opt["seqnos"], fmt.Sprintf("%d-", wantSeqno)) {
			t.Errorf("%s: ingested with sequence numbers %s but a global sequence number of %d", name, tb.opt["seqnos"], wantSeqno)
		}
	}
}

// unresolvedKind reports whether Get gives an entry of kind k with an
// *UnresolvedError.
func unresolvedKind(k rocksdb.Kind) bool {
	return k == rocksdb.KindMerge || k == rocksdb.KindBlobIndex
}

// checkOracleGets checks Table.Get: at MaxSequence, at each entry's
// sequence number and just below it, against sst_dump's entries; keys
// the table does not hold (the oracle's absent probes) are not found.
func checkOracleGets(t *testing.T, dir, name string, tb oracleTable, tab *rocksdb.Table, es []oracleEntry, cmp func(a, b string) int) {
	t.Helper()
	check := func(key string, seq uint64, want *oracleEntry) {
		t.Helper()
		e, err := tab.Get([]byte(key), seq)
		if want == nil {
			if !errors.Is(err, reader.ErrNotFound) {
				t.Fatalf("%s: Get(%x, %d) = %v, %v; want reader.ErrNotFound", name, key, seq, oracleEntry{string(e.Key), e.Seq, e.Kind, string(e.Value)}, err)
			}
			return
		}
		got := oracleEntry{string(e.Key), e.Seq, e.Kind, string(e.Value)}
		var ue *rocksdb.UnresolvedError
		switch {
		case unresolvedKind(want.kind):
			if !errors.As(err, &ue) || !errors.Is(err, rocksdb.ErrUnresolved) || string(ue.Key) != want.key || ue.Seq != want.seq || ue.Kind != want.kind {
				t.Fatalf("%s: Get(%x, %d) = %v, %v; want %v with an *UnresolvedError", name, key, seq, got, err, *want)
			}
		case err != nil:
			t.Fatalf("%s: Get(%x, %d): %v; want %v", name, key, seq, err, *want)
		}
		if got != *want {
			t.Fatalf("%s: Get(%x, %d) = %.300v; want %.300v", name, key, seq, got, *want)
		}
	}
	held := map[string]bool{}
	for i := range es {
		e := &es[i]
		held[e.key] = true
		if i == 0 || es[i-1].key != e.key {
			check(e.key, rocksdb.MaxSequence, e)
		}
		check(e.key, e.seq, e)
		if e.seq > 0 {
			var older *oracleEntry
			if i+1 < len(es) && es[i+1].key == e.key {
				older = &es[i+1]
			}
			check(e.key, e.seq-1, older)
		}
	}
	// The stack's probes: keys near those held, and random ones.
	for _, sec := range readOracleSections(t, filepath.Join(dir, stackOf(tb)+".gets")) {
		for _, l := range sec.lines {
			hk, _, _ := strings.Cut(l, "\t")
			if k := oracleUnhex(t, hk); !held[k] {
				check(k, rocksdb.MaxSequence, nil)
			}
		}
		break
	}
}

// stackOf names the stack a table's probes are in: its own, or its
// database's (NAME-tN).
func stackOf(tb oracleTable) string {
	if tb.opt["src"] == "db" {
		return tb.name[:strings.LastIndex(tb.name, "-t")]
	}
	return tb.name
}

// checkOracleSeeks checks SeekGE, SeekLT and SeekGEAt (with a move
// after each) at keys of the table and near them, and bounded iterators
// for bytewise tables.
func checkOracleSeeks(t *testing.T, name string, tab *rocksdb.Table, es []oracleEntry, cmp func(a, b string) int, bytewise bool) {
	t.Helper()
	it := tab.NewIter(nil)
	defer it.Close()
	rng := rand.New(rand.NewPCG(uint64(len(es)), 47))
	// before reports whether entry j sorts before (key, seq).
	before := func(j int, key string, seq uint64) bool {
		if c := cmp(es[j].key, key); c != 0 {
			return c < 0
		}
		return es[j].seq > seq
	}
	at := func(what string, ok bool, j int) {
		t.Helper()
		if j < 0 || j >= len(es) {
			if ok {
				t.Fatalf("%s: %s on %x@%d, want exhausted", name, what, it.Key(), it.Seq())
			}
			return
		}
		got := oracleEntry{string(it.Key()), it.Seq(), it.Kind(), string(it.Value())}
		if !ok || got != es[j] {
			t.Fatalf("%s: %s = %v on %.200v (err %v), want %.200v", name, what, ok, got, it.Err(), es[j])
		}
	}
	for i := 0; i < 300; i++ {
		e := es[rng.IntN(len(es))]
		k := e.key
		switch rng.IntN(4) {
		case 1:
			k += "\x00"
		case 2:
			if k != "" {
				k = k[:len(k)-1]
			}
		case 3:
			k += "\xff"
		}
		ge := sort.Search(len(es), func(j int) bool { return cmp(es[j].key, k) >= 0 })
		at(fmt.Sprintf("SeekGE(%x)", k), it.SeekGE([]byte(k)), ge)
		if ge < len(es) {
			at(fmt.Sprintf("SeekGE(%x).Next", k), it.Next(), ge+1)
		}
		at(fmt.Sprintf("SeekLT(%x)", k), it.SeekLT([]byte(k)), ge-1)
		if ge-1 >= 0 {
			at(fmt.Sprintf("SeekLT(%x).Prev", k), it.Prev(), ge-2)
		}
		seq := e.seq + uint64(rng.IntN(3)) - 1
		j := sort.Search(len(es), func(j int) bool { return !before(j, e.key, seq) })
		at(fmt.Sprintf("SeekGEAt(%x, %d)", e.key, seq), it.SeekGEAt([]byte(e.key), seq), j)
		if j < len(es) {
			at(fmt.Sprintf("SeekGEAt(%x, %d).Prev", e.key, seq), it.Prev(), j-1)
		}
	}
	if !bytewise {
		return
	}
	for i := 0; i < 8; i++ {
		lo, hi := es[rng.IntN(len(es))].key, es[rng.IntN(len(es))].key+"\x00"
		if lo > hi {
			lo, hi = hi, lo
		}
		var want []string
		for _, e := range es {
			if lo <= e.key && e.key < hi {
				want = append(want, e.String())
			}
		}
		for _, backward := range []bool{false, true} {
			got, err := tableEntryLines(tab, &rocksdb.IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)}, backward)
			if err != nil {
				t.Fatalf("%s: bounded [%x, %x) backward=%v: %v", name, lo, hi, backward, err)
			}
			if diff := oracleDiff(got, want); diff != "" {
				t.Fatalf("%s: bounded [%x, %x) backward=%v: %s", name, lo, hi, backward, diff)
			}
		}
	}
}

// ---------------------------------------------------------------- stacks

// modelValue is what RocksDB's rules make of a key in a view.
type modelValue struct {
	key        string
	value      string
	known      bool // value is known (not a blob's)
	unresolved bool // this package cannot produce it: the newest version is a merge operand or a blob index
}

type modelDel struct {
	start, end string
	seq        uint64
}

// stackModel holds a stack's versions (sst_dump's entries) and range
// deletions (this package's, checked against RocksDB's fragments).
type stackModel struct {
	cmp      func(a, b string) int
	keys     []string                 // in the comparator's order
	versions map[string][]oracleEntry // newest first
	dels     []modelDel
}

// view returns the stack's view at snapshot at, by RocksDB's rules: a
// version is visible at or below at; a range deletion covers the
// versions below its sequence number; merge operands (the oracle's
// string-append operator) fold onto the newest visible value below them;
// deletions and single deletions end a key; an entity reads as its
// default column.
func (m *stackModel) view(t testing.TB, at uint64) []modelValue {
	var out []modelValue
	for _, k := range m.keys {
		covered := func(seq uint64) bool {
			for _, d := range m.dels {
				if seq < d.seq && d.seq <= at && m.cmp(d.start, k) <= 0 && m.cmp(k, d.end) < 0 {
					return true
				}
			}
			return false
		}
		var operands []string
		var mv *modelValue
		for _, v := range m.versions[k] {
			if v.seq > at {
				continue
			}
			if covered(v.seq) {
				break
			}
			first := len(operands) == 0
			switch v.kind {
			case rocksdb.KindValue:
				mv = &modelValue{key: k, value: foldOperands(&v.value, operands), known: true, unresolved: !first}
			case rocksdb.KindMerge:
				operands = append(operands, v.value)
				continue
			case rocksdb.KindBlobIndex:
				mv = &modelValue{key: k, unresolved: true}
			case rocksdb.KindWideColumnEntity:
				if !first {
					t.Fatalf("key %x: merge operands over an entity: the oracle writes none", k)
				}
				mv = &modelValue{key: k, value: entityDefault(t, v.value), known: true}
			case rocksdb.KindDeletion, rocksdb.KindSingleDeletion:
			default:
				t.Fatalf("key %x: kind %v in a view", k, v.kind)
			}
			break // the newest visible version that is not an operand decides
		}
		if mv == nil && len(operands) > 0 {
			mv = &modelValue{key: k, value: foldOperands(nil, operands), known: true, unresolved: true}
		}
		if mv != nil {
			out = append(out, *mv)
		}
	}
	return out
}

// foldOperands applies the oracle's merge operator: the base (if any)
// and the operands, oldest first, joined by ','. operands are newest
// first.
func foldOperands(base *string, operands []string) string {
	var parts []string
	if base != nil {
		parts = append(parts, *base)
	}
	for i := len(operands) - 1; i >= 0; i-- {
		parts = append(parts, operands[i])
	}
	return strings.Join(parts, ",")
}

// entityDefault returns the default column's value of a wide-column
// entity (RocksDB's db/wide/wide_column_serialization.h: a version
// varint, the column count, each column's name and value length, then
// the values), "" when it has none: what RocksDB's iterators show as
// the entity's value.
func entityDefault(t testing.TB, v string) string {
	b := []byte(v)
	next := func() uint64 {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			t.Fatalf("entity %x: bad varint", v)
		}
		b = b[k:]
		return n
	}
	if version := next(); version != 1 {
		t.Fatalf("entity %x: version %d", v, version)
	}
	n := int(next())
	names := make([]string, n)
	lens := make([]int, n)
	for i := range n {
		l := int(next())
		names[i] = string(b[:l])
		b = b[l:]
		lens[i] = int(next())
	}
	for i := range n {
		if names[i] == "" {
			return string(b[:lens[i]])
		}
		b = b[lens[i]:]
	}
	return ""
}

func checkOracleStack(t *testing.T, dir string, st oracleStack, byName map[string]oracleTable) {
	var tabs []*rocksdb.Table
	defer func() {
		for _, tab := range tabs {
			tab.Close()
		}
	}()
	m := &stackModel{versions: map[string][]oracleEntry{}}
	var cmpName string
	for _, name := range st.tables {
		if _, ok := byName[name]; !ok {
			t.Fatalf("stack %s: table %s not in the manifest", st.name, name)
		}
		d := readOracleDump(t, filepath.Join(dir, name+".dump"))
		cmpName, _ = d.prop("comparator name")
		m.cmp = oracleCompare(t, cmpName)
		for _, e := range d.entries {
			if _, ok := m.versions[e.key]; !ok {
				m.keys = append(m.keys, e.key)
			}
			m.versions[e.key] = append(m.versions[e.key], e)
		}
		tab, err := rocksdb.OpenTable(filepath.Join(dir, name+".sst"), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tabs = append(tabs, tab)
		dels, err := tab.RangeDeletions()
		if err != nil {
			t.Fatalf("%s: RangeDeletions: %v", name, err)
		}
		for _, d := range dels {
			m.dels = append(m.dels, modelDel{string(d.Start), string(d.End), d.Seq})
		}
	}
	slices.SortFunc(m.keys, m.cmp)
	for _, vs := range m.versions {
		slices.SortStableFunc(vs, func(a, b oracleEntry) int {
			switch {
			case a.seq > b.seq:
				return -1
			case a.seq < b.seq:
				return 1
			}
			return 0
		})
	}

	// RocksDB's views at each snapshot, and its Gets.
	views := readOracleSections(t, filepath.Join(dir, st.name+".views"))
	gets := readOracleSections(t, filepath.Join(dir, st.name+".gets"))
	if len(views) != len(st.snaps)+1 || len(gets) != len(views) {
		t.Fatalf("stack %s: %d views and %d gets sections for %d snapshots", st.name, len(views), len(gets), len(st.snaps))
	}
	var latest []modelValue
	for i, sec := range views {
		if sec.status != "ok" {
			t.Fatalf("stack %s @%d: RocksDB's view ended with %q", st.name, sec.at, sec.status)
		}
		mv := m.view(t, sec.at)
		if sec.at == rocksdb.MaxSequence {
			latest = mv
		}
		got := make([]string, len(mv))
		want := make([]string, len(sec.lines))
		for j, v := range mv {
			got[j] = fmt.Sprintf("%x", v.key)
		}
		byKey := map[string]modelValue{}
		for _, v := range mv {
			byKey[v.key] = v
		}
		for j, l := range sec.lines {
			hk, hv, _ := strings.Cut(l, "\t")
			want[j] = hk
			if v, ok := byKey[oracleUnhex(t, hk)]; ok && v.known && fmt.Sprintf("%x", v.value) != hv {
				t.Errorf("stack %s @%d: key %s: our entries and range deletions give %.200x, RocksDB reads %.200s", st.name, sec.at, hk, v.value, hv)
			}
		}
		if diff := oracleDiff(got, want); diff != "" {
			t.Errorf("stack %s @%d: the keys of the view our entries and range deletions give differ from RocksDB's: %s", st.name, sec.at, diff)
		}
		gsec := gets[i]
		if gsec.at != sec.at {
			t.Fatalf("stack %s: gets section @%d beside views @%d", st.name, gsec.at, sec.at)
		}
		for _, l := range gsec.lines {
			hk, hv, _ := strings.Cut(l, "\t")
			v, ok := byKey[oracleUnhex(t, hk)]
			switch {
			case hv == "-" && ok:
				t.Errorf("stack %s @%d: Get(%s): RocksDB finds nothing, our entries give %.200x", st.name, sec.at, hk, v.value)
			case hv != "-" && !ok:
				t.Errorf("stack %s @%d: Get(%s): RocksDB reads %.200s, our entries give nothing", st.name, sec.at, hk, hv)
			case ok && v.known && fmt.Sprintf("%x", v.value) != hv:
				t.Errorf("stack %s @%d: Get(%s): RocksDB reads %.200s, our entries give %.200x", st.name, sec.at, hk, hv, v.value)
			}
		}
	}
	if t.Failed() {
		return
	}

	// The stack as merge levels: RocksDB's latest view, with an
	// ErrUnresolved in place of each value that needs the merge operator
	// or a blob file.
	var levels []merge.Level
	for i, tab := range tabs {
		lvl, err := tab.Level()
		if cmpName != "leveldb.BytewiseComparator" {
			if !errors.Is(err, rocksdb.ErrUnsupported) {
				t.Errorf("%s: Level() of a %s table = %v; want an error wrapping ErrUnsupported", st.tables[i], cmpName, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Level: %v", st.tables[i], err)
		}
		levels = append(levels, lvl)
	}
	if cmpName != "leveldb.BytewiseComparator" {
		return
	}
	checkOracleMergeView(t, st, levels, latest)
	probes := gets[len(gets)-1]
	byKey := map[string]modelValue{}
	for _, v := range latest {
		byKey[v.key] = v
	}
	for _, l := range probes.lines {
		hk, _, _ := strings.Cut(l, "\t")
		k := oracleUnhex(t, hk)
		v, err := merge.Get(levels, []byte(k), rocksdb.MergeOptions())
		want, ok := byKey[k]
		switch {
		case !ok:
			if !errors.Is(err, reader.ErrNotFound) {
				t.Errorf("stack %s: merge.Get(%s) = %.100x, %v; want reader.ErrNotFound", st.name, hk, v, err)
			}
		case want.unresolved:
			if !errors.Is(err, rocksdb.ErrUnresolved) {
				t.Errorf("stack %s: merge.Get(%s) = %.100x, %v; want an error wrapping ErrUnresolved (RocksDB's value needs the merge operator or the blob file)", st.name, hk, v, err)
			}
		case err != nil || string(v) != want.value:
			t.Errorf("stack %s: merge.Get(%s) = %.100x, %v; want %.100x", st.name, hk, v, err, want.value)
		}
	}
}

func mergeLines(it *merge.Iterator, backward bool) []string {
	var lines []string
	if backward {
		for ok := it.Last(); ok; ok = it.Prev() {
			lines = append(lines, fmt.Sprintf("%x\t%x", it.Key(), it.Value()))
		}
		slices.Reverse(lines)
	} else {
		for ok := it.First(); ok; ok = it.Next() {
			lines = append(lines, fmt.Sprintf("%x\t%x", it.Key(), it.Value()))
		}
	}
	return lines
}

// checkOracleMergeView reads the levels through merge.Iterator: each run
// of keys between unresolved ones, bounded to the run, both ways and
// with seeks, must be RocksDB's; an iterator bounded to an unresolved
// key must fail with ErrUnresolved; an unbounded one must show RocksDB's
// view up to the first unresolved key (a level may look one key ahead)
// and then fail with ErrUnresolved.
func checkOracleMergeView(t *testing.T, st oracleStack, levels []merge.Level, want []modelValue) {
	t.Helper()
	line := func(v modelValue) string { return fmt.Sprintf("%x\t%x", v.key, v.value) }
	first := len(want)
	for i, v := range want {
		if v.unresolved {
			first = i
			break
		}
	}
	wantLines := make([]string, 0, len(want))
	for _, v := range want[:first] {
		wantLines = append(wantLines, line(v))
	}
	it := merge.NewIterator(levels, rocksdb.MergeOptions())
	got := mergeLines(it, false)
	err := it.Close()
	if first == len(want) {
		if diff := oracleDiff(got, wantLines); diff != "" || err != nil {
			t.Errorf("stack %s: the merged view differs from RocksDB's (err %v): %s", st.name, err, diff)
		}
	} else {
		exact := len(levels) == 1
		if !errors.Is(err, rocksdb.ErrUnresolved) || len(got) > len(wantLines) || (exact && len(got) != len(wantLines)) || oracleDiff(got, wantLines[:len(got)]) != "" {
			t.Errorf("stack %s: the merged view shows %d keys and ends with %v; want RocksDB's %d keys before %x (whose value needs the merge operator or a blob file), then an error wrapping ErrUnresolved: %s",
				st.name, len(got), err, len(wantLines), want[first].key, oracleDiff(got, wantLines[:min(len(got), len(wantLines))]))
		}
	}

	rng := rand.New(rand.NewPCG(uint64(len(want)), 7))
	for i := 0; i < len(want); {
		if want[i].unresolved {
			k := want[i].key
			o := rocksdb.MergeOptions()
			o.LowerBound, o.UpperBound = []byte(k), []byte(k+"\x00")
			it := merge.NewIterator(levels, o)
			ok := it.First()
			if err := it.Close(); ok || !errors.Is(err, rocksdb.ErrUnresolved) {
				t.Errorf("stack %s: merged view bounded to %x (whose value needs the merge operator or a blob file): First %v, err %v; want an error wrapping ErrUnresolved", st.name, k, ok, err)
			}
			i++
			continue
		}
		j := i
		for j < len(want) && !want[j].unresolved {
			j++
		}
		run := want[i:j]
		o := rocksdb.MergeOptions()
		o.LowerBound = []byte(run[0].key)
		if j < len(want) {
			o.UpperBound = []byte(want[j].key)
		}
		if i > 0 {
			o.LowerBound = []byte(want[i-1].key + "\x00")
		}
		var runLines []string
		for _, v := range run {
			runLines = append(runLines, line(v))
		}
		for _, backward := range []bool{false, true} {
			it := merge.NewIterator(levels, o)
			got := mergeLines(it, backward)
			if err := it.Close(); err != nil {
				t.Errorf("stack %s: merged view bounded [%x, %x) backward=%v: %v", st.name, o.LowerBound, o.UpperBound, backward, err)
			}
			if diff := oracleDiff(got, runLines); diff != "" {
				t.Errorf("stack %s: merged view bounded [%x, %x) backward=%v differs from RocksDB's: %s", st.name, o.LowerBound, o.UpperBound, backward, diff)
			}
		}
		it := merge.NewIterator(levels, o)
		for n := 0; n < 20; n++ {
			p := run[rng.IntN(len(run))].key
			if rng.IntN(2) == 0 {
				p += "\x00"
			}
			ge := sort.Search(len(run), func(x int) bool { return run[x].key >= p })
			checkAt := func(what string, ok bool, x int) {
				t.Helper()
				if x < 0 || x >= len(run) {
					if ok {
						t.Errorf("stack %s: %s on %x, want exhausted", st.name, what, it.Key())
					}
					return
				}
				if !ok || fmt.Sprintf("%x\t%x", it.Key(), it.Value()) != runLines[x] {
					t.Errorf("stack %s: %s = %v on %x (err %v), want %.100s", st.name, what, ok, it.Key(), it.Err(), runLines[x])
				}
			}
			checkAt(fmt.Sprintf("SeekGE(%x)", p), it.SeekGE([]byte(p)), ge)
			checkAt(fmt.Sprintf("SeekLT(%x)", p), it.SeekLT([]byte(p)), ge-1)
		}
		if err := it.Close(); err != nil {
			t.Errorf("stack %s: seeks in [%x, %x): %v", st.name, o.LowerBound, o.UpperBound, err)
		}
		i = j
	}
}
