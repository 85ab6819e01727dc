package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sstkit/sstable/footer"
	"github.com/sstkit/sstable/format"
	"github.com/sstkit/sstable/internal/errmsg"
	"github.com/sstkit/sstable/leveldb"
	"github.com/sstkit/sstable/reader"
	"github.com/sstkit/sstable/rocksdb"
)

// LevelDB in sst: info, verify, scan and get of a LevelDB table file,
// recognised by its magic number (tableFormatOf), and, with -leveldb,
// scan, get and verify of a LevelDB database directory's live view
// (package leveldb), which build -leveldb converts into tables of this
// package (leveldb_build.go).

// isLevelDBDir reports whether path is a directory holding a CURRENT file,
// as a LevelDB database does: a hint for a FILE given without -leveldb.
func isLevelDBDir(path string) bool {
	st, err := os.Stat(filepath.Join(path, "CURRENT"))
	return err == nil && st.Mode().IsRegular()
}

// dirHint returns err, or for a FILE that is a LevelDB or RocksDB
// database directory a usage error saying to add -leveldb or -rocksdb.
func dirHint(cmd, file string, err error) error {
	if isRocksDBDir(file) {
		return usagef("%s: %s is a directory holding a RocksDB database: add -rocksdb to read it", cmd, file)
	}
	if isLevelDBDir(file) {
		return usagef("%s: %s is a directory holding a LevelDB database: add -leveldb to read it", cmd, file)
	}
	return tableErr(cmd, file, err)
}

// pebbleMagic ends a Pebble table of its own formats, which reader.Open's
// error names (footer.Decode); RocksDB's and LevelDB's magic numbers end
// the other tables tableFormatOf knows.
const pebbleMagic = 0xf09faab3f09faab3

// tableErr is fileErr for reader.Open's error on file, a FILE that
// tableFormatOf found no LevelDB or RocksDB table in, unless file is too
// short for any table's footer or ends in none of the magic numbers sst
// knows: then the message says so and names the formats tried, where
// reader.Open's names only this module's footer (a truncated LevelDB
// table is not "not an sstkit table"). The error wraps err.
func tableErr(cmd, file string, err error) error {
	st, serr := os.Stat(file)
	if !errors.Is(err, format.ErrCorrupt) || serr != nil || !st.Mode().IsRegular() {
		return fileErr(cmd, file, err)
	}
	if st.Size() < leveldb.FooterLen {
		return &ldbError{msg: fmt.Sprintf("%s: %s: file of %d bytes is too short for a table: truncated, or not a table (the shortest footer, LevelDB's, is %d bytes; sstkit's is %d, RocksDB's %d)",
			cmd, file, st.Size(), leveldb.FooterLen, footer.Size, rocksdb.FooterLen), err: err}
	}
	f, oerr := os.Open(file)
	if oerr != nil {
		return fileErr(cmd, file, err)
	}
	defer f.Close()
	var b [8]byte
	if _, rerr := f.ReadAt(b[:], st.Size()-8); rerr != nil {
		return fileErr(cmd, file, err)
	}
	switch m := binary.LittleEndian.Uint64(b[:]); m {
	case footer.Magic, leveldb.Magic, rocksdb.Magic, pebbleMagic:
		return fileErr(cmd, file, err) // a footer, damaged otherwise: the reader's error says how
	default:
		return &ldbError{msg: fmt.Sprintf("%s: %s: ends in no known table footer: truncated, or not a table (its last 8 bytes, %#016x, are not the magic number of an sstkit table, %#016x, a LevelDB table, %#016x, or a RocksDB block-based table, %#016x)",
			cmd, file, m, uint64(footer.Magic), uint64(leveldb.Magic), uint64(rocksdb.Magic)), err: err}
	}
}

// ldbError is an error of package leveldb or rocksdb (or of merge over
// their levels) as a command reports it: "CMD: " and the message without
// the packages' prefixes ("leveldb: ", "rocksdb: ", "merge: ",
// "sstable: "), naming name when the message does not already.
type ldbError struct {
	msg string
	err error
}

func (e *ldbError) Error() string { return e.msg }
func (e *ldbError) Unwrap() error { return e.err }

