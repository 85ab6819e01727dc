package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/merge"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// RocksDB in sst: info, verify, scan and get of a RocksDB block-based
// table file (package rocksdb), recognised by its footer (tableFormatOf),
// and build -rocksdb, which converts a stack of them into tables of this
// package (rocksdb_build.go). They share the LevelDB table's helpers
// (leveldb.go): both tables hold internal keys, read through the same
// iterator type.

// tableFormat is what a FILE argument holds, as its footer says.
type tableFormat int

const (
	formatOther   tableFormat = iota // a table of this package, or no table: reader.Open says which
	formatLevelDB                    // a LevelDB table
	formatRocksDB                    // a RocksDB block-based table
)

// tableFormatOf tells a LevelDB or RocksDB table at path from anything
// else by its last 8 bytes: RocksDB's block-based magic number, or
// LevelDB's, which RocksDB's format_version 0 tables carry too; those are
// told from LevelDB's own by the rocksdb.properties meta block RocksDB
// writes into every table. Any error reads as formatOther (or, for a
// table with LevelDB's magic number that package rocksdb cannot open,
// formatLevelDB): the command's own open then reports it.
func tableFormatOf(path string) tableFormat {
	f, err := os.Open(path)
	if err != nil {
		return formatOther
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < rocksdb.LegacyFooterLen {
		return formatOther
	}
	var b [8]byte
	if _, err := f.ReadAt(b[:], st.Size()-8); err != nil {
		return formatOther
	}
	switch binary.LittleEndian.Uint64(b[:]) {
	case rocksdb.Magic:
		return formatRocksDB
	case leveldb.Magic: // rocksdb.LegacyMagic
		t, err := rocksdb.NewTable(f, st.Size(), &rocksdb.TableOptions{Name: path})
		if err != nil {
			return formatLevelDB
		}
		defer t.Close()
		if slices.Contains(t.Info().MetaBlocks, "rocksdb.properties") {
			return formatRocksDB
		}
		return formatLevelDB
	}
	return formatOther
}

// openRocksDBTable opens the RocksDB table in file for the command cmd.
func openRocksDBTable(cmd, file string) (*rocksdb.Table, error) {
	t, err := rocksdb.OpenTable(file, nil)
	if err != nil {
		return nil, ldbErr(cmd, file, err)
	}
	return t, nil
}

// isReverse reports whether t orders its user keys in reverse bytewise
// order (rocksdb.ReverseBytewiseComparator).
func isReverse(t *rocksdb.Table) bool {
	return t.Info().Comparator == rocksdb.ReverseBytewiseComparator
}

// scanRocksDBTable prints the entries of the RocksDB table in file whose
// user keys lie in [start, end) (end only with haveEnd) as printVersions
// does, in the table's order, or with spans its range deletions as
// printRangeDeletions does.
func scanRocksDBTable(file string, spans bool, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	t, err := openRocksDBTable("scan", file)
	if err != nil {
		return err
	}
	defer t.Close()
	reverse := isReverse(t)
	if spans {
		dels, err := t.RangeDeletions()
		if err != nil {
			return ldbErr("scan", file, err)
		}
		return printRangeDeletions(dels, reverse, start, end, haveEnd, limit, hexOut, stdout)
	}
	var o *rocksdb.IterOptions
	if !reverse {
		// Bounds in the table's order; a reverse table's range is
		// checked entry by entry instead (printVersions).
		o = &rocksdb.IterOptions{LowerBound: start}
		if haveEnd && len(end) > 0 {
			o.UpperBound = end
		}
	}
	it := t.NewIter(o)
	defer it.Close()
	if err := printVersions(it, reverse, start, end, haveEnd, limit, keysOnly, hexOut, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return ldbErr("scan", file, err)
	}
	return nil
}

// printRangeDeletions prints the range deletions of dels (as the table
// stores them: by start key in the table's order, then newest first)
// that overlap [start, end) (end only with haveEnd), at most limit of
// them (0: no limit), one per line: "START<TAB>END<TAB>@SEQ", the table
// deleting the user keys in [START, END) (in its order: for a reverse
// bytewise table START is the larger) as of sequence number SEQ; START
// and END raw, or as hex digits with hexOut.
func printRangeDeletions(dels []rocksdb.RangeDeletion, reverse bool, start, end []byte, haveEnd bool, limit int, hexOut bool, stdout io.Writer) error {
	w := bufio.NewWriterSize(stdout, 64<<10)
	var line []byte
	n := 0
	for _, d := range dels {
		lo, hi := d.Start, d.End // the deleted keys, bytewise: [lo, hi), or (hi, lo] when reverse
		if reverse {
			lo, hi = d.End, d.Start
		}
		if !reverse && bytes.Compare(hi, start) <= 0 || reverse && bytes.Compare(hi, start) < 0 {
			continue
		}
		if haveEnd && bytes.Compare(lo, end) >= 0 {
			if reverse {
				continue
			}
			break // the rest start later still
		}
		line = appendField(line[:0], d.Start, hexOut)
		line = appendField(append(line, '\t'), d.End, hexOut)
		line = append(line, "\t@"...)
		line = strconv.AppendUint(line, d.Seq, 10)
		if _, err := w.Write(append(line, '\n')); err != nil {
			return cmdErr("scan", err)
		}
		if n++; n == limit {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return cmdErr("scan", err)
	}
	return nil
}

// openRocksDBGetter opens the RocksDB table in path for get, as
// openLevelDBGetter does a LevelDB table's. A key reads as its newest
// version, at or below seq (when seqGiven), unless that is a deletion or
// lies under a newer range deletion of the table: then it is missing. A
// bytewise table's newest version is read through its merge level
// (Table.Level), a reverse bytewise table's, or one at a sequence
// number, through Table.Get (rocksdbLookup). A version that is a merge
// operand or a blob index is an error naming the key: the table alone
// does not hold its value.
func openRocksDBGetter(path string, seq uint64, seqGiven bool, form keyForm) (*levelDBGetter, error) {
	t, err := openRocksDBTable("get", path)
	if err != nil {
		return nil, err
	}
	g := &levelDBGetter{
		close: t.Close,
		errFailed: func(key []byte, err error) error {
			var ue *rocksdb.UnresolvedError
			if errors.As(err, &ue) {
				why := "a merge operand, whose value needs the database's merge operator and the key's older versions"
				if ue.Kind == rocksdb.KindBlobIndex {
					why = "a blob index, whose value is in a blob file"
				}
				seq := ue.Seq
				if ue.Table == "" { // from the merged view, which does not say
					var u *rocksdb.UnresolvedError
					if e, err := t.Get(key, rocksdb.MaxSequence); err == nil || errors.As(err, &u) {
						seq = e.Seq
					}
				}
				return &ldbError{msg: fmt.Sprintf("get: %s: key %s: its newest version (@%d) is %s; sst scan shows it", path, form.show(key), seq, why), err: err}
			}
			return ldbErr("get", path, fmt.Errorf("key %s: %w", form.show(key), err))
		},
	}
	dels, err := t.RangeDeletions()
	if err != nil {
		t.Close()
		return nil, ldbErr("get", path, err)
	}
	deleted := map[string]string{} // keys found deleted, for their messages
	at := ""
	if seqGiven {
		at = fmt.Sprintf(" at sequence %d", seq)
	}
	g.errMissing = func(key []byte) error {
		if how, ok := deleted[string(key)]; ok {
			return fmt.Errorf("get: %s: key %s not found%s (%s)", path, form.show(key), at, how)
		}
		return fmt.Errorf("get: %s: key %s not found%s", path, form.show(key), at)
	}
	if reverse := isReverse(t); seqGiven || reverse {
		g.lookup = func(buf, key []byte) ([]byte, error) {
			v, how, err := rocksdbLookup(t, dels, reverse, key, seq)
			if how != "" {
				deleted[string(key)] = how
			}
			return append(buf, v...), err
		}
		return g, nil
	}
	lvl, err := t.Level()
	if err != nil {
		t.Close()
		return nil, ldbErr("get", path, err)
	}
	levels, mo := []merge.Level{lvl}, rocksdb.MergeOptions()
	g.lookup = func(buf, key []byte) ([]byte, error) {
		v, err := merge.Get(levels, key, mo)
		if errors.Is(err, reader.ErrNotFound) {
			// Say why, when the table holds the key: a deletion, or a
			// range deletion over it.
			if e, gerr := t.Get(key, rocksdb.MaxSequence); gerr == nil {
				if how := deletedHow(e, dels, false, key, rocksdb.MaxSequence); how != "" {
					deleted[string(key)] = how
				}
			}
		}
		return append(buf, v...), err
	}
	return g, nil
}

// rocksdbLookup returns the value user key key has in table t at
// sequence number seq: its newest version at or below seq, unless that
// is a deletion or a range deletion of the table (dels, at or below seq
// and newer than the version) covers it, when it returns
// reader.ErrNotFound and how the key was deleted. It reads a version as
// Table.Level does: an entity as its default column's value, a value
// with a preferred sequence number without that number; a merge operand
// or blob index is Table.Get's *rocksdb.UnresolvedError.
func rocksdbLookup(t *rocksdb.Table, dels []rocksdb.RangeDeletion, reverse bool, key []byte, seq uint64) ([]byte, string, error) {
	e, err := t.Get(key, seq)
	var ue *rocksdb.UnresolvedError
	if err != nil && !errors.As(err, &ue) {
		return nil, "", err
	}
	// A merge operand or blob index under a newer range deletion is
	// deleted like any version.
	if how := deletedHow(e, dels, reverse, key, seq); how != "" {
		return nil, how, reader.ErrNotFound
	}
	if err != nil {
		return nil, "", err
	}
	switch e.Kind {
	case rocksdb.KindWideColumnEntity:
		v, blob, err := rocksdb.DefaultColumn(e.Value)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", t.Name(), err)
		}
		if blob {
			return nil, "", &rocksdb.UnresolvedError{Table: t.Name(), Key: key, Seq: e.Seq, Kind: rocksdb.KindBlobIndex}
		}
		return v, "", nil
	case rocksdb.KindValuePreferredSeqno:
		if len(e.Value) < 8 {
			return nil, "", fmt.Errorf("%s: key %s: %w", t.Name(), quoteKey(key), format.Corruptf(format.SectionDataBlock, 0, "a value with a preferred sequence number of %d bytes, shorter than the number", len(e.Value)))
		}
		return e.Value[:len(e.Value)-8], "", nil
	}
	return e.Value, "", nil
}

// deletedHow says how the version e of user key key is deleted at
// sequence number seq, or "" when it is not: a deletion itself, or under
// a range deletion of dels newer than it and at or below seq.
func deletedHow(e rocksdb.Entry, dels []rocksdb.RangeDeletion, reverse bool, key []byte, seq uint64) string {
	if e.Kind == rocksdb.KindDeletion || e.Kind == rocksdb.KindSingleDeletion || e.Kind == rocksdb.KindDeletionWithTimestamp {
		return fmt.Sprintf("deleted at sequence %d: %s", e.Seq, e.Kind)
	}
	for _, d := range dels {
		if d.Seq <= e.Seq || d.Seq > seq {
			continue
		}
		in := bytes.Compare(d.Start, key) <= 0 && bytes.Compare(key, d.End) < 0
		if reverse {
			in = bytes.Compare(d.Start, key) >= 0 && bytes.Compare(key, d.End) > 0
		}
		if in {
			return fmt.Sprintf("deleted by the range deletion [%s, %s) at sequence %d", quoteKey(d.Start), quoteKey(d.End), d.Seq)
		}
	}
	return ""
}

// verifyRocksDBFile checks the RocksDB table in file (Table.Verify) and
// returns its "ok: ..." line, as verifyFile does for a table of ours.
func verifyRocksDBFile(file string) (string, error) {
	t, err := rocksdb.OpenTable(file, nil)
	if err != nil {
		return "", ldbErr("", file, err)
	}
	defer t.Close()
	n, err := t.Verify()
	if err != nil {
		return "", ldbErr("", file, err)
	}
	return verifiedLine(n, t.Info().DataBlocks), nil
}

// infoRocksDB prints the properties of the RocksDB table in file as
// sst_dump --show_properties does, its layout, and what a scan of it
// finds.
func infoRocksDB(file string, hexOut bool, stdout io.Writer) error {
	t, err := openRocksDBTable("info", file)
	if err != nil {
		return err
	}
	defer t.Close()
	in := t.Info()
	dels, err := t.RangeDeletions()
	if err != nil {
		return ldbErr("info", file, err)
	}
	it := t.NewIter(nil)
	st := scanStats(it)
	if err := it.Close(); err != nil {
		return ldbErr("info", file, err)
	}
	st.reverse = isReverse(t)

	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "file: %s\n", file)
	fmt.Fprintf(w, "format: RocksDB block-based table, format_version %d (magic %#016x)\n", in.FormatVersion, in.Magic)
	labelled, raw := rocksdbProperties(t)
	fmt.Fprintf(w, "\nproperties (labelled as sst_dump --show_properties labels them):\n")
	for _, l := range labelled {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if len(raw) > 0 {
		fmt.Fprintf(w, "\nuser collected properties (raw, as sst_dump prints them):\n")
		for _, l := range raw {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}

	footerLen := uint64(rocksdb.FooterLen)
	if in.Magic == rocksdb.LegacyMagic {
		footerLen = rocksdb.LegacyFooterLen
	}
	index := "index block"
	if in.IndexPartitions > 0 {
		index = "top-level index block"
	}
	printLayout(w, []layoutRow{
		{"data and meta blocks", 0, min(in.Metaindex.Offset, in.Index.Offset)},
		blockRow("metaindex block", in.Metaindex),
		blockRow(index, in.Index),
	}, footerLen, uint64(in.Size))

	fmt.Fprintf(w, "\ntable:\n")
	fmt.Fprintf(w, "  %-20s%s\n", "checksum:", in.Checksum)
	fmt.Fprintf(w, "  %-20s%s\n", "comparator:", in.Comparator)
	fmt.Fprintf(w, "  %-20s%s\n", "compression:", in.Compression)
	fmt.Fprintf(w, "  %-20s%d\n", "data blocks:", in.DataBlocks)
	index = in.IndexType
	if in.IndexPartitions > 0 {
		index += fmt.Sprintf(", %d partitions", in.IndexPartitions)
	}
	fmt.Fprintf(w, "  %-20s%s\n", "index:", index)
	metas := "none"
	if len(in.MetaBlocks) > 0 {
		metas = strings.Join(in.MetaBlocks, ", ")
	}
	fmt.Fprintf(w, "  %-20s%s\n", "meta blocks:", metas)
	filter := "none (Get reads the index for every key)"
	if in.Filter != "" {
		filter = in.Filter + " (Get consults it)"
	}
	fmt.Fprintf(w, "  %-20s%s\n", "filter:", filter)
	fmt.Fprintf(w, "  %-20s%d\n", "range deletions:", len(dels))
	if in.GlobalSeqno != 0 {
		fmt.Fprintf(w, "  %-20s%d (an ingested file: its entries' sequence number)\n", "global seqno:", in.GlobalSeqno)
	}
	var kinds []string
	for k := range 256 {
		if n := st.kinds[rocksdb.Kind(k)]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", n, rocksdb.Kind(k)))
		}
	}
	entries := strconv.FormatInt(st.entries, 10)
	if len(kinds) > 0 {
		entries += " (" + strings.Join(kinds, ", ") + ")"
	}
	st.print(w, entries, hexOut)
	if err := w.Flush(); err != nil {
		return cmdErr("info", err)
	}
	return nil
}

// unknownColumnFamily is the column family ID of a table written outside
// a database (TablePropertiesCollectorFactory::Context::kUnknownColumnFamily),
// which sst_dump shows as N/A.
const unknownColumnFamily = 1<<31 - 1

// rocksdbProperties returns the lines of info's two property sections.
// labelled: the properties RocksDB reads into its TableProperties, as
// sst_dump --show_properties prints them (TableProperties::ToString in
// table/table_properties.cc: its labels, in its order, with its derived
// averages and estimated table size, N/A for an empty name), each when
// the table has it; then the ones sst_dump does not print, under their
// own names. raw: the others (user collected properties, and
// rocksdb.deleted.keys and rocksdb.merge.operands, which RocksDB lists
// there too), as sst_dump prints them: "# NAME: 0x" and the value's hex
// digits. The unique ID sst_dump prints is not a property but a hash of
// three; it is left out.
func rocksdbProperties(t *rocksdb.Table) (labelled, raw []string) {
	used := map[string]bool{}
	num := func(name string) (uint64, bool) {
		n, ok := t.NumericProperty(name)
		if ok {
			used[name] = true
		}
		return n, ok
	}
	str := func(name string) (string, bool) {
		v, ok := t.Property(name)
		if ok {
			used[name] = true
		}
		return string(v), ok
	}
	add := func(label, value string) { labelled = append(labelled, label+": "+value) }
	// always: RocksDB (7.8 to 11) writes the property only when it is not
	// zero or empty, and sst_dump shows its absence as that default.
	addNum := func(label, name string, always bool) {
		if n, ok := num(name); ok || always {
			add(label, strconv.FormatUint(n, 10))
		}
	}
	// na: sst_dump shows an empty value as N/A.
	addStr := func(label, name string, na, always bool) {
		if v, ok := str(name); ok || always {
			if v == "" && na {
				v = "N/A"
			}
			add(label, v)
		}
	}
	average := func(label, name string) {
		size, ok1 := num(name)
		entries, ok2 := num("rocksdb.num.entries")
		if ok1 && ok2 {
			avg := 0.0
			if entries != 0 {
				avg = float64(size) / float64(entries)
			}
			add(label, strconv.FormatFloat(avg, 'f', 6, 64)) // C++'s std::to_string(double)
		}
	}

	addNum("# data blocks", "rocksdb.num.data.blocks", false)
	addNum("# data blocks compression rejected", "rocksdb.num.data.blocks.compression.rejected", false)
	addNum("# data blocks compression bypassed", "rocksdb.num.data.blocks.compression.bypassed", false)
	addNum("# uniform blocks", "rocksdb.num.uniform.blocks", false)
	addNum("# entries", "rocksdb.num.entries", false)
	addNum("# deletions", "rocksdb.deleted.keys", false)
	addNum("# merge operands", "rocksdb.merge.operands", false)
	addNum("# range deletions", "rocksdb.num.range-deletions", false)
	addNum("raw key size", "rocksdb.raw.key.size", false)
	average("raw average key size", "rocksdb.raw.key.size")
	addNum("raw value size", "rocksdb.raw.value.size", false)
	average("raw average value size", "rocksdb.raw.value.size")
	addNum("data block size", "rocksdb.data.size", false)
	if n, ok := num("rocksdb.index.size"); ok {
		userKey, _ := num("rocksdb.index.key.is.user.key")
		delta, _ := num("rocksdb.index.value.is.delta.encoded")
		add(fmt.Sprintf("index block size (user-key? %d, delta-value? %d)", userKey, delta), strconv.FormatUint(n, 10))
	}
	if n, _ := num("rocksdb.index.partitions"); n != 0 {
		add("# index partitions", strconv.FormatUint(n, 10))
		addNum("top-level index size", "rocksdb.top-level.index.size", false)
	}
	addNum("filter block size", "rocksdb.filter.size", false)
	addNum("# entries for filter", "rocksdb.num.filter_entries", false)
	data, ok1 := num("rocksdb.data.size")
	index, ok2 := num("rocksdb.index.size")
	filter, ok3 := num("rocksdb.filter.size")
	if ok1 && ok2 && ok3 {
		add("(estimated) table size", strconv.FormatUint(data+index+filter, 10))
	}
	addStr("filter policy name", "rocksdb.filter.policy", true, true)
	addStr("prefix extractor name", "rocksdb.prefix.extractor.name", true, true)
	if n, ok := num("rocksdb.column.family.id"); ok {
		v := strconv.FormatUint(n, 10)
		if n == unknownColumnFamily {
			v = "N/A"
		}
		add("column family ID", v)
	}
	addStr("column family name", "rocksdb.column.family.name", true, true)
	addStr("comparator name", "rocksdb.comparator", true, true)
	if n, ok := num("rocksdb.user.defined.timestamps.persisted"); ok {
		add("user defined timestamps persisted", strconv.FormatBool(n != 0))
	}
	addNum("largest sequence number in file", "rocksdb.key.largest.seqno", false)
	addNum("smallest sequence number in file", "rocksdb.key.smallest.seqno", false)
	addStr("merge operator name", "rocksdb.merge.operator", true, true)
	addStr("property collectors names", "rocksdb.property.collectors", true, true)
	addStr("SST file compression algo", "rocksdb.compression", true, true)
	addStr("SST file compression options", "rocksdb.compression_options", true, true)
	addNum("creation time", "rocksdb.creation.time", false)
	addNum("time stamp of earliest key", "rocksdb.oldest.key.time", false)
	addNum("time stamp of newest key", "rocksdb.newest.key.time", false)
	addNum("file creation time", "rocksdb.file.creation.time", true)
	addNum("slow compression estimated data size", "rocksdb.sample_for_compression.slow.data.size", true)
	addNum("fast compression estimated data size", "rocksdb.sample_for_compression.fast.data.size", true)
	addStr("DB identity", "rocksdb.creating.db.identity", false, true)
	addStr("DB session identity", "rocksdb.creating.session.identity", false, true)
	addStr("DB host id", "rocksdb.creating.host.identity", false, true)
	addNum("original file number", "rocksdb.original.file.number", false)
	// The mapping is binary, which sst_dump decodes: shown under its
	// label only when absent or empty (as sst_dump shows it then), and
	// otherwise in hex, under its name, below.
	if v, ok := t.Property("rocksdb.seqno.time.map"); len(v) == 0 {
		used["rocksdb.seqno.time.map"] = ok
		add("Sequence number to time mapping", "")
	}

	// The properties RocksDB reads as its own that sst_dump does not print,
	// and those this list does not know yet that are numbers: raw names.
	for _, p := range t.Properties() {
		switch {
		case used[p.Name]:
		case rocksdb.IsNumericProperty(p.Name):
			n, _ := t.NumericProperty(p.Name)
			add(p.Name, strconv.FormatUint(n, 10))
			used[p.Name] = true
		case p.Name == "rocksdb.seqno.time.map":
			add(p.Name, "0x"+strings.ToUpper(hex.EncodeToString(p.Value)))
			used[p.Name] = true
		}
	}
	for _, p := range t.Properties() {
		if !used[p.Name] || p.Name == "rocksdb.deleted.keys" || p.Name == "rocksdb.merge.operands" {
			raw = append(raw, "# "+p.Name+": 0x"+strings.ToUpper(hex.EncodeToString(p.Value)))
		}
	}
	return labelled, raw
}