// ldbErr returns err as ldbError describes; cmd "" adds no command.
func ldbErr(cmd, name string, err error) error {
	msg := err.Error()
	for _, p := range []string{"merge: ", "leveldb: ", "rocksdb: "} {
		msg = strings.TrimPrefix(msg, p)
		msg = strings.ReplaceAll(msg, ": "+p, ": ")
	}
	msg = errmsg.Trim(msg)
	if name != "" && !strings.Contains(msg, name) {
		msg = name + ": " + msg
	}
	if cmd != "" {
		msg = cmd + ": " + msg
	}
	return &ldbError{msg: msg, err: err}
}

// openLevelDBTable opens the LevelDB table in file for the command cmd.
func openLevelDBTable(cmd, file string) (*leveldb.Table, error) {
	t, err := leveldb.OpenTable(file, nil)
	if err != nil {
		return nil, ldbErr(cmd, file, err)
	}
	return t, nil
}

// skipLogDamage is -skip-log-damage, and ldbWarnings where openLevelDB
// reports what it skipped: set afresh by addLevelDBFlags as each command
// defines its flags.
var (
	skipLogDamage bool
	ldbWarnings   io.Writer = io.Discard
)

// addLevelDBFlags defines -skip-log-damage for a command that reads a
// LevelDB database (-leveldb DIR); its warnings go to stderr.
func addLevelDBFlags(fset *flag.FlagSet, stderr io.Writer) {
	fset.BoolVar(&skipLogDamage, "skip-log-damage", false, "with -leveldb: skip damaged write-ahead log records as LevelDB does (paranoid_checks off) instead of failing")
	ldbWarnings = stderr
}

// openLevelDB opens the LevelDB database in dir read-only for cmd.
// Damage in a write-ahead log fails it, as with LevelDB's paranoid_checks,
// unless -skip-log-damage: then it is skipped as LevelDB skips it by
// default, with a warning.
func openLevelDB(cmd, dir string) (*leveldb.DB, error) {
	switch tableFormatOf(dir) {
	case formatLevelDB:
		return nil, usagef("%s: -leveldb reads a database directory; %s is a LevelDB table file: drop -leveldb to read it", cmd, dir)
	case formatRocksDB:
		return nil, usagef("%s: -leveldb reads a LevelDB database directory; %s is a RocksDB table file: drop -leveldb to read it", cmd, dir)
	}
	if hint := levelDBRocksHint(cmd, dir, nil); hint != nil {
		return nil, hint
	}
	db, err := leveldb.OpenDB(dir, &leveldb.Options{SkipLogDamage: skipLogDamage})
	if err != nil {
		if hint := levelDBRocksHint(cmd, dir, err); hint != nil {
			return nil, hint
		}
		if errors.Is(err, os.ErrNotExist) && !isLevelDBDir(dir) {
			if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
				return nil, fmt.Errorf("%s: %s holds no LevelDB database (no CURRENT file)", cmd, dir)
			}
		}
		var ce *format.CorruptError
		if errors.As(err, &ce) && strings.HasSuffix(ce.File, ".log") {
			err = fmt.Errorf("%w (-skip-log-damage skips damaged log records, as LevelDB does by default)", err)
		}
		return nil, ldbErr(cmd, dir, err)
	}
	if n, errs := db.LogDamage(); n > 0 {
		fmt.Fprintf(ldbWarnings, "sst: %s: warning: %s skipped in the write-ahead logs of %s (-skip-log-damage); the first: %v\n", cmd, plural(n, "damaged place"), dir, ldbErr("", "", errs[0]))
	}
	return db, nil
}

// appendField appends b to line as it is, or as hex digits.
func appendField(line, b []byte, hexOut bool) []byte {
	if hexOut {
		return hex.AppendEncode(line, b)
	}
	return append(line, b...)
}

// appendVersion appends a LevelDB or RocksDB table entry's key field: the
// user key, then " @SEQ KIND" (KIND as Kind.String names it: "value",
// "delete", and RocksDB's other kinds).
func appendVersion(line, key []byte, seq uint64, kind leveldb.Kind, hexOut bool) []byte {
	line = appendField(line, key, hexOut)
	line = append(line, " @"...)
	line = strconv.AppendUint(line, seq, 10)
	line = append(line, ' ')
	return append(line, kind.String()...)
}

// scanLevelDBTable prints the entries of the LevelDB table in file whose
// user keys lie in [start, end) (end only with haveEnd), as
// printVersions does.
func scanLevelDBTable(file string, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	t, err := openLevelDBTable("scan", file)
	if err != nil {
		return err
	}
	defer t.Close()
	o := &leveldb.IterOptions{LowerBound: start}
	if haveEnd && len(end) > 0 {
		o.UpperBound = end
	}
	it := t.NewIter(o)
	defer it.Close()
	if err := printVersions(it, false, start, end, haveEnd, limit, keysOnly, hexOut, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return ldbErr("scan", file, err)
	}
	return nil
}

// printVersions prints the entries of a LevelDB or RocksDB table's
// iterator whose user keys lie in [start, end) (end only with haveEnd),
// every version of each, in the table's order (user key ascending, or
// descending when reverse, then newest first), at most limit of them (0:
// no limit), one per line: "KEY @SEQ KIND", then unless keysOnly a TAB
// and the value (empty for a deletion); KEY and the value raw, or as hex
// digits with hexOut. The caller checks the iterator's error.
func printVersions(it *leveldb.TableIterator, reverse bool, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	w := bufio.NewWriterSize(stdout, 64<<10)
	var line []byte
	n := 0
	var ok bool
	switch {
	case !reverse:
		ok = it.SeekGE(start)
	case haveEnd:
		ok = it.SeekGE(end) // in a reverse table: the first key at or below end
	default:
		ok = it.First()
	}
	for ; ok; ok = it.Next() {
		if !reverse && haveEnd && bytes.Compare(it.Key(), end) >= 0 {
			break
		}
		if reverse {
			if bytes.Compare(it.Key(), start) < 0 {
				break
			}
			if haveEnd && bytes.Compare(it.Key(), end) >= 0 {
				continue // versions of end itself
			}
		}
		if it.PlainKeys() {
			line = appendField(line[:0], it.Key(), hexOut) // no version stored
		} else {
			line = appendVersion(line[:0], it.Key(), it.Seq(), it.Kind(), hexOut)
		}
		if !keysOnly {
			line = appendField(append(line, '\t'), it.Value(), hexOut)
		}
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

// scanLevelDB prints the live view of the LevelDB database in dir exactly
// as runScan prints a table of this package: each live user key once,
// with its newest value.
func scanLevelDB(dir string, start, end []byte, haveEnd bool, limit int, keysOnly, hexOut bool, stdout io.Writer) error {
	db, err := openLevelDB("scan", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	o := &leveldb.IterOptions{LowerBound: start}
	if haveEnd {
		o.UpperBound = end
	}
	it := db.NewIterator(o)
	defer it.Close()
	if err := printEntries(it, start, end, haveEnd, limit, keysOnly, hexOut, stdout); err != nil {
		return err
	}
	if err := it.Err(); err != nil {
		return ldbErr("scan", dir, err)
	}
	return nil
}

// levelDBGetter is what runGet looks keys up in for a LevelDB table file
// or (with -leveldb) database, or a RocksDB table file
// (openRocksDBGetter): its lookup and its two messages.
type levelDBGetter struct {
	lookup     func(buf, key []byte) ([]byte, error)
	errFailed  func(key []byte, err error) error
	errMissing func(key []byte) error
	close      func() error
}

// openLevelDBGetter opens the LevelDB database in path (isDir) or the
// LevelDB table file path for get. A table's lookups see the newest
// version at or below seq; a key whose version is a deletion is missing.
func openLevelDBGetter(path string, isDir bool, seq uint64, form keyForm) (*levelDBGetter, error) {
	g := &levelDBGetter{
		errFailed: func(key []byte, err error) error {
			return ldbErr("get", path, fmt.Errorf("key %s: %w", form.show(key), err))
		},
		errMissing: func(key []byte) error {
			return fmt.Errorf("get: %s: key %s not found", path, form.show(key))
		},
	}
	if isDir {
		db, err := openLevelDB("get", path)
		if err != nil {
			return nil, err
		}
		g.close = db.Close
		g.lookup = func(buf, key []byte) ([]byte, error) {
			v, err := db.Get(key)
			return append(buf, v...), err
		}
		return g, nil
	}
	t, err := openLevelDBTable("get", path)
	if err != nil {
		return nil, err
	}
	g.close = t.Close
	deleted := map[string]uint64{} // keys found deleted, for their messages
	g.lookup = func(buf, key []byte) ([]byte, error) {
		e, err := t.Get(key, seq)
		if err != nil {
			return buf, err
		}
		if e.Kind == leveldb.KindDeletion {
			deleted[string(key)] = e.Seq
			return buf, reader.ErrNotFound
		}
		return append(buf, e.Value...), nil
	}
	g.errMissing = func(key []byte) error {
		at := ""
		if seq != leveldb.MaxSequence {
			at = fmt.Sprintf(" at sequence %d", seq)
		}
		if s, ok := deleted[string(key)]; ok {
			return fmt.Errorf("get: %s: key %s not found%s (deleted at sequence %d)", path, form.show(key), at, s)
		}
		return fmt.Errorf("get: %s: key %s not found%s", path, form.show(key), at)
	}
	return g, nil
}

// verifyLevelDBFile checks the LevelDB table in file (Table.Verify) and
// returns its "ok: ..." line, as verifyFile does for a table of ours.
func verifyLevelDBFile(file string) (string, error) {
	t, err := leveldb.OpenTable(file, nil)
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

// verifiedLine is verify's line for a table that passed: as for a table
// of this package.
func verifiedLine(entries int64, dataBlocks int) string {
	return fmt.Sprintf("ok: %d entries, %d data blocks", entries, dataBlocks)
}

// verifyLevelDB checks every live table of the LevelDB database in dir
// (DB.Verify), then reads its live view from first key to last, checking
// that its keys rise strictly, and prints one "ok: ..." line.
func verifyLevelDB(dir string, stdout io.Writer) error {
	db, err := openLevelDB("verify", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, err := db.Verify()
	if err != nil {
		return ldbErr("verify", dir, err)
	}
	it := db.NewIterator(nil)
	defer it.Close()
	var live int64
	var prev []byte
	for ok := it.First(); ok; ok = it.Next() {
		if live > 0 && bytes.Compare(it.Key(), prev) <= 0 {
			return fmt.Errorf("verify: %s: live view out of order: key %s after key %s", dir, quoteKey(it.Key()), quoteKey(prev))
		}
		prev = append(prev[:0], it.Key()...)
		live++
	}
	if err := it.Close(); err != nil {
		return ldbErr("verify", dir, err)
	}
	_, err = fmt.Fprintf(stdout, "ok: %d entries in %d tables, %d keys in the log; live view: %d keys, last sequence %d\n",
		entries, len(db.Files()), db.LogEntries(), live, db.LastSequence())
	if err != nil {
		return cmdErr("verify", err)
	}
	return nil
}

// infoLevelDB prints the layout of the LevelDB table in file and what a
// scan of it finds: entries, deletions, user keys, sequence numbers and
// the smallest and largest internal keys.
func infoLevelDB(file string, hexOut bool, stdout io.Writer) error {
	t, err := openLevelDBTable("info", file)
	if err != nil {
		return err
	}
	defer t.Close()
	in := t.Info()

	it := t.NewIter(nil)
	st := scanStats(it)
	if err := it.Close(); err != nil {
		return ldbErr("info", file, err)
	}

	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "file: %s\n", file)
	fmt.Fprintf(w, "format: LevelDB table (magic %#016x)\n", uint64(leveldb.Magic))
	stored := func(typ byte) string {
		switch typ {
		case leveldb.CompressionNone:
			return "raw"
		case leveldb.CompressionSnappy:
			return "snappy-compressed"
		case leveldb.CompressionZlib:
			return "zlib-compressed (Mojang's type 2; or LevelDB's zstd)"
		case leveldb.CompressionZstd:
			return "zstd-compressed (Mojang's type 3)"
		}
		return "raw-deflate-compressed (Mojang's type 4)"
	}
	printLayout(w, []layoutRow{
		{"data and meta blocks", 0, min(in.Metaindex.Offset, in.Index.Offset)},
		blockRow("metaindex block", in.Metaindex),
		blockRow("index block", in.Index),
	}, leveldb.FooterLen, uint64(in.Size))

	fmt.Fprintf(w, "\ntable:\n")
	fmt.Fprintf(w, "  %-20s%d\n", "data blocks:", in.DataBlocks)
	fmt.Fprintf(w, "  %-20s%s\n", "index block:", stored(in.IndexCompression))
	fmt.Fprintf(w, "  %-20s%s\n", "metaindex block:", stored(in.MetaindexCompression))
	if in.PlainKeys {
		fmt.Fprintf(w, "  %-20s%s\n", "keys:", "plain (written by LevelDB's TableBuilder directly: no sequence numbers or kinds; read as values at 0)")
	}
	metas := "none"
	if len(in.MetaBlocks) > 0 {
		metas = strings.Join(in.MetaBlocks, ", ")
	}
	fmt.Fprintf(w, "  %-20s%s\n", "meta blocks:", metas)
	filter := "none (Get reads the index for every key)"
	if in.Filter != "" {
		filter = fmt.Sprintf("%s, %d filters (Get consults it)", in.Filter, in.Filters)
	}
	fmt.Fprintf(w, "  %-20s%s\n", "filter policy:", filter)
	deletions := st.kinds[leveldb.KindDeletion]
	st.print(w, fmt.Sprintf("%d (%d values, %d deletions)", st.entries, st.entries-deletions, deletions), hexOut)
	if err := w.Flush(); err != nil {
		return cmdErr("info", err)
	}
	return nil
}

// infoLevelDBDir prints what the LevelDB database in dir holds: its last
// sequence number, the writes replayed from its logs, and its tables
// level by level with their sizes and smallest and largest keys, as info
// -rocksdb prints a column family's.
func infoLevelDBDir(dir string, hexOut bool, stdout io.Writer) error {
	db, err := openLevelDB("info", dir)
	if err != nil {
		return err
	}
	defer db.Close()
	files := db.Files()
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "database: %s\n", dir)
	current, _ := os.ReadFile(filepath.Join(dir, "CURRENT"))
	fmt.Fprintf(w, "format: LevelDB database (CURRENT names %s)\n", strings.TrimSpace(string(current)))
	fmt.Fprintf(w, "comparator: leveldb.BytewiseComparator\n")
	fmt.Fprintf(w, "last sequence: %d\n", db.LastSequence())
	fmt.Fprintf(w, "log entries: %d (writes replayed from the write-ahead logs)\n", db.LogEntries())
	var tableBytes int64
	for _, f := range files {
		tableBytes += f.Size
	}
	fmt.Fprintf(w, "tables: %d (%d bytes)\n", len(files), tableBytes)
	for i := 0; i < len(files); {
		j := i
		var size int64
		for ; j < len(files) && files[j].Level == files[i].Level; j++ {
			size += files[j].Size
		}
		fmt.Fprintf(w, "  level %d: %s, %d bytes\n", files[i].Level, plural(j-i, "table"), size)
		for _, f := range files[i:j] {
			name, note := levelDBTableFile(dir, f)
			fmt.Fprintf(w, "    %s  %d bytes%s  %s .. %s\n", name, f.Size, note,
				showInternalKey(f.Smallest, hexOut), showInternalKey(f.Largest, hexOut))
		}
		i = j
	}
	if err := w.Flush(); err != nil {
		return cmdErr("info", err)
	}
	return nil
}

// levelDBTableFile returns the name of the live table f of the database in
// dir (NNNNNN.ldb, or the older NNNNNN.sst) and, when the file is missing
// or its size is not the MANIFEST's, a note saying so.
func levelDBTableFile(dir string, f leveldb.FileInfo) (name, note string) {
	for _, ext := range []string{".ldb", ".sst"} {
		name = fmt.Sprintf("%06d%s", f.Number, ext)
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if st.Size() != f.Size {
			note = fmt.Sprintf(" (the MANIFEST's size; the file holds %d)", st.Size())
		}
		return name, note
	}
	return fmt.Sprintf("%06d.ldb", f.Number), " (missing)"
}

// versionStats is what a scan of a LevelDB or RocksDB table finds, for
// info: entries by kind, user keys, sequence numbers, and the smallest
// and largest internal keys.
type versionStats struct {
	entries, userKeys   int64
	kinds               map[leveldb.Kind]int64
	minSeq, maxSeq      uint64
	first, last         []byte // user keys
	firstSeq, lastSeq   uint64
	firstKind, lastKind leveldb.Kind
	reverse             bool // the table orders user keys in reverse: first is the largest
}

// scanStats reads it from first entry to last; the caller checks its
// error.
func scanStats(it *leveldb.TableIterator) versionStats {
	st := versionStats{kinds: map[leveldb.Kind]int64{}}
	var prevKey []byte
	for ok := it.First(); ok; ok = it.Next() {
		if st.entries == 0 {
			st.first, st.firstSeq, st.firstKind = bytes.Clone(it.Key()), it.Seq(), it.Kind()
			st.minSeq, st.maxSeq = it.Seq(), it.Seq()
		}
		if st.entries == 0 || !bytes.Equal(it.Key(), prevKey) {
			st.userKeys++
			prevKey = append(prevKey[:0], it.Key()...)
		}
		st.entries++
		st.kinds[it.Kind()]++
		st.minSeq, st.maxSeq = min(st.minSeq, it.Seq()), max(st.maxSeq, it.Seq())
		st.lastSeq, st.lastKind = it.Seq(), it.Kind()
	}
	st.last = prevKey
	return st
}

// print writes info's "entries (by a scan)" section: entries is the
// entries line's value (the count and its breakdown by kind).
func (st *versionStats) print(w io.Writer, entries string, hexOut bool) {
	fmt.Fprintf(w, "\nentries (by a scan):\n")
	fmt.Fprintf(w, "  %-20s%s\n", "entries:", entries)
	fmt.Fprintf(w, "  %-20s%d\n", "user keys:", st.userKeys)
	if st.entries > 0 {
		fmt.Fprintf(w, "  %-20s%d .. %d\n", "sequence numbers:", st.minSeq, st.maxSeq)
		first, last := "smallest key:", "largest key:"
		if st.reverse {
			first, last = "first (largest):", "last (smallest):"
		}
		fmt.Fprintf(w, "  %-20s%s\n", first, showVersion(st.first, st.firstSeq, st.firstKind, hexOut))
		fmt.Fprintf(w, "  %-20s%s\n", last, showVersion(st.last, st.lastSeq, st.lastKind, hexOut))
	}
}

// showVersion renders a version for info: "KEY @SEQ KIND", KEY quoted
// byte by byte, or as hex digits with hexOut.
func showVersion(k []byte, seq uint64, kind leveldb.Kind, hexOut bool) string {
	if hexOut {
		return string(appendVersion(nil, k, seq, kind, true))
	}
	return fmt.Sprintf("%s @%d %s", quoteBytes(k), seq, kind)
}

// layoutRow is one section of info's layout table for a LevelDB or
// RocksDB table: its name, offset and size in bytes.
type layoutRow struct {
	name      string
	off, size uint64
}

// blockRow is the row of the block at h, its trailer included.
func blockRow(name string, h format.BlockHandle) layoutRow {
	return layoutRow{name, h.Offset, h.Length + format.BlockTrailerLen}
}

// printLayout writes info's layout section: rows in file order, then the
// footer of footerLen bytes and the file's size.
func printLayout(w io.Writer, rows []layoutRow, footerLen, size uint64) {
	slices.SortStableFunc(rows, func(a, b layoutRow) int { return cmp.Compare(a.off, b.off) })
	rows = append(rows, layoutRow{"footer", size - footerLen, footerLen})
	fmt.Fprintf(w, "\nlayout (bytes; block sizes include the %d-byte block trailers):\n", format.BlockTrailerLen)
	fmt.Fprintf(w, "  %-22s %12s %12s %12s\n", "section", "offset", "size", "end")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-22s %12d %12d %12d\n", r.name, r.off, r.size, r.off+r.size)
	}
	fmt.Fprintf(w, "  %-22s %12s %12d\n", "file size", "", size)
}
